import { BadInputError, ConflictError, NotFoundError } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { addCards, attachEvidence, claimCard, createBoard, expireClaim, planDispatch, requireClaim, reviewCard, type CreateBoardCommand } from '../src/domain/board-commands.js';
import { BoardDriver, thrown } from './drive-board.js';

// Behaviour the board commands promise and board-domain.test.ts did not pin down: found by
// mutation testing (npm run test:mutation), each case with the exact answer a caller gets.

function twoCardBoard() {
  const b = new BoardDriver();
  b.create();
  b.add([
    { key: 'list', title: 'List the routers and their firmware', assignee: 'worker-1' },
    { key: 'report', title: 'Summarise outdated firmware', assignee: 'worker-2', dependsOn: ['list'] },
  ]);
  return b;
}

const AT = '2025-03-01T12:00:00.000Z';

describe('board.create', () => {
  const cmd: CreateBoardCommand = {
    boardId: 'board-1',
    title: 'Check the router fleet',
    goal: 'Find routers on old firmware',
    scope: { kind: 'run', ref: 'run-1' },
    owner: 'planner',
    policy: { allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 60 },
    at: AT,
  };

  it('creates a board once; the same call again returns it unchanged, with no event', () => {
    const first = createBoard(undefined, cmd);
    expect(first.alreadyCreated).toBe(false);
    expect(first.events.map((e) => e.type)).toEqual(['board_created']);
    const again = createBoard(first.state, { ...cmd, goal: 'another goal is not part of the identity', at: '2025-03-02T00:00:00.000Z' });
    expect(again).toEqual({ events: [], state: first.state, alreadyCreated: true });
    expect(again.state).toBe(first.state);
  });

  it.each([
    ['title', { title: 'Another title' }],
    ['owner', { owner: 'someone-else' }],
    ['scope kind', { scope: { kind: 'task', ref: 'run-1' } }],
    ['scope ref', { scope: { kind: 'run', ref: 'run-2' } }],
  ] as const)('refuses the same board id with another %s: a 409 naming the board and its version', (_what, change) => {
    const { state } = createBoard(undefined, cmd);
    const error = thrown(() => createBoard(state, { ...cmd, ...change } as CreateBoardCommand));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toMatch(/^board "board-1" already exists with another title, scope.*: choose another boardId, or read this one with board\.show$/);
    expect(error.details).toEqual({ boardId: 'board-1', version: 1 });
  });

  it('a command on a board that does not exist is a 404 that says to create it', () => {
    const error = thrown(() => addCards(undefined, 'no-such-board', { by: 'planner', cards: [], at: AT }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.httpStatus).toBe(404);
    expect(error.message).toBe('no board "no-such-board": create it with board.create first (board ids are per tenant)');
    expect(error.details).toEqual({ boardId: 'no-such-board' });
  });
});

describe('card ids that do not exist', () => {
  it('on a board with no cards, the 404 says to add cards, with no suggestions', () => {
    const b = new BoardDriver();
    b.create();
    const error = thrown(() => b.update({ cardId: 'c-1', title: 'x' }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe('board "board-1" has no card "c-1" (cardId): the board has no cards yet: add them with board.addCards List the cards with board.show.');
    expect(error.details).toEqual({ boardId: 'board-1', field: 'cardId', unknownCardIds: ['c-1'], suggestions: [] });
  });

  it('a card is found by its client key as well as by its id', () => {
    const b = twoCardBoard();
    b.update({ cardId: 'report', title: 'Summarise the outdated firmware by site' });
    expect(b.card('c-2').title).toBe('Summarise the outdated firmware by site');
  });
});

describe('board.addCards', () => {
  it('returns each added card with its key (null without one), id and status: ready when every dependency is verified', () => {
    const b = twoCardBoard();
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'approve');
    const { added, events } = b.add([
      { title: 'Email the owners', dependsOn: ['list'] },
      { key: 'fix', title: 'Upgrade the routers', dependsOn: ['c-1', 'report'] },
    ]);
    expect(added).toEqual([
      { key: null, id: 'c-3', status: 'ready' },
      { key: 'fix', id: 'c-4', status: 'todo' },
    ]);
    expect(events.map((e) => (e.type === 'card_added' ? [e.card.id, e.card.status, e.card.dependsOn] : e.type))).toEqual([
      ['c-3', 'ready', ['c-1']],
      ['c-4', 'todo', ['c-1', 'c-2']],
    ]);
  });

  it('takes up to 1,000 cards on a board and refuses a batch that would pass it, saying how many more fit', () => {
    const b = new BoardDriver();
    b.create();
    b.add(Array.from({ length: 999 }, (_, i) => ({ title: `card ${i + 1}` })));
    const before = b.board;
    const error = thrown(() => b.add([{ title: 'one' }, { title: 'two' }]));
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.message).toBe('board "board-1" holds 999 cards and takes at most 1000: split the work across boards, or cancel cards you no longer need');
    expect(error.fields).toEqual([{ path: 'cards', message: 'at most 1 more cards fit' }]);
    expect(b.board).toBe(before);
    expect(b.add([{ title: 'the last one' }]).added).toEqual([{ key: null, id: 'c-1000', status: 'ready' }]);
  });

  it('refuses a key used twice in one call, or one that already names a card, listing every problem', () => {
    const b = twoCardBoard();
    const error = thrown(() =>
      b.add([
        { key: 'a', title: 'A' },
        { key: 'a', title: 'A again' },
        { key: 'list', title: 'List again' },
      ]),
    );
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.fields).toEqual([
      { path: 'cards.1.key', message: 'key "a" is used twice in this call: give each card its own key' },
      { path: 'cards.2.key', message: 'key "list" already names card c-1 on this board: use another key, or depend on that card' },
    ]);
    expect(error.message).toBe(
      'board.addCards refused: cards.1.key: key "a" is used twice in this call: give each card its own key; cards.2.key: key "list" already names card c-1 on this board: use another key, or depend on that card',
    );
    expect(error.details).toEqual({ boardId: 'board-1' });
  });

  it('an unknown dependency on an empty board says to name a key or a card, with no suggestion', () => {
    const b = new BoardDriver();
    b.create();
    const error = thrown(() => b.add([{ title: 'X', dependsOn: ['nothing'] }]));
    expect(error.fields).toEqual([{ path: 'cards.0.dependsOn.0', message: 'no card "nothing" in this call or on the board: name a key of this call or a card on the board' }]);
    expect(error.details).toEqual({ boardId: 'board-1', unknownCardIds: ['nothing'], suggestions: { nothing: [] } });
  });

  it('a split of an unknown card names the closest ids, and changes nothing', () => {
    const b = twoCardBoard();
    const before = b.board;
    const error = thrown(() => b.add([{ title: 'Rack A' }], { splitFrom: 'c-9' }));
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.fields).toEqual([{ path: 'splitFrom', message: 'no card "c-9" on the board: did you mean c-2, c-1, list?' }]);
    expect(error.details).toEqual({ boardId: 'board-1', unknownCardIds: ['c-9'], suggestions: { 'c-9': ['c-2', 'c-1', 'list'] } });
    expect(b.board).toBe(before);
    const empty = new BoardDriver();
    empty.create();
    expect(thrown(() => empty.add([{ title: 'Rack A' }], { splitFrom: 'c-1' })).fields).toEqual([{ path: 'splitFrom', message: 'no card "c-1" on the board' }]);
  });

  it('a finished card cannot be split', () => {
    const b = twoCardBoard();
    b.update({ cardId: 'c-1', status: 'cancelled' });
    const error = thrown(() => b.add([{ title: 'Rack A' }], { splitFrom: 'c-1' }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe('card c-1 is cancelled and cannot go to cancelled by board.addCards with splitFrom: from cancelled it can go to cancelled is final: nothing leaves it');
  });

  it('a split rewires only open dependents, keeps their other dependencies, and says why', () => {
    const b = twoCardBoard();
    b.add([
      { key: 'other', title: 'Other input' },
      { key: 'done-later', title: 'Cancelled dependent', dependsOn: ['list'] },
      { key: 'both', title: 'Needs both', dependsOn: ['list', 'other'] },
    ]);
    b.update({ cardId: 'done-later', status: 'cancelled' });
    const { events } = b.add([{ title: 'Rack A' }, { title: 'Rack B' }], { splitFrom: 'list' });
    expect(events.slice(2).map((e) => (e.type === 'card_updated' ? [e.cardId, e.changes.dependsOn, e.reason] : [e.type, 'reason' in e ? e.reason : null]))).toEqual([
      ['card_transitioned', 'split into c-6, c-7'],
      ['c-2', ['c-6', 'c-7'], 'c-1 was split into c-6, c-7'],
      ['c-5', ['c-6', 'c-7', 'c-3'], 'c-1 was split into c-6, c-7'],
    ]);
    expect(b.card('c-4').dependsOn).toEqual(['c-1']);
  });

  it('a split whose replacement waits on the split card\'s dependent is a cycle, labelled by key where there is one', () => {
    const b = twoCardBoard();
    const error = thrown(() => b.add([{ title: 'Rack A', dependsOn: ['report'] }], { splitFrom: 'list' }));
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.message).toBe('these dependencies make a cycle: c-2 → c-3 → c-2; a card on a cycle could never become ready. Remove one of the dependencies.');
    expect(error.fields).toEqual([{ path: 'cards.0.dependsOn', message: 'cycle c-2 → c-3 → c-2' }]);
    // With a key, the new card is named by it too.
    expect(thrown(() => b.add([{ key: 'rack-a', title: 'Rack A', dependsOn: ['report'] }], { splitFrom: 'list' })).message).toMatch(/^these dependencies make a cycle: c-2 → c-3 \(rack-a\) → c-2;/);
  });
});

