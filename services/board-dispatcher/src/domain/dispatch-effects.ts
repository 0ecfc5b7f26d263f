import type { BoardEvent } from './board-events.js';

/**
 * What events mean for the dispatcher's side tables, written in the same
 * transaction as the events: a dispatch row per dispatched attempt (the
 * outbox its job is relayed from), a claim lease per running card. The
 * mapping is mechanical, so the store applies it without deciding anything.
 */
export type DispatchEffect =
  /** A new attempt was dispatched: its row is the outbox entry the relay turns into the assignee's job. */
  | { kind: 'dispatch'; cardId: string; attempt: number; assignee: string }
  /** The attempt was claimed: its job has done its work; the claim lease starts. */
  | { kind: 'claim'; cardId: string; attempt: number; claimToken: string; by: string }
  /** The card left dispatched without a claim (reassigned, blocked, cancelled): its job must go. */
  | { kind: 'revoke'; cardId: string }
  /** The card left running: the claim lease ends. */
  | { kind: 'release'; cardId: string };

export function dispatchEffects(events: readonly BoardEvent[]): DispatchEffect[] {
  const effects: DispatchEffect[] = [];
  for (const e of events) {
    switch (e.type) {
      case 'card_dispatched':
        effects.push({ kind: 'dispatch', cardId: e.cardId, attempt: e.attempt, assignee: e.assignee });
        break;
      case 'card_claimed':
        effects.push({ kind: 'claim', cardId: e.cardId, attempt: e.attempt, claimToken: e.claimToken, by: e.by });
        break;
      case 'card_submitted':
      case 'card_failed':
        effects.push({ kind: 'release', cardId: e.cardId });
        break;
      case 'card_transitioned':
        if (e.from === 'dispatched') effects.push({ kind: 'revoke', cardId: e.cardId });
        if (e.from === 'running') effects.push({ kind: 'release', cardId: e.cardId });
        break;
      default:
        break;
    }
  }
  return effects;
}

/** The job id of a dispatched attempt: card + attempt, so an attempt is never queued twice. */
export function dispatchJobId(boardId: string, cardId: string, attempt: number): string {
  return `${boardId}.${cardId}.${attempt}`;
}

/**
 * Whether events may let the dispatcher dispatch something: a card became
 * ready (or was sent back with changes requested), capacity was freed (a card
 * left dispatched or running), or an assignee changed. The store notifies the
 * dispatcher only then, so its own dispatches do not wake it for nothing.
 */
export function mayEnableDispatch(events: readonly BoardEvent[]): boolean {
  return events.some((e) => {
    switch (e.type) {
      case 'card_added':
        return e.card.status === 'ready';
      case 'card_transitioned':
        return e.to === 'ready' || e.from === 'dispatched' || e.from === 'running';
      case 'card_failed':
      case 'card_submitted':
        return true;
      case 'card_reviewed':
        return e.to === 'changes_requested';
      case 'card_updated':
        return e.changes.assignee !== undefined;
      default:
        return false;
    }
  });
}
