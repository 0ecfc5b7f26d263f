import type { CritiqueDecision, MissingEvidence, ReviewPolicy } from '@vouch/contracts';
import type { CritiqueVerdict } from './rule-critic.js';

/**
 * Combines the rule critic's verdict (the floor) with the LLM critic's. The
 * LLM may only tighten: approve < request_changes < blocked, and the combined
 * decision is the stricter of the two, so nothing the floor holds back is ever
 * approved.
 */
const RANK: Record<CritiqueDecision, number> = { approve: 0, request_changes: 1, blocked: 2 };

export function stricterDecision(a: CritiqueDecision, b: CritiqueDecision): CritiqueDecision {
  return RANK[b] > RANK[a] ? b : a;
}

export interface CombinedVerdict extends CritiqueVerdict {
  /** The rule critic's decision. */
  floor: CritiqueDecision;
  /** Whether the LLM critic made the decision stricter than the floor. */
  tightened: boolean;
}

function dedupeMissing(items: readonly MissingEvidence[]): MissingEvidence[] {
  const seen = new Set<string>();
  const out: MissingEvidence[] = [];
  for (const item of items) {
    const key = `${item.claimId ?? ''}|${item.need.toLowerCase().replace(/\s+/g, ' ').trim()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(item);
  }
  return out;
}

export function combineVerdicts(rule: CritiqueVerdict, llm: CritiqueVerdict | undefined): CombinedVerdict {
  if (!llm) return { ...rule, floor: rule.decision, tightened: false };
  const decision = stricterDecision(rule.decision, llm.decision);
  const reasons = [...rule.reasons];
  if (RANK[llm.decision] < RANK[rule.decision]) {
    reasons.push(`the LLM critic would ${llm.decision === 'approve' ? 'approve' : 'request changes'}, but the rule floor (${rule.decision}) holds`);
  } else if (decision !== 'approve') {
    for (const reason of llm.reasons) reasons.push(`LLM critic: ${reason}`);
  }
  // Missing evidence named by a critic whose decision did not count is not asked for.
  const missingEvidence = dedupeMissing(RANK[llm.decision] >= RANK[rule.decision] && decision !== 'approve' ? [...rule.missingEvidence, ...llm.missingEvidence] : rule.missingEvidence);
  return { decision, reasons, missingEvidence, floor: rule.decision, tightened: RANK[decision] > RANK[rule.decision] };
}

export type LlmCriticPlan = { run: true } | { run: false; reason: string };

/**
 * Whether the LLM critic should review. A fast policy ends at a clean rule
 * pass; a blocked floor cannot get stricter; without Ollama the rule critic
 * decides alone, and the record says so.
 */
export function planLlmCritic(policy: ReviewPolicy, floor: CritiqueDecision, llmConfigured: boolean): LlmCriticPlan {
  if (policy === 'fast') return { run: false, reason: 'fast policy: the rule critic decides alone' };
  if (floor === 'blocked') return { run: false, reason: 'the rule critic blocked: no critic can tighten that' };
  if (!llmConfigured) return { run: false, reason: 'no LLM critic configured (Ollama): the rule critic decided alone' };
  return { run: true };
}
