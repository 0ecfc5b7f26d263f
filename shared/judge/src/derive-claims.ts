import type { ClaimKind, ClaimMateriality, ClaimSource, ReviewPolicy } from '@vouch/contracts';
import { describeFeature, extractFeatures, isRequiredFeature } from './extract-features.js';
import { judgeSupport, readClaim } from './judge-support.js';
import { readText } from './read-text.js';

/**
 * Splits the texts of a completion attempt into atomic claims and judges what
 * each asserts. The cues are generic English (completion verbs, hedges,
 * modals, negation), never lists of task-specific words, so one code path
 * reads claims from any kind of task.
 */

/** A claim before it is reconciled with evidence. */
export interface DerivedClaim {
  id: string;
  text: string;
  source: ClaimSource;
  kind: ClaimKind;
  materiality: ClaimMateriality;
  evidenceRequirement: string;
  features: string[];
}

export interface ProposedTexts {
  goal: string;
  summary: string;
  visibleAnswer?: string | undefined;
}

// Verbs whose past form is not "-ed".
const IRREGULAR_PAST = new Set(
  (
    'built rebuilt wrote written rewrote rewritten sent ran rerun made remade set reset put got did redid undid undone found shown ' +
    'kept left brought bought caught chose chosen drew drawn fed held hid led lost met paid sold spent split struck taken took ' +
    'taught told understood won withdrew began begun gave given went gone came became saw seen ' +
    'bound shut spun upheld overwrote overrode overridden'
  ).split(' '),
);

// "-ed" words that are usually adjectives or not verbs at all.
const NOT_PAST = new Set(
  (
    'need needed feed seed bed red shed speed indeed embed hundred sacred naked wicked beloved aged ragged rugged based related required ' +
    'expected detailed advanced limited interested supposed concerned involved experienced unexpected unrelated proceed exceed succeed'
  ).split(' '),
);

// Checking and finding: the claim is about an outcome that was observed.
const VERIFY_RE =
  /\b(verified|tested|retested|confirmed|validated|checked|ensured|reproduced|measured|benchmarked|audited|reviewed|inspected|found|identified|discovered|determined|detected|observed|calculated|computed|counted|compared|proved|proven|passe[sd]|pass|succeeds|succeeded|works|working|is now|are now|now (?:works|is|are|has|have|returns|shows)|is live|are live|up and running|no (?:errors?|failures?|warnings?)|matches|returns|exits? (?:with )?(?:code )?0)\b/i;

