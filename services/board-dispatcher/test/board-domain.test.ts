import { BadInputError, ConflictError, ForbiddenError, NotFoundError } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { parseBoardEvent, type BoardEvent } from '../src/domain/board-events.js';
import { CARD_TRANSITIONS, describeAllowed } from '../src/domain/card-transitions.js';
import { evaluateConditions, resolvedOccurrences, unknownCardFinding } from '../src/domain/diagnose-board.js';
import { dispatchEffects } from '../src/domain/dispatch-effects.js';
import { renderBoardText } from '../src/domain/render-board.js';
import { BoardStreamError, applyEvents, replayBoard } from '../src/domain/replay-board.js';
import { synthesizeBoard } from '../src/domain/synthesize-board.js';
import { ruleVerify } from '../src/domain/verify-card.js';
import { recordedSubmission, submitCard } from '../src/domain/board-commands.js';
import { BoardDriver, thrown } from './drive-board.js';

const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function twoCardBoard() {
  const b = new BoardDriver();
  b.create();
  b.add([
    { key: 'list', title: 'List the routers and their firmware', assignee: 'worker-1', evidenceRequirements: ['the inventory output'] },
    { key: 'report', title: 'Summarise outdated firmware', assignee: 'worker-2', dependsOn: ['list'] },
  ]);
  return b;
}

describe('board event replay and compaction', () => {
  it('rebuilds the board exactly from its stored events, and from a snapshot plus the events after it', () => {
    const b = twoCardBoard();
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'approve');
    const mid = b.events.length;
    const snapshot = roundTrip(replayBoard(b.events.slice(0, mid)));
    b.work('c-2');
    b.review('c-2', 'verifier-1', 'request_changes', ['the list of outdated routers by name']);

    const stored = roundTrip(b.events).map(parseBoardEvent);
    expect(stored.map((e) => e.type)).toEqual([
      'board_created',
      'card_added',
      'card_added',
      'card_dispatched',
      'card_claimed',
      'evidence_attached',
      'card_submitted',
      'card_reviewed',
      'card_transitioned',
      'card_dispatched',
      'card_claimed',
      'evidence_attached',
      'card_submitted',
      'card_reviewed',
    ]);
    expect(replayBoard(stored)).toStrictEqual(b.state);
    expect(applyEvents(snapshot, stored.slice(mid))).toStrictEqual(b.state);
    expect(roundTrip(b.state)).toStrictEqual(b.state);
    expect(b.board).toMatchObject({ version: 14, status: 'open' });
  });

  it('refuses a stream with a gap, a second creation, or a transition outside the table', () => {
    const b = twoCardBoard();
    const [created, added] = b.events as [BoardEvent, BoardEvent];
    expect(() => replayBoard([created, { ...added, seq: 3 }])).toThrow(BoardStreamError);
    expect(() => replayBoard([created, { ...created, seq: 2 }])).toThrow(/created twice/);
    const state = replayBoard(b.events)!;
    expect(() =>
      applyEvents(state, [{ type: 'card_transitioned', seq: 4, at: '2025-03-01T11:00:00.000Z', cardId: 'c-1', from: 'ready', to: 'verified', trigger: 'approve', blockReason: null, by: 'x', reason: null }]),
    ).toThrow(/transition table does not allow/);
  });

  it('never changes the state it applies events to', () => {
    const b = twoCardBoard();
    const before = b.board;
    const json = JSON.stringify(before);
    b.work('c-1');
    expect(JSON.stringify(before)).toBe(json);
    expect(Object.isFrozen(b.board.cards['c-1'])).toBe(true);
  });
});

