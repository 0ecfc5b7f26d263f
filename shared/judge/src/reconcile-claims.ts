import type { ClaimMateriality, ClaimStatus, CompletionClaim, CompletionEvidence, EvidenceSpan, ReviewPolicy } from '@vouch/contracts';
import type { DerivedClaim } from './derive-claims.js';
import { stem } from './extract-features.js';
import { judgeSupport, readClaim, timesNamed, type ClaimReading, type Judgement, type ObservationView } from './judge-support.js';
import { valuesMatch, type Value } from './read-values.js';
import type { Word } from './read-text.js';
import { currentObservations, observationReading, valueKey, type ObservationFeatures } from './observation-features.js';

/**
 * Reconciles claims with the evidence: a claim is supported only when some
 * successful observation shows its fact (judge-support.ts), contradicted when
 * the latest observation of that fact failed or reports a negative result,
 * blocked when that failure says the check could not be made.
 *
 * Candidates are found through an index of each observation's stored index
 * keys (observation-features.ts, extracted when it was recorded): word stems
 * and identifiers → positions. A claim's candidates are scored by the keys
 * they share with it, each weighted by how specific it is within this ledger
 * (the rarer, the heavier), and only the best are judged, so the pass grows
 * linearly with the evidence count. Judging reads the full stored features of
 * those candidates only: a review finds them first (findCandidates,
 * candidateSeqs), reads their features, then judges (judgeCandidates).
 */

/** Linked evidence ids kept per claim: the most recent ones, enough to audit without bloating the ledger. */
export const MAX_EVIDENCE_IDS_PER_CLAIM = 20;

/** The reason of a claim that only critic feedback mentions: callers that map other kinds to feedback reword it. */
export const FEEDBACK_ONLY_REASON = 'only critic feedback mentions it; no observation does';
/** Candidates judged per claim: the highest scored. */
const MAX_CANDIDATES = 40;
// Later evidence scanned per key when deciding whether a failure was followed by a success.
const MAX_LATER_SCAN = 500;
/** Later observations of one record (an identifier a candidate names) judged with a claim, per key and in all. */
const MAX_LATER_PER_RECORD = 3;
const MAX_LATER_RECORDS = 12;
/** Score two observations must share for a later success to settle an earlier failure: an identifier, or three words. */
const SETTLE_THRESHOLD = 3;

// Generic words for an observation that could not be made at all (as opposed to one that came out wrong).
const BLOCKER_RE =
  /\b(permission[ _]denied|access[ _]denied|forbidden|unauthori[sz]ed|not authori[sz]ed|not permitted|blocked|unavailable|not available|no access|requires? (?:human |manual )?approval|declined|refused)\b/i;
// Generic words for an act that needs a person or a permission the agent does not have: "requires manager override",
// "must be e-signed by the applicant's officer", "exceeds agent authority", "awaiting approval", "requires sign-off",
// "erasure requires DPO review", "cannot be released until the customer approves", "guardian consent not signed".
const NEEDS_PERSON_RE = new RegExp(
  [
    String.raw`\b(?:requires?|required|needs?|must be)\b[^.;]{0,80}?\b(?:approv\w*|sign[- ]?off|(?:e-|digitally )?sign(?:ed|atures?)?|override|authori[sz]\w*|permission|consent|certif\w*|PIN|review)\b`,
    // "obtain correct PIN from end user", "get written consent from the owner": what only that person can give.
    String.raw`\b(?:obtain|get|collect|request)\b[^.;]{0,40}?\bfrom (?:the |an? )?(?:end[- ]user|user|customer|client|owner|holder|rights holder|manager|administrator|admin|guardian|parent)\b`,
    String.raw`\bexceeds?\b[^.;]{0,40}?\b(?:authority|permission|approval limit)\b`,
    String.raw`\b(?:awaiting|waiting for|pending)[\s_]+(?:\w+\s+){0,2}(?:approval|review|sign[- ]?off|signature|consent)\b`,
    String.raw`\b(?:cannot|can't|may not|is not allowed to)\s+(?:sign|approve|authori[sz]e)\b`,
    String.raw`\buntil\s+(?:the\s+|a\s+|an\s+)?(?:\w+\s+){0,2}(?:approves?|signs?|reviews?|consents?|authori[sz]es?|signs off)\b`,
    String.raw`\b(?:approval|consent|signature|sign[- ]?off|authori[sz]ation)\s+(?:not|never)\s+(?:yet\s+)?(?:given|granted|signed|received|provided)\b`,
  ].join('|'),
  'i',
);

