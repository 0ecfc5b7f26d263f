import type { CompletionClaim, CritiqueDecision, MissingEvidence, OpenItem, ReviewPolicy } from '@vouch/contracts';

/**
 * The rule critic: always runs, and its decision is the floor every other
 * critic can only tighten. A claim the policy says needs evidence and that is
 * not supported cannot be approved; a high-materiality claim whose
 * verification is blocked ends the review as blocked.
 */
export interface CritiqueVerdict {
  decision: CritiqueDecision;
  reasons: string[];
  missingEvidence: MissingEvidence[];
}

export interface RuleCriticInput {
  claims: readonly CompletionClaim[];
  openItems: readonly OpenItem[];
  policy: ReviewPolicy;
  /** The latest observation, described, when it says the agent needs a person or a permission to go on. */
  latestBlocker?: string;
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return `"${flat.length > 200 ? `${flat.slice(0, 199)}…` : flat}"`;
}

function missingFor(claim: CompletionClaim): MissingEvidence {
  const base = { claimId: claim.id, claimText: claim.text, features: claim.missingFeatures };
  switch (claim.status) {
    case 'contradicted':
      return { ...base, need: `a successful observation after the failure (${claim.statusReason.replace(/^.*?: /, '')}), or a corrected claim` };
    case 'blocked':
      return { ...base, need: `access to verify it (${claim.statusReason.replace(/^.*?: /, '')})` };
    case 'unverified':
      return claim.missingFeatures.length
        ? { ...base, need: `a successful observation that mentions ${claim.missingFeatures.join(', ')}` }
        : { ...base, need: claim.evidenceRequirement };
    default:
      return { ...base, need: claim.evidenceRequirement };
  }
}

function reasonFor(claim: CompletionClaim): string {
  const text = quote(claim.text);
  switch (claim.status) {
    case 'contradicted':
      return `${text} is contradicted: ${claim.statusReason}. Fix it and record the successful observation, or correct the claim.`;
    case 'blocked':
      return `${text} cannot be verified in this run: ${claim.statusReason}.`;
    case 'unverified':
      return `${text} is not verified: ${claim.statusReason}. Record ${missingFor(claim).need}, or drop the unverified detail.`;
    default:
      return `${text} has no supporting evidence: record ${claim.evidenceRequirement}, or remove the claim.`;
  }
}

/** Judges a reconciled completion attempt by rule. */
export function ruleCritic(input: RuleCriticInput): CritiqueVerdict {
  const blocking: string[] = [];
  const changes: string[] = [];
  const missingEvidence: MissingEvidence[] = [];
  for (const claim of input.claims) {
    // A claim the policy lets through on the agent's word still holds the run when recorded evidence says otherwise.
    if (claim.status === 'supported' || (!claim.requiresEvidence && claim.status !== 'contradicted')) continue;
    if (claim.status === 'blocked' && claim.materiality === 'high') blocking.push(reasonFor(claim));
    else changes.push(reasonFor(claim));
    missingEvidence.push(missingFor(claim));
  }
  for (const item of input.openItems) {
    const label = item.kind === 'board_card' ? 'board card' : 'todo';
    changes.push(`open ${label} ${quote(item.text)}: finish it and record the evidence, or remove it from the open items.`);
    missingEvidence.push({ claimText: item.text, need: `the open ${label} ${quote(item.text)} finished (with evidence) or removed`, features: [] });
  }
  if (blocking.length) return { decision: 'blocked', reasons: [...blocking, ...changes], missingEvidence };
  // Whatever the claims say, the run cannot go on by itself: another attempt would meet the same refusal.
  if (changes.length && input.latestBlocker) {
    return { decision: 'blocked', reasons: [`the latest evidence says a person or a permission is needed to go on: ${input.latestBlocker}.`, ...changes], missingEvidence };
  }
  if (changes.length) return { decision: 'request_changes', reasons: changes, missingEvidence };
  const material = input.claims.filter((c) => c.requiresEvidence);
  const reason = material.length
    ? `every claim that needs evidence under the ${input.policy} policy is supported (${material.length})`
    : `no claim needs evidence under the ${input.policy} policy`;
  return { decision: 'approve', reasons: [reason], missingEvidence: [] };
}
