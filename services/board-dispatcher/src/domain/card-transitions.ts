import { ConflictError, type CardStatus } from '@vouch/contracts';

/**
 * The card state machine, as data. Every status change of a card names a
 * trigger, and is legal only when this table lists (from, to, trigger).
 * Commands check it before they emit an event; replay checks it again, so a
 * stream that holds a transition outside the table is refused as corrupt.
 */

export const TRANSITION_TRIGGERS = [
  'dependencies_verified',
  'dispatch',
  'claim',
  'submit',
  'approve',
  'request_changes',
  'worker_failed',
  'claim_expired',
  'repeated_failures',
  'reassign',
  'block',
  'unblock',
  'cancel',
  'split',
] as const;
export type TransitionTrigger = (typeof TRANSITION_TRIGGERS)[number];

export interface CardTransition {
  from: CardStatus;
  to: CardStatus;
  triggers: readonly TransitionTrigger[];
}

export const CARD_TRANSITIONS: readonly CardTransition[] = [
  { from: 'todo', to: 'ready', triggers: ['dependencies_verified'] },
  { from: 'todo', to: 'blocked', triggers: ['block'] },
  { from: 'todo', to: 'cancelled', triggers: ['cancel', 'split'] },

  { from: 'ready', to: 'dispatched', triggers: ['dispatch'] },
  { from: 'ready', to: 'blocked', triggers: ['block'] },
  { from: 'ready', to: 'cancelled', triggers: ['cancel', 'split'] },

  { from: 'dispatched', to: 'running', triggers: ['claim'] },
  { from: 'dispatched', to: 'ready', triggers: ['reassign'] },
  { from: 'dispatched', to: 'blocked', triggers: ['block'] },
  { from: 'dispatched', to: 'cancelled', triggers: ['cancel', 'split'] },

  { from: 'running', to: 'submitted', triggers: ['submit'] },
  { from: 'running', to: 'ready', triggers: ['worker_failed', 'claim_expired', 'reassign'] },
  { from: 'running', to: 'blocked', triggers: ['block', 'repeated_failures'] },
  { from: 'running', to: 'cancelled', triggers: ['cancel', 'split'] },

  { from: 'submitted', to: 'verified', triggers: ['approve'] },
  { from: 'submitted', to: 'changes_requested', triggers: ['request_changes'] },
  { from: 'submitted', to: 'blocked', triggers: ['block'] },
  { from: 'submitted', to: 'cancelled', triggers: ['cancel'] },

  // Changes requested: the card goes back to its worker through the dispatcher, as a new attempt.
  { from: 'changes_requested', to: 'dispatched', triggers: ['dispatch'] },
  { from: 'changes_requested', to: 'blocked', triggers: ['block'] },
  { from: 'changes_requested', to: 'cancelled', triggers: ['cancel', 'split'] },

  { from: 'blocked', to: 'ready', triggers: ['unblock'] },
  { from: 'blocked', to: 'todo', triggers: ['unblock'] },
  { from: 'blocked', to: 'cancelled', triggers: ['cancel', 'split'] },
  // verified and cancelled are terminal: nothing leaves them.
];

/** Where each trigger comes from, for messages that say how to reach a status. */
export const TRIGGER_SOURCE: Record<TransitionTrigger, string> = {
  dependencies_verified: 'automatic once every dependency is verified',
  dispatch: 'the dispatcher, when the assignee has capacity',
  claim: 'board.claimCard',
  submit: 'board.submitCard',
  approve: 'board.reviewCard with decision approve',
  request_changes: 'board.reviewCard with decision request_changes',
  worker_failed: 'board.submitCard with outcome failed',
  claim_expired: 'automatic when a claim stops heartbeating',
  repeated_failures: 'automatic after the board\'s maxFailures',
  reassign: 'board.updateCard with a new assignee',
  block: 'board.updateCard with status blocked',
  unblock: 'board.updateCard with status ready or todo',
  cancel: 'board.updateCard with status cancelled',
  split: 'board.addCards with splitFrom',
};

export const TERMINAL_STATUSES: readonly CardStatus[] = ['verified', 'cancelled'];

export function isTerminal(status: CardStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

export function transitionAllowed(from: CardStatus, to: CardStatus, trigger: TransitionTrigger): boolean {
  return CARD_TRANSITIONS.some((t) => t.from === from && t.to === to && t.triggers.includes(trigger));
}

/** The transitions out of a status, for "allowed" lists. */
export function transitionsFrom(from: CardStatus): CardTransition[] {
  return CARD_TRANSITIONS.filter((t) => t.from === from);
}

/** One line naming where a card can go from its status, and how. */
export function describeAllowed(from: CardStatus): string {
  const out = transitionsFrom(from);
  if (out.length === 0) return `${from} is final: nothing leaves it`;
  return out.map((t) => `${t.to} (${t.triggers.map((k) => TRIGGER_SOURCE[k]).join('; ')})`).join(', ');
}

/**
 * Refuses a transition outside the table with a 409 that names the card, its
 * status, and every status it can reach with the operation that reaches it.
 */
export function assertTransition(card: { id: string; status: CardStatus }, to: CardStatus, trigger: TransitionTrigger): void {
  if (transitionAllowed(card.status, to, trigger)) return;
  const allowed = transitionsFrom(card.status).map((t) => t.to);
  throw new ConflictError(`card ${card.id} is ${card.status} and cannot go to ${to} by ${TRIGGER_SOURCE[trigger]}: from ${card.status} it can go to ${describeAllowed(card.status)}`, {
    cardId: card.id,
    status: card.status,
    requested: to,
    allowed,
  });
}
