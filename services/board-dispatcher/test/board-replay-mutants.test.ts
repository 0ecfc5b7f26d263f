import { describe, expect, it } from 'vitest';
import { cardOf, parseBoardEvent, type BoardEvent } from '../src/domain/board-events.js';
import { describeAllowed, transitionAllowed, TERMINAL_STATUSES } from '../src/domain/card-transitions.js';
import { findCycle } from '../src/domain/dependency-graph.js';
import { dispatchEffects, dispatchJobId, mayEnableDispatch } from '../src/domain/dispatch-effects.js';
import { BoardStreamError, applyEvent, deepFreeze, publicCard, replayBoard, type BoardState } from '../src/domain/replay-board.js';
import { BoardDriver, thrown } from './drive-board.js';

// Replay, the event schema, the transition table and the dispatcher's side effects: what
// board-domain.test.ts and the replay properties left unpinned, found by mutation testing.

function twoCardBoard() {
  const b = new BoardDriver();
  b.create();
  b.add([
    { key: 'list', title: 'List the routers and their firmware', assignee: 'worker-1' },
    { key: 'report', title: 'Summarise outdated firmware', assignee: 'worker-2', dependsOn: ['list'] },
  ]);
  return b;
}

/** The stream with event `seq` replaced: what a bad write or a hand-edited log would hold. */
function corrupt(events: readonly BoardEvent[], seq: number, change: Record<string, unknown>): BoardEvent[] {
  return events.map((e) => (e.seq === seq ? ({ ...e, ...change } as BoardEvent) : e));
}

function isDeepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

describe('the transition table, as a caller reads it', () => {
  it('names every way out of each status, and the operation that takes it', () => {
    expect(describeAllowed('todo')).toBe(
      'ready (automatic once every dependency is verified), blocked (board.updateCard with status blocked), cancelled (board.updateCard with status cancelled; board.addCards with splitFrom)',
    );
    expect(describeAllowed('ready')).toBe(
      'dispatched (the dispatcher, when the assignee has capacity), blocked (board.updateCard with status blocked), cancelled (board.updateCard with status cancelled; board.addCards with splitFrom)',
    );
    expect(describeAllowed('dispatched')).toBe(
      'running (board.claimCard), ready (board.updateCard with a new assignee), blocked (board.updateCard with status blocked), cancelled (board.updateCard with status cancelled; board.addCards with splitFrom)',
    );
    expect(describeAllowed('running')).toBe(
      'submitted (board.submitCard), ready (board.submitCard with outcome failed; automatic when a claim stops heartbeating; board.updateCard with a new assignee), ' +
        "blocked (board.updateCard with status blocked; automatic after the board's maxFailures), cancelled (board.updateCard with status cancelled; board.addCards with splitFrom)",
    );
    expect(describeAllowed('submitted')).toBe(
      'verified (board.reviewCard with decision approve), changes_requested (board.reviewCard with decision request_changes), blocked (board.updateCard with status blocked), cancelled (board.updateCard with status cancelled)',
    );
    expect(describeAllowed('changes_requested')).toBe(
      'dispatched (the dispatcher, when the assignee has capacity), blocked (board.updateCard with status blocked), cancelled (board.updateCard with status cancelled; board.addCards with splitFrom)',
    );
    expect(describeAllowed('blocked')).toBe(
      'ready (board.updateCard with status ready or todo), todo (board.updateCard with status ready or todo), cancelled (board.updateCard with status cancelled; board.addCards with splitFrom)',
    );
    expect(describeAllowed('cancelled')).toBe('cancelled is final: nothing leaves it');
    expect(TERMINAL_STATUSES).toEqual(['verified', 'cancelled']);
  });

  it('allows a trigger only towards the status the table gives it', () => {
    expect(transitionAllowed('running', 'submitted', 'submit')).toBe(true);
    expect(transitionAllowed('running', 'verified', 'submit')).toBe(false);
    expect(transitionAllowed('dispatched', 'cancelled', 'claim')).toBe(false);
  });
});

describe('a finished board', () => {
  it('is open while it has no cards or any open card, and done once every card is verified or cancelled', () => {
    const b = twoCardBoard();
    const created = replayBoard(b.events.slice(0, 1))!;
    expect(created).toMatchObject({ status: 'open', scope: { kind: 'run', ref: 'run-1' }, version: 1 });
    expect(created.order).toEqual([]);
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'approve');
    expect(b.board.status).toBe('open');
    b.update({ cardId: 'c-2', status: 'cancelled' });
    expect(b.board.status).toBe('done');
  });
});

