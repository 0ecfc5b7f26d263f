import type { ClaimKind, EvidenceKind } from '@vouch/contracts';
import { stem } from './extract-features.js';
import { isProblemNoun, readText, type ReadText, type Word } from './read-text.js';
import { derivationallyRelated, lexicallyRelated, senses, type LexPos } from './lexicon.js';
import { valuesMatch, type Value } from './read-values.js';

/**
 * Whether one observation shows the fact a claim states. Support is not
 * sharing a detail: the observation must show the same action, on the same
 * object, with the same qualifiers (every word that says which, where or
 * for whom), the same values after normalisation, and a positive result read
 * from its own text, not only from its success flag. Everything here is the
 * structure of English (parts of speech, negation, noun phrases, values),
 * never a task's vocabulary.
 */

// Verbs that frame a check or a finding: the fact is what follows them, and the check itself is the observation.
// Reading verbs are the same: the observation of the thing is what shows it was looked up.
const FRAME_VERBS = new Set(
  (
    'verify confirm check test retest validate ensure reproduce audit review inspect find identify discover determine detect observe measure benchmark compare prove see notice ' +
    'look read load pull query fetch retrieve search list get examine scan analyse analyze evaluate run rerun execute'
  ).split(' '),
);
// Verbs that only say something was changed: any of them, or a shown change ("a -> b"), shows the others.
const CHANGE_VERBS = new Set('change update modify edit set adjust alter configure'.split(' '));
const SUBJECT_PRONOUNS = new Set(['i', 'we', 'then', 'also', 'and']);
// Verbs whose success is a zero count: "cleared the fault codes" and "active codes: 0".
const REMOVAL_VERBS = new Set('clear remove delete purge drain empty close resolve revoke cancel fix uninstall disable stop kill flush wipe dismiss withdraw'.split(' '));
// Words that make a claim about every member: one exception falsifies it.
const UNIVERSAL = new Set(['all', 'every', 'each', 'both']);
// Titles and relative adjectives: a record names the person or thing, not how the claim referred to it.
const FORGIVEN = new Set('mr mrs ms dr prof new current latest existing same respective entire whole all every each both other own various following'.split(' '));
// Words that say an action came out done, when the action itself is written as a noun ("refund created", "registration complete").
const DONE_WORDS = new Set('complete completed done ok success successful succeeded succeed live ready finished confirmed issued created applied'.split(' '));

const CONTENT = /^(NOUN|PROPN|ADJ|X|VERB|ADV)$/;
// Words that say an act began or waits to run, not that it is done: "deploy started", "export queued". As written,
// never a lemma: "the billing queue" and "repair request RQ-5513" name things.
const BEGUN_WORDS = new Set('started starting began begun queued scheduled triggered initiated kicked'.split(' '));
// Words that say an act is not real yet: asked for, planned, tried, drafted, waited for, ready to be done.
const UNREALIZED_WORDS = new Set('planned requested attempted tried awaiting proposed drafted ready intended'.split(' '));
// Words that say an act was only rehearsed: nothing a later "complete" makes real.
const REHEARSAL_WORDS = new Set('dry preview simulate simulated simulation rehearsal'.split(' '));
const OPPOSITE_PARTICLES = new Map([['on', 'off'], ['off', 'on'], ['up', 'down'], ['down', 'up'], ['in', 'out'], ['out', 'in']]);
// Modal verbs: an act after one is future, possible or hypothetical ("will deploy", "would delete").
const MODALS = new Set(['will', 'would', 'shall', 'should', 'could', 'can', 'may', 'might', "'ll", 'wo']);

export interface ClaimTerm {
  word: Word;
  index: number;
  /** Need not be shown: verbs of a statement, adverbs. */
  optional: boolean;
}

export interface ClaimReading {
  read: ReadText;
  kind: ClaimKind;
  /** The verb saying what was done, for actions. */
  action?: ClaimTerm;
  /** The verb of the fact a check or finding is about: "resolves", "is signed", "passes". */
  predicate?: ClaimTerm;
  terms: ClaimTerm[];
  values: Array<{ word: Word; index: number; value: Value }>;
}

function isPastForm(text: string): boolean {
  return /ed$/i.test(text) || /^(sent|paid|made|built|done|set|put|got|ran|run|found|held|kept|left|led|lost|met|sold|spent|split|taken|took|told|won|gave|given|went|gone|came|became|seen|shown|bound|shut|written|wrote|begun|began|chosen|drawn|hung|hit|cut|read|rebuilt|rewritten|reset|undone)$/i.test(text);
}

/** Reads a claim: its action or the fact it checks, its qualifiers and its values. */
export function readClaim(text: string, kind: ClaimKind): ClaimReading {
  const read = readText(text);
  const words = read.words;
  const terms: ClaimTerm[] = [];
  const values: ClaimReading['values'] = [];
  let action: ClaimTerm | undefined;
  let predicate: ClaimTerm | undefined;
  let frameAt = -1;
  // Where the agent's own verb may stand: first, or after "I", "we", "then".
  const leading = (index: number) => words.slice(0, index).every((w) => SUBJECT_PRONOUNS.has(w.lemma) || w.pos === 'ADV');
  // An order ("Mail sample ballots to precinct 9", a card's title or a goal): its first word is the act, though the
  // tagger read a noun ("mail", "email", "patch"), when a verb can be spelled so, an object follows and no other word
  // tells of an act done ("Mail volume dropped" is about mail).
  const first = words[0];
  const imperative =
    kind === 'action' &&
    first !== undefined &&
    /^[A-Z][a-z]+$/.test(first.text) &&
    /^(NOUN|PROPN)$/.test(first.pos) &&
    /^(DET|NOUN|ADJ|PROPN|VAL|NUM)$/.test(words[1]?.pos ?? '') &&
    !words.some((w) => w !== first && w.pos === 'VERB' && isPastForm(w.text)) &&
    senses(first.lemma, 'verb').length > 0;
  // "with pandas", "using kubectl": the instrument, not the fact; it is the observation's tool or nothing to require.
  let instrument = false;
  words.forEach((w, index) => {
    if (w.synthetic) return;
    // "using X", "via X", "with pandas" (a bare tool name), not "with the auditor" or "with Priya Nair".
    if (w.pos === 'ADP' || w.pos === 'VERB' || w.pos === 'CCONJ') {
      const next = words[index + 1];
      // "with admin rights" is a noun phrase, not a tool's name.
      const bare = next !== undefined && /^(NOUN|X)$/.test(next.pos) && !next.value && !/^(NOUN|PROPN)$/.test(words[index + 2]?.pos ?? '');
      instrument = (/^(using|via)$/.test(w.lemma) || (w.lemma === 'with' && bare)) && w.pos !== 'CCONJ';
    }
    if (w.value) {
      values.push({ word: w, index, value: w.value });
      return;
    }
    if (!CONTENT.test(w.pos) || w.lemma.length < 2 || FORGIVEN.has(w.lemma)) return;
    const prev = words[index - 1];
    const next = words[index + 1];
    // A tagger reads a sentence-initial verb as a name now and then ("Cancelled appointment A-55102").
    const verbLike = w.pos === 'VERB' || (leading(index) && isPastForm(w.text) && /^[A-Z]/.test(w.text)) || (imperative && index === 0);
    if (verbLike && frameAt === -1 && action === undefined && FRAME_VERBS.has(w.lemma) && leading(index)) {
      frameAt = index;
      return;
    }
    if (verbLike && action === undefined && frameAt === -1 && kind === 'action' && leading(index)) {
      action = { word: { ...w, pos: 'VERB' }, index, optional: false };
      return;
    }
    // The fact a check is about, or a passive statement: "resolves to", "is signed", "was delivered".
    // "has driven" is a statement's verb (optional); "is signed", "was delivered" state the fact.
    const finite = w.pos === 'VERB' && ((prev?.pos === 'AUX' && prev.lemma !== 'have') || (/s$/.test(w.text) && prev !== undefined && /^(NOUN|PROPN|VAL)$/.test(prev.pos)));
    if (finite && predicate === undefined && (frameAt !== -1 || (prev?.pos === 'AUX' && prev.lemma !== 'have'))) {
      predicate = { word: w, index, optional: false };
      return;
    }
    // "The meta-analysis reports a ...": a noun right before a determiner is a verb.
    const nounAsVerb = w.pos === 'NOUN' && /s$/.test(w.text) && /^(DET|VAL|NUM)$/.test(next?.pos ?? '') && /^(NOUN|PROPN|VAL)$/.test(prev?.pos ?? '');
    // A verb between a determiner or name and a noun modifies the noun: "the Instagram launch post".
    // So does one right after the act's verb, as a word of its own ("Granted read access"; not "Gave reporting_ro").
    const afterVerb = prev?.pos === 'VERB' && next !== undefined && /^ $/.test(read.text.slice(w.end, next.start));
    const modifier = w.pos === 'VERB' && (/^(DET|ADJ|PROPN|NOUN)$/.test(prev?.pos ?? '') || afterVerb) && next?.pos === 'NOUN';
    // A verb the tagger sees in a preposition's object, with nothing after it, is a noun: "for prod", "to staging".
    const objectOfPreposition = w.pos === 'VERB' && prev !== undefined && isPreposition(prev) && (next === undefined || next.seg !== w.seg || /^(CCONJ|ADP)$/.test(next.pos));
    // A statement's own verbs ("reaches", "owes", "went") restate its values; adverbs only colour them.
    terms.push({ word: w, index, optional: (w.pos === 'VERB' && !modifier && !objectOfPreposition) || w.pos === 'ADV' || nounAsVerb || instrument });
  });
  // "SSO access revoked for the contractor", "Release 2.3 deployed to production": an action told in a reduced passive,
  // the act's participle right after what it was done to. It is the claim's act, to be shown like a leading verb.
  if (kind === 'action' && action === undefined && predicate === undefined && frameAt === -1) {
    // A regular participle, or an irregular one that is no noun too ("the test set" is a set).
    const participle = (text: string) => /ed$/i.test(text) || /^(sent|paid|made|built|done|written|taken|shown|given|chosen|rebuilt|rewritten|undone|shut|sold|spent|kept|lost|won)$/i.test(text);
    // Followed by no object ("reached 12.4k impressions", "flagged nothing" are past tenses with theirs): a preposition, or the end.
    const passive = (k: number) => { const next = words[k + 1]; return next === undefined || next.seg !== words[k]?.seg || /^(ADP|PART|ADV)$/.test(next.pos); };
    const at = terms.findIndex((t) => t.optional && t.word.pos === 'VERB' && participle(t.word.text) && passive(t.index) && /^(NOUN|PROPN|VAL|NUM|X)$/.test(words[t.index - 1]?.pos ?? ''));
    const act = terms[at];
    if (act) {
      terms.splice(at, 1);
      action = { ...act, optional: false };
    }
  }
  return { read, kind, ...(action ? { action } : {}), ...(predicate ? { predicate } : {}), terms, values };
}