describe('board.updateCard', () => {
  it('records only the fields that change, and nothing at all when none does', () => {
    const b = twoCardBoard();
    const card = b.card('c-1');
    const same = b.update({ cardId: 'c-1', title: card.title, description: card.description, assignee: card.assignee, priority: card.priority });
    expect(same.events).toEqual([]);
    const { events } = b.update({ cardId: 'c-1', title: 'List every router', description: 'from the inventory', priority: 'high', deadline: '2025-03-05T00:00:00.000Z', reason: 'tighter scope' });
    expect(events).toEqual([
      {
        type: 'card_updated',
        seq: 4,
        at: expect.any(String),
        cardId: 'c-1',
        changes: { title: 'List every router', description: 'from the inventory', priority: 'high', deadline: '2025-03-05T00:00:00.000Z' },
        by: 'planner',
        reason: 'tighter scope',
      },
    ]);
    expect(b.card('c-1')).toMatchObject({ title: 'List every router', description: 'from the inventory', priority: 'high', deadline: '2025-03-05T00:00:00.000Z' });
    expect(b.update({ cardId: 'c-1', deadline: null }).events.map((e) => e.type === 'card_updated' && e.changes)).toEqual([{ deadline: null }]);
    expect(b.update({ cardId: 'c-1', deadline: null }).events).toEqual([]);
  });

  it('reassigning a ready card changes only the assignee, recorded as a decision', () => {
    const b = twoCardBoard();
    const { events } = b.update({ cardId: 'c-1', assignee: 'worker-5' });
    expect(events.map((e) => e.type)).toEqual(['card_updated']);
    expect(b.card('c-1')).toMatchObject({ status: 'ready', assignee: 'worker-5' });
    expect(b.board.decisions.map((d) => [d.kind, d.cardId, d.reason])).toEqual([['reassigned', 'c-1', 'assignee worker-1 → worker-5']]);
  });

  it.each(['dispatched', 'running'] as const)('reassigning a %s card takes it back from its worker: it is ready for the new assignee', (status) => {
    const b = twoCardBoard();
    b.dispatch();
    if (status === 'running') b.claim('c-1');
    expect(b.card('c-1').status).toBe(status);
    const { events } = b.update({ cardId: 'c-1', assignee: 'worker-5' });
    expect(events.map((e) => (e.type === 'card_transitioned' ? [e.type, e.from, e.to, e.trigger] : [e.type]))).toEqual([['card_updated'], ['card_transitioned', status, 'ready', 'reassign']]);
    expect(b.card('c-1')).toMatchObject({ status: 'ready', assignee: 'worker-5', claim: null });
  });

  it('a finished card takes no more field changes: a 409 that says to add a new card', () => {
    const b = twoCardBoard();
    b.update({ cardId: 'c-2', status: 'cancelled' });
    const error = thrown(() => b.update({ cardId: 'c-2', title: 'Revive it' }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe('card c-2 is cancelled and takes no more changes: add a new card with board.addCards for further work');
    expect(error.details).toEqual({ cardId: 'c-2', status: 'cancelled', allowed: [] });
    // The same values are no change, and so no error.
    expect(b.update({ cardId: 'c-2', title: b.card('c-2').title }).events).toEqual([]);
  });

  it('moves a card only to blocked, cancelled, ready or todo; any other status is a 409 listing those', () => {
    const b = twoCardBoard();
    const error = thrown(() => b.update({ cardId: 'c-1', status: 'running' }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.details).toEqual({ cardId: 'c-1', status: 'ready', requested: 'running', allowed: ['blocked', 'cancelled', 'ready', 'todo'] });
  });

  it('blocks with the reason given, and unblocks a card without dependencies to ready, whichever of ready or todo was asked', () => {
    const b = twoCardBoard();
    const { events } = b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    expect(events).toMatchObject([{ type: 'card_transitioned', from: 'ready', to: 'blocked', trigger: 'block', blockReason: 'external_dependency' }]);
    b.update({ cardId: 'c-1', status: 'ready' });
    expect(b.card('c-1')).toMatchObject({ status: 'ready', blockReason: null });
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'external_dependency' });
    const unblocked = b.update({ cardId: 'c-1', status: 'todo' });
    expect(unblocked.events).toMatchObject([{ type: 'card_transitioned', from: 'blocked', to: 'ready', trigger: 'unblock', blockReason: null }]);
  });

  it('a blocked card unblocked to ready while it waits is a 409 offering todo or cancelled', () => {
    const b = twoCardBoard();
    b.update({ cardId: 'c-2', status: 'blocked', blockReason: 'awaiting_input' });
    const error = thrown(() => b.update({ cardId: 'c-2', status: 'ready' }));
    expect(error.details).toEqual({ cardId: 'c-2', status: 'blocked', requested: 'ready', allowed: ['todo', 'cancelled'] });
  });

  it('a blocked card whose dependencies are verified unblocks to ready, whichever of ready or todo was asked', () => {
    const b = twoCardBoard();
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'approve');
    b.update({ cardId: 'c-2', status: 'blocked', blockReason: 'awaiting_input' });
    b.update({ cardId: 'c-2', status: 'ready' });
    expect(b.card('c-2').status).toBe('ready');
    b.update({ cardId: 'c-2', status: 'blocked', blockReason: 'awaiting_input' });
    b.update({ cardId: 'c-2', status: 'todo' });
    expect(b.card('c-2').status).toBe('ready');
  });

  it('a field change on a dispatched card keeps it with its worker', () => {
    const b = twoCardBoard();
    b.dispatch();
    const { events } = b.update({ cardId: 'c-1', title: 'List every router' });
    expect(events.map((e) => e.type)).toEqual(['card_updated']);
    expect(b.card('c-1').status).toBe('dispatched');
  });

  it('a waiting todo card cannot be "unblocked": the 409 names the transition it asked for', () => {
    const b = twoCardBoard();
    const error = thrown(() => b.update({ cardId: 'c-2', status: 'ready' }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toMatch(/^card c-2 is todo and cannot go to ready by board\.updateCard with status ready or todo: from todo it can go to ready \(automatic once every dependency is verified\)/);
  });
});

describe('evidence', () => {
  it('numbers evidence across the board, and drops repeated requirement ids in covers', () => {
    const b = new BoardDriver();
    b.create();
    b.add([
      { title: 'A', evidenceRequirements: ['the inventory'] },
      { title: 'B' },
    ]);
    expect(b.attach('c-1', [{ kind: 'file', summary: 'inventory.csv', covers: ['r1', 'r1'] }]).attached).toEqual(['e-1']);
    expect(b.attach('c-2', [{ kind: 'message', summary: 'first' }, { kind: 'message', summary: 'second' }]).attached).toEqual(['e-2', 'e-3']);
    expect(b.card('c-1').evidence).toEqual([{ id: 'e-1', kind: 'file', summary: 'inventory.csv', covers: ['r1'], attachedBy: 'worker-1', at: expect.any(String) }]);
    expect(b.card('c-2').evidence.map((e) => [e.id, e.summary, e.covers])).toEqual([
      ['e-2', 'first', []],
      ['e-3', 'second', []],
    ]);
  });

  it('refuses covers that name a requirement the card does not have, saying which it has', () => {
    const b = new BoardDriver();
    b.create();
    b.add([
      { title: 'A', evidenceRequirements: ['the inventory', 'a checksum'] },
      { title: 'B' },
    ]);
    const error = thrown(() => b.attach('c-1', [{ kind: 'file', summary: 'inventory.csv', covers: ['r1', 'r9'] }]));
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.fields).toEqual([{ path: 'items.0.covers.1', message: 'card c-1 has no requirement "r9": its requirements are r1, r2' }]);
    expect(error.message).toBe('evidence names requirements the card does not have: items.0.covers.1: card c-1 has no requirement "r9": its requirements are r1, r2');
    const both = thrown(() => b.attach('c-2', [{ kind: 'message', summary: 'x', covers: ['r2'] }, { kind: 'message', summary: 'y', covers: ['r1'] }]));
    expect(both.fields).toEqual([
      { path: 'items.0.covers.0', message: 'card c-2 has no evidence requirements: leave covers out' },
      { path: 'items.1.covers.0', message: 'card c-2 has no evidence requirements: leave covers out' },
    ]);
    expect(both.message).toBe(
      'evidence names requirements the card does not have: items.0.covers.0: card c-2 has no evidence requirements: leave covers out; items.1.covers.0: card c-2 has no evidence requirements: leave covers out',
    );
    expect(b.board.evidenceCount).toBe(0);
  });

  it('takes at most 200 items per card', () => {
    const b = new BoardDriver();
    b.create();
    b.add([{ title: 'A' }]);
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ kind: 'message' as const, summary: `note ${i + 1}` }));
    b.attach('c-1', items(150));
    const error = thrown(() => b.attach('c-1', items(51)));
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.message).toBe('card c-1 holds 150 evidence items and takes at most 200: attach a summary of the rest');
    expect(error.fields).toEqual([{ path: 'items', message: 'at most 50 more fit' }]);
    expect(b.attach('c-1', items(50)).attached.at(-1)).toBe('e-200');
  });

  it('a finished card takes no more evidence: verified says it is done, cancelled says it was cancelled', () => {
    const b = twoCardBoard();
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'approve');
    b.update({ cardId: 'c-2', status: 'cancelled' });
    const verified = thrown(() => b.attach('c-1', [{ kind: 'message', summary: 'late' }]));
    expect(verified).toBeInstanceOf(ConflictError);
    expect(verified.message).toBe('card c-1 is verified and takes no more evidence: it is done; add a new card with board.addCards for further work');
    expect(verified.details).toEqual({ cardId: 'c-1', status: 'verified' });
    expect(thrown(() => b.attach('c-2', [{ kind: 'message', summary: 'late' }])).message).toBe(
      'card c-2 is cancelled and takes no more evidence: it was cancelled; add a new card with board.addCards for further work',
    );
  });
});