describe('replay refuses a corrupt stream, naming the event', () => {
  function lifecycle() {
    const b = twoCardBoard();
    b.attach('c-1', [{ kind: 'message', summary: 'started' }]);
    b.work('c-1');
    return b.events;
  }
  // seq: 1 created, 2-3 added, 4 evidence, 5 dispatched, 6 claimed, 7 evidence, 8 submitted

  it.each([
    ['a stream that does not start with its creation', (e: BoardEvent[]) => e.slice(1), 'a card_added event (seq 2) arrived before the board was created'],
    ['a creation that is not seq 1', (e: BoardEvent[]) => corrupt(e.slice(0, 1), 1, { seq: 2 }), 'board board-1: the creating event has seq 2, not 1'],
    ['a card added twice', (e: BoardEvent[]) => corrupt(e.slice(0, 3), 3, { card: { ...(e[1] as Extract<BoardEvent, { type: 'card_added' }>).card } }), 'board board-1: card c-1 is added twice (seq 3)'],
    ['an event about a card the board does not have', (e: BoardEvent[]) => corrupt(e, 4, { cardId: 'c-7' }), 'board board-1: event 4 is about card c-7, which the board does not have'],
    ['evidence out of sequence', (e: BoardEvent[]) => corrupt(e, 4, { items: [{ ...(e[3] as Extract<BoardEvent, { type: 'evidence_attached' }>).items[0], id: 'e-5' }] }), 'board board-1: evidence e-5 at seq 4, expected e-1'],
    ['a dispatch from a status the card is not in', (e: BoardEvent[]) => corrupt(e, 5, { from: 'changes_requested' }), 'board board-1: card c-1 is dispatched from changes_requested, but it is ready'],
    ['a dispatch that skips an attempt', (e: BoardEvent[]) => corrupt(e, 5, { attempt: 2 }), 'board board-1: card c-1 dispatched as attempt 2 after attempt 0'],
    ['a dispatch to someone else', (e: BoardEvent[]) => corrupt(e, 5, { assignee: 'worker-9' }), 'board board-1: card c-1 dispatched to worker-9, but it is assigned to worker-1'],
    ['a claim of another attempt', (e: BoardEvent[]) => corrupt(e, 6, { attempt: 2 }), 'board board-1: card c-1 claimed for attempt 2, but it is at attempt 1'],
    ['a submission of another attempt', (e: BoardEvent[]) => corrupt(e, 8, { attempt: 3 }), 'board board-1: card c-1 submitted for attempt 3, but it is at attempt 1'],
  ])('%s', (_what, mutate, message) => {
    const error = thrown(() => replayBoard(mutate(lifecycle())));
    expect(error).toBeInstanceOf(BoardStreamError);
    expect(error.name).toBe('BoardStreamError');
    expect(error.message).toBe(message);
  });

  it('a gap in the sequence', () => {
    const b = twoCardBoard();
    expect(() => replayBoard(b.events.filter((e) => e.seq !== 2))).toThrow('board board-1: event seq 3 does not follow version 1');
  });

  it('a status change from a status the card is not in', () => {
    const b = twoCardBoard();
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    expect(() => replayBoard(corrupt(b.events, 4, { from: 'todo' }))).toThrow('board board-1: event 4 moves card c-1 from todo, but it is ready');
  });

  it('a failure of another attempt', () => {
    const b = twoCardBoard();
    b.dispatch();
    const token = b.claim('c-1');
    b.submit('c-1', token, 'timed out', [], 'failed');
    expect(() => replayBoard(corrupt(b.events, 6, { attempt: 4 }))).toThrow('board board-1: card c-1 failed attempt 4, but it is at attempt 1');
  });

  it('a verification of a card with no evidence', () => {
    const b = twoCardBoard();
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'approve');
    const withoutEvidence = b.events.filter((e) => e.type !== 'evidence_attached').map((e, i) => ({ ...e, seq: i + 1 }) as BoardEvent);
    expect(() => replayBoard(withoutEvidence)).toThrow('board board-1: card c-1 is verified at seq 7 without evidence');
  });
});