describe('the transition table', () => {
  it('is data: every status but verified and cancelled has a way out, and the terminal ones have none', () => {
    const from = new Set(CARD_TRANSITIONS.map((t) => t.from));
    expect([...from].sort()).toEqual(['blocked', 'changes_requested', 'dispatched', 'ready', 'running', 'submitted', 'todo']);
    expect(describeAllowed('verified')).toBe('verified is final: nothing leaves it');
  });

  it('answers a transition outside it with a 409 naming the allowed statuses, and changes nothing', () => {
    const b = twoCardBoard();
    const before = JSON.stringify(b.board);
    const error = thrown(() => b.update({ cardId: 'c-1', status: 'verified' }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.httpStatus).toBe(409);
    expect(error.message).toMatch(/^board\.updateCard cannot move card c-1 to verified: from ready it can go to dispatched \(the dispatcher, when the assignee has capacity\), blocked \(board\.updateCard with status blocked\), cancelled/);
    const review = thrown(() => b.review('c-1', 'verifier-1', 'approve'));
    expect(review.message).toMatch(/^card c-1 is ready and cannot go to verified by board\.reviewCard with decision approve: from ready it can go to dispatched/);
    expect(review.details).toMatchObject({ cardId: 'c-1', status: 'ready', requested: 'verified', allowed: ['dispatched', 'blocked', 'cancelled'] });
    expect(JSON.stringify(b.board)).toBe(before);
  });

  it('blocks with a typed reason and unblocks to ready only when the dependencies are verified', () => {
    const b = twoCardBoard();
    b.update({ cardId: 'c-2', status: 'blocked', blockReason: 'awaiting_input', reason: 'need the target version' });
    expect(b.card('c-2')).toMatchObject({ status: 'blocked', blockReason: 'awaiting_input' });
    const early = thrown(() => b.update({ cardId: 'c-2', status: 'ready' }));
    expect(early.message).toBe('card c-2 waits on c-1 (ready): unblock it with status todo; it becomes ready once they are verified');
    b.update({ cardId: 'c-2', status: 'todo' });
    expect(b.card('c-2').status).toBe('todo');
    expect(b.board.decisions.map((d) => [d.kind, d.cardId, d.reason])).toEqual([
      ['blocked', 'c-2', 'need the target version'],
      ['unblocked', 'c-2', 'unblocked'],
    ]);
  });
});

describe('dependencies', () => {
  it('a card becomes ready only once every dependency is verified', () => {
    const b = twoCardBoard();
    expect(b.card('c-1').status).toBe('ready');
    expect(b.card('c-2').status).toBe('todo');
    b.work('c-1');
    expect(b.card('c-2').status).toBe('todo');
    b.review('c-1', 'verifier-1', 'approve');
    expect(b.card('c-2')).toMatchObject({ status: 'ready' });
    expect(b.events.at(-1)).toMatchObject({ type: 'card_transitioned', cardId: 'c-2', from: 'todo', to: 'ready', trigger: 'dependencies_verified' });
  });

  it('refuses a cycle, naming it, and changes nothing', () => {
    const b = twoCardBoard();
    const before = JSON.stringify(b.board);
    const error = thrown(() =>
      b.add([
        { key: 'a', title: 'A', dependsOn: ['b'] },
        { key: 'b', title: 'B', dependsOn: ['c'] },
        { key: 'c', title: 'C', dependsOn: ['a'] },
      ]),
    );
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.message).toBe('these dependencies make a cycle: c-3 (a) → c-4 (b) → c-5 (c) → c-3 (a); a card on a cycle could never become ready. Remove one of the dependencies.');
    expect(error.fields).toEqual([{ path: 'cards.0.dependsOn', message: 'cycle c-3 (a) → c-4 (b) → c-5 (c) → c-3 (a)' }]);
    expect(thrown(() => b.add([{ key: 'self', title: 'S', dependsOn: ['self'] }])).message).toMatch(/cycle: c-3 \(self\) → c-3 \(self\)/);
    expect(JSON.stringify(b.board)).toBe(before);
  });

  it('an unknown dependency is a 400 naming the field and the closest ids', () => {
    const b = twoCardBoard();
    const error = thrown(() => b.add([{ title: 'X', dependsOn: ['c-12'] }]));
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.fields).toEqual([{ path: 'cards.0.dependsOn.0', message: 'no card "c-12" in this call or on the board: did you mean c-2, c-1, list?' }]);
    expect(error.details).toMatchObject({ unknownCardIds: ['c-12'] });
  });

  it('a split cancels the card and moves its dependents onto the replacements', () => {
    const b = twoCardBoard();
    b.add([
      { key: 'list-a', title: 'List routers in rack A', assignee: 'worker-1' },
      { key: 'list-b', title: 'List routers in rack B', assignee: 'worker-3' },
    ], { splitFrom: 'list', reason: 'too many routers for one pass' });
    expect(b.card('c-1')).toMatchObject({ status: 'cancelled' });
    expect(b.card('c-2').dependsOn).toEqual(['c-3', 'c-4']);
    expect(b.board.decisions).toContainEqual(expect.objectContaining({ kind: 'split', cardId: 'c-1', reason: 'too many routers for one pass' }));
  });
});

