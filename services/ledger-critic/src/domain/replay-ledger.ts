import { EVIDENCE_PAGE, RESULT_PAGE_BYTES, ResultTooLargeError, countWithinBytes, jsonBytes, type LedgerView } from '@vouch/contracts';
import type { CriticPacket, LedgerSnapshot } from '@vouch/contracts';
import type { LedgerEvent } from './ledger-events.js';
import { canTransition } from './terminal-status.js';

/**
 * The ledger state: the snapshot reads see, plus the critic packet of every
 * review (kept out of `ledger.get`, served by `ledger.packet`). It is a pure
 * fold of the event stream, with no clock but the events' `at`, so replaying
 * the events rebuilds it exactly. It holds only JSON values and never an
 * `undefined` property, so it survives a jsonb round trip unchanged.
 */
export interface LedgerState extends LedgerSnapshot {
  /** Packets by review cycle: `packets[cycle - 1]`. */
  packets: CriticPacket[];
}

/** The event stream is corrupt or out of order: a bug or a bad write, never a caller's mistake. */
export class LedgerStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerStreamError';
  }
}

function expectNext(state: LedgerState, event: LedgerEvent): void {
  if (event.seq !== state.version + 1) {
    throw new LedgerStreamError(`ledger ${state.runId}: event seq ${event.seq} does not follow version ${state.version}`);
  }
}

/** Applies one event. Returns a new state; the input is not modified. */
export function applyEvent(state: LedgerState | undefined, event: LedgerEvent): LedgerState {
  if (event.type === 'ledger_opened') {
    if (state) throw new LedgerStreamError(`ledger ${state.runId} is opened twice (seq ${event.seq})`);
    if (event.seq !== 1) throw new LedgerStreamError(`ledger ${event.runId}: the opening event has seq ${event.seq}, not 1`);
    return {
      runId: event.runId,
      boardId: event.boardId ?? null,
      goal: event.goal,
      policy: event.policy,
      cycleBudget: event.cycleBudget,
      status: 'open',
      completed: false,
      version: event.seq,
      createdAt: event.at,
      updatedAt: event.at,
      proposal: null,
      proposedClaims: [],
      evidence: [],
      critiques: [],
      unresolved: [],
      packets: [],
    };
  }
  if (!state) throw new LedgerStreamError(`a ${event.type} event (seq ${event.seq}) arrived before the ledger was opened`);
  expectNext(state, event);
  const touched = { version: event.seq, updatedAt: event.at };
  switch (event.type) {
    case 'evidence_recorded': {
      event.items.forEach((item, k) => {
        const expected = state.evidence.length + k + 1;
        if (item.seq !== expected) throw new LedgerStreamError(`ledger ${state.runId}: evidence ${item.id} has seq ${item.seq}, expected ${expected}`);
      });
      return { ...state, ...touched, evidence: [...state.evidence, ...event.items] };
    }
    case 'completion_proposed': {
      const expected = state.critiques.length + 1;
      if (event.proposal.cycle !== expected) throw new LedgerStreamError(`ledger ${state.runId}: completion attempt of cycle ${event.proposal.cycle}, expected ${expected}`);
      return { ...state, ...touched, proposal: event.proposal, proposedClaims: event.claims };
    }
    case 'critique_recorded': {
      const expected = state.critiques.length + 1;
      if (event.critique.cycle !== expected) throw new LedgerStreamError(`ledger ${state.runId}: critique of cycle ${event.critique.cycle}, expected ${expected}`);
      // A review reads the ledger before its own proposal event, and sees only evidence already recorded.
      const { baseVersion, evidenceSeqAtCritique } = event.critique;
      if (baseVersion > event.seq - 2 || evidenceSeqAtCritique > state.evidence.length) {
        throw new LedgerStreamError(`ledger ${state.runId}: critique at seq ${event.seq} says it read version ${baseVersion} with ${evidenceSeqAtCritique} evidence items`);
      }
      return {
        ...state,
        ...touched,
        critiques: [...state.critiques, event.critique],
        unresolved: event.unresolved,
        packets: [...state.packets, event.packet],
      };
    }
    case 'status_changed': {
      if (event.from !== state.status || !canTransition(event.from, event.to)) {
        throw new LedgerStreamError(`ledger ${state.runId}: status change ${event.from} → ${event.to} does not apply to status ${state.status}`);
      }
      return { ...state, ...touched, status: event.to, completed: event.to === 'approved' };
    }
  }
}

/** Rebuilds a ledger from its whole event stream; undefined for an empty stream. */
export function replayLedger(events: Iterable<LedgerEvent>): LedgerState | undefined {
  let state: LedgerState | undefined;
  for (const event of events) state = applyEvent(state, event);
  return state;
}

/** Applies events on top of a state (a snapshot plus the events after it). */
export function applyEvents(state: LedgerState | undefined, events: Iterable<LedgerEvent>): LedgerState | undefined {
  let current = state;
  for (const event of events) current = applyEvent(current, event);
  return current;
}

/** The snapshot `ledger.get` returns: the state without its packets. */
export function toLedgerSnapshot(state: LedgerState): LedgerSnapshot {
  const { packets: _packets, ...snapshot } = state;
  return snapshot;
}

/**
 * The ledger as a read returns it: the snapshot with the page of evidence
 * after seq `after` (evidence is kept in seq order), and where the next page
 * starts. The page holds at most `limit` items and stops before the one that
 * would take the answer past `maxBytes` of JSON (it always holds the first,
 * whose size the budget leaves room for), so it fits under the cap on one
 * job result whatever the items hold. When the rest of the ledger alone
 * passes `maxBytes`, no page fits: the read is refused (413) naming the limit.
 */
export function toLedgerView(state: LedgerState, page: { after: number; limit: number } = { after: 0, limit: EVIDENCE_PAGE.default }, maxBytes: number = RESULT_PAGE_BYTES): LedgerView {
  const snapshot = toLedgerSnapshot(state);
  const start = state.evidence.findIndex((e) => e.seq > page.after);
  const candidates = start < 0 ? [] : state.evidence.slice(start, start + page.limit);
  const evidencePage = { total: state.evidence.length, after: page.after, limit: page.limit, nextAfter: null, truncated: false };
  const bareBytes = jsonBytes({ ...snapshot, evidence: [], evidencePage });
  if (bareBytes > maxBytes) {
    throw new ResultTooLargeError(
      `run "${state.runId}": its claims, critiques and open items alone take ${bareBytes} bytes as JSON, past the ${maxBytes}-byte limit on one answer, so no page of its evidence fits: read the ledger with ledger.render`,
      { runId: state.runId, bytes: bareBytes, maxBytes },
    );
  }
  // nextAfter and truncated may take a few bytes more than the null and false measured; the budget's margin holds them.
  const count = countWithinBytes(candidates, maxBytes - bareBytes, 1);
  const evidence = candidates.slice(0, count);
  const last = evidence.at(-1);
  const more = start >= 0 && start + count < state.evidence.length;
  return { ...snapshot, evidence, evidencePage: { ...evidencePage, nextAfter: more && last ? last.seq : null, truncated: count < candidates.length } };
}