describe('decisions the board keeps', () => {
  it('records blocks, unblocks, cancellations, splits and reassignments, with the reason given or one of their own', () => {
    const b = twoCardBoard();
    b.add([{ key: 'free', title: 'Unassigned' }]);
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    b.update({ cardId: 'c-1', status: 'ready', reason: 'access granted' });
    b.update({ cardId: 'c-3', assignee: 'worker-3' });
    b.update({ cardId: 'c-3', assignee: null, reason: 'worker-3 left' });
    b.update({ cardId: 'c-3', status: 'blocked', blockReason: 'awaiting_input' });
    b.update({ cardId: 'c-3', status: 'cancelled' });
    b.add([{ title: 'Rack A' }], { splitFrom: 'c-1' });
    expect(b.board.decisions.map((d) => [d.kind, d.cardId, d.reason, d.by])).toEqual([
      ['blocked', 'c-1', 'blocked: external_dependency', 'planner'],
      ['unblocked', 'c-1', 'access granted', 'planner'],
      ['reassigned', 'c-3', 'assignee none → worker-3', 'planner'],
      ['reassigned', 'c-3', 'worker-3 left', 'planner'],
      ['blocked', 'c-3', 'blocked: awaiting_input', 'planner'],
      ['cancelled', 'c-3', 'cancelled', 'planner'],
      ['split', 'c-1', 'split into c-4', 'planner'],
    ]);
    expect(b.board.decisions.every((d) => d.at.startsWith('2025-03-01T10:00:'))).toBe(true);
  });

  it('an unassignment is recorded as to none, and an update that keeps the assignee records nothing', () => {
    const b = twoCardBoard();
    b.update({ cardId: 'c-1', assignee: null });
    b.update({ cardId: 'c-1', title: 'A new title' });
    expect(b.board.decisions.map((d) => d.reason)).toEqual(['assignee worker-1 → none']);
    expect(b.card('c-1')).toMatchObject({ assignee: null, title: 'A new title' });
  });

  it('records failures and reviews: what failed or stopped, what was missing, who verified', () => {
    const b = new BoardDriver();
    b.create({ maxFailures: 2 });
    b.add([{ title: 'Flaky', assignee: 'w' }, { title: 'Fine', assignee: 'v' }]);
    b.dispatch();
    const token = b.claim('c-1');
    b.submit('c-1', token, 'timed out', [], 'failed');
    b.dispatch();
    b.claim('c-1');
    b.expire('c-1');
    b.work('c-2');
    b.review('c-2', 'verifier-1', 'request_changes', ['the output', 'a checksum']);
    b.work('c-2');
    b.review('c-2', 'verifier-1', 'approve', [], 'looks right');
    expect(b.board.decisions.map((d) => [d.kind, d.cardId, d.reason, d.by])).toEqual([
      ['failed', 'c-1', 'attempt 1 failed: timed out', 'w'],
      ['blocked', 'c-1', 'attempt 2 stopped heartbeating: no heartbeat from w within the claim lease', 'dispatcher'],
      ['changes_requested', 'c-2', 'missing: the output; a checksum', 'verifier-1'],
      ['completed', 'c-2', 'looks right', 'verifier-1'],
    ]);
    expect(b.card('c-1')).toMatchObject({ status: 'blocked', blockReason: 'repeated_failures', failures: 2, blocks: { repeated_failures: 1 } });
    const plain = twoCardBoard();
    plain.work('c-1');
    plain.review('c-1', 'verifier-1', 'approve');
    expect(plain.board.decisions.at(-1)).toMatchObject({ kind: 'completed', reason: 'verified by verifier-1' });
  });

  it('counts the times a card was blocked for each reason', () => {
    const b = twoCardBoard();
    for (let i = 0; i < 2; i++) {
      b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
      b.update({ cardId: 'c-1', status: 'ready' });
    }
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'awaiting_input' });
    expect(b.card('c-1').blocks).toEqual({ external_dependency: 2, awaiting_input: 1 });
  });

  it('keeps the latest 500 decisions; the event stream keeps every one', () => {
    const b = twoCardBoard();
    for (let i = 0; i < 251; i++) {
      b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency', reason: `block ${i}` });
      b.update({ cardId: 'c-1', status: 'ready', reason: `unblock ${i}` });
    }
    const { decisions } = b.board;
    expect(decisions).toHaveLength(500);
    expect(decisions[0]!.reason).toBe('block 1');
    expect(decisions.at(-1)!.reason).toBe('unblock 250');
    expect(replayBoard(b.events)!.decisions).toEqual(decisions);
  });
});

