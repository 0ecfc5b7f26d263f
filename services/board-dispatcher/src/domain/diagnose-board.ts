import type { DiagnosticKind, DiagnosticSeverity } from '@vouch/contracts';
import { closestIds } from './closest-ids.js';
import { deadDependencies } from './dependency-graph.js';
import type { BoardState, CardState } from './replay-board.js';

/**
 * Diagnostics of a board. Two sorts:
 *
 * - conditions (repeated failures, a block reason that keeps coming back,
 *   cards stranded in ready, dependency deadlock) hold while the board is in
 *   some state: evaluateConditions finds the ones that hold now, and the store
 *   opens those and resolves the open ones that no longer hold;
 * - occurrences (a hallucinated card id, a completion without evidence, a
 *   claim that went quiet) are recorded when they happen, and resolve when the
 *   board shows they no longer matter (resolvedOccurrences).
 *
 * Either way a diagnostic is stored once per (kind, subject) with a count,
 * first and last seen. Diagnostics only describe and suggest: nothing here
 * changes a card.
 */

export interface DiagnosticFinding {
  kind: DiagnosticKind;
  subject: string;
  severity: DiagnosticSeverity;
  message: string;
  suggestedAction: string;
  details: Record<string, unknown>;
}

export const CONDITION_KINDS: readonly DiagnosticKind[] = ['repeated_failures', 'repeated_block_reason', 'stranded_ready', 'dependency_deadlock'];
export const OCCURRENCE_KINDS: readonly DiagnosticKind[] = ['unknown_card', 'completion_without_evidence', 'ghost_running'];

export interface BoardFacts {
  now: string;
  /** When each assignee last asked for work (board.claimCard), ISO times. */
  lastPollByAssignee: Readonly<Record<string, string>>;
  /** A consumer that has not polled for this long is not live. */
  consumerTtlMs: number;
  /** A card waiting for dispatch or claim this long, with no live consumer, is stranded. */
  strandedAfterMs: number;
}

/** Failures after which a card is diagnosed, before the board's maxFailures blocks it. */
export const REPEATED_FAILURES = 2;
/** Times one card is blocked for the same reason, or cards blocked for one reason at once, that count as repeating. */
export const REPEATED_BLOCKS = 2;

const ms = (iso: string) => Date.parse(iso);

function isOpenWork(card: CardState): boolean {
  return card.status !== 'verified' && card.status !== 'cancelled';
}

export function evaluateConditions(state: BoardState, facts: BoardFacts): DiagnosticFinding[] {
  const found: DiagnosticFinding[] = [];
  const now = ms(facts.now);
  const cards = state.order.map((id) => state.cards[id]!);

  for (const card of cards) {
    if (card.failures >= REPEATED_FAILURES && isOpenWork(card) && card.status !== 'submitted') {
      const blocked = card.status === 'blocked';
      found.push({
        kind: 'repeated_failures',
        subject: card.id,
        severity: blocked ? 'error' : 'warning',
        message: `card ${card.id} failed ${card.failures} attempts${card.assignee ? ` with ${card.assignee}` : ''}${blocked ? ' and is blocked' : ''}`,
        suggestedAction: `split it into smaller cards (board.addCards with splitFrom ${card.id}), reassign it (board.updateCard assignee), or block it with a reason until it can be done`,
        details: { failures: card.failures, maxFailures: state.policy.maxFailures, assignee: card.assignee, status: card.status },
      });
    }

    if (card.status === 'blocked' && card.blockReason && (card.blocks[card.blockReason] ?? 0) >= REPEATED_BLOCKS) {
      found.push({
        kind: 'repeated_block_reason',
        subject: `${card.id}:${card.blockReason}`,
        severity: 'warning',
        message: `card ${card.id} is blocked for ${card.blockReason} for the ${card.blocks[card.blockReason]}th time`,
        suggestedAction: `unblocking it has not removed the cause: resolve ${card.blockReason} first, or split or cancel the card`,
        details: { cardId: card.id, blockReason: card.blockReason, times: card.blocks[card.blockReason] },
      });
    }

    const waiting = card.status === 'ready' || card.status === 'dispatched' || card.status === 'changes_requested';
    if (waiting && now - ms(card.statusSince) >= facts.strandedAfterMs) {
      const lastPoll = card.assignee ? facts.lastPollByAssignee[card.assignee] : undefined;
      const live = lastPoll !== undefined && now - ms(lastPoll) < facts.consumerTtlMs;
      if (!live) {
        found.push({
          kind: 'stranded_ready',
          subject: card.id,
          severity: 'warning',
          message: card.assignee
            ? `card ${card.id} has been ${card.status} since ${card.statusSince}, and ${card.assignee} ${lastPoll ? `last asked for work at ${lastPoll}` : 'has never asked for work'}`
            : `card ${card.id} has been ${card.status} since ${card.statusSince} with nobody assigned`,
          suggestedAction: card.assignee
            ? `start a worker that calls board.claimCard as ${card.assignee}, or reassign the card (board.updateCard assignee)`
            : 'assign it (board.updateCard assignee) so the dispatcher can dispatch it',
          details: { cardId: card.id, status: card.status, assignee: card.assignee, since: card.statusSince, lastPoll: lastPoll ?? null },
        });
      }
    }

    if (card.status === 'todo') {
      const dead = deadDependencies(state, card);
      const blocked = card.dependsOn.filter((d) => state.cards[d]?.status === 'blocked');
      if (dead.length || blocked.length) {
        found.push({
          kind: 'dependency_deadlock',
          subject: card.id,
          severity: dead.length ? 'error' : 'warning',
          message: dead.length
            ? `card ${card.id} waits on ${dead.join(', ')}, cancelled: it can never become ready`
            : `card ${card.id} waits on ${blocked.join(', ')}, blocked`,
          suggestedAction: dead.length
            ? `cancel ${card.id}, or add a card that replaces ${dead.join(', ')} (board.addCards) and depend on it`
            : `unblock ${blocked.join(', ')} (board.updateCard), or cancel ${card.id}`,
          details: { cardId: card.id, cancelled: dead, blocked },
        });
      }
    }
  }

  // One reason blocking several cards at once is one cause to fix, not several.
  const byReason = new Map<string, string[]>();
  for (const card of cards) if (card.status === 'blocked' && card.blockReason) byReason.set(card.blockReason, [...(byReason.get(card.blockReason) ?? []), card.id]);
  for (const [reason, ids] of byReason) {
    if (ids.length < REPEATED_BLOCKS) continue;
    found.push({
      kind: 'repeated_block_reason',
      subject: `reason:${reason}`,
      severity: 'warning',
      message: `${ids.length} cards are blocked for ${reason}: ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', ...' : ''}`,
      suggestedAction: `resolve ${reason} once for all of them, then unblock them (board.updateCard status ready)`,
      details: { blockReason: reason, cardIds: ids },
    });
  }
  return found;
}

