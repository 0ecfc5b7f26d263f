import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
import { MONTHS, numberWord, parseNumber, unitOf, WEEKDAYS, type Value } from './read-values.js';

/**
 * Reads a claim or an observation into words: each with its lemma and part
 * of speech (wink-nlp and its bundled English model), the value it states
 * when it is one (read-values.ts), the comma-separated segment it sits in,
 * and whether a negation applies to it. Values are found by their shape
 * first (URLs, addresses, versions, identifiers, dates, numbers with units),
 * so the tagger only ever sees plain words. Generic English structure only:
 * negators, units, months, and the words of failed or unfinished results.
 */

// Only the tagger: lemmas and parts of speech. Sentences, entities and sentiment are read here or not needed.
const nlp = winkNLP(model, ['pos']);
const its = nlp.its;

export interface Word {
  text: string;
  /** Lower-cased lemma; '' for punctuation and arrows. */
  lemma: string;
  /** wink's universal part of speech, or VAL (a value), ARROW ("->"), PUNCT. */
  pos: string;
  start: number;
  end: number;
  value?: Value;
  /** Segment index: text between commas, semicolons and brackets. */
  seg: number;
  /** A negation applies to it: "no fee", "not required", "fee 0.00", "0 results". */
  neg?: true;
  /** Read out of another token (a URL's host and path words, a file's extension), not written as such. */
  synthetic?: true;
}

export interface ReadText {
  text: string;
  words: Word[];
  /**
   * Per segment, what says it reports a failed or unfinished result: failure
   * words by lemma ("failed", "pending", "not found"), `#counted <word>` for
   * a counted one ("4 failed"), `#zero` for a zero count, `#partial` for "31
   * of 36"; empty when it reports none.
   */
  failures: string[][];
  /** Where the text's head ends: the first colon, before which a tool names what it reports on. */
  headEnd: number;
}

// Words that report an observation failed, came out negative or is not finished.
const FAILURE_WORDS = new Set(
  (
    'fail failed failing failure failures error errors missing miss timeout unmet reject rejected deny denied refuse refused decline declined ' +
    'pending unchanged empty unable unavailable invalid bounce bounced expired unmatched unanswered unsigned unpaid unresolved unverified ' +
    'abort aborted cancel cancelled canceled skip skipped block blocked stuck offline unreachable incomplete partial conflict conflicts ' +
    'degraded unhealthy partially partly reversed reverted voided undone rescinded fault faulted faulty malfunction malfunctioning broken'
  ).split(' '),
);
// Multi-word failure phrases, matched on lemmas.
const FAILURE_PHRASES = [
  // A report's verdict that work is still needed: "overall: ACTION REQUIRED", "needs attention".
  ['action', 'required'], ['require', 'action'], ['attention', 'required'], ['need', 'attention'],
  ['not', 'found'], ['not', 'met'], ['time', 'out'], ['timed', 'out'], ['not', 'yet'], ['not', 'respond'], ['not', 'responding'], ['out', 'for'],
  // A state that persists where the act should have ended it: "2 still open".
  ['still', 'present'], ['still', 'open'], ['still', 'running'], ['still', 'active'], ['still', 'enabled'], ['still', 'down'], ['still', 'there'],
];
// Words before an HTTP status: "returned 503", "status 404", "HTTP 500", "-> 502".
const STATUS_BEFORE = new Set(['return', 'returned', 'status', 'code', 'http', 'respond', 'responded', 'response']);
// Things whose zero count is a good result: "0 errors", "0 exceptions".
const PROBLEM_NOUNS = new Set(
  'error errors failure failures exception exceptions discrepancy discrepancies vulnerability vulnerabilities warning warnings issue issues conflict conflicts defect defects violation violations alert alerts incident incidents offense offenses offence offences bug bugs problem problems crash crashes'.split(
    ' ',
  ),
);
// States a count out of a total reports ("ready 4/5"): short of the total, the state does not hold for all.
const FRACTION_STATES = new Set('ready pass passed healthy running up available complete completed done synced succeeded delivered online migrated updated processed'.split(' '));
const NEGATORS = new Set(['no', 'not', "n't", 'never', 'none', 'without', 'zero', 'nothing', 'nobody', 'neither', 'nor']);

// Words that join English compounds ("end-to-end", "up-to-date", "out-of-band"), never a name's parts.
const NAME_FILLERS = new Set(['to', 'of', 'and', 'in', 'on', 'the', 'a', 'by', 'for', 'at', 'up', 'date', 'end', 'out', 'band']);

/** Whether a word names a problem whose absence is a good result ("no errors", "0 warnings"). */
export function isProblemNoun(word: string): boolean {
  return PROBLEM_NOUNS.has(word);
}

export function isFailureWord(lemma: string): boolean {
  return FAILURE_WORDS.has(lemma);
}