describe('states are values', () => {
  it('every state a command returns is frozen all the way down, and the state it started from is left as it was', () => {
    const b = twoCardBoard();
    const before = b.board;
    const json = JSON.stringify(before);
    b.add([{ key: 'more', title: 'More', dependsOn: ['list'] }]);
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    b.update({ cardId: 'c-1', status: 'ready' });
    b.work('c-1');
    expect(JSON.stringify(before)).toBe(json);
    for (const state of [b.board, replayBoard(b.events)!]) {
      expect(state.decisions.length).toBeGreaterThan(0);
      expect(isDeepFrozen(state)).toBe(true);
    }
    expect(b.board.keys).toEqual({ list: 'c-1', report: 'c-2', more: 'c-3' });
    b.add([{ title: 'No key' }]);
    expect(b.board.keys).toEqual({ list: 'c-1', report: 'c-2', more: 'c-3' });
  });

  it('deepFreeze freezes a value and what it holds, leaves primitives alone, and stops at what is frozen already', () => {
    expect(deepFreeze(null)).toBe(null);
    expect(deepFreeze(7)).toBe(7);
    const value = { a: { b: [1, { c: 2 }] } };
    expect(deepFreeze(value)).toBe(value);
    expect(isDeepFrozen(value)).toBe(true);
    const inner = { d: 1 };
    const outer = Object.freeze({ inner });
    deepFreeze(outer);
    expect(Object.isFrozen(inner)).toBe(false);
  });

  it('applyEvent applies one event, and a card read by callers has no claim token or block counts', () => {
    const b = twoCardBoard();
    b.dispatch();
    b.claim('c-1', 'secret-token');
    const state = replayBoard(b.events.slice(0, -1))!;
    const after: BoardState = applyEvent(state, b.events.at(-1)!);
    expect(after).toStrictEqual(b.board);
    const card = publicCard(b.card('c-1'));
    expect(card).not.toHaveProperty('claim');
    expect(card).not.toHaveProperty('blocks');
    expect(card).toMatchObject({ id: 'c-1', status: 'running', attempt: 1 });
  });
});

describe('the stored event schema', () => {
  const at = '2025-03-01T10:00:00.000Z';
  const failedEvent = { type: 'card_failed', seq: 5, at, cardId: 'c-1', attempt: 1, trigger: 'claim_expired', to: 'blocked', by: 'dispatcher', summary: 'x' };

  it('reads the events the commands write, with several evidence items in one', () => {
    const b = twoCardBoard();
    b.attach('c-1', [{ kind: 'message', summary: 'one' }, { kind: 'message', summary: 'two' }]);
    b.dispatch();
    expect(JSON.parse(JSON.stringify(b.events)).map(parseBoardEvent)).toEqual(b.events);
    expect(parseBoardEvent(failedEvent)).toEqual(failedEvent);
    expect(parseBoardEvent({ ...failedEvent, trigger: 'worker_failed', to: 'ready' })).toMatchObject({ trigger: 'worker_failed', to: 'ready' });
  });

  it('refuses an event that is not well formed, naming the field', () => {
    expect(() => parseBoardEvent({ ...failedEvent, to: 'verified' })).toThrow(/^not a board event: to: /);
    expect(() => parseBoardEvent({ ...failedEvent, trigger: 'approve' })).toThrow(/^not a board event: trigger: /);
    expect(() => parseBoardEvent({ type: 'card_dispatched', seq: 4, at, cardId: 'c-1', from: 'todo', attempt: 1, assignee: 'w', epoch: 1 })).toThrow(/^not a board event: from: /);
    expect(parseBoardEvent({ type: 'card_dispatched', seq: 4, at, cardId: 'c-1', from: 'changes_requested', attempt: 2, assignee: 'w', epoch: 1 })).toMatchObject({ from: 'changes_requested' });
  });

  it('names the card each event is about, for the per-card projection', () => {
    const b = twoCardBoard();
    b.dispatch();
    expect(b.events.map(cardOf)).toEqual([undefined, 'c-1', 'c-2', 'c-1']);
  });
});