describe('the dispatcher decision', () => {
  it('dispatches nothing when no card waits, and counts running cards against the assignee\'s capacity', () => {
    const b = twoCardBoard();
    b.add([{ title: 'More for worker-1', assignee: 'worker-1' }]);
    b.dispatch();
    b.claim('c-1');
    const busy = planDispatch(b.board, { epoch: 1, at: AT });
    expect(busy.dispatched).toEqual([]);
    expect(busy.events).toEqual([]);
    expect(busy.state).toBe(b.board);
    const none = new BoardDriver();
    none.create();
    none.add([{ title: 'A' }]);
    expect(planDispatch(none.board, { epoch: 1, at: AT })).toEqual({ events: [], state: none.board, dispatched: [] });
  });

  it('among cards of one priority, the longest waiting goes first, then board order', () => {
    const b = new BoardDriver();
    b.create({ maxInFlightPerAssignee: 5 });
    b.add([
      { title: 'A', assignee: 'w-1' },
      { title: 'B', assignee: 'w-2' },
      { title: 'C', assignee: 'w-3' },
    ]);
    b.update({ cardId: 'c-1', status: 'blocked', blockReason: 'awaiting_input' });
    b.update({ cardId: 'c-1', status: 'ready' });
    b.add([{ title: 'D', assignee: 'w-4' }]);
    expect(b.dispatch().dispatched.map((d) => [d.cardId, d.attempt, d.assignee, d.priority])).toEqual([
      ['c-2', 1, 'w-2', 'normal'],
      ['c-3', 1, 'w-3', 'normal'],
      ['c-1', 1, 'w-1', 'normal'],
      ['c-4', 1, 'w-4', 'normal'],
    ]);
  });
});

