import { describe, expect, it } from 'vitest';
import { closestIds } from '../src/domain/closest-ids.js';
import {
  CONDITION_KINDS,
  OCCURRENCE_KINDS,
  completionWithoutEvidenceFinding,
  evaluateConditions,
  ghostRunningFinding,
  resolvedOccurrences,
  unknownCardFinding,
  type BoardFacts,
} from '../src/domain/diagnose-board.js';
import { byUrgency, cardLine, renderBoardText } from '../src/domain/render-board.js';
import { BoardDriver } from './drive-board.js';

// Diagnostics, board.show's text and "did you mean": what a person or a model reads on the board,
// with the exact wording, found unpinned by mutation testing.

const HOUR = 3_600_000;

function facts(now: string, lastPollByAssignee: Record<string, string> = {}): BoardFacts {
  return { now, lastPollByAssignee, consumerTtlMs: 60_000, strandedAfterMs: HOUR };
}

const later = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

describe('conditions', () => {
  it('finds every condition kind, and only the kinds the store resolves as conditions', () => {
    const b = new BoardDriver();
    b.create({ maxFailures: 5 });
    b.add([
      { title: 'Flaky', assignee: 'w' },
      { title: 'Blocked twice', assignee: 'w' },
      { key: 'dep', title: 'Cancelled dependency' },
      { title: 'Waits on it', dependsOn: ['dep'] },
    ]);
    for (let i = 0; i < 2; i++) {
      b.dispatch();
      b.submit('c-1', b.claim('c-1'), 'timed out', [], 'failed');
      b.update({ cardId: 'c-2', status: 'blocked', blockReason: 'external_dependency' });
      if (i === 0) b.update({ cardId: 'c-2', status: 'ready' });
    }
    b.update({ cardId: 'c-3', status: 'cancelled' });
    const found = evaluateConditions(b.board, facts(later(b.now(), HOUR)));
    expect(new Set(found.map((f) => f.kind))).toEqual(new Set(CONDITION_KINDS));
    expect(CONDITION_KINDS).toHaveLength(4);
    expect([unknownCardFinding(b.board, 'x', 'op').kind, completionWithoutEvidenceFinding(b.card('c-1')).kind, ghostRunningFinding(b.card('c-1'), { by: 'w', attempt: 1, expiresAt: 'x' }).kind]).toEqual(OCCURRENCE_KINDS);
  });

  it('repeated failures of a card the board blocked are an error; a card in review or finished has none', () => {
    const b = new BoardDriver();
    b.create({ maxFailures: 2 });
    b.add([{ title: 'Flaky', assignee: 'w' }]);
    for (let i = 0; i < 2; i++) {
      b.dispatch();
      b.submit('c-1', b.claim('c-1'), 'timed out', [], 'failed');
    }
    const now = later(b.now(), 1000);
    expect(evaluateConditions(b.board, facts(now, { w: now }))).toEqual([
      {
        kind: 'repeated_failures',
        subject: 'c-1',
        severity: 'error',
        message: 'card c-1 failed 2 attempts with w and is blocked',
        suggestedAction: 'split it into smaller cards (board.addCards with splitFrom c-1), reassign it (board.updateCard assignee), or block it with a reason until it can be done',
        details: { failures: 2, maxFailures: 2, assignee: 'w', status: 'blocked' },
      },
    ]);
    b.update({ cardId: 'c-1', status: 'ready' });
    b.dispatch();
    b.submit('c-1', b.claim('c-1'), 'now it works', [{ kind: 'message', summary: 'done' }]);
    expect(evaluateConditions(b.board, facts(later(b.now(), 1000), { w: b.now() }))).toEqual([]);
    b.update({ cardId: 'c-1', status: 'cancelled' });
    expect(evaluateConditions(b.board, facts(later(b.now(), 1000), { w: b.now() }))).toEqual([]);
    // Nor does a card verified after its failures.
    const v = new BoardDriver();
    v.create({ maxFailures: 5 });
    v.add([{ title: 'Flaky', assignee: 'w' }]);
    for (let i = 0; i < 2; i++) {
      v.dispatch();
      v.submit('c-1', v.claim('c-1'), 'timed out', [], 'failed');
    }
    v.work('c-1');
    v.review('c-1', 'verifier-1', 'approve');
    expect(v.card('c-1')).toMatchObject({ status: 'verified', failures: 2 });
    expect(evaluateConditions(v.board, facts(later(v.now(), 1000), { w: v.now() }))).toEqual([]);
  });

  it('a card blocked for the same reason again is a warning that unblocking did not remove the cause', () => {
    const b = new BoardDriver();
    b.create();
    b.add([{ title: 'Needs access', assignee: 'w' }]);
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    const now = later(b.now(), 1000);
    expect(evaluateConditions(b.board, facts(now))).toEqual([]);
    b.update({ cardId: 'c-1', status: 'ready' });
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    expect(evaluateConditions(b.board, facts(now))).toEqual([
      {
        kind: 'repeated_block_reason',
        subject: 'c-1:external_dependency',
        severity: 'warning',
        message: 'card c-1 is blocked for external_dependency for the 2th time',
        suggestedAction: 'unblocking it has not removed the cause: resolve external_dependency first, or split or cancel the card',
        details: { cardId: 'c-1', blockReason: 'external_dependency', times: 2 },
      },
    ]);
    // Once it is no longer blocked, the condition no longer holds.
    b.update({ cardId: 'c-1', status: 'cancelled' });
    expect(evaluateConditions(b.board, facts(now))).toEqual([]);
  });

  it('one reason blocking several cards at once is one finding, listing up to ten of them', () => {
    const b = new BoardDriver();
    b.create();
    b.add(Array.from({ length: 12 }, (_, i) => ({ title: `Card ${i + 1}` })));
    b.update({ cardId: 'c-12', status: 'blocked', blockReason: 'external_dependency' });
    const now = later(b.now(), 1000);
    expect(evaluateConditions(b.board, facts(now)).filter((f) => f.subject.startsWith('reason:'))).toEqual([]);
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'awaiting_input' });
    b.update({ cardId: 'c-2', status: 'blocked', blockReason: 'awaiting_input' });
    expect(evaluateConditions(b.board, facts(now)).filter((f) => f.subject.startsWith('reason:'))).toEqual([
      {
        kind: 'repeated_block_reason',
        subject: 'reason:awaiting_input',
        severity: 'warning',
        message: '2 cards are blocked for awaiting_input: c-1, c-2',
        suggestedAction: 'resolve awaiting_input once for all of them, then unblock them (board.updateCard status ready)',
        details: { blockReason: 'awaiting_input', cardIds: ['c-1', 'c-2'] },
      },
    ]);
    for (let i = 3; i <= 10; i++) b.update({ cardId: `c-${i}`, status: 'blocked', blockReason: 'awaiting_input' });
    expect(evaluateConditions(b.board, facts(now)).find((f) => f.subject === 'reason:awaiting_input')!.message).toBe(
      '10 cards are blocked for awaiting_input: c-1, c-2, c-3, c-4, c-5, c-6, c-7, c-8, c-9, c-10',
    );
    b.update({ cardId: 'c-11', status: 'blocked', blockReason: 'awaiting_input' });
    expect(evaluateConditions(b.board, facts(now)).find((f) => f.subject === 'reason:awaiting_input')!.message).toBe(
      '11 cards are blocked for awaiting_input: c-1, c-2, c-3, c-4, c-5, c-6, c-7, c-8, c-9, c-10, ...',
    );
  });

  it('a card waiting for dispatch or claim an hour with no live consumer is stranded; a live one or a shorter wait is not', () => {
    const b = new BoardDriver();
    b.create({ maxInFlightPerAssignee: 5 });
    b.add([
      { title: 'Ready', assignee: 'w' },
      { title: 'Nobody\'s' },
      { title: 'Dispatched', assignee: 'v' },
    ]);
    b.dispatch();
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'awaiting_input' });
    b.update({ cardId: 'c-1', status: 'ready' });
    const since = b.card('c-1').statusSince;
    const dispatchedSince = b.card('c-3').statusSince;
    const readySince = b.card('c-2').statusSince;
    const now = later(since, HOUR);
    const stranded = (lastPoll: Record<string, string>, at = now) => evaluateConditions(b.board, facts(at, lastPoll)).filter((f) => f.kind === 'stranded_ready');
    expect(stranded({})).toEqual([
      {
        kind: 'stranded_ready',
        subject: 'c-1',
        severity: 'warning',
        message: `card c-1 has been ready since ${since}, and w has never asked for work`,
        suggestedAction: 'start a worker that calls board.claimCard as w, or reassign the card (board.updateCard assignee)',
        details: { cardId: 'c-1', status: 'ready', assignee: 'w', since, lastPoll: null },
      },
      {
        kind: 'stranded_ready',
        subject: 'c-2',
        severity: 'warning',
        message: `card c-2 has been ready since ${readySince} with nobody assigned`,
        suggestedAction: 'assign it (board.updateCard assignee) so the dispatcher can dispatch it',
        details: { cardId: 'c-2', status: 'ready', assignee: null, since: readySince, lastPoll: null },
      },
      {
        kind: 'stranded_ready',
        subject: 'c-3',
        severity: 'warning',
        message: `card c-3 has been dispatched since ${dispatchedSince}, and v has never asked for work`,
        suggestedAction: 'start a worker that calls board.claimCard as v, or reassign the card (board.updateCard assignee)',
        details: { cardId: 'c-3', status: 'dispatched', assignee: 'v', since: dispatchedSince, lastPoll: null },
      },
    ]);
    const polled = later(now, -60_000);
    expect(stranded({ w: polled }).find((f) => f.subject === 'c-1')).toMatchObject({
      message: `card c-1 has been ready since ${since}, and w last asked for work at ${polled}`,
      details: { lastPoll: polled },
    });
    expect(stranded({ w: later(now, -59_999) }).map((f) => f.subject)).toEqual(['c-2', 'c-3']);
    expect(stranded({}, later(now, -1)).map((f) => f.subject)).toEqual(['c-2', 'c-3']);
  });

  it('a card sent back with changes requested waits too', () => {
    const b = new BoardDriver();
    b.create();
    b.add([{ title: 'Fix it', assignee: 'w' }]);
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'request_changes', ['the output']);
    const since = b.card('c-1').statusSince;
    expect(evaluateConditions(b.board, facts(later(since, HOUR))).map((f) => [f.kind, f.subject, f.details['status']])).toEqual([['stranded_ready', 'c-1', 'changes_requested']]);
    expect(evaluateConditions(b.board, facts(later(since, HOUR - 1)))).toEqual([]);
  });

  it('a todo card waiting on a blocked card is a warning; on a cancelled one, an error: it can never become ready', () => {
    const b = new BoardDriver();
    b.create();
    b.add([
      { key: 'a', title: 'A' },
      { key: 'b', title: 'B' },
      { key: 'c', title: 'C', dependsOn: ['a', 'b'] },
    ]);
    const now = later(b.now(), 1000);
    expect(evaluateConditions(b.board, facts(now))).toEqual([]);
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    expect(evaluateConditions(b.board, facts(now)).filter((f) => f.kind === 'dependency_deadlock')).toEqual([
      {
        kind: 'dependency_deadlock',
        subject: 'c-3',
        severity: 'warning',
        message: 'card c-3 waits on c-1, blocked',
        suggestedAction: 'unblock c-1 (board.updateCard), or cancel c-3',
        details: { cardId: 'c-3', cancelled: [], blocked: ['c-1'] },
      },
    ]);
    b.update({ cardId: 'c-2', status: 'cancelled' });
    expect(evaluateConditions(b.board, facts(now)).filter((f) => f.kind === 'dependency_deadlock')).toEqual([
      {
        kind: 'dependency_deadlock',
        subject: 'c-3',
        severity: 'error',
        message: 'card c-3 waits on c-2, cancelled: it can never become ready',
        suggestedAction: 'cancel c-3, or add a card that replaces c-2 (board.addCards) and depend on it',
        details: { cardId: 'c-3', cancelled: ['c-2'], blocked: ['c-1'] },
      },
    ]);
    // Several of them are all named.
    const two = new BoardDriver();
    two.create();
    two.add([{ key: 'a', title: 'A' }, { key: 'b', title: 'B' }, { key: 'c', title: 'C', dependsOn: ['a', 'b'] }]);
    two.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    two.update({ cardId: 'c-2', status: 'blocked', blockReason: 'external_dependency' });
    expect(evaluateConditions(two.board, facts(now)).find((f) => f.kind === 'dependency_deadlock')).toMatchObject({
      message: 'card c-3 waits on c-1, c-2, blocked',
      suggestedAction: 'unblock c-1, c-2 (board.updateCard), or cancel c-3',
    });
    two.update({ cardId: 'c-1', status: 'cancelled' });
    two.update({ cardId: 'c-2', status: 'cancelled' });
    expect(evaluateConditions(two.board, facts(now)).find((f) => f.kind === 'dependency_deadlock')).toMatchObject({
      message: 'card c-3 waits on c-1, c-2, cancelled: it can never become ready',
      suggestedAction: 'cancel c-3, or add a card that replaces c-1, c-2 (board.addCards) and depend on it',
    });
    // A card no longer waiting (blocked itself) is not deadlocked.
    b.update({ cardId: 'c-3', status: 'blocked', blockReason: 'awaiting_input' });
    expect(evaluateConditions(b.board, facts(now)).filter((f) => f.kind === 'dependency_deadlock')).toEqual([]);
  });
});