describe('evidence and verification', () => {
  it('a card cannot be verified without evidence', () => {
    const b = new BoardDriver();
    b.create({ allowSelfVerify: true });
    b.add([{ title: 'Check the uplink', assignee: 'worker-1' }]);
    b.dispatch();
    const token = b.claim('c-1');
    const before = JSON.stringify(b.board);
    const error = thrown(() => b.submit('c-1', token, 'uplink is fine'));
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.message).toMatch(/^card c-1 cannot be submitted as completed without evidence: pass evidence/);
    expect(error.fields).toEqual([{ path: 'evidence', message: 'no evidence: a completion needs at least one piece' }]);
    expect(error.details).toMatchObject({ diagnostic: 'completion_without_evidence' });
    expect(JSON.stringify(b.board)).toBe(before);
  });

  it('a submission sent again under its ended claim is recognised, changes nothing, and only with the same token, agent and summary', () => {
    const b = new BoardDriver();
    b.create();
    b.add([{ title: 'Check the uplink', assignee: 'worker-1' }]);
    b.dispatch();
    const token = b.claim('c-1');
    b.submit('c-1', token, 'uplink is fine', [{ kind: 'message', summary: 'uplink up' }]);
    const before = JSON.stringify(b.board);
    const sent = { cardId: 'c-1', claimToken: token, by: 'worker-1', outcome: 'completed' as const, summary: 'uplink is fine', evidence: [{ kind: 'message' as const, summary: 'uplink up' }], at: '2025-03-01T10:00:00.000Z' };
    expect(submitCard(b.board, 'board-1', sent)).toEqual({ events: [], state: b.board });
    expect(JSON.stringify(b.board)).toBe(before);
    // Replayed from its events, the card knows the token it was submitted under.
    expect(replayBoard(b.events)!.cards['c-1']!.submittedUnder).toBe(token);
    for (const other of [{ summary: 'uplink is down' }, { by: 'worker-2' }, { claimToken: 'ct_other' }, { outcome: 'failed' as const }]) {
      expect(recordedSubmission(b.board, { ...sent, ...other })).toBe(false);
      expect(thrown(() => submitCard(b.board, 'board-1', { ...sent, ...other }))).toBeInstanceOf(ConflictError);
    }
  });

  it('replay refuses a stored stream that verifies a card without evidence', () => {
    const b = new BoardDriver();
    b.create({ allowSelfVerify: true });
    b.add([{ title: 'Check the uplink', assignee: 'worker-1' }]);
    b.work('c-1', 'uplink is fine');
    b.review('c-1', 'worker-1', 'approve');
    expect(replayBoard(b.events)!.cards['c-1']).toMatchObject({ status: 'verified', evidence: [{ id: 'e-1' }] });
    // The same stream with its evidence event cut out (a bad write, or a hand-edited log), renumbered so nothing else is wrong with it.
    const withoutEvidence = b.events.filter((e) => e.type !== 'evidence_attached').map((e, i) => ({ ...e, seq: i + 1 }));
    const reviewed = withoutEvidence.find((e) => e.type === 'card_reviewed')!;
    expect(reviewed).toMatchObject({ seq: 6, to: 'verified' });
    const error = thrown(() => replayBoard(withoutEvidence));
    expect(error).toBeInstanceOf(BoardStreamError);
    expect(error.message).toBe('board board-1: card c-1 is verified at seq 6 without evidence');
    // Applied on top of a snapshot taken before the review, the verification is refused the same way.
    const beforeReview = replayBoard(withoutEvidence.slice(0, 5));
    expect(beforeReview!.cards['c-1']).toMatchObject({ status: 'submitted', evidence: [] });
    expect(() => applyEvents(roundTrip(beforeReview), [reviewed])).toThrow('board board-1: card c-1 is verified at seq 6 without evidence');
  });

  it('worker completion attaches evidence, and the card waits in review', () => {
    const b = twoCardBoard();
    b.work('c-1', 'listed 12 routers');
    expect(b.card('c-1')).toMatchObject({ status: 'submitted', submittedBy: 'worker-1', submission: 'listed 12 routers' });
    expect(b.card('c-1').evidence).toEqual([{ id: 'e-1', kind: 'tool_result', ref: 'call-c-1', summary: 'the inventory output', covers: ['r1'], attachedBy: 'worker-1', at: expect.any(String) }]);
  });

  it('a worker cannot review its own card in any way (approve, request changes, ask the built-in verifier) unless the policy allows it', () => {
    const b = twoCardBoard();
    b.work('c-1');
    const before = JSON.stringify(b.board);
    const error = thrown(() => b.review('c-1', 'worker-1', 'approve'));
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error.httpStatus).toBe(403);
    expect(error.message).toBe(
      "worker-1 submitted card c-1 and may not review it: the board's policy does not allow self-verification. Another agent's key must ask (approve, request_changes, or auto for the built-in verifier)",
    );
    expect(thrown(() => b.review('c-1', 'worker-1', 'request_changes', ['more'])).message).toMatch(/^worker-1 submitted card c-1 and may not review it/);
    const auto = thrown(() => b.review('c-1', 'builtin-verifier', 'request_changes', ['more'], '', 'worker-1'));
    expect(auto).toBeInstanceOf(ForbiddenError);
    expect(auto.message).toMatch(/^worker-1 submitted card c-1 and may not ask the built-in verifier about it: .* Another agent's key must ask/);
    expect(JSON.stringify(b.board)).toBe(before);
    // Another agent's key asking the verifier is recorded as its request.
    b.review('c-1', 'builtin-verifier', 'approve', [], '', 'verifier-1');
    expect(b.card('c-1').lastReview).toMatchObject({ reviewer: 'builtin-verifier', requestedBy: 'verifier-1', decision: 'approve' });
    const lax = new BoardDriver();
    lax.create({ allowSelfVerify: true });
    lax.add([{ title: 'Tag release v1.2', assignee: 'worker-1' }]);
    lax.work('c-1');
    lax.review('c-1', 'worker-1', 'approve');
    expect(lax.card('c-1').status).toBe('verified');
  });

  it('approval needs every requirement covered', () => {
    const b = new BoardDriver();
    b.create();
    b.add([{ title: 'Dump the db', assignee: 'worker-1', evidenceRequirements: ['the dump file size', 'a checksum of the dump'] }]);
    b.dispatch();
    const token = b.claim('c-1');
    b.submit('c-1', token, 'dumped', [{ kind: 'file', ref: 'orders.sql.gz', summary: 'orders.sql.gz, dump file size 2.3 GB', covers: ['r1'] }]);
    const error = thrown(() => b.review('c-1', 'verifier-1', 'approve'));
    expect(error.message).toBe(
      'card c-1 cannot be verified: requirement r2 (a checksum of the dump) is not shown by the evidence: no recorded observation is about this claim. Request changes naming what is missing, or attach the evidence first',
    );
    b.attach('c-1', [{ kind: 'tool_result', summary: 'sha256 checksum of the dump: 9f2c...', ref: 'call-9' }]);
    expect(ruleVerify(b.card('c-1'))).toMatchObject({
      decision: 'approve',
      reasons: ['requirement r1 (the dump file size) is shown by e-1: "dump file size 2.3 GB"', 'requirement r2 (a checksum of the dump) is shown by e-2: "sha256 checksum of the dump: 9f2c"'],
    });
  });

  it('verifier request_changes keeps the card open and names the missing evidence', () => {
    const b = twoCardBoard();
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'request_changes', ['the firmware version of each router']);
    expect(b.card('c-1')).toMatchObject({ status: 'changes_requested', lastReview: { decision: 'request_changes', missing: ['the firmware version of each router'] } });
    expect(synthesizeBoard(b.board).complete).toBe(false);
    // It goes back to its worker as a new attempt.
    b.dispatch();
    expect(b.card('c-1')).toMatchObject({ status: 'dispatched', attempt: 2 });
  });
});