describe('claims', () => {
  it('a claim for another attempt, another agent or an undispatched card is a 409 naming what the card waits for', () => {
    const b = twoCardBoard();
    b.add([{ title: 'Nobody\'s' }]);
    b.dispatch();
    const claim = (cardId: string, attempt: number, by: string) => () => claimCard(b.board, 'board-1', { cardId, attempt, claimToken: 't', by, at: AT });
    const wrongAttempt = thrown(claim('c-1', 2, 'worker-1'));
    expect(wrongAttempt).toBeInstanceOf(ConflictError);
    expect(wrongAttempt.message).toBe('card c-1 attempt 2 is not waiting for worker-1 (it is dispatched, attempt 1, assigned to worker-1)');
    expect(wrongAttempt.details).toEqual({ cardId: 'c-1', status: 'dispatched', attempt: 1 });
    expect(thrown(claim('c-1', 1, 'worker-2')).message).toBe('card c-1 attempt 1 is not waiting for worker-2 (it is dispatched, attempt 1, assigned to worker-1)');
    expect(thrown(claim('c-3', 0, 'worker-1')).message).toBe('card c-3 attempt 0 is not waiting for worker-1 (it is ready, attempt 0, assigned to nobody)');
    expect(claim('c-1', 1, 'worker-1')().events).toMatchObject([{ type: 'card_claimed', cardId: 'c-1', attempt: 1, claimToken: 't', by: 'worker-1' }]);
  });

  it('a stale token is refused with where the card is now: held by a newer claim, or finished with', () => {
    const b = twoCardBoard();
    b.dispatch();
    const old = b.claim('c-1', 'tok-old');
    b.expire('c-1');
    b.dispatch();
    b.claim('c-1', 'tok-new');
    const held = thrown(() => b.submit('c-1', old, 'done', [{ kind: 'message', summary: 'all good' }]));
    expect(held).toBeInstanceOf(ConflictError);
    expect(held.message).toBe('this claimToken no longer holds card c-1 on board "board-1" (another claim holds it now): stop submitting it, and call board.claimCard for new work');
    expect(held.details).toEqual({ boardId: 'board-1', cardId: 'c-1', status: 'running', attempt: 2 });
    b.submit('c-1', 'tok-new', 'done', [{ kind: 'message', summary: 'all good' }]);
    expect(thrown(() => b.submit('c-1', 'tok-new', 'done again')).message).toBe(
      'this claimToken no longer holds card c-1 on board "board-1" (it is submitted now): stop submitting it, and call board.claimCard for new work',
    );
  });

  it('a dispatched card is not yet held by any token', () => {
    const b = twoCardBoard();
    b.dispatch();
    expect(thrown(() => b.submit('c-1', 'tok-guess', 'done', [{ kind: 'message', summary: 'x' }])).message).toMatch(/\(the claim expired or the card was reassigned, and it waits for its next dispatch\)/);
  });

  it('expiring a claim is a no-op once the card moved on, for an unknown card, or for another token', () => {
    const b = twoCardBoard();
    b.dispatch();
    b.claim('c-1', 'tok-1');
    for (const cmd of [
      { cardId: 'c-9', claimToken: 'tok-1' },
      { cardId: 'c-1', claimToken: 'tok-other' },
      { cardId: 'c-2', claimToken: 'tok-1' },
    ]) {
      const result = expireClaim(b.board, { ...cmd, at: AT });
      expect(result.events).toEqual([]);
      expect(result.state).toBe(b.board);
    }
    const { events } = b.expire('c-1');
    expect(events).toMatchObject([{ type: 'card_failed', cardId: 'c-1', attempt: 1, trigger: 'claim_expired', to: 'ready', by: 'dispatcher', summary: 'no heartbeat from worker-1 within the claim lease' }]);
  });
});