describe('occurrences', () => {
  it('a hallucinated id on a board with no cards says to add cards', () => {
    const b = new BoardDriver();
    b.create();
    expect(unknownCardFinding(b.board, 'c-3', 'board.claimCard')).toEqual({
      kind: 'unknown_card',
      subject: 'c-3',
      severity: 'error',
      message: 'board.claimCard named card "c-3", which board "board-1" does not have',
      suggestedAction: 'the board has no cards: add them with board.addCards',
      details: { operation: 'board.claimCard', suggestions: [] },
    });
  });

  it('a completion without evidence and a ghost claim say what happened and what to do', () => {
    const b = new BoardDriver();
    b.create();
    b.add([{ title: 'A', assignee: 'w' }]);
    expect(completionWithoutEvidenceFinding(b.card('c-1'))).toEqual({
      kind: 'completion_without_evidence',
      subject: 'c-1',
      severity: 'error',
      message: 'card c-1 was submitted as completed with no evidence',
      suggestedAction: 'attach the tool results, files, URLs or messages that show the work (board.attachEvidence), then submit again; nothing was changed',
      details: { cardId: 'c-1', attempt: 0, by: null },
    });
    b.dispatch();
    b.claim('c-1');
    expect(completionWithoutEvidenceFinding(b.card('c-1')).details).toEqual({ cardId: 'c-1', attempt: 1, by: 'w' });
    expect(ghostRunningFinding(b.card('c-1'), { by: 'w', attempt: 1, expiresAt: '2025-03-01T11:00:00.000Z' })).toEqual({
      kind: 'ghost_running',
      subject: 'c-1',
      severity: 'warning',
      message: 'card c-1 was running under w (attempt 1) with no heartbeat past 2025-03-01T11:00:00.000Z: the attempt counts as failed',
      suggestedAction: 'check that w is alive and heartbeats well within the claim lease; the card is dispatched again',
      details: { cardId: 'c-1', worker: 'w', attempt: 1, expiredAt: '2025-03-01T11:00:00.000Z' },
    });
  });

  it('resolve once the board no longer bears them out, and not before', () => {
    const b = new BoardDriver();
    b.create();
    b.add([
      { key: 'known', title: 'Known', assignee: 'w' },
      { title: 'Ready', assignee: 'v' },
    ]);
    const now = '2025-03-01T12:00:00.000Z';
    const resolved = (kind: 'unknown_card' | 'completion_without_evidence' | 'ghost_running' | 'stranded_ready', subject: string, lastSeen = '2025-03-01T11:59:00.000Z') =>
      resolvedOccurrences(b.board, [{ kind, subject, lastSeen }], now, HOUR).length === 1;
    // An unknown id resolves when it names a card (by id or key) or has been quiet for quietMs.
    expect(resolved('unknown_card', 'c-9')).toBe(false);
    expect(resolved('unknown_card', 'c-1')).toBe(true);
    expect(resolved('unknown_card', 'known')).toBe(true);
    expect(resolved('unknown_card', 'c-9', '2025-03-01T11:00:00.000Z')).toBe(true);
    expect(resolved('unknown_card', 'c-9', '2025-03-01T11:00:00.001Z')).toBe(false);
    // Conditions are not resolved here.
    expect(resolved('stranded_ready', 'c-9')).toBe(false);
    b.dispatch();
    b.claim('c-1');
    // A completion without evidence resolves once the card has evidence or is no longer running.
    expect(resolved('completion_without_evidence', 'c-1')).toBe(false);
    expect(resolved('completion_without_evidence', 'c-9')).toBe(true);
    expect(resolved('completion_without_evidence', 'c-2')).toBe(true);
    // A ghost claim resolves once the card runs again or is submitted or finished; not while it waits for dispatch.
    expect(resolved('ghost_running', 'c-1')).toBe(true);
    expect(resolved('ghost_running', 'c-2')).toBe(false);
    expect(resolved('ghost_running', 'c-9')).toBe(true);
    b.attach('c-1', [{ kind: 'message', summary: 'progress' }]);
    expect(resolved('completion_without_evidence', 'c-1')).toBe(true);
    b.dispatch();
    expect(b.card('c-2').status).toBe('dispatched');
    expect(resolved('ghost_running', 'c-2')).toBe(false);
    b.update({ cardId: 'c-2', status: 'cancelled' });
    expect(resolved('ghost_running', 'c-2')).toBe(true);
    const submitted = new BoardDriver();
    submitted.create();
    submitted.add([{ title: 'Restart the router', assignee: 'w' }]);
    submitted.work('c-1');
    expect(resolvedOccurrences(submitted.board, [{ kind: 'ghost_running', subject: 'c-1', lastSeen: now }], now, HOUR)).toHaveLength(1);
    submitted.review('c-1', 'verifier-1', 'approve');
    expect(resolvedOccurrences(submitted.board, [{ kind: 'ghost_running', subject: 'c-1', lastSeen: now }], now, HOUR)).toHaveLength(1);
  });
});