describe('the dispatcher side tables', () => {
  it('turn a dispatch into an outbox row, a claim into a lease, and a card leaving dispatched or running into a revoke or release', () => {
    const b = twoCardBoard();
    b.dispatch();
    b.update({ cardId: 'c-1', assignee: 'worker-3' });
    b.dispatch();
    const token = b.claim('c-1', 'tok-1');
    b.submit('c-1', token, 'failed', [], 'failed');
    b.dispatch();
    b.claim('c-1', 'tok-2');
    b.update({ cardId: 'c-1', status: 'cancelled' });
    const effects = dispatchEffects(b.events.slice(3));
    expect(effects).toEqual([
      { kind: 'dispatch', cardId: 'c-1', attempt: 1, assignee: 'worker-1' },
      { kind: 'revoke', cardId: 'c-1' },
      { kind: 'dispatch', cardId: 'c-1', attempt: 2, assignee: 'worker-3' },
      { kind: 'claim', cardId: 'c-1', attempt: 2, claimToken: 'tok-1', by: 'worker-3' },
      { kind: 'release', cardId: 'c-1' },
      { kind: 'dispatch', cardId: 'c-1', attempt: 3, assignee: 'worker-3' },
      { kind: 'claim', cardId: 'c-1', attempt: 3, claimToken: 'tok-2', by: 'worker-3' },
      { kind: 'release', cardId: 'c-1' },
    ]);
    const done = twoCardBoard();
    done.dispatch();
    const t = done.claim('c-1');
    done.submit('c-1', t, 'listed', [{ kind: 'message', summary: 'listed' }]);
    expect(dispatchEffects(done.events.slice(-2))).toEqual([{ kind: 'release', cardId: 'c-1' }]);
  });

  it('an attempt\'s job id is board, card and attempt', () => {
    expect(dispatchJobId('board-1', 'c-4', 2)).toBe('board-1.c-4.2');
  });

  it('wake the dispatcher only for events that may let it dispatch', () => {
    const b = twoCardBoard();
    const wakes = (events: readonly BoardEvent[]) => mayEnableDispatch(events);
    expect(wakes(b.events.slice(1, 2))).toBe(true); // c-1 added ready
    expect(wakes(b.events.slice(2, 3))).toBe(false); // c-2 added todo
    expect(wakes(b.events.slice(0, 1))).toBe(false); // the board created
    b.dispatch();
    expect(wakes(b.events.slice(-1))).toBe(false); // its own dispatch
    const token = b.claim('c-1');
    expect(wakes(b.events.slice(-1))).toBe(false);
    b.update({ cardId: 'c-2', title: 'Renamed' });
    expect(wakes(b.events.slice(-1))).toBe(false);
    b.update({ cardId: 'c-2', assignee: 'worker-7' });
    expect(wakes(b.events.slice(-1))).toBe(true);
    b.update({ cardId: 'c-2', status: 'blocked', blockReason: 'awaiting_input' });
    expect(wakes(b.events.slice(-1))).toBe(false);
    b.attach('c-1', [{ kind: 'message', summary: 'progress' }]);
    expect(wakes(b.events.slice(-1))).toBe(false);
    b.submit('c-1', token, 'done', [{ kind: 'message', summary: 'done' }]);
    expect(wakes(b.events.slice(-1))).toBe(true);
    b.review('c-1', 'verifier-1', 'request_changes', ['more']);
    expect(wakes(b.events.slice(-1))).toBe(true);
    b.dispatch();
    const t2 = b.claim('c-1');
    b.submit('c-1', t2, 'fails', [], 'failed');
    expect(wakes(b.events.slice(-1))).toBe(true);
    b.dispatch();
    b.update({ cardId: 'c-1', status: 'cancelled' });
    expect(wakes(b.events.slice(-1))).toBe(true); // left dispatched
    const r = twoCardBoard();
    r.dispatch();
    r.claim('c-1');
    r.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    expect(wakes(r.events.slice(-1))).toBe(true); // left running
    r.update({ cardId: 'c-1', status: 'ready' });
    expect(wakes(r.events.slice(-1))).toBe(true); // became ready
    r.work('c-1');
    r.review('c-1', 'verifier-1', 'approve');
    expect(wakes(r.events.slice(-2, -1))).toBe(false); // the review itself
    expect(wakes(r.events.slice(-2))).toBe(true); // with the dependent it readied
  });
});

describe('cycles', () => {
  it('finds a cycle that does not pass through the first card, as the ids along it', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['b']],
    ]);
    expect(findCycle(graph)).toEqual(['b', 'c', 'b']);
  });

  it('names only the cards on the cycle, not those visited before it', () => {
    const graph = new Map([
      ['a', ['b', 'c']],
      ['b', []],
      ['c', ['a']],
    ]);
    expect(findCycle(graph)).toEqual(['a', 'c', 'a']);
  });

  it('finds none in a diamond, or through ids outside the graph', () => {
    const graph = new Map([
      ['a', ['b', 'c']],
      ['b', ['d']],
      ['c', ['d', 'x']],
      ['d', []],
    ]);
    expect(findCycle(graph)).toBeUndefined();
  });

  it('a split whose replacement waits on a card downstream of the split card closes a cycle through the board', () => {
    const b = twoCardBoard();
    b.add([{ key: 'extra', title: 'Extra', dependsOn: ['report'] }]);
    const error = thrown(() => b.add([{ key: 'rack-a', title: 'Rack A', dependsOn: ['extra'] }], { splitFrom: 'list' }));
    expect(error.message).toMatch(/^these dependencies make a cycle: /);
    expect(error.message).toContain('c-4 (rack-a)');
    expect(error.message).toContain('c-3');
  });
});
