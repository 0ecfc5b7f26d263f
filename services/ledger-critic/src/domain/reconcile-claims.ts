import type { ClaimMateriality, ClaimStatus, CompletionClaim, CompletionEvidence, ReviewPolicy } from '@vouch/contracts';
import { displayRequired, isPredicateWord, type DerivedClaim } from './derive-claims.js';
import { LINK_THRESHOLD, evidenceFeatures, featureKind, featureWeight, isRequiredFeature, stem, toolNameCandidates } from './extract-features.js';

/**
 * Links claims to evidence by the salient features they share, then reads the
 * success flags in recording order: a claim is supported by its latest related
 * observation succeeding, contradicted by a failure with no later success.
 *
 * Evidence features are indexed once in a Map (feature → evidence positions),
 * so linking a claim costs the postings of its own features: the whole pass
 * grows linearly with the evidence count.
 */

/** Linked evidence ids kept per claim: the most recent ones, enough to audit without bloating the ledger. */
export const MAX_EVIDENCE_IDS_PER_CLAIM = 20;

// Later evidence scanned per feature when deciding whether a failure was followed by a success.
const MAX_LATER_SCAN = 500;

// Generic words for an observation that could not be made at all (as opposed to one that came out wrong).
const BLOCKER_RE =
  /\b(permission denied|access denied|forbidden|unauthori[sz]ed|not authori[sz]ed|not permitted|blocked|unavailable|not available|no access|requires? (?:human |manual )?approval|declined|refused)\b/i;

export interface EvidenceIndex {
  evidence: readonly CompletionEvidence[];
  /** Features of each evidence item, by position. */
  features: ReadonlyArray<ReadonlySet<string>>;
  /** Feature → positions of the evidence that has it, ascending. */
  postings: ReadonlyMap<string, readonly number[]>;
}

