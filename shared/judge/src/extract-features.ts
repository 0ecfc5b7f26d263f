/**
 * Salient features of a claim or an observation: what two texts can share that
 * ties them to the same subject. Claims and evidence are linked only through
 * these, so extraction is generic (shapes of tokens and common English
 * function words) and knows nothing about any task domain.
 *
 * A feature is a string `kind:value`:
 * - `url:`   an http(s) URL (and its origin)
 * - `file:`  a file or path, keyed by its lower-cased base name
 * - `quote:` a quoted or backticked string
 * - `id:`    an identifier or version: mixes letters and digits, snake_case, camelCase, `#12`
 * - `name:`  a weaker name: an ACRONYM or a hyphenated-words name
 * - `num:`   a number, without separators or unit
 * - `tool:`  the tool that made an observation
 * - `word:`  a content word, crudely stemmed
 */
export type FeatureKind = 'url' | 'file' | 'quote' | 'id' | 'name' | 'num' | 'tool' | 'word';

/** Score two texts must share to be linked: one strong feature, or a number and a word, or three words. */
export const LINK_THRESHOLD = 3;

const WEIGHTS: Record<FeatureKind, number> = { url: 4, file: 3, quote: 3, id: 3, tool: 3, name: 2, num: 2, word: 1 };

export function featureKind(key: string): FeatureKind {
  return key.slice(0, key.indexOf(':')) as FeatureKind;
}

export function featureValue(key: string): string {
  return key.slice(key.indexOf(':') + 1);
}

/** How much sharing this feature says two texts are about the same thing. */
export function featureWeight(key: string): number {
  const kind = featureKind(key);
  // A one-digit number ("2 files", "step 3") is too common to tie texts together by itself.
  if (kind === 'num') return featureValue(key).replace(/[^0-9]/g, '').length >= 2 ? 2 : 1;
  return WEIGHTS[kind] ?? 1;
}

/**
 * Whether a claim naming this feature needs evidence that names it too: the
 * specific details a claim can be wrong about (a URL, a file, an identifier, a
 * quoted value, a number of two or more digits).
 */
export function isRequiredFeature(key: string): boolean {
  const kind = featureKind(key);
  if (kind === 'url' || kind === 'file' || kind === 'quote' || kind === 'id') return true;
  return kind === 'num' && featureWeight(key) >= 2;
}

/** The feature text as a person reads it. */
export function describeFeature(key: string): string {
  const kind = featureKind(key);
  const value = featureValue(key);
  if (kind === 'quote') return `"${value}"`;
  if (kind === 'tool') return `tool ${value}`;
  return value;
}

export function toolFeature(toolName: string): string {
  return `tool:${toolName.trim().toLowerCase()}`;
}

// English function words and generic completion words: they say nothing about the subject.
const STOPWORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does doing done for from had has have having he her here hers him his how i if in into is it its ' +
    'itself just me more most my no nor not now of off on once only or other our ours out over own same she should so some such than that the their theirs them ' +
    'then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours ' +
    'also all any both each few many much every again further about above below after before between during against among via per within without ' +
    'complete completed completes completing finish finished finishes successfully successful success ok okay yes task tasks ' +
    'might must may could should would shall can later maybe perhaps probably likely possibly seem seems appear appears'
  ).split(' '),
);

const SUFFIXES: ReadonlyArray<[string, string]> = [
  ['ations', ''],
  ['ation', ''],
  ['ments', ''],
  ['ment', ''],
  ['ings', ''],
  ['ing', ''],
  ['ions', ''],
  ['ion', ''],
  ['ied', 'y'],
  ['ies', 'y'],
  ['ed', ''],
  ['es', ''],
  ['s', ''],
];

/** A crude suffix stemmer: "deployed", "deploys", "deployment" and "deploy" share one stem. */
export function stem(word: string): string {
  let w = word.toLowerCase();
  for (const [suffix, replacement] of SUFFIXES) {
    if (w.endsWith(suffix) && w.length - suffix.length + replacement.length >= 3) {
      w = w.slice(0, w.length - suffix.length) + replacement;
      break;
    }
  }
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

const URL_RE = /\bhttps?:\/\/[^\s<>"'`)\]]+/gi;
const QUOTE_RE = /"([^"\n]{1,200})"|“([^”\n]{1,200})”|`([^`\n]{1,200})`|‘([^’\n]{1,200})’|(?<![\w])'([^'\n]{1,200})'(?![\w])/g;
const FILE_RE = /^[\w][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,9}$/;
const VERSION_RE = /^v?\d+(\.\d+)+([-+.][\w.-]+)?$/i;
const NUMBER_RE = /^[+-]?\d[\d,]*(\.\d+)?(%|[A-Za-z]{1,3})?$/;
const ABBREVIATIONS = new Set(['e.g', 'i.e', 'etc', 'vs', 'a.m', 'p.m']);

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function normalizeUrl(raw: string): string[] {
  const trimmed = raw.replace(/[.,;:!?]+$/, '');
  try {
    const url = new URL(trimmed);
    const origin = `${url.protocol}//${url.host}`.toLowerCase();
    const path = url.pathname.replace(/\/+$/, '');
    const full = `${origin}${path}${url.search}`;
    if (full === origin) return [`url:${origin}`];
    // The last path segment also stands for itself: "/healthz" in a claim, a URL ending in it in the evidence.
    const last = decodeURIComponentSafe(path.split('/').pop() ?? '').toLowerCase();
    return last.length >= 2 ? [`url:${full}`, `url:${origin}`, `file:${last}`] : [`url:${full}`, `url:${origin}`];
  } catch {
    return [`url:${trimmed.toLowerCase()}`];
  }
}