// Shapes, tried in order at each position. Separators end a token; a colon inside a token is handled after.
const URL_SHAPE = /^https?:\/\/[^\s<>"'`)\]]+/i;
const EMAIL = /^[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}(?![\w.])/;
const IP = /^@?\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,2})?(?::\d+)?/;
const ISO_DATE = /^(\d{4})-(\d{2})(?:-(\d{2}))?(?![\d-])/;
const TIME = /^(\d{1,2}):(\d{2})(?::\d{2})?(?:\s?([AaPp])\.?[Mm]\.?)?(?![\d:])/;
const QUOTE = /^(?:"([^"\n]{1,200})"|“([^”\n]{1,200})”|`([^`\n]{1,200})`|'([^'\n]{1,200})'(?!\w))/;
const TOKEN = /^(?:[^\s,;()[\]{}<>"“”`|]|(?<=\d),(?=\d{3}(?!\d)))+/;
// "12,480" and "$1,450.00" are one number: their commas separate nothing.
const GROUPED_NUMBER = /^[$€£]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?:k|m|bn)?%?(?![\d,]\d)/i;
const SEPARATOR = /^[,;()[\]{}<>|]/;

const VERSION = /^v?(\d+(?:\.\d+){1,3})(?:[-+][\w.-]+)?$/i;
const FILE = /^[\w][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,9}$/;
const HOST = /^(?:[a-z0-9-]+\.)+[a-z]{2,}$/i;

interface Tagged {
  lemma: string;
  pos: string;
}

/** wink's lemma and part of speech for each word, by its start offset in the text. */
function tagWords(text: string): Map<number, Tagged> {
  const doc = nlp.readDoc(text);
  const values = doc.tokens().out(its.value) as string[];
  // wink's types give `lemma` a signature `out` does not accept; it is a token property like the others.
  const lemmas = doc.tokens().out(its.lemma as unknown as typeof its.value) as string[];
  const pos = doc.tokens().out(its.pos) as string[];
  const out = new Map<number, Tagged>();
  let cursor = 0;
  values.forEach((value, i) => {
    const at = text.indexOf(value, cursor);
    if (at === -1) return;
    cursor = at + value.length;
    out.set(at, { lemma: (lemmas[i] ?? value).toLowerCase(), pos: pos[i] ?? 'X' });
  });
  return out;
}

function idKey(raw: string): string {
  return raw.toLowerCase().replace(/^[#@]+/, '').replace(/[-_./\\\s#@]+/g, '');
}

const isAlpha = (t: string): boolean => /^[A-Za-z][A-Za-z'’]*$/.test(t);

/** Splits text into raw tokens with their kind; quotes are kept whole and also read word by word. */
type Scanned = { text: string; start: number; end: number; value?: Value; sep?: true; quoteInner?: true; synthetic?: true };

/** A shape anchored at a position of the text (a sticky copy), so scanning never copies the rest of the text. */
function sticky(re: RegExp): RegExp {
  return new RegExp(re.source.replace(/^\^/, ''), `${re.flags.replace('g', '')}y`);
}
const AT = {
  space: sticky(/^\s+/),
  separator: sticky(SEPARATOR),
  url: sticky(URL_SHAPE),
  quote: sticky(QUOTE),
  email: sticky(EMAIL),
  ip: sticky(IP),
  isoDate: sticky(ISO_DATE),
  time: sticky(TIME),
  grouped: sticky(GROUPED_NUMBER),
  token: sticky(TOKEN),
};

function scan(text: string): Scanned[] {
  const out: Scanned[] = [];
  let i = 0;
  const push = (t: string, start: number, value?: Value) => out.push({ text: t, start, end: start + t.length, ...(value ? { value } : {}) });
  const match = (re: RegExp): RegExpExecArray | null => {
    re.lastIndex = i;
    return re.exec(text);
  };
  while (i < text.length) {
    const space = match(AT.space);
    if (space) {
      i += space[0].length;
      continue;
    }
    if (text.startsWith('->', i) || text.startsWith('→', i) || text.startsWith('=>', i)) {
      const width = text.startsWith('→', i) ? 1 : 2;
      out.push({ text: '->', start: i, end: i + width });
      i += width;
      continue;
    }
    if (match(AT.separator)) {
      out.push({ text: text[i] as string, start: i, end: i + 1, sep: true });
      i += 1;
      continue;
    }
    let m = match(AT.url);
    if (m) {
      const raw = m[0].replace(/[.,;:!?]+$/, '');
      let value: Value = { k: 'id', key: idKey(raw.replace(/^https?:\/\//i, '')) };
      try {
        const url = new URL(raw);
        value = { k: 'id', key: idKey(`${url.host}${url.pathname.replace(/\/+$/, '')}`) };
        push(raw, i, value);
        // The host and the path's words stand for themselves too: "the health check on status.example" for https://status.example/health.
        out.push({ text: url.host, start: i, end: i + raw.length, value: { k: 'id', key: idKey(url.host) }, synthetic: true });
        if (url.pathname.length > 1) out.push({ text: url.pathname, start: i, end: i + raw.length, value: { k: 'id', key: idKey(url.pathname) }, synthetic: true });
        const scheme = url.protocol.replace(':', '');
        out.push({ text: scheme, start: i, end: i + scheme.length, synthetic: true });
        for (const part of url.pathname.split(/[/._-]+/).filter((p) => /^[A-Za-z]{2,}$/.test(p))) out.push({ text: part, start: i, end: i + raw.length, synthetic: true });
      } catch {
        push(raw, i, value);
      }
      i += raw.length;
      continue;
    }
    m = match(AT.quote);
    if (m && (i === 0 || /[\s(:=[]/.test(text[i - 1] as string))) {
      const inner = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? '').trim();
      push(m[0], i, { k: 'quote', text: inner.toLowerCase().replace(/\s+/g, ' ') });
      const offset = i + 1;
      for (const t of scan(inner)) out.push({ ...t, start: t.start + offset, end: t.end + offset, quoteInner: true });
      i += m[0].length;
      continue;
    }
    m = match(AT.email);
    if (m) {
      push(m[0], i, { k: 'id', key: idKey(m[0]) });
      i += m[0].length;
      continue;
    }
    m = match(AT.ip);
    if (m) {
      const raw = m[0].replace(/^@/, '');
      push(m[0], i, { k: 'id', key: idKey(raw.replace(/:\d+$/, '')) });
      i += m[0].length;
      continue;
    }
    m = match(AT.isoDate);
    // "2025-03-05" is a date; "7781-22" (an account) has no month 22, so it is read as what it is further down.
    if (m && Number(m[2]) >= 1 && Number(m[2]) <= 12 && (!m[3] || (Number(m[3]) >= 1 && Number(m[3]) <= 31))) {
      push(m[0], i, { k: 'date', y: Number(m[1]), m: Number(m[2]), ...(m[3] ? { d: Number(m[3]) } : {}) });
      i += m[0].length;
      continue;
    }
    m = match(AT.time);
    if (m) {
      let hours = Number(m[1]) % (m[3] ? 12 : 24);
      if (m[3] && m[3].toLowerCase() === 'p') hours += 12;
      push(m[0], i, { k: 'time', min: hours * 60 + Number(m[2]) });
      i += m[0].length;
      continue;
    }
    m = match(AT.grouped) ?? match(AT.token);
    if (!m) {
      i += 1;
      continue;
    }
    let raw = m[0];
    // Trailing punctuation ends a sentence or a label; a colon inside ("key:value") separates two tokens.
    const trimmed = raw.replace(/[.:!?'’*]+$/, '');
    const trailing = raw.length - trimmed.length;
    raw = trimmed;
    // "Station 7's audit", "PL-88012's lot": the possessive is not part of the value.
    if (/['’]s$/.test(raw) && classify(raw.slice(0, -2))) raw = raw.slice(0, -2);
    if (raw) {
      for (const piece of splitCompound(raw)) {
        out.push({ ...piece, start: i + piece.start, end: i + piece.start + piece.text.length });
        // A file's extension names its format: "ft-v3.onnx" is an ONNX file.
        const ext = piece.value?.k === 'id' && FILE.test(piece.text) ? /\.([A-Za-z]{2,6})$/.exec(piece.text)?.[1] : undefined;
        if (ext) out.push({ text: ext, start: i + piece.start + piece.text.length - ext.length, end: i + piece.start + piece.text.length, synthetic: true });
      }
    }
    if (trailing && /:/.test(m[0].slice(raw.length))) out.push({ text: ':', start: i + raw.length, end: i + raw.length + 1, sep: true });
    i += m[0].length;
  }
  return out;
}

/** Pieces of one whitespace-free token: "accuracy=0.914", "tcp/5432", "lodash@4.17.15", "2015-2025", "45-minute", "RUIZ/ANA". */
function splitCompound(raw: string): Array<{ text: string; start: number; value?: Value }> {
  const whole = classify(raw);
  if (whole) return [{ text: raw, start: 0, value: whole }];
  // Hyphenated words are read whole, as names or as English compounds (readText).
  if (/^[A-Za-z]+(?:-[A-Za-z]+)+$/.test(raw)) return [{ text: raw, start: 0 }];
  const parts = raw.split(/([=:/@–—]|(?<=\d)-(?=\d)|(?<=[A-Za-z])-(?=[A-Za-z]))/);
  if (parts.length === 1) return [{ text: raw, start: 0 }];
  const out: Array<{ text: string; start: number; value?: Value }> = [];
  let at = 0;
  // A path or package id keeps a value of its own as a whole as well as its parts.
  if (/[/@]/.test(raw) && /\d|\./.test(raw)) out.push({ text: raw, start: 0, value: { k: 'id', key: idKey(raw) } });
  for (const part of parts) {
    if (part && !/^[=:/@-]$/.test(part)) {
      const value = classify(part);
      out.push({ text: part, start: at, ...(value ? { value } : {}) });
    }
    at += part.length;
  }
  return out;
}

/** The value one token states by its shape, if any. Plain words have none. */
function classify(token: string): Value | undefined {
  if (isAlpha(token)) return undefined;
  const lower = token.toLowerCase();
  const version = VERSION.exec(token);
  if (version && ((version[1] as string).split('.').length >= 3 || /^v/i.test(token))) {
    return { k: 'ver', parts: (version[1] as string).split('.').map(Number) };
  }
  // A tracking number or a PMID is an identifier, not a quantity; so are three or more digit groups ("25-31-01", "65862-017-01"),
  // where two are a range ("2015-2025").
  if (/^\d{7,}$/.test(token)) return { k: 'id', key: token };
  // "the 11th": a day of the month (joinValues joins it to a month name beside it).
  const ordinal = /^(\d{1,2})(?:st|nd|rd|th)$/i.exec(token);
  if (ordinal && Number(ordinal[1]) >= 1 && Number(ordinal[1]) <= 31) return { k: 'date', d: Number(ordinal[1]) };
  if (/^\d+(?:-\d+){2,}$/.test(token)) return { k: 'id', key: idKey(token) };
  const num = parseNumber(token.replace(/%$/, ''));
  if (num && !/[A-Za-z]$/.test(token.replace(/(k|m|bn)$/i, ''))) {
    if (token.endsWith('%')) return { k: 'num', n: num.n, step: num.step, pct: true };
    const money = /^[$€£]/.test(token);
    return { k: 'num', n: num.n, step: num.step, ...(money ? { dim: 'money' as const } : num.magnitude === 1 ? { plain: true as const } : {}) };
  }
  // 12h, 300s, 45min, 2.3GB, 21.0°C, 45-minute, 12-hour.
  const withUnit = /^([+-]?\d[\d,]*(?:\.\d+)?)-?([A-Za-z°]+)$/.exec(token);
  if (withUnit) {
    const unit = unitOf(withUnit[2] as string) ?? unitOf((withUnit[2] as string).replace(/s$/, ''));
    const n = parseNumber(withUnit[1] as string);
    if (unit && n) return { k: 'num', n: n.n * unit[1], step: n.step * unit[1], dim: unit[0] };
  }
  if (FILE.test(token) && !/^\d/.test(token)) return { k: 'id', key: idKey(lower.split(/[/\\]/).pop() as string) };
  if (/[/\\]/.test(token) && /\.[A-Za-z]{1,10}$/.test(token)) return { k: 'id', key: idKey(lower.split(/[/\\]/).pop() as string) };
  if (HOST.test(token)) return { k: 'id', key: idKey(token) };
  // "/healthz", "/blog/rust-move": a path names one thing.
  if (/^\/[\w.-]+(?:\/[\w.-]+)*\/?$/.test(token) && token.length > 2) return { k: 'id', key: idKey(token) };
  if (/^#\w[\w-]*$/.test(token) || /^@\w+$/.test(token)) return { k: 'id', key: idKey(token) };
  const hasLetter = /[A-Za-z]/.test(token);
  const hasDigit = /\d/.test(token);
  if (hasLetter && hasDigit && /^[\w.+-]+$/.test(token)) return { k: 'id', key: idKey(token) };
  if (/^[a-z]+_[a-z_]+$/i.test(token)) return undefined;
  return undefined;
}

/**
 * Reads a text. Numbers followed by a unit word, dates written in words,
 * times with AM/PM, "LH 401" and "zone B" are joined into values here,
 * where the tokens around them are known.
 */
export function readText(text: string): ReadText {
  const tags = tagWords(text);
  const raw = scan(text);
  const words: Word[] = [];
  let seg = 0;
  let headEnd = -1;
  for (const t of raw) {
    if (t.sep) {
      if (t.text === ':' && headEnd === -1) headEnd = words.length;
      if (t.text !== ':') seg++;
      continue;
    }
    if (t.text === '->') {
      words.push({ text: '->', lemma: '', pos: 'ARROW', start: t.start, end: t.end, seg });
      continue;
    }
    if (t.value && !t.synthetic) {
      words.push({ text: t.text, lemma: t.value.k === 'quote' ? '' : t.text.toLowerCase(), pos: 'VAL', start: t.start, end: t.end, value: t.value, seg });
      continue;
    }
    if (/^[.!?]+$/.test(t.text)) {
      seg++;
      continue;
    }
    if (t.synthetic) {
      words.push({ text: t.text, lemma: t.text.toLowerCase(), pos: t.value ? 'VAL' : 'X', start: t.start, end: t.end, seg, synthetic: true, ...(t.value ? { value: t.value } : {}) });
      continue;
    }
    // "orders-restore-test" names one thing; "fine-tuned", "end-to-end" and "follow-up" are English words.
    const hyphenParts = t.text.split('-');
    if (hyphenParts.length >= 3 && hyphenParts.every((p) => /^[A-Za-z]{2,}$/.test(p) && !NAME_FILLERS.has(p.toLowerCase()))) {
      words.push({ text: t.text, lemma: t.text.toLowerCase(), pos: 'VAL', start: t.start, end: t.end, seg, value: { k: 'id', key: idKey(t.text) } });
      continue;
    }
    // "ANALYTICS_PROD", "MART_FINANCE": a constant's name is one name, and ANALYTICS_DEV another.
    const constant = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(t.text) && /[A-Z]{2}/.test(t.text);
    const parts = !constant && /^[A-Za-z]+(?:[-_'][A-Za-z]+)+$/.test(t.text) && !/'s$/i.test(t.text) ? splitWords(t.text, t.start) : [{ text: t.text.replace(/['’]s$/i, ''), start: t.start }];
    for (const part of parts) {
      if (!part.text) continue;
      const tag = tags.get(part.start);
      const word: Word = { text: part.text, lemma: constant ? part.text.toLowerCase() : lemmaOf(part.text, tag), pos: tag?.pos ?? (isAlpha(part.text) ? 'X' : 'SYM'), start: part.start, end: part.start + part.text.length, seg };
      const n = numberWord(part.text);
      // "one" as a pronoun ("no one", "the one that failed") is no count.
      const pronounOne = part.text.toLowerCase() === 'one' && (tag?.pos === 'PRON' || /^(no|any|some|every|each)$/i.test(words[words.length - 1]?.text ?? ''));
      if (pronounOne) word.pos = 'PRON';
      else if (n !== undefined) word.value = { k: 'num', n, step: 1, plain: true };
      words.push(word);
    }
  }
  retagVerbs(words);
  retagPronounNames(words);
  joinValues(words, text);
  markNegation(words, headEnd === -1 ? -1 : headEnd);
  const segments = Math.max(0, ...words.map((w) => w.seg)) + 1;
  const failures = Array.from({ length: segments }, (_, s) => segmentFailures(words.filter((w) => w.seg === s), text));
  return { text, words, failures, headEnd: headEnd === -1 ? 0 : headEnd };
}

/**
 * The tagger reads a verb after a noun as a plural noun now and then ("the
 * /healthz endpoint returns 200", "the meta-analysis reports a ..."): an -s
 * word between a noun and a determiner or a value is the verb.
 */
function retagVerbs(words: Word[]): void {
  words.forEach((w, i) => {
    const prev = words[i - 1];
    const next = words[i + 1];
    if (w.pos !== 'NOUN' || !/[a-z]s$/.test(w.text) || !prev || !next || prev.seg !== w.seg || next.seg !== w.seg) return;
    if (/^(NOUN|PROPN|VAL)$/.test(prev.pos) && (/^(DET)$/.test(next.pos) || (next.value !== undefined && next.value.k === 'num') || /^\d/.test(next.text))) {
      w.pos = 'VERB';
      w.lemma = w.lemma.replace(/s$/, '');
    }
  });
}

// Pronouns that do stand before a noun: "your fare", "its owner".
const POSSESSIVES = new Set(['my', 'your', 'his', 'her', 'its', 'our', 'their', 'whose']);

/**
 * Only a possessive pronoun comes before a noun: "in us region", "the IT
 * team" name a place and a department. Any other pronoun after a preposition
 * or a determiner (or opening its segment) and before a noun is a name; after
 * a verb it is the verb's object ("granted us access").
 */
function retagPronounNames(words: Word[]): void {
  words.forEach((w, i) => {
    const prev = words[i - 1];
    const next = words[i + 1];
    if (w.pos !== 'PRON' || POSSESSIVES.has(w.lemma) || !next || next.seg !== w.seg || !/^(NOUN|PROPN|VERB)$/.test(next.pos)) return;
    if (prev && prev.seg === w.seg && !/^(ADP|DET)$/.test(prev.pos)) return;
    // "the IT team": the tagger then takes the noun for a verb.
    if (next.pos === 'VERB' && !(prev && prev.seg === w.seg && prev.pos === 'DET')) return;
    w.pos = 'PROPN';
    if (next.pos === 'VERB') next.pos = 'NOUN';
  });
}

function splitWords(text: string, start: number): Array<{ text: string; start: number }> {
  const out: Array<{ text: string; start: number }> = [];
  let at = 0;
  for (const part of text.split(/[-_']/)) {
    out.push({ text: part, start: start + at });
    at += part.length + 1;
  }
  return out;
}

function lemmaOf(text: string, tag: Tagged | undefined): string {
  const lower = text.toLowerCase();
  // "orders.created_at": wink tagged only its first piece ("orders"), whose lemma is not the identifier's.
  if (!tag || !/^[A-Za-z'’]+$/.test(text)) return lower;
  // wink lemmatises only the token it tagged; a word split differently keeps its own form.
  return tag.lemma && /^[a-z'’]+$/.test(tag.lemma) ? tag.lemma.replace(/['’]s$/, '') : lower;
}

/** Joins "1 h 45 min", "45 minutes", "14 April 2025", "April 15, 2025", "10:00 PM", "LH 401", "zone B" into single values. */
function joinValues(words: Word[], text: string): void {
  // Days and hours written as words: "Friday", "noon", "midnight".
  for (const w of words) {
    if (w.value) continue;
    const weekday = /^[A-Z]/.test(w.text) ? WEEKDAYS[w.text.toLowerCase()] : undefined;
    if (weekday !== undefined) w.value = { k: 'date', wd: weekday };
    else if (/^(noon|midday|midnight)$/i.test(w.text)) w.value = { k: 'time', min: /^midnight$/i.test(w.text) ? 0 : 720 };
    else continue;
    w.pos = 'VAL';
  }
  const dayOnly = (v: Word | undefined): number | undefined =>
    v?.value?.k === 'date' && v.value.d !== undefined && v.value.m === undefined && v.value.y === undefined && v.value.wd === undefined ? v.value.d : undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as Word;
    const next = words[i + 1];
    // A number and a unit word: "5 minutes", "1.2 t", "23 kg", "30.00 USD".
    if (w.value?.k === 'num' && !w.value.dim && !w.value.pct && next && next.pos !== 'VAL' && next.seg === w.seg) {
      const unit = unitOf(next.text) ?? unitOf(next.text.replace(/s$/, ''));
      if (unit && (next.text.length > 1 || /^[a-z]$/.test(next.text))) {
        w.value = { k: 'num', n: w.value.n * unit[1], step: w.value.step * unit[1], dim: unit[0] };
        next.lemma = '';
        next.pos = 'UNIT';
      }
    }
    if (w.text === '%' && i > 0) {
      const prev = words[i - 1] as Word;
      if (prev.value?.k === 'num') prev.value = { k: 'num', n: prev.value.n, step: prev.value.step, pct: true };
      w.lemma = '';
      w.pos = 'UNIT';
    }
    // A month name with a day and/or year around it.
    const month = MONTHS[w.text.toLowerCase()];
    if (month !== undefined && /^[A-Z]/.test(w.text) && (w.text.length > 3 || month !== 5 || next?.value?.k === 'num')) {
      const date: { y?: number; m: number; d?: number } = { m: month };
      // "14 March", "the 14th of March".
      const prev = words[i - 1]?.lemma === 'of' && dayOnly(words[i - 2]) !== undefined ? words[i - 2] : words[i - 1];
      if (prev?.value?.k === 'num' && prev.value.plain && prev.value.n >= 1 && prev.value.n <= 31 && Number.isInteger(prev.value.n)) {
        date.d = prev.value.n;
        prev.lemma = '';
        prev.pos = 'UNIT';
        delete prev.value;
      } else if (dayOnly(prev) !== undefined) {
        date.d = dayOnly(prev);
        prev!.lemma = '';
        prev!.pos = 'UNIT';
        delete prev!.value;
      }
      let k = i + 1;
      const after = words[k];
      if (date.d === undefined && dayOnly(after) !== undefined) {
        date.d = dayOnly(after);
        after!.lemma = '';
        after!.pos = 'UNIT';
        delete after!.value;
        k++;
      } else if (date.d === undefined && after?.value?.k === 'num' && after.value.plain && after.value.n >= 1 && after.value.n <= 31) {
        date.d = after.value.n;
        after.lemma = '';
        after.pos = 'UNIT';
        delete after.value;
        k++;
      }
      const year = words[k];
      if (year?.value?.k === 'num' && year.value.plain && year.value.n >= 1900 && year.value.n <= 2100) {
        date.y = year.value.n;
        year.lemma = '';
        year.pos = 'UNIT';
        delete year.value;
      }
      // "17-21 March": the first day of a range takes the month (and year) of the second.
      const before = prev === undefined ? -1 : words.indexOf(prev) - 1;
      const first = date.d === undefined || before < 0 ? undefined : words[/^[-–]$/.test(words[before]?.text ?? '') ? before - 1 : before];
      if (first?.value?.k === 'num' && first.value.plain && Number.isInteger(first.value.n) && first.value.n >= 1 && first.value.n < date.d! && /^\s*[-–]\s*$/.test(text.slice(first.end, prev!.start))) {
        first.value = { k: 'date', ...date, d: first.value.n };
      }
      w.value = { k: 'date', ...date };
      w.pos = 'VAL';
    }
    // "LH 401": an acronym and a number name one thing.
    // A count of none is a count, not part of a name: "AB 0" in a stock list is no AB plasma.
    if (next?.value?.k === 'num' && next.value.plain && next.value.n !== 0 && /^[A-Z]{2,3}$/.test(w.text) && next.seg === w.seg && next.start - w.end <= 1) {
      w.value = { k: 'id', key: idKey(`${w.text}${next.text}`) };
      w.pos = 'VAL';
      delete next.value;
      next.pos = 'UNIT';
      next.lemma = '';
    }
    // "zone B", "tier 2A": a noun labelled by a letter.
    // Not an initial: "adjuster M. Soto" names a person.
    const initial = next !== undefined && /^\.\s+[A-Z]/.test(text.slice(next.end, next.end + 3));
    if (next && /^[A-Z]$/.test(next.text) && next.text !== 'I' && !initial && /^(NOUN|PROPN)$/.test(w.pos) && next.seg === w.seg) {
      next.value = { k: 'id', key: idKey(`${w.lemma}${next.text}`) };
      next.pos = 'VAL';
    }
  }
  // "the 11th floor", "the 3rd attempt": an ordinal that counts the noun after it is a number, not a day of the month.
  for (let i = 0; i + 1 < words.length; i++) {
    const w = words[i] as Word;
    const next = words[i + 1] as Word;
    if (dayOnly(w) !== undefined && !next.value && next.seg === w.seg && /^(NOUN|PROPN)$/.test(next.pos) && /^\s+$/.test(text.slice(w.end, next.start))) {
      w.value = { k: 'num', n: dayOnly(w) as number, step: 1, plain: true };
    }
  }
  // Durations written in parts: "1 h 45 min".
  for (let i = 0; i + 2 < words.length; i++) {
    const a = words[i] as Word;
    const b = (words[i + 1]?.pos === 'UNIT' ? words[i + 2] : words[i + 1]) as Word;
    if (a.value?.k === 'num' && b.value?.k === 'num' && a.value.dim === 'time' && b.value.dim === 'time' && a.value.n > b.value.n && a.seg === b.seg) {
      a.value = { k: 'num', n: a.value.n + b.value.n, step: b.value.step, dim: 'time' };
      b.pos = 'UNIT';
      delete b.value;
    }
  }
}

const isZero = (w: Word | undefined): boolean => w?.value?.k === 'num' && w.value.n === 0;
const isContent = (w: Word): boolean => /^(NOUN|PROPN|ADJ|VAL|X|NUM|VERB)$/.test(w.pos);

/**
 * Marks words a negation applies to. "no X", "without X", "0 X", "X: 0",
 * "X: none", "not X": the noun phrase after a negator, or before a zero or
 * "none" that ends its segment. A zero followed by a failure word ("0
 * failed", "0 missing") negates the failure, not the noun.
 */
function markNegation(words: Word[], headEnd: number): void {
  const mark = (from: number, step: 1 | -1) => {
    let crossedVerb = false;
    for (let k = from; k >= 0 && k < words.length; k += step) {
      const w = words[k] as Word;
      if (w.seg !== (words[from] as Word).seg || w.pos === 'ARROW') break;
      if (/^(VERB|AUX)$/.test(w.pos) && step === 1 && k !== from && !crossedVerb) {
        // "no tickets remain unanswered", "no fee was charged": the negation reaches the verb's complement.
        crossedVerb = true;
        const after = words[k + 1];
        if (/^(VERB|AUX)$/.test(w.pos) && after && /^(ADJ|VERB)$/.test(after.pos) && after.seg === w.seg) continue;
        if (w.pos === 'VERB') w.neg = true;
        break;
      }
      if (/^(VERB|AUX|ADP|CCONJ|SCONJ)$/.test(w.pos) && !(step === 1 && k === from)) break;
      if (isContent(w)) w.neg = true;
    }
  };
  words.forEach((w, i) => {
    const lemma = w.lemma;
    const next = words[i + 1];
    // "non-root", "non-zero": the prefix negates the word it is joined to.
    if (lemma === 'non' && next && next.start === w.end + 1) {
      next.neg = true;
      w.lemma = '';
      return;
    }
    if (NEGATORS.has(lemma) && lemma !== 'none') {
      if (next && isFailureWord(next.lemma)) return;
      // "no refunds failed", "nothing was rejected": the negation is of the failure, the refunds are fine.
      let k = i + 1;
      while (words[k] && /^(NOUN|PROPN|ADJ|AUX)$/.test((words[k] as Word).pos) && (words[k] as Word).seg === w.seg) k++;
      if (words[k] && isFailureWord((words[k] as Word).lemma) && (words[k] as Word).seg === w.seg) return;
      // "no one has access" reads as "nobody has access".
      mark(next?.pos === 'PRON' && next.lemma === 'one' ? i + 2 : i + 1, 1);
    } else if (isZero(w)) {
      if (next && next.seg === w.seg && isFailureWord(next.lemma)) return;
      if (next && next.lemma === 'of') return;
      const prev = words[i - 1];
      if (next && next.seg === w.seg && isContent(next)) mark(i + 1, 1);
      else if (prev && prev.seg === w.seg) mark(i - 1, -1);
      else if (prev) mark(i - 1, -1);
    } else if (lemma === 'none') {
      if (i > 0) mark(i - 1, -1);
    }
    // "further charges scheduled for SUB-1: none", "unanswered tickets: 0": the answer negates the whole head.
    if ((lemma === 'none' || isZero(w)) && i === headEnd && (i + 1 === words.length || words[i + 1]?.seg !== w.seg)) {
      for (let k = 0; k < headEnd; k++) if (isContent(words[k] as Word) && (words[k] as Word).seg === w.seg) (words[k] as Word).neg = true;
    }
  });
}

/**
 * What in a segment reports a failed or unfinished result: a failure word
 * not itself counted zero ("4 failed", not "0 failed"), a negated
 * participle ("not found", "not met"), a zero count of something that is not
 * a problem ("0 results", "0 of 3,120 delivered"), or a partial count ("31 of
 * 36 shipped").
 */
function segmentFailures(seg: readonly Word[], text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < seg.length; i++) {
    const w = seg[i] as Word;
    const prev = seg[i - 1];
    if (isFailureWord(w.lemma) || isFailureWord(w.text.toLowerCase())) {
      // "33 bounced": a count of failures beside a result, marked as counted; "bounced 0", "failed: 0" count none.
      if (!isZero(prev) && !isZero(seg[i + 1]) && !(prev && NEGATORS.has(prev.lemma))) out.push(prev?.value?.k === 'num' ? `#counted ${w.lemma}` : w.lemma);
    }
    // "not converged", "not verified", "never arrived": a negated outcome.
    // "could not be verified", "has not been shipped": the negation reaches past the auxiliary.
    const negator = prev && /^(be|been|being)$/.test(prev.text.toLowerCase()) ? seg[i - 2] : prev;
    if (negator && /^(not|n't|never)$/.test(negator.lemma) && /^(VERB|ADJ)$/.test(w.pos) && !isFailureWord(w.lemma)) out.push(`not ${w.lemma}`);
    // "no acknowledgement", "no slots": something expected is absent (not "no errors", a problem absent).
    if (prev?.lemma === 'no' && /^(NOUN|PROPN)$/.test(w.pos) && !PROBLEM_NOUNS.has(w.lemma) && !PROBLEM_NOUNS.has(w.text.toLowerCase()) && !isFailureWord(seg[i + 1]?.lemma ?? '')) out.push(`no ${w.lemma}`);
    // "12 remain", "3 remaining", "2 left": what an act should have ended is still there (never "0 remain").
    if (prev?.value?.k === 'num' && prev.value.n > 0 && (w.lemma === 'remain' || /^(remain|remains|remaining|left)$/.test(w.text.toLowerCase()))) out.push('#counted remain');
    // An HTTP error status where a tool reports one: the request failed, whatever the run's flag says.
    if (w.value?.k === 'num' && !w.value.dim && !w.value.pct && Number.isInteger(w.value.n) && w.value.n >= 400 && w.value.n <= 599 && prev && (prev.pos === 'ARROW' || STATUS_BEFORE.has(prev.lemma) || STATUS_BEFORE.has(prev.text.toLowerCase()))) {
      out.push(`HTTP ${w.value.n}`);
    }
    for (const phrase of FAILURE_PHRASES) {
      if (phrase.every((p, k) => (seg[i + k] as Word | undefined)?.lemma === p || (seg[i + k] as Word | undefined)?.text.toLowerCase() === p)) out.push(phrase.join(' '));
    }
    // "pods ready: 4/5", "tests passed 38/40": a state's count out of a total, short of it.
    const fraction = /^(\d+)\/(\d+)$/.exec(w.text);
    if (fraction && Number(fraction[1]) < Number(fraction[2]) && seg.slice(Math.max(0, i - 2), i).some((o) => FRACTION_STATES.has(o.lemma) || FRACTION_STATES.has(o.text.toLowerCase()))) {
      out.push(Number(fraction[1]) === 0 ? '#zero' : '#partial');
      continue;
    }
    if (w.value?.k === 'num' && seg[i + 1]?.lemma === 'of' && seg[i + 2]?.value?.k === 'num') {
      const done = w.value.n;
      const total = (seg[i + 2]?.value as { n: number }).n;
      if (done < total) out.push(done === 0 ? '#zero' : '#partial');
      i += 2;
      continue;
    }
    if (isZero(w)) {
      const next = seg[i + 1];
      if (next && (isFailureWord(next.lemma) || PROBLEM_NOUNS.has(next.lemma))) continue;
      if (prev && (PROBLEM_NOUNS.has(prev.lemma) || isFailureWord(prev.lemma) || isFailureWord(prev.text.toLowerCase()))) continue;
      if (w.value?.k === 'num' && w.value.dim === 'money') continue;
      // What is counted zero: the word after ("0 changed", "load: 0 console errors") or, for "restarts: 0", the one before.
      // A zero that ends its line ("items suppressed: 0") counts the label before it, whatever the next line says.
      const lineEnds = next !== undefined && text.slice(w.end, next.start).includes('\n');
      const counted = next && !lineEnds && /^(NOUN|VERB|ADJ)$/.test(next.pos) ? next : prev && /^(NOUN|VERB|ADJ|PROPN)$/.test(prev.pos) ? prev : undefined;
      out.push(counted ? `#zero ${counted.lemma}` : '#zero');
    }
  }
  return out;
}