describe('the dispatcher decision', () => {
  it('dispatches ready cards most urgent first, within each assignee\'s capacity, numbering attempts', () => {
    const b = new BoardDriver();
    b.create({ maxInFlightPerAssignee: 2 });
    b.add([
      { title: 'low', assignee: 'w', priority: 'low' },
      { title: 'urgent', assignee: 'w', priority: 'urgent' },
      { title: 'normal', assignee: 'w' },
      { title: 'nobody' },
    ]);
    const { dispatched } = b.dispatch();
    expect(dispatched.map((d) => [d.cardId, d.attempt])).toEqual([
      ['c-2', 1],
      ['c-3', 1],
    ]);
    expect(b.dispatch().dispatched).toEqual([]);
    expect(dispatchEffects(b.events.slice(-2))).toEqual([
      { kind: 'dispatch', cardId: 'c-2', attempt: 1, assignee: 'w' },
      { kind: 'dispatch', cardId: 'c-3', attempt: 1, assignee: 'w' },
    ]);
  });

  it('a claim that stops heartbeating returns the card to ready, and repeated failures block it', () => {
    const b = new BoardDriver();
    b.create({ maxFailures: 3 });
    b.add([{ title: 'flaky', assignee: 'w' }]);
    for (let attempt = 1; attempt <= 3; attempt++) {
      b.dispatch();
      b.claim('c-1');
      b.expire('c-1');
    }
    expect(b.card('c-1')).toMatchObject({ status: 'blocked', blockReason: 'repeated_failures', failures: 3, attempt: 3 });
    expect(b.events.filter((e) => e.type === 'card_failed').map((e) => (e as { to: string }).to)).toEqual(['ready', 'ready', 'blocked']);
  });

  it('only the claim holder\'s key submits: another agent with the token is a 403, and nothing changes', () => {
    const b = twoCardBoard();
    b.dispatch();
    const token = b.claim('c-1');
    const before = JSON.stringify(b.board);
    const error = thrown(() => b.submit('c-1', token, 'done', [{ kind: 'message', summary: 'all good' }], 'completed', 'worker-2'));
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error.message).toBe("worker-1 holds the claim on card c-1, and this key acts as agent worker-2: submit with worker-1's own key");
    expect(JSON.stringify(b.board)).toBe(before);
    b.submit('c-1', token, 'done', [{ kind: 'message', summary: 'all good' }]);
    expect(b.card('c-1')).toMatchObject({ status: 'submitted', submittedBy: 'worker-1' });
  });

  it('a submission whose lease ran out is a 409 naming the card and the expiry, even before the sweep ends the claim; a live lease submits', () => {
    const b = twoCardBoard();
    b.dispatch();
    const token = b.claim('c-1');
    const submit = (lease: { expiresAt: string; expired: boolean } | null) => b.submitUnderLease('c-1', token, lease, [{ kind: 'message', summary: 'all good' }]);
    const before = JSON.stringify(b.board);
    const late = thrown(() => submit({ expiresAt: '2025-03-01T12:00:00.500Z', expired: true }));
    expect(late).toBeInstanceOf(ConflictError);
    expect(late.message).toBe(
      'the claim lease on card c-1 on board "board-1" expired at 2025-03-01T12:00:00.500Z (no heartbeat extended it in time): this claim is over; stop submitting it, and call board.claimCard to claim the card again',
    );
    expect(late.details).toEqual({ boardId: 'board-1', cardId: 'c-1', attempt: 1, reason: 'lease_expired', leaseExpiresAt: '2025-03-01T12:00:00.500Z' });
    expect(thrown(() => submit(null)).message).toBe('the claim lease on card c-1 on board "board-1" is gone: this claim is over; stop submitting it, and call board.claimCard to claim the card again');
    expect(JSON.stringify(b.board)).toBe(before);
    submit({ expiresAt: '2025-03-01T12:00:00.500Z', expired: false });
    expect(b.card('c-1')).toMatchObject({ status: 'submitted', submittedBy: 'worker-1' });
  });

  it('a stale claim token is a 409 that says to claim new work', () => {
    const b = twoCardBoard();
    b.dispatch();
    const token = b.claim('c-1');
    b.expire('c-1');
    const error = thrown(() => b.submit('c-1', token, 'done', [{ kind: 'message', summary: 'all good' }]));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe(
      'this claimToken no longer holds card c-1 on board "board-1" (the claim expired or the card was reassigned, and it waits for its next dispatch): stop submitting it, and call board.claimCard for new work',
    );
  });
});