describe('submission and review', () => {
  it('a completion may rest on evidence attached before it; the submission then adds none', () => {
    const b = twoCardBoard();
    b.dispatch();
    const token = b.claim('c-1');
    b.attach('c-1', [{ kind: 'tool_result', ref: 'call-7', summary: '12 routers listed' }]);
    const { events } = b.submit('c-1', token, 'listed them');
    expect(events.map((e) => e.type)).toEqual(['card_submitted']);
    expect(b.card('c-1')).toMatchObject({ status: 'submitted', submission: 'listed them' });
  });

  it('a completion with as many new items as it already had is accepted', () => {
    const b = twoCardBoard();
    b.dispatch();
    const token = b.claim('c-1');
    b.attach('c-1', [{ kind: 'message', summary: 'started' }]);
    const { events } = b.submit('c-1', token, 'listed them', [{ kind: 'message', summary: 'finished' }]);
    expect(events.map((e) => e.type)).toEqual(['evidence_attached', 'card_submitted']);
  });

  it('evidence in a submission is checked under the evidence field', () => {
    const b = twoCardBoard();
    b.dispatch();
    const token = b.claim('c-1');
    const error = thrown(() => b.submit('c-1', token, 'done', [{ kind: 'message', summary: 'x', covers: ['r1'] }]));
    expect(error.fields).toEqual([{ path: 'evidence.0.covers.0', message: 'card c-1 has no evidence requirements: leave covers out' }]);
  });

  it('an approval the rule check does not bear out is a 409 naming what is missing', () => {
    const b = new BoardDriver();
    b.create();
    b.add([{ title: 'Dump the db', assignee: 'worker-1', evidenceRequirements: ['the sha256 checksum of the dump'] }]);
    b.dispatch();
    const token = b.claim('c-1');
    b.submit('c-1', token, 'dumped', [{ kind: 'message', summary: 'lunch was good' }]);
    const error = thrown(() => b.review('c-1', 'verifier-1', 'approve'));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toMatch(/^card c-1 cannot be verified: .*\. Request changes naming what is missing, or attach the evidence first$/);
    expect(error.details).toEqual({ cardId: 'c-1', status: 'submitted', missing: ['r1: the sha256 checksum of the dump'] });
  });

  it('changes may be requested whatever the rule check says, and an approval it refuses names every requirement missing', () => {
    const b = new BoardDriver();
    b.create();
    b.add([{ title: 'Dump the db', assignee: 'worker-1', evidenceRequirements: ['the sha256 checksum of the dump', 'the size of the dump file'] }]);
    b.dispatch();
    b.submit('c-1', b.claim('c-1'), 'dumped', [{ kind: 'message', summary: 'lunch was good' }]);
    expect(thrown(() => b.review('c-1', 'verifier-1', 'approve')).message).toMatch(/^card c-1 cannot be verified: .*requirement r1 .*; requirement r2 /);
    b.review('c-1', 'verifier-1', 'request_changes', ['the checksum']);
    expect(b.card('c-1')).toMatchObject({ status: 'changes_requested', lastReview: { decision: 'request_changes', missing: ['the checksum'] } });
  });

  it('a review by the built-in verifier keeps what the verifier did', () => {
    const b = twoCardBoard();
    b.work('c-1');
    const verifier = { rule: { decision: 'approve' as const, reasons: ['shown'] }, llm: { ran: false, note: 'not configured' } };
    const { state } = reviewCard(b.board, 'board-1', { cardId: 'c-1', reviewer: 'builtin-verifier', decision: 'approve', missing: [], notes: '', verifier, at: AT });
    expect(state.cards['c-1']!.lastReview).toMatchObject({ reviewer: 'builtin-verifier', decision: 'approve', verifier });
  });

  it('a stale claim answers by default that the holder should stop working on the card', () => {
    const b = twoCardBoard();
    b.dispatch();
    b.claim('c-1', 'tok-1');
    expect(requireClaim(b.board, 'board-1', 'c-1', 'tok-1').id).toBe('c-1');
    expect(thrown(() => requireClaim(b.board, 'board-1', 'c-1', 'tok-2')).message).toBe(
      'this claimToken no longer holds card c-1 on board "board-1" (another claim holds it now): stop working on it, and call board.claimCard for new work',
    );
  });

  it('an approval records no missing items; a request for changes keeps them', () => {
    const b = twoCardBoard();
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'request_changes', ['the firmware of each router']);
    expect(b.card('c-1').lastReview).toMatchObject({ decision: 'request_changes', missing: ['the firmware of each router'] });
    b.work('c-1');
    b.review('c-1', 'verifier-1', 'approve', ['ignored on approval']);
    expect(b.card('c-1').lastReview).toMatchObject({ decision: 'approve', missing: [] });
  });

  it('an approval readies only the todo dependents whose every dependency is now verified', () => {
    const b = twoCardBoard();
    b.add([
      { key: 'other', title: 'Other input', assignee: 'worker-3' },
      { key: 'both', title: 'Needs both', dependsOn: ['list', 'other'] },
      { key: 'held', title: 'Held back', dependsOn: ['list'] },
    ]);
    b.update({ cardId: 'held', status: 'blocked', blockReason: 'awaiting_input' });
    b.work('c-1');
    const { events } = b.review('c-1', 'verifier-1', 'approve');
    expect(events.map((e) => [e.type, 'cardId' in e ? e.cardId : null])).toEqual([
      ['card_reviewed', 'c-1'],
      ['card_transitioned', 'c-2'],
    ]);
    expect([b.card('c-4').status, b.card('c-5').status]).toEqual(['todo', 'blocked']);
  });
});

describe('a stored board', () => {
  it('attachEvidence on a board id that was never created is the same 404 as every command', () => {
    expect(thrown(() => attachEvidence(undefined, 'b-x', { cardId: 'c-1', by: 'w', items: [], at: AT })).message).toBe('no board "b-x": create it with board.create first (board ids are per tenant)');
  });
});