/** The hallucinated-id occurrence: an id that names no card, with the closest ones that do. */
export function unknownCardFinding(state: BoardState, unknownId: string, operation: string): DiagnosticFinding {
  const suggestions = closestIds(unknownId, [...state.order, ...Object.keys(state.keys)]);
  return {
    kind: 'unknown_card',
    subject: unknownId,
    severity: 'error',
    message: `${operation} named card "${unknownId}", which board "${state.boardId}" does not have`,
    suggestedAction: suggestions.length ? `use a real card id (closest: ${suggestions.join(', ')}); list them with board.show` : 'the board has no cards: add them with board.addCards',
    details: { operation, suggestions },
  };
}

export function completionWithoutEvidenceFinding(card: CardState): DiagnosticFinding {
  return {
    kind: 'completion_without_evidence',
    subject: card.id,
    severity: 'error',
    message: `card ${card.id} was submitted as completed with no evidence`,
    suggestedAction: 'attach the tool results, files, URLs or messages that show the work (board.attachEvidence), then submit again; nothing was changed',
    details: { cardId: card.id, attempt: card.attempt, by: card.claim?.by ?? null },
  };
}

export function ghostRunningFinding(card: CardState, claim: { by: string; attempt: number; expiresAt: string }): DiagnosticFinding {
  return {
    kind: 'ghost_running',
    subject: card.id,
    severity: 'warning',
    message: `card ${card.id} was running under ${claim.by} (attempt ${claim.attempt}) with no heartbeat past ${claim.expiresAt}: the attempt counts as failed`,
    suggestedAction: `check that ${claim.by} is alive and heartbeats well within the claim lease; the card is dispatched again`,
    details: { cardId: card.id, worker: claim.by, attempt: claim.attempt, expiredAt: claim.expiresAt },
  };
}

/**
 * Open occurrence diagnostics the board no longer bears out: an unknown id
 * that now names a card or has not recurred for `quietMs`; a completion
 * without evidence once the card has evidence or moved on; a ghost claim
 * once the card was claimed again or finished.
 */
export function resolvedOccurrences(state: BoardState, open: ReadonlyArray<{ kind: DiagnosticKind; subject: string; lastSeen: string }>, now: string, quietMs: number): Array<{ kind: DiagnosticKind; subject: string }> {
  const resolved: Array<{ kind: DiagnosticKind; subject: string }> = [];
  for (const d of open) {
    const card = state.cards[d.subject];
    if (d.kind === 'unknown_card') {
      if (card || state.keys[d.subject] !== undefined || ms(now) - ms(d.lastSeen) >= quietMs) resolved.push(d);
    } else if (d.kind === 'completion_without_evidence') {
      if (!card || card.evidence.length > 0 || card.status !== 'running') resolved.push(d);
    } else if (d.kind === 'ghost_running') {
      if (!card || ['running', 'submitted', 'verified', 'cancelled'].includes(card.status)) resolved.push(d);
    }
  }
  return resolved;
}