describe('did you mean', () => {
  it('matches ids case-insensitively', () => {
    expect(closestIds('LIST', ['c-1', 'list'])).toEqual(['list', 'c-1']);
  });

  it('among ids as close by spelling, prefers the nearest card number, then the one named first', () => {
    expect(closestIds('c-5', ['c-x', 'c-4'])).toEqual(['c-4', 'c-x']);
    expect(closestIds('x2-a', ['x9-a', 'x1-a'])).toEqual(['x9-a', 'x1-a']);
    expect(closestIds('c-7', ['c-8', 'c-6', 'c-9', 'c-1'], 2)).toEqual(['c-8', 'c-6']);
  });
});

describe('board.show', () => {
  function variedBoard() {
    const b = new BoardDriver();
    b.create({ maxInFlightPerAssignee: 5 });
    b.add([
      { key: 'inv', title: 'Take   the\ninventory', assignee: 'w', priority: 'urgent', evidenceRequirements: ['the inventory file', 'the row count', 'the site list'] },
      { key: 'fix', title: 'Fix the routers', assignee: 'w', priority: 'high', dependsOn: ['inv'], deadline: '2025-03-05T17:30:00.000Z' },
      { key: 'mail', title: 'Email owners', priority: 'low', dependsOn: ['inv', 'fix'] },
      { key: 'ship', title: 'Ship it', assignee: 'v' },
    ]);
    b.attach('c-1', [{ kind: 'file', ref: 'inventory.csv', summary: 'the inventory file', covers: ['r1'] }]);
    b.attach('c-4', [
      { kind: 'message', summary: 'ship: one' },
      { kind: 'message', summary: 'ship: two' },
    ]);
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    return b;
  }

  it('one line per card: id, status with its block reason, priority mark, assignee, title, what it waits on, evidence, deadline', () => {
    const b = variedBoard();
    expect(cardLine(b.board, b.card('c-1'))).toBe('c-1 blocked(external_dependency)!! @w Take the inventory ev 1/3');
    expect(cardLine(b.board, b.card('c-2'))).toBe('c-2 todo! @w Fix the routers ⟵c-1 due 2025-03-05T17:30');
    expect(cardLine(b.board, b.card('c-3'))).toBe('c-3 todo~ Email owners ⟵c-1,c-2');
    expect(cardLine(b.board, b.card('c-4'))).toBe('c-4 ready @v Ship it ev 2');
    expect(cardLine(b.board, b.card('c-2'), 10)).toBe('c-2 todo! @w Fix the r… ⟵c-1 due 2025-03-05T17:30');
    expect(cardLine(b.board, b.card('c-2'), 15)).toBe('c-2 todo! @w Fix the routers ⟵c-1 due 2025-03-05T17:30');
  });

  it('a finished card shows neither what it waited on nor its deadline; a card sent back shows what is missing', () => {
    const b = variedBoard();
    b.update({ cardId: 'c-2', status: 'cancelled' });
    expect(cardLine(b.board, b.card('c-2'))).toBe('c-2 cancelled! @w Fix the routers');
    b.work('c-4');
    b.review('c-4', 'verifier-1', 'request_changes', ['the tracking number', 'a photo of the parcel']);
    expect(cardLine(b.board, b.card('c-4'))).toBe('c-4 changes_requested @v Ship it ev 3 missing: the tracking number; a photo of the parcel');
    b.work('c-4');
    b.review('c-4', 'verifier-1', 'request_changes', ['  the   tracking number  ']);
    expect(cardLine(b.board, b.card('c-4')).endsWith(' missing: the tracking number')).toBe(true);
    const long = 'x'.repeat(70);
    b.work('c-4');
    b.review('c-4', 'verifier-1', 'request_changes', [long]);
    expect(cardLine(b.board, b.card('c-4')).endsWith(`missing: ${'x'.repeat(59)}…`)).toBe(true);
  });

  it('a verified card shows neither a deadline nor what was missing, and a verified dependency is not waited on', () => {
    const b = new BoardDriver();
    b.create();
    b.add([
      { key: 'a', title: 'Done soon', assignee: 'w', deadline: '2025-03-05T17:30:00.000Z' },
      { key: 'b', title: 'Next', dependsOn: ['a'] },
    ]);
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'request_changes', ['more']);
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'approve');
    expect(cardLine(b.board, b.card('c-1'))).toBe('c-1 verified @w Done soon ev 2');
    expect(cardLine(b.board, b.card('c-2'))).toBe('c-2 ready Next');
  });

  it('orders open work before finished work, then by priority, deadline, status and age', () => {
    const b = new BoardDriver();
    b.create();
    b.add([
      { title: 'normal, no deadline' },
      { title: 'normal, late deadline', deadline: '2025-04-01T00:00:00.000Z' },
      { title: 'normal, early deadline', deadline: '2025-03-10T00:00:00.000Z' },
      { title: 'urgent but cancelled', priority: 'urgent' },
      { title: 'normal, blocked' },
      { title: 'low', priority: 'low' },
      { title: 'urgent but verified', priority: 'urgent', assignee: 'w' },
    ]);
    b.work('c-7');
    b.review('c-7', 'verifier-1', 'approve');
    b.update({ cardId: 'c-4', status: 'cancelled' });
    b.update({ cardId: 'c-5', status: 'blocked', blockReason: 'awaiting_input' });
    expect(byUrgency(b.board).map((c) => c.id)).toEqual(['c-3', 'c-2', 'c-5', 'c-1', 'c-6', 'c-7', 'c-4']);
  });

  it('the header counts cards by status, most urgent status first', () => {
    const b = variedBoard();
    const text = renderBoardText(b.board);
    expect(text.split('\n')).toEqual([
      'Board board-1 "Check the router fleet" open, v8: 4 cards (1 blocked, 1 ready, 2 todo)',
      'c-1 blocked(external_dependency)!! @w Take the inventory ev 1/3',
      'c-2 todo! @w Fix the routers ⟵c-1 due 2025-03-05T17:30',
      'c-4 ready @v Ship it ev 2',
      'c-3 todo~ Email owners ⟵c-1,c-2',
    ]);
  });

  it('shortens titles on longer boards so more cards fit', () => {
    const title = 'Check router firmware against the vendor advisory list for the site';
    const titleOf = (cards: number) => {
      const b = new BoardDriver();
      b.create();
      b.add(Array.from({ length: cards }, () => ({ title })));
      return renderBoardText(b.board, 100_000).split('\n')[1]!.slice('c-1 ready '.length);
    };
    expect(titleOf(25)).toBe(`${title.slice(0, 47)}…`);
    expect(titleOf(26)).toBe(`${title.slice(0, 35)}…`);
    expect(titleOf(60)).toBe(`${title.slice(0, 35)}…`);
    expect(titleOf(61)).toBe(`${title.slice(0, 23)}…`);
  });

  it('stops at its character budget and sums up the cards left out by status', () => {
    const b = new BoardDriver();
    b.create();
    b.add(Array.from({ length: 10 }, (_, i) => ({ title: `Card number ${i + 1}` })));
    b.update({ cardId: 'c-10', status: 'blocked', blockReason: 'external_dependency' });
    const full = renderBoardText(b.board);
    expect(full.split('\n')).toHaveLength(11);
    const header = full.split('\n')[0]!;
    const line = (id: string) => full.split('\n').find((l) => l.startsWith(`${id} `))!;
    // Room for the header and exactly two card lines, with the 160 characters kept for the summary.
    const budget = header.length + 1 + line('c-10').length + 1 + line('c-1').length + 160;
    const text = renderBoardText(b.board, budget);
    expect(text.split('\n')).toEqual([header, line('c-10'), line('c-1'), '+8 more (8 ready): page through them with board.show offset/limit']);
    expect(renderBoardText(b.board, budget - 1).split('\n').slice(1)).toEqual([line('c-10'), '+9 more (9 ready): page through them with board.show offset/limit']);
    expect(renderBoardText(b.board, header.length + 160).split('\n').at(-1)).toBe('+10 more (1 blocked, 9 ready): page through them with board.show offset/limit');
  });

  it('never passes its budget, even when the header alone does', () => {
    const b = new BoardDriver('b'.repeat(100));
    b.create();
    b.add([{ title: 'A' }]);
    const text = renderBoardText(b.board, 50);
    expect(text).toBe(`Board ${'b'.repeat(43)}…`);
    // A text exactly as long as the budget is not cut.
    const header = `Board ${'b'.repeat(59)}… "Check the router fleet" open, v2: 1 cards (1 ready)`;
    const exact = `${header}\n+1 more (1 ready): page through them with board.show offset/limit`;
    expect(renderBoardText(b.board, exact.length)).toBe(exact);
    expect(renderBoardText(b.board).split('\n')[0]).toBe(`Board ${'b'.repeat(59)}… "Check the router fleet" open, v2: 1 cards (1 ready)`);
  });
});
