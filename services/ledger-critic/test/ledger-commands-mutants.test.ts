import { BadInputError, ConflictError, NotFoundError, type CompletionClaim, type CritiqueRecord, type VouchError } from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { concludeCompletionReview, critiqueOutcome, draftCompletionReview, openLedger, recordEvidence, reviewInMemory, reviewStanding, type CompletionReview } from '../src/domain/ledger-commands.js';
import type { LedgerState } from '../src/domain/replay-ledger.js';
import { LedgerDriver, ok } from './drive-ledger.js';

// The ledger commands' answers that ledger-bad-input, ledger-replay and terminal-discipline did
// not pin down, found by mutation testing (npm run test:mutation).

const AT = '2025-03-01T12:00:00.000Z';

function thrown(fn: () => unknown): VouchError {
  try {
    fn();
  } catch (error) {
    return error as VouchError;
  }
  throw new Error('expected an error');
}

const open = (over: Partial<Parameters<typeof openLedger>[1]> = {}) => openLedger(undefined, { runId: 'run-1', goal: 'Rename the files', policy: 'full', cycleBudget: 3, at: AT, ...over });

describe('ledger.open', () => {
  it('opens once, keeping the board it reports to; the same call again returns it with no event', () => {
    const first = open({ boardId: 'board-7' });
    expect(first.alreadyOpened).toBe(false);
    expect(first.events).toEqual([{ type: 'ledger_opened', seq: 1, at: AT, runId: 'run-1', goal: 'Rename the files', policy: 'full', cycleBudget: 3, boardId: 'board-7' }]);
    expect(first.state.boardId).toBe('board-7');
    expect(openLedger(first.state, { runId: 'run-1', goal: 'Rename the files', policy: 'full', cycleBudget: 3, boardId: 'board-7', at: AT })).toEqual({ events: [], state: first.state, alreadyOpened: true });
    const plain = open();
    expect(plain.events[0]).not.toHaveProperty('boardId');
    expect(plain.state.boardId).toBeNull();
  });

  it.each([
    ['policy', { policy: 'fast' }],
    ['cycle budget', { cycleBudget: 4 }],
    ['board', { boardId: 'board-8' }],
  ] as const)('refuses the same run with another %s: a 409 with what the ledger has', (_what, change) => {
    const { state } = open();
    const error = thrown(() => openLedger(state, { runId: 'run-1', goal: 'Rename the files', policy: 'full', cycleBudget: 3, at: AT, ...change }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe('run "run-1" already has a ledger with a different goal, policy, cycle budget or board: open the new task under a new run id, or read this one with ledger.get');
    expect(error.details).toEqual({ runId: 'run-1', status: 'open', version: 1, policy: 'full', cycleBudget: 3 });
  });

  it('takes a cycle budget of 1 to 10 reviews', () => {
    for (const bad of [0, 11, 2.5]) {
      const error = thrown(() => open({ cycleBudget: bad }));
      expect(error).toBeInstanceOf(BadInputError);
      expect(error.message).toBe('cycleBudget must be a whole number from 1 to 10');
      expect(error.fields).toEqual([{ path: 'cycleBudget', message: `got ${bad}` }]);
    }
    expect(open({ cycleBudget: 10 }).state.cycleBudget).toBe(10);
    expect(open({ cycleBudget: 1 }).state.cycleBudget).toBe(1);
  });
});

describe('ledger.recordEvidence', () => {
  it('a run with no ledger is a 404 naming the run', () => {
    const error = thrown(() => recordEvidence(undefined, { runId: 'nope-1', items: [ok('tool_result', 'shell', 'x')], at: AT }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.details).toEqual({ runId: 'nope-1' });
  });

  it('refuses an empty batch', () => {
    const error = thrown(() => recordEvidence(open().state, { runId: 'run-1', items: [], at: AT }));
    expect(error).toBeInstanceOf(BadInputError);
    expect(error.message).toBe('items must hold at least one observation');
    expect(error.fields).toEqual([{ path: 'items', message: 'empty' }]);
  });

  it('a full ledger says how full, at which version', () => {
    const { state } = recordEvidence(open().state, { runId: 'run-1', items: [ok('tool_result', 'shell', 'x')], at: AT });
    const full: LedgerState = { ...state, evidence: Array.from({ length: 10_000 }, () => state.evidence[0]!) };
    const error = thrown(() => recordEvidence(full, { runId: 'run-1', items: [ok('tool_result', 'shell', 'y')], at: AT }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.details).toEqual({ runId: 'run-1', evidenceCount: 10_000, version: 2 });
  });

  it('numbers the batch after what the ledger holds, and keeps the features the handler read for it', () => {
    const first = recordEvidence(open().state, { runId: 'run-1', items: [ok('tool_result', 'shell', 'renamed a.txt')], at: AT });
    const features = [{ read: 'first' }, { read: 'second' }] as never[];
    const second = recordEvidence(first.state, { runId: 'run-1', items: [ok('tool_result', 'shell', 'renamed b.txt'), ok('tool_result', 'shell', 'renamed c.txt')], at: AT, features });
    expect(second.recorded).toEqual([
      { id: 'ev-2', seq: 2 },
      { id: 'ev-3', seq: 3 },
    ]);
    expect(second.observations).toEqual([
      { seq: 2, features: { read: 'first' } },
      { seq: 3, features: { read: 'second' } },
    ]);
    expect(() => recordEvidence(first.state, { runId: 'run-1', items: [ok('tool_result', 'shell', 'x'), ok('tool_result', 'shell', 'y')], at: AT, features: features.slice(0, 1) })).toThrow(
      'a batch of 2 items came with features of 1',
    );
  });
});

describe('a completion attempt', () => {
  const propose = { runId: 'run-1', proposalId: 'job-1', summary: 'Renamed a.txt to b.txt.', openItems: [{ text: 'Update the index', kind: 'todo' as const }], at: AT };

  it('keeps the visible answer only when it says something, and the open items as given', () => {
    const { state } = open();
    const start = draftCompletionReview(state, { ...propose, visibleAnswer: 'Done: b.txt is in place.' });
    expect(start.kind).toBe('draft');
    if (start.kind !== 'draft') return;
    expect(start.draft.proposal).toEqual({ proposalId: 'job-1', cycle: 1, summary: 'Renamed a.txt to b.txt.', visibleAnswer: 'Done: b.txt is in place.', openItems: [{ text: 'Update the index', kind: 'todo' }], proposedAt: AT });
    expect(start.draft.claims.map((c) => c.text)).toEqual(expect.arrayContaining(['Renamed a.txt to b.txt']));
    expect(start.draft.claims.some((c) => c.source === 'assistant_visible_text')).toBe(true);
    const blank = draftCompletionReview(state, { ...propose, visibleAnswer: '   ' });
    expect(blank.kind === 'draft' && blank.draft.proposal).not.toHaveProperty('visibleAnswer');
  });

  it('concludes at the latest of its proposal, its conclusion and the ledger\'s last change', () => {
    const run = new LedgerDriver();
    run.open('Rename the files');
    run.record(ok('tool_result', 'shell', 'renamed a.txt to b.txt'));
    const plan = reviewInMemory(run.ledger, { ...propose, at: '2025-03-01T10:00:05.000Z' }, { llmConfigured: false }, run.observations);
    if (plan.kind !== 'review') throw new Error('expected a review');
    const late = concludeCompletionReview(run.ledger, plan.review, { ran: false, note: 'rule only' }, '2025-03-01T10:09:00.000Z');
    expect(late.events.map((e) => e.at)).toEqual(['2025-03-01T10:09:00.000Z', '2025-03-01T10:09:00.000Z', '2025-03-01T10:09:00.000Z']);
    expect(late.outcome.alreadyReviewed).toBe(false);
    const early = concludeCompletionReview(run.ledger, plan.review, { ran: false, note: 'rule only' }, '2025-03-01T10:00:01.000Z');
    expect(early.events.map((e) => e.at)).toEqual(['2025-03-01T10:00:05.000Z', '2025-03-01T10:00:05.000Z', '2025-03-01T10:00:05.000Z']);
    const none = concludeCompletionReview(run.ledger, plan.review, { ran: false, note: 'rule only' });
    expect(none.events[0]!.at).toBe('2025-03-01T10:00:05.000Z');
  });

  it('a review planned on a newer ledger than the one it concludes on is superseded, with the version in the 409', () => {
    const run = new LedgerDriver();
    const opened = run.open('Rename the files');
    run.record(ok('tool_result', 'shell', 'renamed a.txt to b.txt'));
    const plan = reviewInMemory(run.ledger, propose, { llmConfigured: false }, run.observations);
    if (plan.kind !== 'review') throw new Error('expected a review');
    expect(reviewStanding(opened, plan.review)).toEqual({ kind: 'superseded' });
    const error = thrown(() => concludeCompletionReview(opened, plan.review, { ran: false, note: 'rule only' }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.details).toEqual({ runId: 'run-1', version: 1 });
  });

  it('records the LLM critic\'s claim judgements with its verdict', () => {
    const run = new LedgerDriver();
    run.open('Rename the files');
    run.record(ok('tool_result', 'shell', 'renamed a.txt to b.txt'));
    let claimId = '';
    run.propose({
      summary: 'Renamed a.txt to b.txt.',
      llm: (review: CompletionReview) => {
        claimId = review.claims[0]!.id;
        return { ran: true, model: 'test-critic', verdict: { decision: 'approve', reasons: ['fine'], missingEvidence: [], claims: [{ claimId, verdict: 'entails', evidenceId: 'ev-1', quote: 'renamed a.txt to b.txt' }] } };
      },
    });
    expect(run.ledger.critiques[0]!.critics.llm).toEqual({
      ran: true,
      model: 'test-critic',
      decision: 'approve',
      reasons: ['fine'],
      claims: [{ claimId, verdict: 'entails', evidenceId: 'ev-1', quote: 'renamed a.txt to b.txt', quoteFound: true }],
    });
  });
});

describe('a review\'s outcome', () => {
  const claim = (id: string, status: CompletionClaim['status'], requiresEvidence = true): CompletionClaim =>
    ({ id, text: id, source: 'derived', kind: 'action', materiality: 'medium', evidenceRequirement: 'x', requiresEvidence, features: [], evidenceIds: [], missingFeatures: [], status, statusReason: 'x', evidenceSpans: [] }) as CompletionClaim;

  function reviewed(): { state: LedgerState; first: CritiqueRecord; second: CritiqueRecord } {
    const run = new LedgerDriver();
    run.open('Rename the files', 'full', 3);
    run.propose({ summary: 'Renamed a.txt to b.txt.' });
    run.propose({ summary: 'Renamed a.txt to b.txt and c.txt to d.txt.' });
    const [first, second] = run.ledger.critiques as [CritiqueRecord, CritiqueRecord];
    return { state: run.ledger, first, second };
  }

  it('counts the claims of the latest attempt by status, among those that need evidence', () => {
    const { state, second } = reviewed();
    const claims = [claim('a', 'supported'), claim('b', 'unsupported'), claim('c', 'unsupported'), claim('d', 'contradicted'), claim('e', 'unverified'), claim('f', 'blocked'), claim('g', 'unsupported', false)];
    expect(critiqueOutcome({ ...state, proposedClaims: claims }, second, false).claims).toEqual({ total: 7, material: 6, supported: 1, unsupported: 2, contradicted: 1, unverified: 1, blocked: 1 });
  });

  it('for an earlier attempt, counts the claims its packet held', () => {
    const { state, first } = reviewed();
    const packets = [{ ...state.packets[0]!, claims: [claim('a', 'blocked'), claim('b', 'supported')] }, state.packets[1]!];
    const outcome = critiqueOutcome({ ...state, packets, proposedClaims: [] }, first, true);
    expect(outcome).toMatchObject({ cycle: 1, alreadyReviewed: true, claims: { total: 2, material: 2, supported: 1, blocked: 1, unsupported: 0 } });
  });
});