/** Whether a token is a file system path rather than words joined by a slash ("and/or"). */
export function isPath(token: string): boolean {
  if (!/[/\\]/.test(token) || !/[A-Za-z0-9]/.test(token)) return false;
  if (/^(\/|\.{1,2}\/|~\/|[A-Za-z]:\\)/.test(token)) return true;
  const segments = token.split(/[/\\]/).filter(Boolean);
  // "and/or" and "read/write" are words; a path has a file name or several segments.
  return segments.length >= 3 || segments.some((s) => FILE_RE.test(s));
}

function addWord(out: Set<string>, word: string): void {
  const lower = word.toLowerCase();
  if (lower.length < 3 || STOPWORDS.has(lower) || !/^[a-z]+$/.test(lower)) return;
  out.add(`word:${stem(lower)}`);
}

function classifyToken(token: string, out: Set<string>): void {
  if (!token) return;
  const lower = token.toLowerCase();
  if (isPath(token)) {
    const base = token.replace(/[/\\]+$/, '').split(/[/\\]/).pop() ?? '';
    if (base) out.add(`file:${base.toLowerCase()}`);
    return;
  }
  // "e.g." and "i.e." are English, not identifiers a claim could be wrong about.
  if (ABBREVIATIONS.has(lower)) return;
  if (VERSION_RE.test(token)) {
    out.add(`id:${lower}`);
    return;
  }
  if (FILE_RE.test(token)) {
    out.add(`file:${lower}`);
    return;
  }
  if (NUMBER_RE.test(token)) {
    const numeric = token.match(/^[+-]?\d[\d,]*(\.\d+)?/)?.[0] ?? token;
    out.add(`num:${numeric.replace(/,/g, '').replace(/^\+/, '')}`);
    return;
  }
  if (/^#\d+$/.test(token) || /^@\w+$/.test(token)) {
    out.add(`id:${lower}`);
    return;
  }
  const hasLetter = /[A-Za-z]/.test(token);
  const hasDigit = /\d/.test(token);
  if (hasLetter && hasDigit) {
    out.add(`id:${lower}`);
    return;
  }
  if (/^\w+_\w+$/.test(token) && hasLetter) {
    out.add(`id:${lower}`);
    return;
  }
  if (/^[a-z]+[A-Z]\w*$/.test(token) || /^[A-Z][a-z]+[A-Z]\w*$/.test(token)) {
    out.add(`id:${lower}`);
    return;
  }
  if (/^[A-Za-z]+(-[A-Za-z]+)+$/.test(token)) {
    // "orders-restore-test" names one thing; "end-to-end" and "follow-up" are English compounds.
    const parts = lower.split('-');
    out.add(parts.length >= 3 && !parts.some((p) => STOPWORDS.has(p)) ? `id:${lower}` : `name:${lower}`);
    for (const part of token.split('-')) addWord(out, part);
    return;
  }
  if (/^[A-Z]{2,}s?$/.test(token) && !STOPWORDS.has(lower)) {
    out.add(`name:${lower.replace(/s$/, '')}`);
    return;
  }
  if (/^[A-Za-z]+$/.test(token)) {
    addWord(out, token);
    return;
  }
  // Dotted names that are not files (os.path.join) and other compounds: keep the whole, and its words.
  if (/^[A-Za-z][\w.-]*[A-Za-z0-9]$/.test(token) && /[.]/.test(token)) out.add(`id:${lower}`);
  for (const part of token.split(/[^A-Za-z]+/)) addWord(out, part);
}

/** Every salient feature of a text. */
export function extractFeatures(text: string): Set<string> {
  const out = new Set<string>();
  const withoutUrls = text.replace(URL_RE, (match) => {
    for (const key of normalizeUrl(match)) out.add(key);
    return ' ';
  });
  for (const m of withoutUrls.matchAll(QUOTE_RE)) {
    const inner = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? '').trim().replace(/\s+/g, ' ').toLowerCase();
    if (inner) out.add(`quote:${inner}`);
  }
  // "12,480" is one number: drop thousands separators before commas split tokens.
  const plain = withoutUrls.replace(/(\d),(?=\d{3}\b)/g, '$1');
  for (const raw of plain.split(/[\s,;()[\]{}<>"“”‘’`|=]+/)) {
    const token = raw
      .replace(/^[^A-Za-z0-9_./~\\#@+-]+/, '')
      .replace(/['’]s$/, '')
      .replace(/[.:!?'’*]+$/, '');
    // "key:value" and "12:30" hold two tokens; a Windows drive path keeps its colon.
    const parts = /^[A-Za-z]:\\/.test(token) ? [token] : token.split(':');
    for (const part of parts) classifyToken(part.replace(/[.!?'’*]+$/, ''), out);
  }
  return out;
}

/** Lower-cased word-like tokens of a text, as candidates for a tool name the text mentions. */
export function toolNameCandidates(text: string): string[] {
  const out = new Set<string>();
  for (const raw of text.toLowerCase().split(/[^a-z0-9_.-]+/)) {
    const token = raw.replace(/^[.-]+|[.-]+$/g, '');
    if (token.length >= 2) {
      out.add(token);
      out.add(stem(token));
    }
  }
  return [...out].map((t) => `tool:${t}`);
}

/** The features of one observation: its summary, plus its tool name as a tool feature and as words. */
export function evidenceFeatures(summary: string, toolName: string | undefined): Set<string> {
  const features = extractFeatures(summary);
  if (toolName) {
    features.add(toolFeature(toolName));
    for (const part of toolName.split(/[^A-Za-z]+/)) addWord(features, part);
  }
  return features;
}
