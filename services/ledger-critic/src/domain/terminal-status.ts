import type { CritiqueDecision, LedgerStatus } from '@vouch/contracts';

/**
 * Terminal discipline: only `approve` completes a run. `request_changes` keeps
 * it open until the cycle budget is spent, then it ends as
 * `incomplete_verification`; `blocked` ends it as `incomplete_verification` at
 * once. Nothing ever moves a run from one terminal status to another.
 */
export const LEDGER_TRANSITIONS: Readonly<Record<LedgerStatus, readonly LedgerStatus[]>> = {
  open: ['approved', 'request_changes', 'incomplete_verification'],
  request_changes: ['approved', 'request_changes', 'incomplete_verification'],
  approved: [],
  blocked: [],
  incomplete_verification: [],
};

export function canTransition(from: LedgerStatus, to: LedgerStatus): boolean {
  return LEDGER_TRANSITIONS[from].includes(to);
}

/** A closed ledger takes no more evidence and no more completion attempts. */
export function isClosed(status: LedgerStatus): boolean {
  return LEDGER_TRANSITIONS[status].length === 0;
}

export interface StatusAfterCritique {
  status: LedgerStatus;
  completed: boolean;
  /** Why, in words: for logs, the status_changed event and renders. */
  reason: string;
}

/** The status a review leaves, from its decision and where it falls in the cycle budget (cycles count from 1). */
export function statusAfterCritique(decision: CritiqueDecision, cycle: number, cycleBudget: number): StatusAfterCritique {
  switch (decision) {
    case 'approve':
      return { status: 'approved', completed: true, reason: `review ${cycle} approved every claim that needs evidence` };
    case 'blocked':
      return { status: 'incomplete_verification', completed: false, reason: `review ${cycle} found verification blocked` };
    case 'request_changes':
      return cycle >= cycleBudget
        ? { status: 'incomplete_verification', completed: false, reason: `review ${cycle} of ${cycleBudget} still requested changes: the review budget is spent` }
        : { status: 'request_changes', completed: false, reason: `review ${cycle} of ${cycleBudget} requested changes` };
  }
}
