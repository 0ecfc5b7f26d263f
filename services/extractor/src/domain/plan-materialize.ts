import type { Availability, MaterializeDecision } from '@vouch/contracts';

export interface MaterializeFacts {
  availability: Availability;
  hash: string;
  expectedHash: string;
  bodyStored: boolean;
  bodyChars: number;
  budgetChars: number | undefined;
  /** Whether the body, serialized, is over what one answer carries (ARTIFACT_LIMITS.materializeMaxBodyBytes). */
  overResultLimit: boolean;
  hasRequirements: boolean;
}

export interface MaterializePlan {
  decision: MaterializeDecision;
  /** Machine-readable reason recorded on the edge. */
  reason:
    | 'no_budget'
    | 'fits_budget'
    | 'over_budget_extracted'
    | 'over_budget_no_requirements'
    | 'over_result_limit_extracted'
    | 'over_result_limit'
    | 'superseded'
    | 'hash_mismatch'
    | 'unavailable';
  rereadReason?: 'superseded' | 'hash_mismatch' | 'unavailable';
}

/**
 * What an edit or a budgeted caller receives. A stale or unknown body is
 * never delivered: the answer is a visible request to reread. A body is
 * delivered whole or not at all; when it does not fit, a branch extract of
 * the named requirements stands in, and says so.
 */
export function planMaterialize(f: MaterializeFacts): MaterializePlan {
  if (f.availability === 'unavailable' || !f.bodyStored) return { decision: 'reread_required', reason: 'unavailable', rereadReason: 'unavailable' };
  if (f.availability === 'superseded') return { decision: 'reread_required', reason: 'superseded', rereadReason: 'superseded' };
  if (f.hash !== f.expectedHash) return { decision: 'reread_required', reason: 'hash_mismatch', rereadReason: 'hash_mismatch' };
  const fits = f.budgetChars === undefined || f.bodyChars <= f.budgetChars;
  if (fits && f.overResultLimit) {
    return f.hasRequirements ? { decision: 'branch_extract', reason: 'over_result_limit_extracted' } : { decision: 'over_budget', reason: 'over_result_limit' };
  }
  if (f.budgetChars === undefined) return { decision: 'full_body', reason: 'no_budget' };
  if (f.bodyChars <= f.budgetChars) return { decision: 'full_body', reason: 'fits_budget' };
  if (f.hasRequirements) return { decision: 'branch_extract', reason: 'over_budget_extracted' };
  return { decision: 'over_budget', reason: 'over_budget_no_requirements' };
}