/**
 * Whether two words are opposites by their prefix: "lock" and "unlock", "activate" and "deactivate", "enable" and
 * "disable", "able" and "unable". Four letters of stem at least, so "do" and "undo" or "in" and "din" never pair.
 */
export function isOpposite(a: string, b: string): boolean {
  if (a === b) return false;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  if (short.length >= 4 && long.endsWith(short) && /^(un|dis|de|non|in|im)$/.test(long.slice(0, long.length - short.length))) return true;
  // "enable" and "disable": two prefixes on one stem.
  const stemOf = (w: string) => /^(en|un|dis)(.{4,})$/.exec(w);
  const [x, y] = [stemOf(a), stemOf(b)];
  return x !== null && y !== null && x[2] === y[2] && x[1] !== y[1] && (x[1] === 'dis' || y[1] === 'dis' || x[1] === 'un' || y[1] === 'un');
}

/** Whether two lemmas name the same thing: equal, one stem, one derived from or abbreviating the other. */
export function sameWord(a: string, b: string, strict = false): boolean {
  if (a === b) return true;
  if (strict) return a.replace(/s$/, '') === b.replace(/s$/, '');
  if (isOpposite(a, b)) return false;
  const sa = stem(a);
  const sb = stem(b);
  if (sa === sb) return true;
  // Names are compared as written: "Lang" is not "Lange".
  if (strict) return a.replace(/s$/, '') === b.replace(/s$/, '');
  if (CHANGE_VERBS.has(a) && CHANGE_VERBS.has(b)) return true;
  const [short, long] = sa.length <= sb.length ? [sa, sb] : [sb, sa];
  // "mailer" and "email": an agent noun and the word it is made from.
  const bare = long.replace(/(?:er|or)$/, '');
  if (short.length >= 4 && (bare.includes(short) || short.includes(bare)) && Math.abs(bare.length - short.length) <= 2) return true;
  // "registration" and "register", "configuration" and "configure": a long shared beginning.
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  const shorter = Math.min(a.length, b.length);
  if (common >= 5 && common >= 0.7 * shorter) return true;
  // "val" for "validation", "max" for "maximum".
  const [s2, l2] = a.length <= b.length ? [a, b] : [b, a];
  return s2.length >= 3 && l2.startsWith(s2) && l2.length - s2.length >= 3;
}

export interface ObservationView {
  read: ReadText & { tool: string[] };
  kind: EvidenceKind;
}

export type Judgement =
  /** The observation shows the fact; `matched` are the observation's word indexes the claim rests on. */
  | { verdict: 'shows'; matched: number[] }
  /** It is about the same fact and reports a negative or unfinished result. */
  | { verdict: 'contradicts'; matched: number[]; why: string }
  /** It does not show the fact; `missing` says what it lacks, `matched` what it has. */
  | { verdict: 'lacks'; matched: number[]; missing: string[]; coverage: number; negative: boolean; soft?: string[]; items?: string[] };

/** The lexicon's part of speech for a claim word that may be said in other words: a common noun or a verb, never a name. */
function lexPos(w: Word): LexPos | undefined {
  if (isName(w) || w.lemma.length < 3) return undefined;
  return w.pos === 'VERB' ? 'verb' : w.pos === 'NOUN' ? 'noun' : undefined;
}

/** An observation word that says a claim word in other words (WordNet: a synonym, or a close hypernym or hyponym). */
function findRelated(obs: ObservationView, lemma: string, pos: LexPos, negated: boolean | undefined): number {
  const words = obs.read.words;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as Word;
    if (w.value || !w.lemma || w.lemma.length < 3 || isName(w)) continue;
    // A record's state in capitals ("CANCELLED") is tagged as a name now and then: it is still the state's word.
    if (pos === 'noun' ? w.pos !== 'NOUN' : !/^(VERB|ADJ)$/.test(w.pos) && !(w.pos === 'PROPN' && /^[A-Z_]{3,}$/.test(w.text))) continue;
    if (negated !== undefined && Boolean(w.neg) !== negated) continue;
    if (lexicallyRelated(lemma, w.lemma, pos)) return i;
  }
  return -1;
}

function findWord(obs: ObservationView, lemma: string, opts: { strict?: boolean; near?: number; negated?: boolean; lex?: LexPos | undefined } = {}): number {
  const found = findLiteral(obs, lemma, opts);
  return found === -1 && opts.lex !== undefined && !opts.strict ? findRelated(obs, lemma, opts.lex, opts.negated) : found;
}

function findLiteral(obs: ObservationView, lemma: string, opts: { strict?: boolean; near?: number; negated?: boolean } = {}): number {
  const words = obs.read.words;
  let best = -1;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as Word;
    if (w.value || !w.lemma) continue;
    if (!sameWord(lemma, w.lemma, opts.strict)) continue;
    // A word the claim negates is looked for where the observation negates it too ("no codes remain": "active codes: 0").
    if (opts.negated !== undefined && best !== -1 && Boolean((words[best] as Word).neg) === opts.negated) continue;
    if (opts.negated !== undefined && best !== -1 && Boolean(w.neg) === opts.negated) {
      best = i;
      continue;
    }
    if (opts.near === undefined) {
      if (best === -1) best = i;
      if (opts.negated === undefined) return best;
      continue;
    }
    if (best === -1 || Math.abs(i - opts.near) < Math.abs(best - opts.near)) best = i;
  }
  return best;
}

/** Whether a claim word names something (a name, an acronym): compared as written. */
function isName(w: Word): boolean {
  return w.pos === 'PROPN' || /^[A-Z]{2,}s?$/.test(w.text);
}

/**
 * An identifier of the observation that spells a claim word as one of its parts: "garden_feed_v2.csv" says "garden"
 * and "feed", "na-07" says "NA", "round-3-assignments" says "assignments". Names compare as written.
 */
/** How many of the observation's words name a claim word: the word itself, or a part of an identifier ("test_a"). */
export function timesNamed(obs: ObservationView, word: Word): number {
  const named = obs.read.words.filter((w) => !w.value && w.lemma && sameWord(word.lemma, w.lemma)).length;
  return named + obs.read.words.filter((w) => w.value?.k === 'id' && identifierParts(w.text).some((part) => partNames(word, part))).length;
}