describe('diagnostics', () => {
  it('a hallucinated card id is a 404 with the closest ids, and a diagnostic', () => {
    const b = twoCardBoard();
    const error = thrown(() => b.attach('c-21', [{ kind: 'message', summary: 'x' }]));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe('board "board-1" has no card "c-21" (cardId): did you mean c-2, c-1, list? List the cards with board.show.');
    expect(unknownCardFinding(b.board, 'c-21', 'board.attachEvidence')).toMatchObject({
      kind: 'unknown_card',
      subject: 'c-21',
      severity: 'error',
      suggestedAction: 'use a real card id (closest: c-2, c-1, list); list them with board.show',
    });
    expect(resolvedOccurrences(b.board, [{ kind: 'unknown_card', subject: 'c-21', lastSeen: '2025-03-01T10:00:00.000Z' }], '2025-03-01T10:01:00.000Z', 3_600_000)).toEqual([]);
  });

  it('repeated worker failures suggest split, reassign or block', () => {
    const b = new BoardDriver();
    b.create({ maxFailures: 5 });
    b.add([{ title: 'flaky', assignee: 'w' }]);
    for (let i = 0; i < 2; i++) {
      b.dispatch();
      const token = b.claim('c-1');
      b.submit('c-1', token, 'timed out', [], 'failed');
    }
    const facts = { now: '2025-03-01T10:00:30.000Z', lastPollByAssignee: { w: '2025-03-01T10:00:29.000Z' }, consumerTtlMs: 60_000, strandedAfterMs: 60_000 };
    expect(evaluateConditions(b.board, facts)).toEqual([
      {
        kind: 'repeated_failures',
        subject: 'c-1',
        severity: 'warning',
        message: 'card c-1 failed 2 attempts with w',
        suggestedAction: 'split it into smaller cards (board.addCards with splitFrom c-1), reassign it (board.updateCard assignee), or block it with a reason until it can be done',
        details: { failures: 2, maxFailures: 5, assignee: 'w', status: 'ready' },
      },
    ]);
    // Diagnostics describe; the card is untouched by them.
    expect(b.card('c-1').status).toBe('ready');
  });

  it('finds stranded, deadlocked and repeatedly blocked cards', () => {
    const b = twoCardBoard();
    b.add([{ key: 'extra', title: 'Extra', assignee: 'worker-9', dependsOn: ['report'] }]);
    b.update({ cardId: 'c-2', status: 'cancelled', reason: 'not needed' });
    const kinds = evaluateConditions(b.board, { now: '2025-03-01T12:00:00.000Z', lastPollByAssignee: {}, consumerTtlMs: 60_000, strandedAfterMs: 60_000 }).map((f) => [f.kind, f.subject]);
    expect(kinds).toEqual([
      ['stranded_ready', 'c-1'],
      ['dependency_deadlock', 'c-3'],
    ]);
  });
});