export interface EvidenceIndex {
  evidence: readonly CompletionEvidence[];
  /** Index keys of each item, by position (ObservationFeatures.k). */
  keys: ReadonlyArray<readonly string[]>;
  /** Key → positions of the evidence that has it, ascending. */
  postings: ReadonlyMap<string, readonly number[]>;
}

/** Stored features of evidence items by their seq: at least those of the candidates a review judges. */
export type FeaturesBySeq = ReadonlyMap<number, ObservationFeatures>;

/** Indexes the evidence by the index keys stored with each item (by position). */
export function indexEvidence(evidence: readonly CompletionEvidence[], keys: ReadonlyArray<readonly string[]>): EvidenceIndex {
  if (keys.length !== evidence.length) throw new Error(`an evidence index needs the keys of all ${evidence.length} items, got ${keys.length}`);
  const postings = new Map<string, number[]>();
  keys.forEach((own, i) => {
    for (const key of own) {
      const list = postings.get(key);
      if (list) list.push(i);
      else postings.set(key, [i]);
    }
  });
  return { evidence, keys, postings };
}

/** Evidence with the features of every item in hand: what a review of evidence held in memory judges. */
export interface EvidenceInMemory {
  index: EvidenceIndex;
  features: FeaturesBySeq;
}

/** Indexes evidence held in memory, with its features where given (by position, current ones only), else read from the summaries. */
export function readEvidenceInMemory(evidence: readonly CompletionEvidence[], stored?: ReadonlyArray<ObservationFeatures | undefined>): EvidenceInMemory {
  const observations = currentObservations(evidence, stored);
  return {
    index: indexEvidence(
      evidence,
      observations.map((f) => f.k),
    ),
    features: new Map(evidence.map((item, i) => [item.seq, observations[i] as ObservationFeatures])),
  };
}

/** Critic feedback is an opinion, not an observation: it neither supports nor contradicts a claim. */
function isDecisive(item: CompletionEvidence): boolean {
  return item.kind !== 'critic_feedback';
}

function isFailure(item: CompletionEvidence): boolean {
  return item.success === false;
}

/** A failure that says the observation could not be made (denied, unavailable) rather than that it came out wrong. */
export function isBlockingFailure(item: CompletionEvidence): boolean {
  return isFailure(item) && (item.kind === 'human_input' || BLOCKER_RE.test(item.summary) || NEEDS_PERSON_RE.test(item.summary));
}