export function buildEvidenceIndex(evidence: readonly CompletionEvidence[]): EvidenceIndex {
  const features: Set<string>[] = [];
  const postings = new Map<string, number[]>();
  evidence.forEach((item, i) => {
    const set = evidenceFeatures(item.summary, item.toolName);
    features.push(set);
    for (const key of set) {
      const list = postings.get(key);
      if (list) list.push(i);
      else postings.set(key, [i]);
    }
  });
  return { evidence, features, postings };
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
  return isFailure(item) && (item.kind === 'human_input' || BLOCKER_RE.test(item.summary));
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

/** Evidence positions linked to a text with these features, ascending. */
export function linkEvidence(index: EvidenceIndex, text: string, features: readonly string[]): number[] {
  const n = index.evidence.length;
  const scores = new Float64Array(n);
  const touched: number[] = [];
  const keys = new Set([...features, ...toolNameCandidates(text)]);
  for (const key of keys) {
    const list = index.postings.get(key);
    if (!list) continue;
    const weight = featureWeight(key);
    for (const i of list) {
      if (scores[i] === 0) touched.push(i);
      scores[i] = (scores[i] as number) + weight;
    }
  }
  // Most evidence touched (a tool every observation shares): a pass in order
  // keeps this linear where sorting the touched positions would not.
  if (touched.length * Math.log2(touched.length + 1) > n) {
    const linked: number[] = [];
    for (let i = 0; i < n; i++) if ((scores[i] as number) >= LINK_THRESHOLD) linked.push(i);
    return linked;
  }
  return touched.filter((i) => (scores[i] as number) >= LINK_THRESHOLD).sort((a, b) => a - b);
}

/**
 * Share of a claim's subject words (its content words other than the verbs
 * saying what was done and the tools) that its supporting observations must exceed mentioning, for a
 * claim with no specific detail (id, file, URL, quote, number) to pin it down.
 * Linking needs only a few shared features, so without this such a claim
 * could be "supported" by an observation of the same tool on another subject
 * ("deployed the api to production with kubectl" by a staging kubectl apply).
 */
const MIN_SUBJECT_COVERAGE = 0.5;
/** Claims with fewer subject words than this are judged by their details alone. */
const MIN_SUBJECT_WORDS = 3;

/** The claim's subject words that no supporting observation mentions, when too few are mentioned; else []. */
function uncoveredSubject(claim: DerivedClaim, index: EvidenceIndex, supporting: readonly number[]): string[] {
  // Specific details (ids, files, URLs, quotes, numbers) already had to be mentioned by a successful observation.
  if (claim.features.some(isRequiredFeature)) return [];
  // The tool says how something was observed, not what it was about.
  const tools = new Set(supporting.map((i) => (index.evidence[i] as CompletionEvidence).toolName?.toLowerCase()).filter(Boolean));
  // Feature key → the word as the claim wrote it, for the reason shown to people.
  const subject = new Map<string, string>();
  for (const m of claim.text.matchAll(/[A-Za-z][A-Za-z'-]*/g)) {
    if (isPredicateWord(m[0]) || tools.has(m[0].toLowerCase())) continue;
    const key = `word:${stem(m[0])}`;
    if (claim.features.includes(key) && !subject.has(key)) subject.set(key, m[0]);
  }
  if (subject.size < MIN_SUBJECT_WORDS) return [];
  const missing = [...subject].filter(([key]) => !supporting.some((i) => (index.features[i] as ReadonlySet<string>).has(key)));
  return (subject.size - missing.length) / subject.size > MIN_SUBJECT_COVERAGE ? [] : missing.map(([, word]) => word);
}

interface ClaimJudgement {
  status: ClaimStatus;
  statusReason: string;
  missingFeatures: string[];
}

function judge(claim: DerivedClaim, index: EvidenceIndex, linked: readonly number[], needed: boolean): ClaimJudgement {
  const { evidence } = index;
  if (linked.length === 0) {
    return needed
      ? { status: 'unsupported', statusReason: 'no recorded evidence shares a salient detail with this claim', missingFeatures: displayRequired(claim.features) }
      : { status: 'unverified', statusReason: 'no evidence needed by the review policy, and none recorded', missingFeatures: [] };
  }
  const linkedSet = new Set(linked);
  let latest: number | undefined;
  for (let k = linked.length - 1; k >= 0; k--) {
    const i = linked[k] as number;
    if (isDecisive(evidence[i] as CompletionEvidence)) {
      latest = i;
      break;
    }
  }
  // Each specific detail of the claim is judged by the latest linked observation that mentions it.
  let failing = latest !== undefined && isFailure(evidence[latest] as CompletionEvidence) ? latest : undefined;
  const missingKeys: string[] = [];
  for (const key of claim.features) {
    if (!isRequiredFeature(key)) continue;
    const list = index.postings.get(key) ?? [];
    let found: number | undefined;
    for (let k = list.length - 1; k >= 0; k--) {
      const i = list[k] as number;
      if (linkedSet.has(i) && isDecisive(evidence[i] as CompletionEvidence)) {
        found = i;
        break;
      }
    }
    if (found === undefined) missingKeys.push(key);
    else if (failing === undefined && isFailure(evidence[found] as CompletionEvidence)) failing = found;
  }
  const missing = displayRequired(missingKeys);
  if (failing !== undefined) {
    const item = evidence[failing] as CompletionEvidence;
    return isBlockingFailure(item)
      ? { status: 'blocked', statusReason: `verification is blocked: ${describeObservation(item)}`, missingFeatures: missing }
      : { status: 'contradicted', statusReason: `a related observation failed with no later success: ${describeObservation(item)}`, missingFeatures: missing };
  }
  if (latest === undefined) return { status: 'unverified', statusReason: 'only critic feedback mentions it; no observation does', missingFeatures: missing };
  if (missing.length) return { status: 'unverified', statusReason: `no successful observation mentions ${missing.join(', ')}`, missingFeatures: missing };
  const supporting = linked.filter((i) => isDecisive(evidence[i] as CompletionEvidence) && !isFailure(evidence[i] as CompletionEvidence));
  const uncovered = uncoveredSubject(claim, index, supporting);
  if (uncovered.length) {
    return {
      status: 'unverified',
      statusReason: `the related observations do not mention ${uncovered.map((w) => `"${w}"`).join(', ')}`,
      missingFeatures: uncovered,
    };
  }
  const ids = supporting.slice(-3);
  return { status: 'supported', statusReason: `supported by ${ids.map((i) => (evidence[i] as CompletionEvidence).id).join(', ')}`, missingFeatures: [] };
}

/** Reconciles one claim with indexed evidence under a review policy. */
export function reconcileClaim(claim: DerivedClaim, index: EvidenceIndex, policy: ReviewPolicy): CompletionClaim {
  const linked = linkEvidence(index, claim.text, claim.features);
  const needed = requiresEvidence(claim.materiality, policy);
  const judgement = judge(claim, index, linked, needed);
  return {
    ...claim,
    requiresEvidence: needed,
    evidenceIds: linked.slice(-MAX_EVIDENCE_IDS_PER_CLAIM).map((i) => (index.evidence[i] as CompletionEvidence).id),
    ...judgement,
  };
}

/** Reconciles claims with the evidence recorded so far (in seq order). */
export function reconcileClaims(claims: readonly DerivedClaim[], evidence: readonly CompletionEvidence[] | EvidenceIndex, policy: ReviewPolicy): CompletionClaim[] {
  const index = 'postings' in evidence ? evidence : buildEvidenceIndex(evidence);
  return claims.map((claim) => reconcileClaim(claim, index, policy));
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
 * Failed observations that no later success about the same subject followed.
 * Between two observations a shared tool counts little: the same shell ran
 * many different commands.
 */
export function unresolvedFailures(index: EvidenceIndex): CompletionEvidence[] {
  const { evidence, features, postings } = index;
  const out: CompletionEvidence[] = [];
  evidence.forEach((item, i) => {
    if (!isFailure(item) || !isDecisive(item)) return;
    const scores = new Map<number, number>();
    let resolved = false;
    for (const key of features[i] ?? []) {
      const list = postings.get(key) ?? [];
      const weight = featureKind(key) === 'tool' ? 1 : featureWeight(key);
      const start = firstAfter(list, i);
      const end = Math.min(list.length, start + MAX_LATER_SCAN);
      for (let k = start; k < end && !resolved; k++) {
        const j = list[k] as number;
        const later = evidence[j] as CompletionEvidence;
        if (!isDecisive(later) || isFailure(later)) continue;
        const score = (scores.get(j) ?? 0) + weight;
        scores.set(j, score);
        if (score >= LINK_THRESHOLD) resolved = true;
      }
      if (resolved) break;
    }
    if (!resolved) out.push(item);
  });
  return out;
}