const QUESTION_RE = /\?\s*$/;
// A sentence about the reply itself ("Answered the question"): the reply's own claims are judged, not this one.
const ABOUT_REPLY_RE = /^(?:(?:i|we)\s+)?(?:answered|replied|responded|explained|described|summari[sz]ed|outlined|clarified|greeted)\b/i;
// "Answered the customer's question about order #7002": a sentence about the reply, whatever it names.
const QUESTION_WORD_RE = /\b(?:question|questions|query|inquiry|enquiry|asked)\b/i;
const ASIDE_START_RE = /^(here is|here's|here are|below|above|the following|summary|in summary|to summarize|note|thanks|thank you|hi|hello)\b/i;
const OFFER_RE = /\b(let me know|feel free|you can|you could|you may|you might|you should|if you (?:want|need|like|prefer)|do you want|would you like|happy to help)\b/i;
const LIMITATION_RE =
  /\b(did not|didn't|does not|doesn't|was not|wasn't|were not|weren't|have not|haven't|has not|hasn't|had not|hadn't|not yet|unable to|failed to|could not|couldn't|cannot|can't|wasn't able|weren't able)\b/i;
const PLAN_RE = /\b(will|won't|shall|going to|plan(?:s|ned)? to|intend(?:s|ed)? to|next step|later|todo|to-do|follow[- ]up|would like to|in the future)\b/i;
const HEDGE_RE =
  /\b(might|may|could|should|would|probably|likely|unlikely|possibly|perhaps|maybe|presumably|apparently|seems?|seemed|appears?|appeared|i think|i believe|i guess|i assume|hopefully|not sure|unclear|roughly|approximately)\b/i;

const WORD_RE = /[A-Za-z][A-Za-z'-]*/g;
// A verb of coming to know, framing a "that" clause: the clause is the claim.
const EPISTEMIC_FRAME_RE =
  /^(?:[^,]{0,60},\s*)?(?:(?:i|we)\s+)?(?:have\s+)?(?:found|determined|learned|learnt|noticed|concluded|realized|realised|saw|read|calculated|computed|figured out|established)\s+that\s+(.+)$/i;

function isPastVerb(word: string): boolean {
  const w = word.toLowerCase();
  if (IRREGULAR_PAST.has(w)) return true;
  if (NOT_PAST.has(w)) return false;
  return /^[a-z]{2,}ed$/.test(w);
}

/** Whether a word states what was done ("deployed", "verified") rather than what it was done to. */
export function isPredicateWord(word: string): boolean {
  return isPastVerb(word) || VERIFY_RE.test(word);
}

// Present-tense cues that are also plural nouns: "federal returns", "string matches", "public works".
const NOUN_LIKE_CUE_RE = /^(?:returns|matches|works|passes|pass)$/i;

/** Where the first checking or finding cue starts, skipping cue words used as nouns; -1 when none. */
function verifyCueIndex(text: string): number {
  const re = new RegExp(VERIFY_RE.source, 'gi');
  for (const m of text.matchAll(re)) {
    if (!NOUN_LIKE_CUE_RE.test(m[0])) return m.index;
    const word = readText(text).words.find((w) => w.start === m.index);
    if (!word || word.pos !== 'NOUN') return m.index;
  }
  return -1;
}

/** Where the first completion cue (done, changed, delivered, verified, found) starts, or -1. */
// "can be borrowed", "must be returned": a participle after a modal states a rule, not something done.
const MODAL_PASSIVE_RE = /\b(?:can|cannot|must|may|might|should|could|would|need to|needs to|has to|have to)\s+(?:not\s+)?be\s+$/i;

function completionCueIndex(text: string): number {
  let first = verifyCueIndex(text);
  for (const m of text.matchAll(WORD_RE)) {
    if (first !== -1 && m.index >= first) break;
    if (isPastVerb(m[0]) && !MODAL_PASSIVE_RE.test(text.slice(0, m.index))) {
      first = m.index;
      break;
    }
  }
  return first;
}

const SUBJECT_WORDS = new Set(['i', 'we', 'it', 'they', 'he', 'she', 'then', 'also', 'and', 'have', 'has', 'had']);
const MODALS = new Set(['will', 'would', 'should', 'might', 'may', 'could', 'can', 'shall']);

/** Whether the words after a conjunction start a new predicate ("... and deployed it", "..., then I will ..."). */
function startsPredicate(rest: string): boolean {
  const words = rest.trim().split(/\s+/).slice(0, 3);
  for (const word of words) {
    const w = word.toLowerCase().replace(/[^a-z']/g, '');
    if (!w) return false;
    if (SUBJECT_WORDS.has(w)) continue;
    return isPastVerb(w) || MODALS.has(w) || VERIFY_RE.test(w);
  }
  return false;
}

// "…, and so is the second pallet", "…, and the next stop too": a clause that says the same of another subject.
const ELLIPTICAL_RE = /^(?:(?:so|neither|nor)\s+(?:is|are|was|were|do|does|did|has|have|had)\b.*|(?:\S+\s+){0,5}(?:too|as well|also)[.!]?)$/i;

/** Whether the rest of a sentence claims the same predicate of another subject: a claim of its own, about that subject. */
function elliptical(rest: string): boolean {
  return ELLIPTICAL_RE.test(rest.trim());
}

const LIST_MARKER_RE = /^\s*(?:[-*+•]|\d{1,3}[.)]|\[[ xX]\])\s+/;

function cleanClause(text: string): string {
  return text
    .replace(LIST_MARKER_RE, '')
    .replace(/^#+\s*/, '')
    .replace(/\*\*|__/g, '')
    .replace(/^(?:and|but|then|also|so)\s+/i, '')
    .replace(/[\s.;,]+$/, '')
    .trim();
}

/** Sentences of a text: lines first (lists, headings), then sentence ends followed by a capital, digit or quote. */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.replace(LIST_MARKER_RE, '');
    // A URL, a file name, a decimal or "e.g." has no space after its dot, so it is never a boundary.
    // Nor is the dot of a title, an initial or "et al." ("Dr. Lang", "R. Patel", "Smith et al. (2019)").
    for (const sentence of line.split(/(?<!\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|al|approx|[A-Z])\.)(?<=[.!?])\s+(?=["'“(`[]?[A-Z0-9])/)) {
      if (sentence.trim()) out.push(sentence.trim());
    }
  }
  return out;
}

/**
 * "I looked it up: the clinic opens at 9:00", "Lab results are back: HbA1c
 * is 6.8%": a short lead that says where the answer came from, not what was
 * done, is an aside of its own (it keeps its colon); what follows is the claim.
 */
function splitLead(piece: string): string[] {
  const m = /^([^:]{1,60}):\s+(\S.*)$/.exec(piece);
  if (!m) return [piece];
  const lead = m[1] as string;
  const words = lead.trim().split(/\s+/);
  if (words.length > 6 || [...extractFeatures(lead)].some(isRequiredFeature)) return [piece];
  const firstPerson = /^(?:i|we)$/i.test(words[0] ?? '');
  if (!firstPerson && words.some((w) => isPastVerb(w))) return [piece];
  return [`${lead}:`, m[2] as string];
}

/** Clauses of a sentence: split at ";" and at conjunctions that start a new predicate. */
export function splitClauses(sentence: string): string[] {
  const pieces = sentence.split(/;\s+/).flatMap(splitLead);
  const out: string[] = [];
  for (const piece of pieces) {
    const re = /,\s*(?:and|but|then)?\s*|\s+(?:and|but|then|while)\s+/gi;
    let start = 0;
    for (const m of piece.matchAll(re)) {
      const end = m.index;
      const rest = piece.slice(end + m[0].length);
      // "Next, I will ..." : an opening word before the comma is no clause of its own.
      const before = piece.slice(start, end).trim().split(/\s+/).length;
      if (before >= 2 && (startsPredicate(rest) || elliptical(rest))) {
        out.push(piece.slice(start, end));
        start = end + m[0].length;
      }
    }
    out.push(piece.slice(start));
  }
  return out.map(cleanClause).filter((c) => c.length > 0);
}

/** One atomic claim text, and what it takes from the rest of its sentence. */
export interface ClaimSegment {
  text: string;
  /** A hedge at the head of the sentence covers this clause too. */
  hedged: boolean;
  /** The clause before it in the same sentence, which a pronoun ("verified it boots") refers back to. */
  previous?: string;
}

/** Splits a text into atomic claims (cleaned clauses). */
export function segmentClaims(text: string): ClaimSegment[] {
  const out: ClaimSegment[] = [];
  for (const sentence of splitSentences(text)) {
    // A hedge at the head of a sentence ("I think I fixed X and deployed Y") covers every clause.
    const head = sentence.split(/[,;]/)[0] ?? '';
    const hedgeAt = head.search(HEDGE_RE);
    const hedgedSentence = hedgeAt !== -1 && (completionCueIndex(head) === -1 || hedgeAt < completionCueIndex(head));
    let previous: string | undefined;
    for (const clause of splitClauses(sentence)) {
      out.push({ text: clause, hedged: hedgedSentence, ...(previous !== undefined ? { previous } : {}) });
      previous = clause;
    }
  }
  return out;
}

/**
 * What a clause asserts, and how much it matters, from generic linguistic
 * cues. The earliest cue decides: "Fixed the upload that failed to resume" is
 * an action, "Could not verify the fix" a limitation, "This should fix it" a
 * hedged outcome.
 */
export function classifyClaim(text: string, opts: { hedged?: boolean } = {}): { kind: ClaimKind; materiality: ClaimMateriality } {
  // "I found that X" claims X: how the agent came to know it does not change what it asserts.
  const framed = EPISTEMIC_FRAME_RE.exec(text);
  if (framed?.[1]) return classifyClaim(framed[1], opts);
  if (QUESTION_RE.test(text) || OFFER_RE.test(text)) return { kind: 'aside', materiality: 'low' };
  if (ASIDE_START_RE.test(text) || /:\s*$/.test(text)) return { kind: 'aside', materiality: 'low' };
  // Short, or about a question: the reply itself ("Answered the question"); longer, it names what was replied to in the world.
  if (ABOUT_REPLY_RE.test(text) && (QUESTION_WORD_RE.test(text) || ((text.match(WORD_RE) ?? []).length <= 4 && ![...extractFeatures(text)].some(isRequiredFeature)))) {
    return { kind: 'aside', materiality: 'low' };
  }
  const completionAt = completionCueIndex(text);
  const cues: Array<[ClaimKind | 'completion', number]> = [
    ['completion', completionAt],
    ['limitation', text.search(LIMITATION_RE)],
    ['plan', text.search(PLAN_RE)],
    ['hedged', text.search(HEDGE_RE)],
  ];
  const found = cues.filter(([, at]) => at !== -1).sort((a, b) => a[1] - b[1]);
  const first = found[0]?.[0];
  if (first === 'limitation') return { kind: 'limitation', materiality: 'low' };
  if (first === 'plan') return { kind: 'plan', materiality: 'low' };
  // A hedged outcome with something checkable in it still claims something; a vague one does not.
  const checkable = completionAt !== -1 || [...extractFeatures(text)].some(isRequiredFeature);
  if (first === 'hedged' || (opts.hedged && (first === 'completion' || first === undefined))) return { kind: 'hedged', materiality: checkable ? 'medium' : 'low' };
  if (first === 'completion') return { kind: verifyCueIndex(text) !== -1 ? 'verification' : 'action', materiality: 'high' };
  if ((text.match(WORD_RE) ?? []).length >= 3) return { kind: 'statement', materiality: 'medium' };
  return { kind: 'aside', materiality: 'low' };
}

/**
 * The required features of a claim as a person reads them: a URL's origin and
 * last path segment are left out when the URL itself is listed.
 */
export function displayRequired(features: readonly string[]): string[] {
  const urls = features.filter((f) => f.startsWith('url:')).map((f) => f.slice(4));
  const implied = new Set<string>();
  for (const url of urls) {
    for (const other of urls) if (other !== url && other.startsWith(`${url}/`)) implied.add(`url:${url}`);
    const last = url.replace(/^https?:\/\/[^/]+/, '').split('/').pop();
    if (last) implied.add(`file:${last}`);
  }
  return features.filter((f) => isRequiredFeature(f) && !implied.has(f)).map(describeFeature);
}

/** What evidence would support a claim, in words the agent can act on. */
export function describeRequirement(kind: ClaimKind, materiality: ClaimMateriality, features: readonly string[]): string {
  if (materiality === 'low') return 'none: a plan, hedge, limitation or aside, not a claim that something was done';
  const required = displayRequired(features);
  const subject = required.length
    ? `, mentioning ${required.join(', ')}`
    : ', sharing a file name, identifier, number, quoted string, URL or tool name with the claim';
  switch (kind) {
    case 'action':
      return `a successful observation (tool result, file change or delivery result) that it was done${subject}`;
    case 'verification':
      return `a successful check (tool result or runtime observation) of that outcome${subject}`;
    case 'hedged':
      return `an observation of the outcome${subject}; or reword the claim so it does not imply the outcome`;
    default:
      return `an observation that shows it${subject}`;
  }
}

function normalizeClaimText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** The identity of a claim across attempts: the same words make the same claim. */
export function claimKey(text: string): string {
  return normalizeClaimText(text).replace(/[^a-z0-9 ]/g, '');
}

const DERIVED_GOAL_CHARS = 300;

// "When is …", "Which …", "Is the …": a goal that asks rather than orders.
const QUESTION_START_RE = /^(?:what|when|where|which|who|whom|whose|why|how|is|are|was|were|do|does|did|can|could|should|will|would|has|have)\b/i;

// "Told the coach the final is on 5 April", "Answered CS: it's 350gsm board", "Confirmed to the donor that …": the act of
// replying, and what the reply said.
const REPLY_ACT_RE = /^(?:(?:i|we)\s+)?(?:told|answered|replied(?:\s+to)?|responded(?:\s+to)?|confirmed\s+to|informed|let)\s+(?:[^\s:]+\s+){0,3}?(?:that\s+|know\s+(?:that\s+)?|:\s*)?/i;

/**
 * A summary sentence that reports the reply to a question ("Told the coach the U12 final is on 5 April") when the
 * visible answer itself states what it says: the reply's own claims are judged, not this report of it. What the
 * report says the reply contained must be shown by the visible answer (read as what was seen), or the sentence keeps
 * its own weight: "Told the customer the refund was issued" beside a reply of "All sorted!" still claims the refund.
 */
function reportsShownReply(text: string, texts: ProposedTexts): boolean {
  const reply = (texts.visibleAnswer ?? '').trim();
  const act = REPLY_ACT_RE.exec(text);
  if (!reply || !act || !(isQuestion(texts.goal) || asksForWords(texts.goal))) return false;
  const said = text.slice(act[0].length).trim();
  if (!said) return true;
  const judged = judgeSupport(readClaim(said, 'statement'), { read: { ...readText(reply), tool: [] }, kind: 'tool_result' });
  return judged.verdict === 'shows';
}

/** Whether the summary or the visible answer states the goal's outcome: the goal read as a claim, the texts as what was seen. */
function textsShowGoal(texts: ProposedTexts): boolean {
  const said = `${texts.summary} ${texts.visibleAnswer ?? ''}`.trim();
  if (!said) return false;
  const judged = judgeSupport(readClaim(texts.goal, 'action'), { read: { ...readText(said), tool: [] }, kind: 'tool_result' });
  return judged.verdict !== 'lacks' || judged.coverage >= 0.75;
}

// Goals whose work is the reply itself: "Say hello", "Explain the difference", "Draft a welcome note".
const WORDS_GOAL_RE = /^(?:please\s+)?(?:say|tell|answer|reply|respond|explain|describe|summari[sz]e|outline|clarify|greet|write|draft|list|suggest|recommend|define|thank|introduce)\b/i;

/** Whether a goal asks for words (a reply, an explanation, a draft) that the visible text itself is. */
function asksForWords(goal: string): boolean {
  return WORDS_GOAL_RE.test(goal.trim());
}

/** Whether a goal asks a question (its answer is the work) rather than orders an action. */
export function isQuestion(goal: string): boolean {
  const text = goal.trim();
  return QUESTION_RE.test(text) || QUESTION_START_RE.test(text);
}

// "v2", "3.8": a version the summary may write another way ("version 2").
const VERSION_RE = /^v?\d+(?:\.\d+)*$/i;
const AMOUNT_RE = /^[$€£]?\d[\d.,]*(?:k|m|bn|b)?(?:[-–][$€£]?\d[\d.,]*(?:k|m|bn|b)?)?$/i;

/**
 * An identifier the goal names (a database, a record, a file) that neither
 * the summary nor the visible answer mentions is still part of what "done"
 * claims: the work was on that thing, not on another. It becomes a claim of
 * its own, the identifier as the goal wrote it, which an observation must
 * show: "granted read on MART_FINANCE" does not say in which database, and
 * the goal said ANALYTICS_PROD.
 */
function claimGoalIdentifiers(texts: ProposedTexts, add: (text: string, source: ClaimSource, judged: { kind: ClaimKind; materiality: ClaimMateriality }) => void): void {
  if (isQuestion(texts.goal) || asksForWords(texts.goal)) return;
  const said = new Set([...extractFeatures(`${texts.summary} ${texts.visibleAnswer ?? ''}`)]);
  const tokens = texts.goal.split(/\s+/).map((t) => t.replace(/^[("'`]+|[)"'`.,;:!?]+$/g, ''));
  for (const feature of extractFeatures(texts.goal)) {
    if (!/^(?:id|file|url):/.test(feature) || said.has(feature)) continue;
    const raw = tokens.find((t) => t.toLowerCase() === feature.slice(feature.indexOf(':') + 1));
    // An amount or a range of amounts ("152k-178k") is a value the summary may write another way, not a thing worked on.
    if (raw && !AMOUNT_RE.test(raw) && !VERSION_RE.test(raw)) add(raw, 'derived', { kind: 'statement', materiality: 'high' });
  }
}

/**
 * Atomic claims of one completion attempt, from the task-complete summary and
 * the visible answer (a claim in both is kept once). When neither says
 * concretely what was done, the attempt still claims the goal was reached: that
 * becomes a derived claim over the goal's own features, so "Done." alone
 * cannot pass a full review.
 */
export function deriveClaims(texts: ProposedTexts, opts: { cycle: number; policy?: ReviewPolicy }): DerivedClaim[] {
  const claims: DerivedClaim[] = [];
  const seen = new Set<string>();
  const add = (text: string, source: ClaimSource, judged: { kind: ClaimKind; materiality: ClaimMateriality }): void => {
    const key = claimKey(text);
    if (!key || seen.has(key)) return;
    seen.add(key);
    const { kind, materiality } = judged;
    // A clause's own details only: the details of the clause before it are not its requirements (it may be about something else).
    const features = [...extractFeatures(text)].sort();
    claims.push({
      id: `cl-${opts.cycle}-${claims.length + 1}`,
      text,
      source,
      kind,
      materiality,
      evidenceRequirement: describeRequirement(kind, materiality, features),
      features,
    });
  };
  for (const seg of segmentClaims(texts.summary)) {
    add(seg.text, 'task_complete_summary', reportsShownReply(seg.text, texts) ? { kind: 'aside', materiality: 'low' } : classifyClaim(seg.text, seg));
  }
  for (const seg of segmentClaims(texts.visibleAnswer ?? '')) add(seg.text, 'assistant_visible_text', classifyClaim(seg.text, seg));
  // Under the fast policy a statement needs no evidence, so "Done, all good" would complete any order: unless the
  // texts themselves show the goal's outcome, the goal is claimed, and it needs evidence.
  const vagueUnderFast = opts.policy === 'fast' && !isQuestion(texts.goal) && !asksForWords(texts.goal) && !textsShowGoal(texts);
  if (vagueUnderFast || !claims.some((c) => c.materiality !== 'low')) {
    const goal = texts.goal.replace(/\s+/g, ' ').trim();
    const clipped = goal.length > DERIVED_GOAL_CHARS ? `${goal.slice(0, DERIVED_GOAL_CHARS - 1)}…` : goal;
    // A question answered in the visible reply stays light: the reply shows itself. Any other goal's outcome
    // is what "done" claims, and no policy completes it on the agent's word: it needs evidence.
    const answered = (isQuestion(goal) || asksForWords(goal)) && `${texts.summary} ${texts.visibleAnswer ?? ''}`.trim() !== '' && (isQuestion(goal) ? (texts.visibleAnswer ?? '').trim() !== '' : true);
    add(`The goal was achieved: ${clipped}`, 'derived', { kind: 'action', materiality: answered ? 'medium' : 'high' });
  } else claimGoalIdentifiers(texts, add);
  return claims;
}