export function requiresEvidence(materiality: ClaimMateriality, policy: ReviewPolicy): boolean {
  if (materiality === 'high') return true;
  return materiality === 'medium' && policy === 'full';
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function describeObservation(item: CompletionEvidence): string {
  return `${item.id} (${item.toolName ?? item.kind}): ${clip(item.summary, 160)}`;
}

/** How specific a key is within this ledger: a key few observations share weighs more. */
function keyWeight(index: EvidenceIndex, key: string): number {
  const df = index.postings.get(key)?.length ?? 0;
  const idf = Math.log(1 + index.evidence.length / (1 + df));
  return key.startsWith('i:') ? 3 * idf : idf;
}

/** The index keys of a claim: its identifiers and the stems of its words. */
function claimKeys(reading: ClaimReading): string[] {
  const keys = new Set<string>();
  for (const v of reading.values) {
    const key = valueKey(v.value);
    if (key) keys.add(key);
  }
  for (const t of [...reading.terms, ...(reading.action ? [reading.action] : []), ...(reading.predicate ? [reading.predicate] : [])]) keys.add(`w:${stem(t.word.lemma)}`);
  for (const v of reading.values) if (v.value.k === 'quote') for (const part of v.value.text.split(/\s+/)) if (part.length >= 3) keys.add(`w:${stem(part)}`);
  return [...keys];
}

/** Candidate positions for a claim: the `limit` best scored (ties: the most recent), in evidence order. */
export function candidates(index: EvidenceIndex, keys: readonly string[], limit: number): number[] {
  const n = index.evidence.length;
  const scores = new Float64Array(n);
  const touched: number[] = [];
  for (const key of keys) {
    const list = index.postings.get(key);
    if (!list) continue;
    const weight = keyWeight(index, key);
    for (const i of list) {
      if (scores[i] === 0) touched.push(i);
      scores[i] = (scores[i] as number) + weight;
    }
  }
  if (touched.length <= limit) return touched.sort((a, b) => a - b);
  // A bounded selection of the best: keeps the pass linear in the postings.
  const best: number[] = [];
  for (const i of touched) {
    if (best.length < limit) {
      best.push(i);
      if (best.length === limit) best.sort((a, b) => (scores[b] as number) - (scores[a] as number) || b - a);
      continue;
    }
    const last = best[limit - 1] as number;
    if ((scores[i] as number) > (scores[last] as number) || ((scores[i] as number) === (scores[last] as number) && i > last)) {
      best[limit - 1] = i;
      for (let k = limit - 1; k > 0 && ((scores[best[k] as number] as number) > (scores[best[k - 1] as number] as number) || ((scores[best[k] as number] as number) === (scores[best[k - 1] as number] as number) && (best[k] as number) > (best[k - 1] as number))); k--) {
        const t = best[k] as number;
        best[k] = best[k - 1] as number;
        best[k - 1] = t;
      }
    }
  }
  return best.sort((a, b) => a - b);
}

function spanOf(item: CompletionEvidence, view: ObservationView, matched: readonly number[]): EvidenceSpan | undefined {
  const words = view.read.words;
  const hits = matched.map((i) => words[i]).filter((w) => w !== undefined);
  if (hits.length === 0) return { evidenceId: item.id, start: 0, end: item.summary.length, text: clip(item.summary, 200) };
  // From the first matched word to the last, widened to the segments they sit in so the result words come along.
  const segs = new Set(hits.map((w) => w.seg));
  const inSpan = words.filter((w) => segs.has(w.seg));
  const start = Math.min(...hits.map((w) => w.start), ...inSpan.map((w) => w.start));
  const end = Math.max(...hits.map((w) => w.end), ...inSpan.map((w) => w.end));
  return { evidenceId: item.id, start, end, text: clip(item.summary.slice(start, end), 200) };
}

/** Whether an observation states one of the claim's identifiers (a file, an id, a URL). */
/** Values whose kind says what they measure: a time, a date, a quantity with its unit or a share. */
function measures(v: Value): boolean {
  return v.k === 'time' || v.k === 'date' || (v.k === 'num' && (v.dim !== undefined || v.pct === true));
}

function sameKind(a: Value, b: Value): boolean {
  if (a.k !== b.k) return false;
  return a.k !== 'num' || (b.k === 'num' && a.dim === b.dim && Boolean(a.pct) === Boolean(b.pct));
}

/**
 * A successful observation that speaks of the claim's thing (a word of the claim in the same segment) and states a
 * value of the same kind as one the claim states, and nowhere the claimed one: the observation's value is the thing's.
 */
function rivalValue(reading: ClaimReading, judged: ReadonlyArray<{ i: number; j: Judgement }>, view: (i: number) => ObservationView): { i: number; claimed: string; seen: string } | undefined {
  const claimed = reading.values.filter((v) => measures(v.value) && !v.word.synthetic);
  if (claimed.length === 0) return undefined;
  for (const { i, j } of judged) {
    if (j.verdict !== 'lacks' || j.matched.length === 0) continue;
    const words = view(i).read.words;
    const spoken = new Set(j.matched.map((k) => (words[k] as Word).seg));
    for (const c of claimed) {
      if (words.some((w) => w.value !== undefined && valuesMatch(c.value, w.value))) continue;
      const other = words.find((w) => spoken.has(w.seg) && w.value !== undefined && sameKind(c.value, w.value));
      if (other) return { i, claimed: c.word.text, seen: other.text };
    }
  }
  return undefined;
}

function namesAnIdentifier(reading: ClaimReading, view: ObservationView): boolean {
  return reading.values.some((v) => v.value.k === 'id' && view.read.words.some((w) => w.value !== undefined && valuesMatch(v.value, w.value)));
}

interface ClaimJudgement {
  status: ClaimStatus;
  statusReason: string;
  missingFeatures: string[];
  evidenceSpans: EvidenceSpan[];
  linked: number[];
}

/** A claim read, with the positions of the evidence it is judged against: the best scored by the index keys they share. */
export interface ClaimCandidates {
  claim: DerivedClaim;
  reading: ClaimReading;
  candidates: number[];
}

/** Later observations of a record a candidate names: an item after it sharing an identifier with it, a few per key. */
function laterOfSameRecord(index: EvidenceIndex, found: readonly number[]): number[] {
  const out = new Set<number>();
  for (const c of found) {
    for (const key of index.keys[c] ?? []) {
      if (!key.startsWith('i:')) continue;
      const list = index.postings.get(key) ?? [];
      const start = firstAfter(list, c);
      for (let k = start; k < Math.min(list.length, start + MAX_LATER_PER_RECORD); k++) out.add(list[k] as number);
      if (out.size >= MAX_LATER_RECORDS) return [...out];
    }
  }
  return [...out];
}

/** Reads each claim and finds its candidates in the index; only their features are needed to judge it. */
export function findCandidates(claims: readonly DerivedClaim[], index: EvidenceIndex): ClaimCandidates[] {
  return claims.map((claim) => {
    const reading = readClaim(claim.text, claim.kind);
    const found = candidates(index, claimKeys(reading), MAX_CANDIDATES);
    const later = laterOfSameRecord(index, found);
    return { claim, reading, candidates: [...new Set([...found, ...later])].sort((a, b) => a - b) };
  });
}

/** The evidence seqs whose features judging these claims reads, ascending. */
export function candidateSeqs(found: readonly ClaimCandidates[], index: EvidenceIndex): number[] {
  const positions = new Set(found.flatMap((f) => f.candidates));
  return [...positions].sort((a, b) => a - b).map((i) => (index.evidence[i] as CompletionEvidence).seq);
}

/**
 * The latest observation after `shown` that names one of the identifiers `shown` names and reports, in the segment that
 * names it, a failure or a negated outcome (or failed outright): the record it showed was changed back or broke since.
 */
function laterUndoing(index: EvidenceIndex, shown: number, found: readonly number[], view: (i: number) => ObservationView): { i: number; j: Judgement; failed: boolean } | undefined {
  const ids = new Set((index.keys[shown] ?? []).filter((k) => k.startsWith('i:')).map((k) => k.slice(2)));
  if (ids.size === 0) return undefined;
  let latest: { i: number; j: Judgement; failed: boolean } | undefined;
  for (const i of found) {
    const item = index.evidence[i] as CompletionEvidence;
    if (i <= shown || !isDecisive(item)) continue;
    const read = view(i).read;
    const at = read.words.map((w, k) => (w.value?.k === 'id' && ids.has(w.value.key) ? k : -1)).filter((k) => k >= 0);
    if (at.length === 0) continue;
    const segs = new Set(at.map((k) => (read.words[k] as { seg: number }).seg));
    // The record's segment, and the rest of the line it heads ("MR-22817 status changed: REVERSED - …").
    const reported = read.failures.flatMap((markers, seg) => (segs.has(seg) || (at.some((k) => k < read.headEnd) && seg >= Math.min(...segs)) ? markers : [])).filter((m) => !m.startsWith('#'));
    if (isFailure(item) || reported.length > 0) latest = { i, j: { verdict: 'contradicts', matched: at, why: isFailure(item) ? 'it failed' : `it reports "${reported[0]}"` }, failed: isFailure(item) };
  }
  return latest;
}

/**
 * "2,481,907 orders on both sides": one value claimed of two things, which the evidence must state twice (in two
 * observations, or twice in one). "both 2.1 and 2.2" states its own values, and an identifier names one thing.
 */
function claimedOfBoth(reading: ClaimReading): ClaimReading['values'][number] | undefined {
  const words = reading.read.words;
  const both = words.findIndex((w) => w.lemma === 'both');
  if (both === -1 || words[both + 1]?.value !== undefined || reading.values.length !== 1) return undefined;
  const only = reading.values[0] as ClaimReading['values'][number];
  return only.value.k === 'id' ? undefined : only;
}

/**
 * "Both tests pass", "both replicas": two things the claim names by one noun, with no value of their own. The evidence
 * must name the noun twice (two observations, or "test_a passed, test_b passed"), or say there are two ("both", "2").
 */
function bothThings(reading: ClaimReading): Word | undefined {
  const words = reading.read.words;
  const both = words.findIndex((w) => w.lemma === 'both');
  if (both === -1 || reading.values.length > 0) return undefined;
  return words.slice(both + 1, both + 4).find((w) => /^(NOUN|PROPN)$/.test(w.pos));
}

function judgeClaim(reading: ClaimReading, found: readonly number[], index: EvidenceIndex, features: FeaturesBySeq, needed: boolean, assertsFact: boolean): ClaimJudgement {
  const { evidence } = index;
  const views = new Map<number, ObservationView>();
  const view = (i: number): ObservationView => {
    let v = views.get(i);
    if (!v) {
      const item = evidence[i] as CompletionEvidence;
      const stored = features.get(item.seq);
      // A bug, never a caller's mistake: the review read the features of its candidates (candidateSeqs).
      if (!stored) throw new Error(`the features of evidence ${item.id} were not read for the review`);
      v = { read: observationReading(item.summary, stored), kind: item.kind };
      views.set(i, v);
    }
    return v;
  };
  const judged: Array<{ i: number; j: Judgement }> = [];
  let shows: { i: number; j: Judgement } | undefined;
  let against: { i: number; j: Judgement; failed: boolean } | undefined;
  let best: { i: number; j: Extract<Judgement, { verdict: 'lacks' }> } | undefined;
  let feedbackOnly = found.length > 0;
  for (const i of found) {
    const item = evidence[i] as CompletionEvidence;
    if (!isDecisive(item)) continue;
    feedbackOnly = false;
    const j = judgeSupport(reading, view(i));
    judged.push({ i, j });
    if (isFailure(item)) {
      // A failed observation of the same fact, or of one of the things the claim names ("logo.png: unsupported colour profile").
      if (j.verdict !== 'lacks' || j.coverage >= 0.5 || (j.coverage >= 0.33 && namesAnIdentifier(reading, view(i)))) against = { i, j, failed: true };
      continue;
    }
    if (j.verdict === 'shows') shows = { i, j };
    else if (j.verdict === 'contradicts') against = { i, j, failed: false };
    else if (!best || j.coverage > best.j.coverage || (j.coverage === best.j.coverage && i > best.i)) best = { i, j };
  }
  // "match request MR-22817 … status APPROVED", later "MR-22817 status changed: REVERSED": a later observation of the record
  // that showed the claim, reporting it failed or undone, is the latest word on it.
  if (shows && (!against || against.i < shows.i)) {
    const undone = laterUndoing(index, shows.i, found, view);
    if (undone) against = undone;
  }
  const linked = judged.filter(({ j }) => j.verdict !== 'lacks' || j.coverage >= 0.5).map(({ i }) => i);
  const link = (i: number | undefined) => {
    if (i !== undefined && !linked.includes(i)) linked.push(i);
  };
  link(against?.i);
  link(shows?.i);
  if (against && (!shows || against.i > shows.i)) {
    const item = evidence[against.i] as CompletionEvidence;
    const span = spanOf(item, view(against.i), against.j.matched);
    const reason = against.failed ? `the latest observation of it failed: ${describeObservation(item)}` : `the latest observation of it reports a negative result (${(against.j as { why: string }).why}): ${describeObservation(item)}`;
    return {
      status: against.failed && isBlockingFailure(item) ? 'blocked' : 'contradicted',
      statusReason: against.failed && isBlockingFailure(item) ? `verification is blocked: ${describeObservation(item)}` : reason,
      missingFeatures: [],
      evidenceSpans: span ? [span] : [],
      linked,
    };
  }
  if (shows) {
    const item = evidence[shows.i] as CompletionEvidence;
    const twice = claimedOfBoth(reading);
    if (twice && judged.filter(({ j }) => j.verdict === 'shows').reduce((n, { i }) => n + view(i).read.words.filter((w) => w.value !== undefined && valuesMatch(twice.value, w.value)).length, 0) < 2) {
      return {
        status: 'unverified',
        statusReason: `it is claimed of both, but only ${item.id} states ${twice.word.text}`,
        missingFeatures: [`${twice.word.text} a second time`],
        evidenceSpans: [],
        linked,
      };
    }
    const pair = bothThings(reading);
    const showing = judged.filter(({ j }) => j.verdict === 'shows').map(({ i }) => view(i));
    const counted = (v: ObservationView) => v.read.words.some((w) => /^(both|two|all|each)$/.test(w.lemma) || (w.value?.k === 'num' && w.value.n >= 2 && !w.value.dim && !w.value.pct));
    if (pair && !showing.some(counted) && showing.reduce((n, v) => n + timesNamed(v, pair), 0) < 2) {
      return { status: 'unverified', statusReason: `it is claimed of both, but only ${item.id} shows one`, missingFeatures: [`a second ${pair.text.replace(/s$/, '')}`], evidenceSpans: [], linked };
    }
    const span = spanOf(item, view(shows.i), shows.j.matched);
    return { status: 'supported', statusReason: `shown by ${item.id}: "${span?.text ?? ''}"`, missingFeatures: [], evidenceSpans: span ? [span] : [], linked };
  }
  // Several observations, each showing the claim for some of its coordinated items ("revoked laptop and SSO access": one
  // shows the laptop revoked, another SSO), and together for all of them.
  const partial = judged.filter(
    (x): x is { i: number; j: Extract<Judgement, { verdict: 'lacks' }> } => x.j.verdict === 'lacks' && !x.j.negative && !isFailure(evidence[x.i] as CompletionEvidence) && x.j.coverage >= 0.5,
  );
  const tail = partial.slice(-3);
  if (tail.length >= 2) {
    const stillMissing = (tail[0] as (typeof tail)[number]).j.missing.filter((m) => tail.every((t) => t.j.missing.includes(m)));
    // Each part shows the act itself ("drafted the report" is no part of "emailed the report and the invoice").
    const acts = [reading.action?.word.text, reading.predicate?.word.text].filter((w): w is string => w !== undefined);
    if (stillMissing.length === 0 && !tail.some((t) => acts.some((a) => t.j.missing.includes(a)))) {
      const spans = tail.flatMap((t) => spanOf(evidence[t.i] as CompletionEvidence, view(t.i), t.j.matched) ?? []);
      return { status: 'supported', statusReason: `shown together by ${tail.map((t) => (evidence[t.i] as CompletionEvidence).id).join(', ')}`, missingFeatures: [], evidenceSpans: spans, linked };
    }
  }
  if (feedbackOnly) return { status: 'unverified', statusReason: FEEDBACK_ONLY_REASON, missingFeatures: [], evidenceSpans: [], linked: [...found] };
  // A statement the policy lets through on the agent's word is still held when what the agent recorded names its thing
  // with another value ("checkout is at noon" beside "check-out by 11:00"): the agent had the answer and said otherwise.
  if (!needed && assertsFact) {
    const rival = rivalValue(reading, judged, view);
    if (rival) {
      const item = evidence[rival.i] as CompletionEvidence;
      return { status: 'contradicted', statusReason: `${item.id} states ${rival.seen} where the claim says ${rival.claimed}: ${describeObservation(item)}`, missingFeatures: [rival.claimed], evidenceSpans: [], linked: [...linked, rival.i] };
    }
  }
  // Nothing about this claim, or nothing more than a word or two of it.
  if (!best || best.j.coverage < 0.5) {
    return needed
      ? { status: 'unsupported', statusReason: 'no recorded observation is about this claim', missingFeatures: reading.values.filter((v) => !v.word.synthetic).map((v) => v.word.text), evidenceSpans: [], linked }
      : { status: 'unverified', statusReason: 'no evidence needed by the review policy, and none recorded', missingFeatures: [], evidenceSpans: [], linked };
  }
  const item = evidence[best.i] as CompletionEvidence;
  const missing = [...new Set(best.j.missing)];
  return {
    status: 'unverified',
    statusReason: `no successful observation shows it: the closest, ${item.id}, does not show ${missing.map((m) => `"${m}"`).join(', ')}`,
    missingFeatures: missing,
    evidenceSpans: [],
    linked,
  };
}

/** Judges one claim against its candidates under a review policy. */
function reconcileClaim(found: ClaimCandidates, index: EvidenceIndex, features: FeaturesBySeq, policy: ReviewPolicy): CompletionClaim {
  const { claim, reading } = found;
  const needed = requiresEvidence(claim.materiality, policy);
  // A plan, a hedge or a limitation says what is not (yet) so: another value in the evidence does not gainsay it.
  const assertsFact = claim.kind !== 'plan' && claim.kind !== 'hedged' && claim.kind !== 'limitation';
  const { linked, ...judgement } = judgeClaim(reading, found.candidates, index, features, needed, assertsFact);
  return {
    ...claim,
    requiresEvidence: needed,
    evidenceIds: [...new Set(linked)]
      .sort((a, b) => a - b)
      .slice(-MAX_EVIDENCE_IDS_PER_CLAIM)
      .map((i) => (index.evidence[i] as CompletionEvidence).id),
    ...judgement,
  };
}

/** Judges claims against their candidates, given the features of those candidates (candidateSeqs). */
export function judgeCandidates(found: readonly ClaimCandidates[], index: EvidenceIndex, features: FeaturesBySeq, policy: ReviewPolicy): CompletionClaim[] {
  return found.map((f) => reconcileClaim(f, index, features, policy));
}

/** Reconciles claims with the evidence recorded so far (in seq order), all of it in memory. */
export function reconcileClaims(claims: readonly DerivedClaim[], evidence: readonly CompletionEvidence[] | EvidenceInMemory, policy: ReviewPolicy): CompletionClaim[] {
  const { index, features } = 'index' in evidence ? evidence : readEvidenceInMemory(evidence);
  return judgeCandidates(findCandidates(claims, index), index, features, policy);
}

function firstAfter(list: readonly number[], position: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as number) <= position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Failed observations that no later success about the same subject followed:
 * one sharing an identifier, or three words, with it. The tool's name counts
 * as one word: the same shell ran many different commands.
 */
export function unresolvedFailures(index: EvidenceIndex): CompletionEvidence[] {
  const { evidence, keys, postings } = index;
  const out: CompletionEvidence[] = [];
  evidence.forEach((item, i) => {
    if (!isFailure(item) || !isDecisive(item)) return;
    const scores = new Map<number, number>();
    let resolved = false;
    for (const key of keys[i] ?? []) {
      const list = postings.get(key) ?? [];
      const weight = key.startsWith('i:') ? 3 : 1;
      const start = firstAfter(list, i);
      const end = Math.min(list.length, start + MAX_LATER_SCAN);
      for (let k = start; k < end && !resolved; k++) {
        const j = list[k] as number;
        const later = evidence[j] as CompletionEvidence;
        if (!isDecisive(later) || isFailure(later)) continue;
        const score = (scores.get(j) ?? 0) + weight;
        scores.set(j, score);
        if (score >= SETTLE_THRESHOLD) resolved = true;
      }
      if (resolved) break;
    }
    if (!resolved) out.push(item);
  });
  return out;
}
