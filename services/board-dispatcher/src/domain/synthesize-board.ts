import type { CardStatus } from '@vouch/contracts';
import { byUrgency } from './render-board.js';
import type { BoardState, CardState } from './replay-board.js';

/**
 * The built-in synthesizer: the board's answer composed only from verified
 * cards (their submission and the evidence behind it), followed by every card
 * that is not verified, named with why. It never presents an unverified card
 * as done, and `complete` is true only when every card that was not cancelled
 * is verified.
 */

export interface UnresolvedCard {
  cardId: string;
  title: string;
  status: CardStatus;
  reason: string;
}

export interface Synthesis {
  complete: boolean;
  text: string;
  verified: Array<{ cardId: string; title: string; evidenceIds: string[] }>;
  unresolved: UnresolvedCard[];
}

/** Why a card that is not verified is not, in words an answer can carry. */
export function unresolvedReason(state: BoardState, card: CardState): string {
  switch (card.status) {
    case 'blocked':
      return `blocked (${card.blockReason ?? 'no reason given'})`;
    case 'submitted':
      return 'submitted, not yet verified';
    case 'changes_requested':
      return `changes requested: ${card.lastReview?.missing.join('; ') || 'see the review'}`;
    case 'running':
      return `in progress (${card.claim?.by ?? card.assignee ?? 'unassigned'})`;
    case 'dispatched':
      return `dispatched to ${card.assignee ?? 'nobody'}, not yet started`;
    case 'ready':
      return card.assignee ? `ready, waiting for ${card.assignee}` : 'ready, but nobody is assigned';
    case 'todo': {
      const waiting = card.dependsOn.filter((d) => state.cards[d]?.status !== 'verified');
      return waiting.length ? `waiting on ${waiting.join(', ')}` : 'not started';
    }
    default:
      return card.status;
  }
}

/** The cards that keep a board from being done: everything neither verified nor cancelled, most urgent first. */
export function unresolvedCards(state: BoardState): UnresolvedCard[] {
  return byUrgency(state)
    .filter((c) => c.status !== 'verified' && c.status !== 'cancelled')
    .map((c) => ({ cardId: c.id, title: c.title, status: c.status, reason: unresolvedReason(state, c) }));
}

export function synthesizeBoard(state: BoardState): Synthesis {
  const verifiedCards = state.order.map((id) => state.cards[id]!).filter((c) => c.status === 'verified');
  const unresolved = unresolvedCards(state);
  const cancelled = state.order.filter((id) => state.cards[id]!.status === 'cancelled').length;
  const complete = verifiedCards.length > 0 && unresolved.length === 0;
  const lines: string[] = [];
  lines.push(complete ? `${state.title}: done. Every card is verified.` : `${state.title}: not done. ${verifiedCards.length} of ${state.order.length - cancelled} cards are verified.`);
  if (verifiedCards.length) {
    lines.push('', 'Verified:');
    for (const card of verifiedCards) {
      const ids = card.evidence.map((e) => e.id);
      lines.push(`- ${card.title}: ${card.submission ?? 'verified'} [evidence ${ids.join(', ')}]`);
    }
  }
  if (unresolved.length) {
    lines.push('', 'Not verified (do not present these as done):');
    for (const u of unresolved) lines.push(`- ${u.cardId} ${u.title}: ${u.reason}`);
  }
  return {
    complete,
    text: lines.join('\n'),
    verified: verifiedCards.map((c) => ({ cardId: c.id, title: c.title, evidenceIds: c.evidence.map((e) => e.id) })),
    unresolved,
  };
}