function identifierParts(text: string): string[] {
  return text.split(/[-_./:@#]+|(?<=[a-z])(?=[A-Z])/).filter((part) => part.length >= 2 && /^[a-z]+$/i.test(part));
}

function partNames(word: Word, part: string): boolean {
  return isName(word) ? part.toLowerCase() === word.lemma.toLowerCase() : sameWord(word.lemma, part.toLowerCase());
}

function inIdentifier(obs: ObservationView, word: Word): number {
  if (word.lemma.length < 2) return -1;
  return obs.read.words.findIndex((w) => w.value?.k === 'id' && identifierParts(w.text).some((part) => partNames(word, part)));
}

function inTool(obs: ObservationView, lemma: string): boolean {
  return obs.read.tool.some((t) => sameWord(lemma, t));
}

/** "randomized controlled trials" for RCT, either way round: consecutive words whose initials spell an acronym. */
function acronymSpan(claim: ClaimReading, obs: ObservationView): Set<number> {
  const covered = new Set<number>();
  const words = claim.read.words;
  const initials = (ws: readonly Word[]) => ws.map((w) => w.lemma[0] ?? '').join('');
  for (const o of obs.read.words) {
    const text = o.text;
    if (!/^[A-Z]{2,5}s?$/.test(text)) continue;
    const acronym = text.replace(/s$/, '').toLowerCase();
    for (let i = 0; i + acronym.length <= words.length; i++) {
      const run = words.slice(i, i + acronym.length);
      if (run.every((w) => /^(NOUN|PROPN|ADJ|VERB|X)$/.test(w.pos)) && initials(run) === acronym) for (let k = i; k < i + acronym.length; k++) covered.add(k);
    }
  }
  return covered;
}

function acronymInClaim(word: Word, obs: ObservationView): boolean {
  if (!/^[A-Z]{2,5}s?$/.test(word.text)) return false;
  const acronym = word.text.replace(/s$/, '').toLowerCase();
  const ws = obs.read.words;
  for (let i = 0; i + acronym.length <= ws.length; i++) {
    if (ws.slice(i, i + acronym.length).every((w, k) => w.lemma[0] === acronym[k] && /^(NOUN|PROPN|ADJ|VERB|X)$/.test(w.pos))) return true;
  }
  return false;
}

/** Word indexes of the noun phrase around a claim word: the run of determiners, adjectives, nouns and values it sits in. */
function nounPhrase(words: readonly Word[], index: number): number[] {
  // A verb between a determiner and a noun ("the departing employee") modifies the noun.
  const inPhrase = (w: Word | undefined, k = -1) =>
    w !== undefined && (/^(DET|ADJ|NOUN|PROPN|VAL|NUM|X|UNIT)$/.test(w.pos) || (w.pos === 'VERB' && /^(NOUN|PROPN)$/.test(words[k + 1]?.pos ?? '') && /^(DET|ADJ)$/.test(words[k - 1]?.pos ?? '')));
  let from = index;
  let to = index;
  while (inPhrase(words[from - 1], from - 1) && (words[from - 1] as Word).seg === (words[index] as Word).seg) from--;
  while (inPhrase(words[to + 1], to + 1) && (words[to + 1] as Word).seg === (words[index] as Word).seg) to++;
  return Array.from({ length: to - from + 1 }, (_, k) => from + k);
}

/** Runs of claim words joined by hyphens alone, each a noun or name ("finance-reports", "eu-west"): names of one thing. */
function hyphenCompounds(words: readonly Word[], text: string): number[][] {
  const runs: number[][] = [];
  words.forEach((w, k) => {
    const prev = words[k - 1];
    const nominal = (x: Word) => /^(NOUN|PROPN|X)$/.test(x.pos) && !x.value;
    if (prev && nominal(prev) && nominal(w) && text.slice(prev.end, w.start) === '-') {
      const last = runs[runs.length - 1];
      if (last && last[last.length - 1] === k - 1) last.push(k);
      else runs.push([k - 1, k]);
    }
  });
  return runs;
}

const CONJUNCTIONS = new Set(['and', 'or', '&', 'plus']);
const ITEM_POS = /^(NOUN|PROPN|ADJ|VERB|X|VAL|NUM)$/;

/**
 * The coordinated items of a claim ("laptop and SSO access", "staging, qa and production"): for each "and"/"or", the
 * content word on each side, and before it each further item a comma sets off. Each group names several things the claim
 * says the same of; two verbs ("built and deployed") are acts, which the claim's reading splits, and are left out.
 */
export function coordinatedItems(words: readonly Word[], text: string): number[][] {
  const groups: number[][] = [];
  const content = (k: number) => ITEM_POS.test(words[k]?.pos ?? '');
  words.forEach((w, k) => {
    if (w.pos !== 'CCONJ' || !CONJUNCTIONS.has(w.lemma)) return;
    let right = k + 1;
    while (words[right]?.pos === 'DET') right++;
    const left = k - 1;
    if (!content(left) || !content(right)) return;
    if (words[left]?.pos === 'VERB' && words[right]?.pos === 'VERB') return;
    const group = [left, right];
    // Further items before the first, each set off by a comma: "staging, qa(,) and production".
    let first = left;
    for (;;) {
      // The start of the item: back over its determiner and modifiers ("the qa cluster").
      let start = first;
      const gap = (k: number) => text.slice((words[k - 1] as Word).end, (words[k] as Word).start);
      while (start > 0 && /^(DET|ADJ|NOUN|PROPN|X|VAL|NUM)$/.test(words[start - 1]?.pos ?? '') && !gap(start).includes(',')) start--;
      const before = start - 1;
      if (before < 0 || !content(before) || gap(start).trim() !== ',') break;
      group.unshift(before);
      first = before;
    }
    groups.push(group);
  });
  return groups;
}

/**
 * What says the observation's act is not done, if anything: a modal before it ("will deploy", "would delete"), an
 * infinitive ("ready to publish"), or beside it in its segment a word saying it began, waits, was asked for, planned,
 * tried or drafted ("deploy started", "refund requested", "awaiting merge", "upgrade ... in progress") with nothing in
 * the observation saying anything got done, or that it was only rehearsed ("dry run"). Never a word inside a quote
 * ("Getting Started" is a title), and never the claim's own act ("Requested a refund": "refund requested").
 */
function notDone(action: string, at: number, owords: readonly Word[]): string | undefined {
  const w = owords[at] as Word;
  const quoted = (o: Word) => owords.some((q) => q !== o && q.value?.k === 'quote' && o.start >= q.start && o.end <= q.end);
  const near = owords.filter((o, k) => k !== at && k >= at - 3 && k <= at + 4 && o.seg === w.seg && !o.neg && !o.value && !quoted(o) && !sameWord(action, o.lemma));
  const lower = (o: Word) => [o.lemma, o.text.toLowerCase()];
  const before = owords.slice(Math.max(0, at - 3), at).filter((o) => o.seg === w.seg && !quoted(o));
  const modal = before.find((o) => o.pos === 'AUX' && lower(o).some((x) => MODALS.has(x)));
  if (modal) return modal.text;
  const infinitive = owords[at - 1];
  if (infinitive && infinitive.seg === w.seg && infinitive.lemma === 'to' && infinitive.pos === 'PART') return `${infinitive.text} ${w.text}`;
  // The act as a noun after "for" is its purpose, not its outcome: "submitted for approval", "queued for deletion".
  const purpose = owords[at - 1];
  if (w.pos === 'NOUN' && purpose?.seg === w.seg && purpose.lemma === 'for') return `${purpose.text} ${w.text}`;
  const rehearsal = owords.find((o) => !o.neg && !quoted(o) && lower(o).some((x) => REHEARSAL_WORDS.has(x)));
  if (rehearsal) return rehearsal.text;
  const written = (o: Word) => o.text.toLowerCase();
  // "upgrade to 1.29 in progress": "progress" after "in".
  // A status written as one token ("QUEUED_FOR_PRINT", "PENDING-REVIEW") says it by its first part.
  const first = (o: Word) => written(o).split(/[_-]/)[0] ?? '';
  const pending = near.find((o) => [written(o), first(o)].some((x) => BEGUN_WORDS.has(x) || UNREALIZED_WORDS.has(x)) || (written(o) === 'progress' && owords[owords.indexOf(o) - 1]?.lemma === 'in'));
  if (!pending) return undefined;
  const done = owords.some((o) => !o.neg && !quoted(o) && (DONE_WORDS.has(o.lemma) || COMPLETION_WORDS.has(o.lemma) || DONE_WORDS.has(o.text.toLowerCase())));
  return done ? undefined : pending.text;
}

/** Whether the observation shows the action: the verb itself, its noun with a word saying it got done, or a change ("a -> b") to the claimed value. */
function showsAction(claim: ClaimReading, obs: ObservationView, matchedValues: number[]): { at: number } | { notDone: string } | undefined {
  const action = claim.action;
  if (!action) return { at: -1 };
  // A file change naming the claimed file is the observation of what was done to it.
  if (obs.kind === 'file_change' && claim.values.some((v) => v.value.k === 'id' && matchedValues.some((i) => valuesMatch(v.value, obs.read.words[i]?.value as Value)))) return { at: -1 };
  const at = findWord(obs, action.word.lemma, { lex: 'verb' });
  // A record that states its state ("state: SCHEDULED", "status OPEN") is shown by that state, not by a field name that
  // spells the act ("publish_at"): a stated state that is not the act's outcome means the act is not shown.
  if (rivalState(action.word.lemma, obs.read.words)) return undefined;
  if (at !== -1) {
    const w = obs.read.words[at] as Word;
    if (requestAnsweredOtherwise(action.word.lemma, at, obs.read)) return undefined;
    // "turned off" against "turned on": the act's particle says which act, and the opposite one is another.
    const particle = (words: readonly Word[], k: number) => (/^(on|off|up|down|in|out)$/.test(words[k + 1]?.lemma ?? '') && words[k + 1]?.seg === words[k]?.seg ? words[k + 1]?.lemma : undefined);
    const claimed = particle(claim.read.words, action.index);
    const observed = particle(obs.read.words, at);
    if (claimed && observed && OPPOSITE_PARTICLES.get(claimed) === observed) return { notDone: `${w.text} ${observed}` };
    const pending = notDone(action.word.lemma, at, obs.read.words);
    if (pending) return { notDone: pending };
    if (w.pos === 'VERB' || w.pos === 'ADJ') return { at };
    // "refund re_3Kx9 created", "registration complete: permit issued": the act as a noun, and its completion, in one segment.
    // A removal beside it says the opposite of a claimed act that removes nothing ("encryption disabled" for "Encrypted").
    const undone = (o: Word) => isRemoval(o.lemma) && !isRemoval(action.word.lemma);
    const done = obs.read.words.some((o) => o.seg === w.seg && ((/^(VERB|ADJ)$/.test(o.pos) && isPastForm(o.text) && !undone(o)) || DONE_WORDS.has(o.lemma)));
    if (done) return { at };
  }
  if (inTool(obs, action.word.lemma)) return { at: -1 };
  // "requests>=2.28 -> requests==2.32.3": a change whose result is the claimed value.
  const arrow = obs.read.words.findIndex((w) => w.pos === 'ARROW');
  if (arrow !== -1 && matchedValues.some((i) => i > arrow)) return { at: arrow };
  return undefined;
}

/**
 * A value of the same kind, and not the claimed one, between the claimed
 * value and the word it qualifies: "0.42 (children), 0.18 (adults)" does
 * not show 0.42 for adults.
 */
function competingValue(obs: ObservationView, claimed: Value, valueAt: number, termAt: number): boolean {
  const words = obs.read.words;
  const at = words[valueAt]?.value;
  // Measurements compete; identifiers, versions and dates name things and do not.
  if (at?.k !== 'num') return false;
  const sameClass = (v: Value): boolean => v.k === 'num' && v.dim === at.dim && Boolean(v.pct) === Boolean(at.pct);
  const [lo, hi] = valueAt < termAt ? [valueAt, termAt] : [termAt, valueAt];
  for (let k = lo + 1; k < hi; k++) {
    const v = words[k]?.value;
    if (v && sameClass(v) && !valuesMatch(claimed, v)) return true;
  }
  return false;
}

/** Whether the claimed act removes or stops something, in its own verb or a phrasal one ("called off", "took down"). */
function removalAct(claim: ClaimReading): boolean {
  const action = claim.action?.word.lemma;
  if (!action) return false;
  if (isRemoval(action)) return true;
  const particle = claim.read.words.find((w, i) => i > (claim.action as ClaimTerm).index && i <= (claim.action as ClaimTerm).index + 4 && /^(off|down|out)$/.test(w.lemma) && w.seg === (claim.action as ClaimTerm).word.seg);
  return particle !== undefined && [...REMOVAL_VERBS].some((r) => lexicallyRelated(`${action}_${particle.lemma}`, r, 'verb'));
}

/** A record's state that spells the claimed outcome ("Marked … as sold out": "now SOLD_OUT"). */
function claimedState(cwords: readonly Word[], owords: readonly Word[], matched: ReadonlySet<number>): boolean {
  const segs = new Set([...matched].map((i) => owords[i]?.seg));
  return owords.some((o) => {
    if (!segs.has(o.seg) || o.value || !/^[A-Z][A-Z_]{2,}$/.test(o.text)) return false;
    const parts = o.text.toLowerCase().split('_');
    // The claim says the state in words ("merged" for "MERGED"); a word it too writes in capitals ("SSO") is a name, not a state.
    return parts.every((p) => cwords.some((c) => /[a-z]/.test(c.text) && (c.lemma === p || c.text.toLowerCase() === p || (p.length >= 4 && sameWord(c.lemma, p)))));
  });
}

/** Another act reported where the claim's act should be ("drafted the offer letter" for "sent", "looked up order #5520" for "refunded"). */
function rivalAct(action: string, owords: readonly Word[], matched: ReadonlySet<number>): boolean {
  const segs = new Set([...matched].map((i) => owords[i]?.seg));
  return owords.some((o) => {
    // "encryption disabled": a participle the tagger reads as an adjective reports an act too.
    if (!segs.has(o.seg) || !(o.pos === 'VERB' || (o.pos === 'ADJ' && /ed$/.test(o.text))) || !o.lemma || o.synthetic) return false;
    if (sameWord(action, o.lemma) || lexicallyRelated(action, o.lemma, 'verb') || COMPLETION_WORDS.has(o.lemma) || DONE_WORDS.has(o.text.toLowerCase())) return false;
    return FRAME_VERBS.has(o.lemma) || isPastForm(o.text);
  });
}

/**
 * "enrol Tomas Berg in CHEM-202: waitlisted, section full": the act asked for (its plain form, first in the head,
 * before the first colon) and, after it, another outcome (a past form that is neither the act nor a completion): the
 * request is echoed, and its answer is not the act.
 */
function requestAnsweredOtherwise(action: string, at: number, read: ObservationView['read']): boolean {
  const w = read.words[at] as Word;
  if (at !== 0 || at >= read.headEnd || w.pos !== 'VERB' || isPastForm(w.text) || /ing$/.test(w.text)) return false;
  const firstSeg = read.words[read.headEnd]?.seg;
  const said = read.words.filter((o, i) => i > at && (i < read.headEnd || o.seg === firstSeg) && !o.value && o.lemma);
  if (said.some((o) => sameWord(action, o.lemma) || lexicallyRelated(action, o.lemma, 'verb') || COMPLETION_WORDS.has(o.lemma) || DONE_WORDS.has(o.text.toLowerCase()))) return false;
  // "send to list-4411 failed: …" reports the act failing, which is about the act: the failure decides, not this.
  const reportsFailure = (o: Word) => (read.failures[o.seg] ?? []).some((m) => m === o.lemma || m === o.text.toLowerCase());
  return said.some((o) => /^(VERB|ADJ)$/.test(o.pos) && isPastForm(o.text) && !reportsFailure(o));
}

/** Whether the observation states a record's state ("state: SCHEDULED", "status OPEN") and none of its states is the act's outcome. */
function rivalState(action: string, owords: readonly Word[]): boolean {
  // "status AVAILABLE → QUARANTINE": the state now is the one after the arrow.
  const states = owords
    .map((w, i) => (/^(state|status)$/.test(owords[i - 1]?.lemma ?? '') && owords[i + 1]?.pos === 'ARROW' ? owords[i + 2] : /^(state|status)$/.test(owords[i - 1]?.lemma ?? '') ? w : undefined))
    .filter((w): w is Word => w !== undefined && !w.value && /^[A-Z][A-Z_]{2,}$/.test(w.text));
  return states.length > 0 && !states.some((w) => COMPLETION_WORDS.has(w.lemma) || sameWord(action, w.lemma) || sameWord(action, w.text.toLowerCase()) || lexicallyRelated(action, w.lemma, 'verb') || (isRemoval(action) && isRemoval(w.lemma)));
}

type Bound = 'below' | 'atMost' | 'above' | 'atLeast';

/** The bound a claim puts on a number by the words before it ("under 1%", "at least 30x", "no more than 5"). */
function boundBefore(cwords: readonly Word[], index: number): Bound | undefined {
  const one = cwords[index - 1]?.lemma ?? '';
  const two = `${cwords[index - 2]?.lemma ?? ''} ${one}`;
  if (/^(?:at most|no more|not more|or less)$/.test(two)) return 'atMost';
  if (/^(?:at least|no less|not less|or more)$/.test(two)) return 'atLeast';
  if (/^(?:less than|lower than|fewer than)$/.test(two) || /^(?:under|below|<)$/.test(one)) return 'below';
  if (/^(?:more than|greater than|higher than)$/.test(two) || /^(?:over|above|>|exceed|exceeds)$/.test(one)) return 'above';
  return undefined;
}

/** Whether an observed number lies within a claimed bound: the same kind of measure (a fraction stands for its percentage). */
function withinBound(claim: Extract<Value, { k: 'num' }>, seen: Value, bound: Bound): boolean {
  if (seen.k !== 'num') return false;
  let s = seen.n;
  if (claim.pct && !seen.pct) {
    // 0.0042 for a rate under 1 %: a fraction, never a count.
    if (Math.abs(s) > 1 || Number.isInteger(s)) return false;
    s *= 100;
  } else if (!claim.pct && seen.pct) return false;
  if ((claim.dim ?? '') !== (seen.dim ?? '')) return false;
  const c = claim.n;
  return bound === 'below' ? s < c : bound === 'atMost' ? s <= c : bound === 'above' ? s > c : s >= c;
}

/** A verb of removal, however the tagger spelled its lemma ("canceled"). */
function isRemoval(lemma: string): boolean {
  return [lemma, lemma.replace(/ed$/, ''), lemma.replace(/led$/, 'l'), lemma.replace(/d$/, '')].some((form) => REMOVAL_VERBS.has(form));
}

// Labels of a report's verdict on the whole record it reports.
const RECORD_VERDICT = new Set(['overall', 'verdict', 'result', 'outcome', 'conclusion']);

/** The share of a claim's required words that other wording may stand for. */
const SOFT_SHARE = 0.34;

const NEGATOR_WORDS = new Set(['no', 'not', "n't", 'never', 'none', 'nothing', 'nobody', 'zero']);

// Nouns that count whatever a search or listing was for.
const GENERIC_COUNTED = new Set('result match hit item record row entry'.split(' '));

// Words that say an act came out done, whatever the act: a state or outcome in a record.
const COMPLETION_WORDS = new Set('complete completed done ok success successful succeeded finished'.split(' '));

/** Whether a matched segment of the observation reports the outcome of the claimed act, in words other than its verb. */
function outcomeShown(action: string, owords: readonly Word[], matched: ReadonlySet<number>): boolean {
  const segs = new Set([...matched].map((i) => owords[i]?.seg));
  const removal = isRemoval(action);
  return owords.some((o) => {
    if (!o.lemma || o.neg) return false;
    // The act's own past form as a record's state ("MERGED") says it wherever it sits.
    if (/^[A-Z_]{3,}$/.test(o.text) && (sameWord(action, o.lemma) || sameWord(action, o.text.toLowerCase()))) return true;
    if (!segs.has(o.seg)) return false;
    // Another removal is another act ("disabled" for "removed"): only the act's own word or a close one says it.
    if (removal) return (sameWord(action, o.lemma) || lexicallyRelated(action, o.lemma, 'verb')) && /^(VERB|ADJ|PROPN|NOUN)$/.test(o.pos) && (isPastForm(o.text) || /^[A-Z_]+$/.test(o.text));
    // A record of the act as a noun ("assignee: M. Soto", "registration R-77"): the act's own derivation.
    if (/^(NOUN|PROPN)$/.test(o.pos) && o.lemma.length >= 4 && derivationallyRelated(o.lemma, action)) return true;
    if (COMPLETION_WORDS.has(o.lemma) || DONE_WORDS.has(o.lemma) || DONE_WORDS.has(o.text.toLowerCase())) {
      // "assessment complete" says the assessment is done, not the approval: a completion word after another noun is that noun's.
      const before = owords[owords.indexOf(o) - 1];
      const ownNoun = before !== undefined && before.seg === o.seg && /^(NOUN|PROPN)$/.test(before.pos) && !before.value;
      return !ownNoun || matched.has(owords.indexOf(before)) || sameWord(action, before.lemma) || derivationallyRelated(before.lemma, action);
    }
    return /^(VERB|ADJ|PROPN|NOUN)$/.test(o.pos) && (isPastForm(o.text) || /^[A-Z_]{3,}$/.test(o.text)) && (sameWord(action, o.lemma) || lexicallyRelated(action, o.lemma, 'verb'));
  });
}

/**
 * Whether an unmatched word of the observation stands where a missing claim word would: next to the observation's
 * match of the claim word's neighbour, a content word or identifier the claim does not have.
 */
function substituted(cwords: readonly Word[], owords: readonly Word[], index: number, termAt: ReadonlyMap<number, number>, valueAt: ReadonlyMap<number, number>, matched: ReadonlySet<number>): boolean {
  for (const dir of [-1, 1]) {
    for (let k = index + dir, steps = 0; k >= 0 && k < cwords.length && steps < 2 && (cwords[k] as Word).seg === (cwords[index] as Word).seg; k += dir, steps++) {
      const at = termAt.get(k) ?? valueAt.get(k);
      if (at === undefined || at < 0) continue;
      for (const slot of [at - dir, at + dir]) {
        const o = owords[slot];
        if (!o || o.seg !== (owords[at] as Word).seg || matched.has(slot) || o.synthetic) continue;
        // A short identifier ("staging-pg") names another thing; a path ("pulls/490/threads") only locates one.
        // A verb in a verb's place ("write access" for "read access") stands for it too.
        const samePart = /^(NOUN|PROPN|ADJ)$/.test(o.pos) || (o.pos === 'VERB' && (cwords[index] as Word).pos === 'VERB');
        if ((o.value?.k === 'id' && !o.text.includes('/')) || (!o.value && samePart && namesSomething(o))) return true;
      }
      break;
    }
  }
  return false;
}

/** A word that can name another thing in a claim word's place: a content word of three letters or more, or a two-letter name ("us", "EU"). */
function namesSomething(o: Word): boolean {
  return (o.lemma.length >= 3 || (o.pos === 'PROPN' && o.lemma.length === 2)) && !FORGIVEN.has(o.lemma);
}

/** A preposition, as the tagger reads one now and then: "to staging" as an infinitive's particle, "for prod" as a conjunction. */
function isPreposition(w: Word): boolean {
  return w.pos === 'ADP' || (w.pos === 'PART' && w.lemma === 'to') || (w.pos === 'SCONJ' && w.lemma === 'for');
}

/**
 * Whether the observation puts another thing where a missing claim word stands after a preposition: "to production"
 * claimed, "to staging" observed; "in eu-west-1" claimed, "in us-east-1" observed. The preposition names the slot
 * (where to, where in, for whom), and the observation fills it with a content word or identifier the claim lacks.
 */
function rivalObject(cwords: readonly Word[], owords: readonly Word[], index: number, matched: ReadonlySet<number>): boolean {
  const word = cwords[index] as Word;
  let k = index - 1;
  while (k >= 0 && (cwords[k] as Word).seg === word.seg && /^(DET|ADJ)$/.test((cwords[k] as Word).pos) && index - k <= 2) k--;
  const prep = cwords[k];
  if (!prep || prep.seg !== word.seg || !isPreposition(prep) || prep.lemma.length < 2) return false;
  return owords.some((o, at) => {
    if (!isPreposition(o) || o.lemma !== prep.lemma) return false;
    for (let j = at + 1; j <= at + 3 && j < owords.length; j++) {
      const next = owords[j] as Word;
      if (next.seg !== o.seg) return false;
      if (next.pos === 'DET') continue;
      if (matched.has(j) || next.synthetic) return false;
      return (next.value?.k === 'id' && !next.text.includes('/')) || (!next.value && /^(NOUN|PROPN|ADJ|VERB)$/.test(next.pos) && namesSomething(next));
    }
    return false;
  });
}

// Prepositions that say which way a thing moved: "from prod to staging" is not "from staging to prod".
const DIRECTIONS = new Map([['from', 'from'], ['to', 'to'], ['into', 'to'], ['onto', 'to']]);

/** The preposition a word is the object of, past a determiner or an adjective or two ("to the new bucket"). */
function prepositionBefore(words: readonly Word[], index: number): Word | undefined {
  const word = words[index] as Word;
  let k = index - 1;
  while (k >= 0 && index - k <= 2 && (words[k] as Word).seg === word.seg && /^(DET|ADJ)$/.test((words[k] as Word).pos)) k--;
  const prep = words[k];
  return prep && prep.seg === word.seg && (prep.pos === 'ADP' || (prep.pos === 'PART' && prep.lemma === 'to')) ? prep : undefined;
}

/** Whether a word the claim puts after one direction ("from prod") stands in the observation after the other ("to prod"). */
function directionSwapped(cwords: readonly Word[], owords: readonly Word[], index: number, at: number): boolean {
  const claimed = DIRECTIONS.get(prepositionBefore(cwords, index)?.lemma ?? '');
  const observed = DIRECTIONS.get(prepositionBefore(owords, at)?.lemma ?? '');
  return claimed !== undefined && observed !== undefined && claimed !== observed;
}

/**
 * Whether "no", "without", "zero" or "never" says a problem is absent: "no errors", "without new warnings". The reader
 * leaves these unnegated (an absent problem is a good result), so the claim's and the observation's must be compared here.
 */
function absenceBefore(words: readonly Word[], index: number, text: string): boolean {
  const word = words[index] as Word;
  if (!isProblemNoun(word.lemma) && !isProblemNoun(word.text.toLowerCase())) return false;
  let k = index - 1;
  while (k >= 0 && index - k <= 2 && (words[k] as Word).seg === word.seg && (words[k] as Word).pos === 'ADJ') k--;
  const before = words[k];
  const zero = (w: Word | undefined): boolean => w?.value?.k === 'num' && w.value.n === 0 && w.seg === word.seg;
  // "0 errors", and "errors: 0" or "errors 0" (a count written after its noun).
  if (zero(before) || (zero(words[index + 1]) && /^[\s:=]*$/.test(text.slice(word.end, (words[index + 1] as Word).start)))) return true;
  return before !== undefined && before.seg === word.seg && /^(no|without|zero|never)$/.test(before.lemma);
}

/** Whether a zero count is reported in one of these segments of the observation. */
function zeroInSegments(obs: ObservationView, segs: ReadonlySet<number>): boolean {
  return [...segs].some((seg) => (obs.read.failures[seg] ?? []).some((m: string) => m.startsWith('#zero')));
}

/** Whether a segment names a subject of its own (a noun or a gerund other than its result words) and none is the claim's. */
function ownSubject(owords: readonly Word[], seg: number, markers: readonly string[], aboutClaim: (lemma: string) => boolean): boolean {
  const markerWords = new Set(markers.flatMap((m) => m.replace(/^#(?:counted|zero) ?/, '').split(' ')));
  const subjects = owords.filter((w) => w.seg === seg && !w.value && !w.neg && w.lemma.length >= 3 && !markerWords.has(w.lemma) && (/^(NOUN|PROPN)$/.test(w.pos) || (w.pos === 'VERB' && /ing$/.test(w.text))));
  return subjects.length > 0 && !subjects.some((w) => aboutClaim(w.lemma));
}

/** Numbers written as one ordered pair ("3-1", "2:0"): a score or a ratio, whose order is part of what it says. */
function orderedPairs(claim: ClaimReading): Array<[ClaimReading['values'][number], ClaimReading['values'][number]]> {
  const pairs: Array<[ClaimReading['values'][number], ClaimReading['values'][number]]> = [];
  for (let k = 0; k + 1 < claim.values.length; k++) {
    const a = claim.values[k] as ClaimReading['values'][number];
    const b = claim.values[k + 1] as ClaimReading['values'][number];
    const plainInt = (v: Value): boolean => v.k === 'num' && v.plain === true && Number.isInteger(v.n);
    if (b.index === a.index + 1 && plainInt(a.value) && plainInt(b.value) && /^[-–:]$/.test(claim.read.text.slice(a.word.end, b.word.start))) pairs.push([a, b]);
  }
  return pairs;
}

/**
 * Judges one observation against one claim: whether it shows the claim's
 * fact, reports it negative or unfinished, or lacks something the claim says.
 */
export function judgeSupport(claim: ClaimReading, obs: ObservationView): Judgement {
  const owords = obs.read.words;
  const cwords = claim.read.words;
  const matched = new Set<number>();
  const missing: string[] = [];
  let required = 0;
  let found = 0;
  /** Missing words that another wording may stand for: a few are forgiven when the rest is shown (see below). */
  const soft: string[] = [];
  const lowerText = obs.read.text.toLowerCase().replace(/\s+/g, ' ');

  // Values: each must be stated by the observation, after normalisation.
  const valueAt = new Map<number, number>();
  for (const v of claim.values) {
    required++;
    // "above 90%", "under 1%", "at least 30x": a bound, which any observed value of the same kind within it shows, and
    // which a value that only rounds to the bound does not ("89.5%" is not above 90%).
    const bound = v.value.k === 'num' ? boundBefore(cwords, v.index) : undefined;
    let hit = bound ? -1 : owords.findIndex((w) => w.value !== undefined && valuesMatch(v.value, w.value));
    // A quoted name need not be quoted again: "the 'EU subscribers' list" for list "EU subscribers".
    if (hit === -1 && v.value.k === 'quote' && lowerText.includes(v.value.text)) {
      const first = v.value.text.split(' ')[0] ?? '';
      hit = Math.max(0, owords.findIndex((w) => w.text.toLowerCase() === first));
    }
    // An identifier inside a path or a query ("/claims/CLM-20960", "pulls/490/threads") is stated there.
    if (hit === -1 && (v.value.k === 'id' || (v.value.k === 'num' && v.value.plain))) {
      const key = v.value.k === 'id' ? v.value.key : String(v.value.n);
      if (key.length >= 3) hit = owords.findIndex((w) => w.value?.k === 'id' && w.text.split(/[/?=&:,{}"'#\s]+/).some((part) => part.toLowerCase().replace(/[^a-z0-9]/g, '') === key));
    }
    if (hit === -1 && bound && v.value.k === 'num') {
      const claimed = v.value;
      hit = owords.findIndex((w) => w.value?.k === 'num' && withinBound(claimed, w.value, bound));
      // "under 100 ms" against "p50 80 ms, p99 450 ms": a measurement in the same unit outside the bound says it does not hold.
      const outside = hit === -1 || !claimed.dim ? undefined : owords.find((w) => w.value?.k === 'num' && w.value.dim === claimed.dim && !w.value.pct && !withinBound(claimed, w.value, bound));
      if (outside) {
        const unit = owords[owords.indexOf(outside) + 1];
        const said = unit?.pos === 'UNIT' ? obs.read.text.slice(outside.start, unit.end) : outside.text;
        missing.push(`${v.word.text} (it says "${said}")`);
        continue;
      }
    }
    if (hit === -1) missing.push(v.word.text);
    else {
      found++;
      matched.add(hit);
      valueAt.set(v.index, hit);
    }
  }

  // Words an identifier the observation states pins: its noun phrase ("the departing employee E-4471"),
  // and the noun a number labels ("port 5432", "priority 10").
  const pinned = new Set<number>();
  for (const [claimIndex] of valueAt) {
    const value = cwords[claimIndex]?.value;
    if (value?.k === 'id' || value?.k === 'ver' || value?.k === 'quote') for (const k of nounPhrase(cwords, claimIndex)) pinned.add(k);
    else if (value?.k === 'num' && /^(NOUN|PROPN)$/.test(cwords[claimIndex - 1]?.pos ?? '')) pinned.add(claimIndex - 1);
  }
  // A file change naming the claimed file shows what was written to it: the claim's common nouns describe its content.
  const fileShown = obs.kind === 'file_change' && claim.values.some((v) => v.value.k === 'id' && valueAt.has(v.index) && /\.[a-z0-9]{1,10}$/i.test(v.word.text));
  if (fileShown) for (const t of claim.terms) if (t.word.pos === 'NOUN') pinned.add(t.index);
  if (claim.action) pinned.delete(claim.action.index);

  // Qualifiers and objects: every content word of the claim, unless pinned.
  const acronyms = acronymSpan(claim, obs);
  const termAt = new Map<number, number>();
  const shownTerms = new Set<number>();
  const missingTerms = new Set<number>();
  for (const term of claim.terms) {
    const lemma = term.word.lemma;
    const near = [...valueAt.values()][0];
    let hit = acronyms.has(term.index) ? -2 : findWord(obs, lemma, { strict: isName(term.word), ...(near !== undefined ? { near } : {}), ...(term.word.neg ? { negated: true } : {}), lex: lexPos(term.word) });
    if (hit === -1 && acronymInClaim(term.word, obs)) hit = -2;
    if (hit === -1 && inTool(obs, lemma)) hit = -2;
    if (hit === -1) hit = inIdentifier(obs, term.word);
    if (hit >= 0) {
      matched.add(hit);
      termAt.set(term.index, hit);
    }
    if (hit !== -1) shownTerms.add(term.index);
    if (term.optional) continue;
    required++;
    if (hit !== -1 || pinned.has(term.index)) found++;
    else missingTerms.add(term.index);
  }
  const namedHeads = new Set<number>();
  // The head of a noun phrase whose name-like modifier is shown ("the nginx proxy", "the MX record"): the name says which.
  for (const index of [...missingTerms]) {
    const phrase = nounPhrase(cwords, index);
    // A negated head ("no blade damage") is the claim itself: no modifier says it.
    const isHead = phrase[phrase.length - 1] === index && (cwords[index] as Word).pos === 'NOUN' && !(cwords[index] as Word).neg;
    if (isHead && phrase.some((k) => k !== index && (valueAt.has(k) || (isName(cwords[k] as Word) && termAt.has(k))))) {
      missingTerms.delete(index);
      namedHeads.add(index);
      found++;
    }
  }
  // A missing word is only a cue when nothing else stands in its place: an unmatched name or qualifier where the
  // claim's word would be ("staging resolvers" for "production resolvers") says the observation is about another thing,
  // and names, negated words and words a substitute stands for must be shown. Other common words may be said otherwise.
  // One of several coordinated items ("laptop and SSO access", "staging and production") is a thing of its own: where
  // the observation shows another item of the list, the missing one is not said otherwise, it is left out.
  const groups = coordinatedItems(cwords, claim.read.text);
  const leftOut = (k: number) => groups.some((g) => g.includes(k) && g.some((o) => o !== k && (shownTerms.has(o) || valueAt.has(o))));
  const items = new Set(claim.values.filter((v) => !valueAt.has(v.index) && leftOut(v.index)).map((v) => v.word.text));
  // A name joined by hyphens ("bucket finance-reports") is one thing: another name sharing a part ("finance-archive") is
  // another thing, so where the observation shows a part of it but not the whole, the whole is missing.
  for (const compound of hyphenCompounds(cwords, claim.read.text)) {
    const whole = claim.read.text.slice((cwords[compound[0] as number] as Word).start, (cwords[compound[compound.length - 1] as number] as Word).end);
    const flat = (t: string) => t.toLowerCase().replace(/[^a-z0-9]/g, '');
    if (flat(obs.read.text).includes(flat(whole)) || !compound.some((k) => shownTerms.has(k))) continue;
    missing.push(whole);
    for (const k of compound) missingTerms.delete(k);
  }
  for (const index of missingTerms) {
    const w = cwords[index] as Word;
    if (leftOut(index)) {
      missing.push(w.text);
      items.add(w.text);
      continue;
    }
    const agreeingAbsence = w.neg && [...matched].some((i) => (obs.read.failures[(owords[i] as Word).seg] ?? []).some((m: string) => m.startsWith('#zero')));
    if (isName(w) || (w.neg && !agreeingAbsence) || substituted(cwords, owords, index, termAt, valueAt, matched) || rivalObject(cwords, owords, index, matched)) missing.push(w.text);
    else soft.push(w.text);
  }

  // "from /tmp to /data" against "from /data to /tmp": a word or value after one direction, observed after the other.
  for (const [index, at] of [...termAt, ...valueAt]) {
    if (at >= 0 && directionSwapped(cwords, owords, index, at)) missing.push(`${(prepositionBefore(cwords, index) as Word).text} ${(cwords[index] as Word).text}`);
  }

  // "Enabled MFA" against "MFA disabled", "Locked the account" against "account unlocked": the opposite word, where the
  // observation speaks of the claim's thing.
  const spoken = new Set([...matched].map((i) => (owords[i] as Word).seg));
  // Verbs and adjectives only: "discount" is no opposite of a "count", nor "import" of a "port".
  const actsOrStates = /^(VERB|ADJ)$/;
  for (const cw of cwords) {
    if (cw.neg || cw.value || !actsOrStates.test(cw.pos)) continue;
    const opposite = owords.find((o) => spoken.has(o.seg) && !o.neg && !o.value && actsOrStates.test(o.pos) && (isOpposite(cw.lemma, o.lemma) || isOpposite(cw.text.toLowerCase(), o.text.toLowerCase())));
    if (opposite) missing.push(`${cw.text} (it says "${opposite.text}")`);
  }

  const arrow = owords.findIndex((w) => w.pos === 'ARROW');
  const afterArrow = arrow !== -1 && [...valueAt.values()].some((i) => i > arrow);

  // The fact a check is about ("resolves", "is signed", "blocks") must be shown too: its verb, or a shown result ("a -> b").
  if (claim.predicate) {
    required++;
    const hit = findWord(obs, claim.predicate.word.lemma, { lex: 'verb' });
    // A state reported of a rehearsal, or as begun or awaited ("mode: DRY RUN … items suppressed"), is not the state.
    const pending = hit >= 0 ? notDone(claim.predicate.word.lemma, hit, owords) : undefined;
    if (pending) missing.push(`${claim.predicate.word.text} (it says "${pending}")`);
    else if (hit !== -1 || inTool(obs, claim.predicate.word.lemma) || afterArrow) {
      found++;
      if (hit >= 0) matched.add(hit);
    } else if (outcomeShown(claim.predicate.word.lemma, owords, matched)) soft.push(claim.predicate.word.text);
    else missing.push(claim.predicate.word.text);
  }

  // The action.
  let actionShown = true;
  if (claim.action) {
    required++;
    const shown = showsAction(claim, obs, [...valueAt.values()]);
    if (shown && 'notDone' in shown) {
      // The act is there, and not done: no other wording of its outcome stands in for it.
      actionShown = false;
      missing.push(`${claim.action.word.text} (it says "${shown.notDone}")`);
    } else if (shown) {
      found++;
      if (shown.at >= 0) matched.add(shown.at);
    } else {
      actionShown = false;
      // The verb is a soft cue: an observation that shows the object and a matching outcome ("PR #311 state: MERGED",
      // "bucket logs-eu created") shows the act in other words. A removal needs a removal's outcome, not "confirmed".
      // Otherwise the verb alone decides nothing, unless the act removes something (its outcome must say so) or the
      // record states another state ("state: SCHEDULED" for "published").
      const lemma = claim.action.word.lemma;
      if ((outcomeShown(lemma, owords, matched) || claimedState(cwords, owords, matched)) && !rivalAct(lemma, owords, matched) && !rivalState(lemma, owords)) soft.push(claim.action.word.text);
      else missing.push(claim.action.word.text);
    }
  }

  // A check is an observation of the outcome, not the change that should cause it.
  if (claim.kind === 'verification' && obs.kind === 'file_change') missing.push(`a check (this is a ${obs.kind.replace('_', ' ')})`);

  // Values bound to another qualifier: a word right after the claimed value must not sit beyond a different value.
  for (const [claimIndex, obsIndex] of valueAt) {
    const claimed = cwords[claimIndex]?.value as Value;
    for (const [termIndex] of termAt) {
      if (termIndex <= claimIndex || termIndex - claimIndex > 3 || cwords[termIndex]?.seg !== cwords[claimIndex]?.seg || cwords[termIndex]?.neg) continue;
      // "212 pages at 600 ppi": a word after another of the claim's values is that value's.
      if (cwords.slice(claimIndex + 1, termIndex).some((w) => w.value !== undefined)) continue;
      // "all 24 panels: no faults": the value counts the noun right after it; a word past that noun, or past "no", is not its.
      if (cwords.slice(claimIndex + 1, termIndex).some((w) => w.pos === 'NOUN' || NEGATOR_WORDS.has(w.lemma))) continue;
      const nearest = findWord(obs, (cwords[termIndex] as Word).lemma, { near: obsIndex });
      if (nearest >= 0 && competingValue(obs, claimed, obsIndex, nearest)) missing.push(`${cwords[claimIndex]?.text} for ${cwords[termIndex]?.text}`);
    }
  }

  // "0 failures" against "14 failures, 0 passed": the number that counts the claim's noun in the observation is its own.
  for (const [claimIndex, obsIndex] of valueAt) {
    const claimed = cwords[claimIndex]?.value;
    const noun = termAt.get(claimIndex + 1);
    if (claimed?.k !== 'num' || noun === undefined || noun < 0) continue;
    // "14 failures" (only a space between) or "failures: 14"; never a code ("65862-017-01") or another kind of measure ("500 mg").
    const touches = (k: number): boolean => {
      const [a, b] = k < noun ? [owords[k], owords[noun]] : [owords[noun], owords[k]];
      return a !== undefined && b !== undefined && (k < noun ? /^\s+$/ : /^[\s:=]+$/).test(obs.read.text.slice(a.end, b.start));
    };
    const sameKind = (v: Value | undefined): boolean => v?.k === 'num' && v.dim === claimed.dim && Boolean(v.pct) === Boolean(claimed.pct);
    const own = [noun - 1, noun + 1].find((k) => sameKind(owords[k]?.value) && !/^0\d/.test(owords[k]?.text ?? '') && touches(k));
    if (own !== undefined && own !== obsIndex && !valuesMatch(claimed, owords[own]?.value as Value)) missing.push(`${cwords[claimIndex]?.text} ${cwords[claimIndex + 1]?.text} (${owords[own]?.text})`);
  }
  const universal = cwords.some((w) => UNIVERSAL.has(w.lemma));
  const sameClass = (a: Value, b: Value): boolean => a.k === 'num' && b.k === 'num' && a.dim === b.dim && Boolean(a.pct) === Boolean(b.pct);
  // "all tyres at 8.5 bar": another measurement of the same kind in the observation is an exception.
  if (universal) {
    for (const [claimIndex, obsIndex] of valueAt) {
      const v = cwords[claimIndex]?.value;
      if (v?.k !== 'num' || (!v.dim && !v.pct)) continue;
      const other = owords.find((w, i) => i !== obsIndex && w.value !== undefined && sameClass(v, w.value) && !valuesMatch(v, w.value));
      if (other) missing.push(`all at ${cwords[claimIndex]?.text} (${other.text} too)`);
    }
  }
  // "the roof array produced 38.6 kWh" against "carport array ... 38.6 kWh; roof array 29.9 kWh": a qualifier that sits
  // beside another measurement of the same kind, away from the claimed one, says the claimed one is not its.
  for (const [numIndex, numAt] of valueAt) {
    const v = cwords[numIndex]?.value;
    if (v?.k !== 'num') continue;
    // Only where the claimed value sits beside a qualifier the claim does not name ("carport").
    const rival = owords.some((w) => w.seg === owords[numAt]?.seg && !w.value && /^(NOUN|PROPN|ADJ)$/.test(w.pos) && !cwords.some((c) => c.lemma && sameWord(c.lemma, w.lemma)));
    if (!rival) continue;
    for (const [termIndex, termObs] of termAt) {
      const term = cwords[termIndex] as Word;
      if (term.neg || !/^(NOUN|PROPN|ADJ)$/.test(term.pos) || owords[termObs]?.seg === owords[numAt]?.seg) continue;
      // "212 pages at 600 ppi": a word right after another of the claim's values is that value's.
      if (termIndex - 1 !== numIndex && cwords[termIndex - 1]?.value !== undefined) continue;
      const own = owords.find((w) => w.seg === owords[termObs]?.seg && w.value !== undefined && sameClass(v, w.value));
      if (own && !valuesMatch(v, own.value as Value)) missing.push(`${cwords[numIndex]?.text} for ${term.text} (${own.text})`);
    }
  }
  // "a 3-1 Hawks win" against "score: { home: 1, away: 3 }": two numbers written as one pair are stated in that order.
  for (const [first, second] of orderedPairs(claim)) {
    const at = (v: Value): number[] => owords.flatMap((w, i) => (w.value !== undefined && valuesMatch(v, w.value) ? [i] : []));
    const seconds = at(second.value);
    if (valueAt.has(first.index) && valueAt.has(second.index) && !at(first.value).some((i) => seconds.some((k) => k > i))) missing.push(`${first.word.text}${claim.read.text.slice(first.word.end, second.word.start)}${second.word.text} in that order`);
  }
  // "VN-205 has driven 2,340 km" against "VN-204 2,340 km, VN-205 1,980 km": a measurement next to another name is that name's.
  for (const [idIndex, idAt] of valueAt) {
    if (cwords[idIndex]?.value?.k !== 'id') continue;
    for (const [numIndex, numAt] of valueAt) {
      if (cwords[numIndex]?.value?.k !== 'num' || Math.abs(numIndex - idIndex) > 4) continue;
      const numSeg = owords[numAt]?.seg;
      if (owords[idAt]?.seg === numSeg) continue;
      const other = owords.find((w, i) => w.seg === numSeg && i !== idAt && w.value?.k === 'id' && !valuesMatch(cwords[idIndex]?.value as Value, w.value));
      if (other) missing.push(`${cwords[numIndex]?.text} for ${cwords[idIndex]?.text} (it is ${other.text}'s)`);
    }
  }

  const coverage = required ? found / required : 0;
  const matchedList = [...matched].sort((a, b) => a - b);
  // Forgiven: at most a third of what the claim requires (at least one word), with something specific shown beside them.
  const anchored = valueAt.size > 0 || termAt.size >= 2 || [...termAt.keys()].some((k) => isName(cwords[k] as Word));
  // An identifier the observation states, with every value of the claim: the record is pinned, and its other words may be said otherwise.
  const pinnedRecord = claim.values.some((v) => v.value.k === 'id' && valueAt.has(v.index)) && valueAt.size === claim.values.length;
  const forgiven = soft.length === 0 || (anchored && required >= 3 && soft.length <= Math.floor(required * SOFT_SHARE)) || (pinnedRecord && soft.length < required - valueAt.size);
  // Items of a list the observation leaves out do not stop it forgiving the rest: another observation may show them.
  if (!forgiven || missing.some((m) => !items.has(m))) missing.push(...soft);
  // Only an identifier in common ("us-east-1 done the same way" for "the listing for us-east-1"): the claim's words say what
  // about that thing is claimed, and the observation says none of them.
  const contentTerms = claim.terms.filter((t) => !t.optional && !pinned.has(t.index) && !namedHeads.has(t.index) && !FORGIVEN.has(t.word.lemma) && !t.word.synthetic);
  // A measurement with its unit ("2.4 kg" as "2400 g") beside the identifier says what about the thing is claimed.
  const measured = [...valueAt.keys()].some((k) => {
    const v = cwords[k]?.value;
    return v?.k === 'num' && (v.dim !== undefined || v.pct === true);
  });
  if (missing.length === 0 && contentTerms.length > 0 && !contentTerms.some((t) => termAt.has(t.index)) && !(claim.action && actionShown) && !measured) missing.push(...contentTerms.map((t) => t.word.text));
  const complete = missing.length === 0;
  const claimNegated = cwords.some((w) => w.neg || NEGATOR_WORDS.has(w.lemma));

  // Polarity: what the claim negates the observation must negate, and what it asserts must not come out negated.
  const negationClash: string[] = [];
  // Segments where the observation negates a word the claim negates too ("Nobody has access to the old bucket" and "old
  // bucket access: none"): the words negated beside it there only say which thing.
  const agreedNegation = new Set(
    claim.terms.flatMap((t) => {
      const at = termAt.get(t.index);
      return t.word.neg && at !== undefined && at >= 0 && (owords[at] as Word).neg ? [(owords[at] as Word).seg] : [];
    }),
  );
  for (const term of claim.terms) {
    const at = termAt.get(term.index);
    // A negated word counts even where it is only a cue: "Nobody has access" against "access: 2 users".
    if (at === undefined || at < 0 || (term.optional && !term.word.neg)) continue;
    if (!term.word.neg && (owords[at] as Word).neg && agreedNegation.has((owords[at] as Word).seg)) continue;
    // "no sample swaps": the negation is of the swaps; "sample" only says which.
    const next = cwords[term.index + 1];
    if (term.word.neg && next?.neg && next.seg === term.word.seg && /^(NOUN|PROPN)$/.test(next.pos)) continue;
    const o = owords[at] as Word;
    if (!/^(NOUN|PROPN|ADJ|VERB)$/.test(o.pos)) continue;
    // "no server crashes" and "query crashes where …: 0 reports": the query names what it counted, and the count is zero.
    // "no errors" claimed, "errors ...: 3" observed: a problem's absence, compared on both sides (absenceBefore).
    const claimNo = Boolean(term.word.neg) || absenceBefore(cwords, term.index, claim.read.text);
    const obsNo = Boolean(o.neg) || absenceBefore(owords, at, obs.read.text);
    if (claimNo && !obsNo && zeroInSegments(obs, new Set([...matched].flatMap((i) => [(owords[i] as Word).seg, (owords[i] as Word).seg + 1])))) continue;
    if (claimNo !== obsNo) negationClash.push(term.word.text);
  }
  // A failed or unfinished result in a segment the claim rests on; and, when the claim's subject is the observation's
  // head ("wave W-2291: ..."), a zero count anywhere after it (or any failure, for a check).
  const segments = new Set(matchedList.map((i) => (owords[i] as Word).seg));
  const headNamed = matchedList.some((i) => i < obs.read.headEnd);
  const claimLemmas = new Set(cwords.map((w) => w.lemma));
  const failures: string[] = [];
  // "0 results", "0 matches": a count of whatever was looked for, so of the claim's object.
  const aboutClaim = (lemma: string): boolean =>
    GENERIC_COUNTED.has(lemma) || cwords.some((w) => w.lemma !== '' && !w.value && (sameWord(w.lemma, lemma) || (w.lemma.length >= 3 && lexicallyRelated(w.lemma, lemma, w.pos === 'VERB' ? 'verb' : 'noun'))));
  // "deleted all stale branches" against "deleted 3 stale branches, 12 remain": a remainder anywhere answers "all" and a removal.
  const wholeAct = universal || (claim.action !== undefined && removalAct(claim));
  obs.read.failures.forEach((markers, seg) => {
    const afterHead = headNamed && owords.some((w, i) => w.seg === seg && i >= obs.read.headEnd);
    if (!segments.has(seg) && !afterHead && !(wholeAct && markers.some((m) => m === '#counted remain' || (universal && m.startsWith('#counted '))))) return;
    // A segment the claim reaches only through the observation's head, naming a subject of its own that the claim does not
    // speak of ("moderation pending", "dispensing blocked"): its result is that subject's, not the claim's.
    // A count ("0 of 3 pods ready") is the result's own measure and stays.
    // A report's verdict ("overall: ACTION REQUIRED", "result: FAIL") is the whole record's, whatever stands beside it.
    const verdictLine = owords.some((w) => w.seg === seg && RECORD_VERDICT.has(w.lemma) && /^\s*:/.test(obs.read.text.slice(w.end, w.end + 3)));
    const elsewhere = !segments.has(seg) && !verdictLine && ownSubject(owords, seg, markers, aboutClaim);
    for (const raw of markers) {
      if (elsewhere && !raw.startsWith('#')) continue;
      const counted = raw.startsWith('#counted ');
      const marker = counted ? raw.slice('#counted '.length) : raw;
      if (claimLemmas.has(marker) || [...claimLemmas].some((l) => l.length >= 4 && sameWord(l, marker))) continue;
      // "not required" in both: the claim states that negative.
      if (marker.startsWith('not ') && cwords.some((w) => w.neg && sameWord(w.lemma, marker.slice(4)))) continue;
      const zero = marker === '#zero' || marker.startsWith('#zero ');
      if (zero && claimNegated) continue;
      // "Called off the shut-off" and "status CANCELLED": a removal's outcome is its success.
      if (claim.action && removalAct(claim) && isRemoval(marker.replace(/^#counted /, ''))) continue;
      if (zero && claim.action && isRemoval(claim.action.word.lemma)) continue;
      // "Apply complete! 3 added, 0 changed, 0 destroyed": a zero count of something the claim does not speak of is an absence beside
      // the result, not the result; a zero count of the claim's own object or act ("0 delivered" for "delivered") is a negative result.
      if (marker.startsWith('#zero ') && !aboutClaim(marker.slice('#zero '.length))) continue;
      if (marker.startsWith('no ') && cwords.some((w) => w.neg && sameWord(w.lemma, marker.slice(3)))) continue;
      // "reviewed 88255, no contempt risk": an absence the claim does not speak of, beside the result, outside what the claim rests on.
      // "no acknowledgement from valve" is about the claim's valve, and stays.
      if (!segments.has(seg) && marker.startsWith('no ') && !owords.some((w) => w.seg === seg && !w.value && w.lemma.length >= 3 && aboutClaim(w.lemma))) continue;
      // An action's report may count a few failures beside its result ("3087 delivered, 33 bounced"), unless the claim says all, or how many.
      if (!segments.has(seg) && claim.kind === 'action' && counted && !universal && claim.values.every((v) => v.value.k !== 'num')) continue;
      failures.push(zero ? 'a zero count' : marker === '#partial' ? 'a partial count' : `"${marker}"`);
    }
  });
  const negative = failures.length > 0 || negationClash.length > 0;
  const why = failures.length ? `it reports ${failures[0]}` : `it negates ${negationClash.join(', ')}`;
  if (complete && negative) return { verdict: 'contradicts', matched: matchedList, why };
  // The same fact reported not done ("cancel SUB-1: subscription not found"): all but the action is there.
  if (!complete && negative && missing.length === 1 && !actionShown) return { verdict: 'contradicts', matched: matchedList, why };
  if (complete) return { verdict: 'shows', matched: matchedList };
  return { verdict: 'lacks', matched: matchedList, missing, coverage, negative, ...(soft.length ? { soft } : {}), ...(items.size ? { items: [...items] } : {}) };
}