describe('show and synthesize', () => {
  it('shows a 200-card board in at most 4,000 characters, most urgent first', () => {
    const b = new BoardDriver();
    b.create();
    b.add(Array.from({ length: 200 }, (_, i) => ({ title: `Check router r-${i + 1} firmware against the vendor advisory list`, assignee: `worker-${i % 7}`, priority: i % 50 === 7 ? ('urgent' as const) : ('normal' as const) })));
    const text = renderBoardText(b.board);
    expect(text.length).toBeLessThanOrEqual(4000);
    const lines = text.split('\n');
    expect(lines[0]).toBe('Board board-1 "Check the router fleet" open, v201: 200 cards (200 ready)');
    expect(lines.slice(1, 5).map((l) => l.split(' ')[0])).toEqual(['c-8', 'c-58', 'c-108', 'c-158']);
    expect(lines.at(-1)).toMatch(/^\+\d+ more \(\d+ ready\): page through them with board\.show offset\/limit$/);
  });

  it('the synthesizer composes only from verified cards and names every other one', () => {
    const b = twoCardBoard();
    b.add([{ title: 'Email the owners', assignee: 'worker-3' }]);
    b.work('c-1', 'Listed 12 routers; 3 on firmware 1.2');
    b.review('c-1', 'verifier-1', 'approve');
    b.work('c-2', 'All routers are current');
    b.update({ cardId: 'c-3', status: 'blocked', blockReason: 'awaiting_input' });
    const s = synthesizeBoard(b.board);
    expect(s.complete).toBe(false);
    expect(s.verified).toEqual([{ cardId: 'c-1', title: 'List the routers and their firmware', evidenceIds: ['e-1'], evidenceTotal: 1 }]);
    // Most urgent first: a blocked card needs a decision before one waiting in review.
    expect(s.unresolved).toEqual([
      { cardId: 'c-3', title: 'Email the owners', status: 'blocked', reason: 'blocked (awaiting_input)' },
      { cardId: 'c-2', title: 'Summarise outdated firmware', status: 'submitted', reason: 'submitted, not yet verified' },
    ]);
    expect(s.form).toBe('admin');
    expect(s.text).toContain('- c-1 List the routers and their firmware: Listed 12 routers; 3 on firmware 1.2 [evidence e-1 (call-c-1)]');
    expect(s.text).not.toContain('All routers are current');
    expect(s.text).toContain('Not verified (do not present these as done):\n- c-3 Email the owners: blocked (awaiting_input)\n- c-2 Summarise outdated firmware: submitted, not yet verified');
  });
});
