import {
  BadInputError,
  ConflictError,
  LEDGER_LIMITS,
  NotFoundError,
  fieldIssuesFromZod,
  ledgerOpen,
  ledgerProposeCompletion,
  ledgerRecordEvidence,
  type VouchError,
} from '@vouch/contracts';
import { describe, expect, it } from 'vitest';
import { draftCompletionReview, openLedger, recordEvidence } from '../src/domain/ledger-commands.js';
import type { LedgerState } from '../src/domain/replay-ledger.js';
import { LedgerDriver, ok } from './drive-ledger.js';

const AT = '2025-03-01T12:00:00.000Z';

function thrown(fn: () => unknown): VouchError {
  try {
    fn();
  } catch (error) {
    return error as VouchError;
  }
  throw new Error('expected a typed error');
}

function snapshotOf(state: LedgerState): string {
  return JSON.stringify(state);
}

describe('bad input gets a clear 4xx and changes nothing', () => {
  it('an unknown run id is a 404 that says to open the ledger', () => {
    const error = thrown(() => recordEvidence(undefined, { runId: 'nope-1', items: [ok('tool_result', 'shell', 'x')], at: AT }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.httpStatus).toBe(404);
    expect(error.message).toBe('no ledger for run "nope-1": open one with ledger.open first');
    expect(thrown(() => draftCompletionReview(undefined, { runId: 'nope-1', proposalId: 'j', summary: 's', openItems: [], at: AT }))).toBeInstanceOf(NotFoundError);
  });

  it('evidence for a closed ledger is a 409 naming the status and the way out', () => {
    const run = new LedgerDriver('closed-1');
    run.open('Say hello', 'fast');
    run.propose({ summary: 'Hello there!' });
    expect(run.ledger.status).toBe('approved');
    const before = snapshotOf(run.ledger);
    const error = thrown(() => recordEvidence(run.ledger, { runId: 'closed-1', items: [ok('tool_result', 'shell', 'late')], at: AT }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.httpStatus).toBe(409);
    expect(error.message).toBe(
      'the ledger of run "closed-1" was approved and takes no more evidence. Read it with ledger.get or ledger.render; to keep working, open a new ledger under a new run id.',
    );
    expect(error.details).toMatchObject({ status: 'approved', version: run.ledger.version });
    expect(snapshotOf(run.ledger)).toBe(before);
  });

  it('reopening a run with another goal is a 409; with the same goal it returns the ledger', () => {
    const run = new LedgerDriver('open-1');
    const state = run.open('Count the words in essay.md');
    expect(openLedger(state, { runId: 'open-1', goal: 'Count the words in essay.md', policy: 'full', cycleBudget: 3, at: AT })).toMatchObject({ events: [], alreadyOpened: true });
    expect(thrown(() => openLedger(state, { runId: 'open-1', goal: 'Something else', policy: 'full', cycleBudget: 3, at: AT }))).toBeInstanceOf(ConflictError);
  });

  it('a batch that would pass the per-ledger evidence limit is refused whole', () => {
    const run = new LedgerDriver('full-1');
    run.open('Collect readings');
    const batch = Array.from({ length: LEDGER_LIMITS.evidencePerCall }, (_, i) => ok('runtime_observation', 'probe', `reading r-${i}: ${i} mV`));
    for (let i = 0; i < LEDGER_LIMITS.evidencePerLedger / LEDGER_LIMITS.evidencePerCall; i++) run.record(...batch);
    const before = snapshotOf(run.ledger);
    const error = thrown(() => run.record(ok('runtime_observation', 'probe', 'one more')));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toContain(`holds ${LEDGER_LIMITS.evidencePerLedger} of at most ${LEDGER_LIMITS.evidencePerLedger} evidence items`);
    expect(snapshotOf(run.ledger)).toBe(before);
  });

  describe('at the operation schemas (the gateway answers 400 with the field)', () => {
    const parse = (schema: { safeParse(v: unknown): { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } } }, value: unknown) => {
      const result = schema.safeParse(value);
      return result.success ? [] : fieldIssuesFromZod(result.error!.issues);
    };

    it('rejects an oversized summary, saying what to do', () => {
      const issues = parse(ledgerRecordEvidence.input, { runId: 'r-1', items: [{ kind: 'tool_result', summary: 'x'.repeat(LEDGER_LIMITS.summaryChars + 1) }] });
      expect(issues).toEqual([{ path: 'items.0.summary', message: 'summary is at most 4000 characters: keep a compact summary and put the full output behind rawRef' }]);
    });

    it('rejects a wrong evidence kind, listing the kinds', () => {
      const issues = parse(ledgerRecordEvidence.input, { runId: 'r-1', items: [{ kind: 'screenshot', summary: 'x' }] });
      expect(issues).toEqual([
        { path: 'items.0.kind', message: 'kind must be one of tool_result, file_change, delivery_result, runtime_observation, human_input, critic_feedback' },
      ]);
    });

    it('rejects too large a batch, unknown fields, a bad run id and a tenant in the body', () => {
      expect(parse(ledgerRecordEvidence.input, { runId: 'r-1', items: Array.from({ length: 501 }, () => ({ kind: 'tool_result', summary: 'x' })) })[0]).toEqual({
        path: 'items',
        message: 'at most 500 evidence items per call: send the rest in another ledger.recordEvidence call',
      });
      expect(parse(ledgerRecordEvidence.input, { runId: 'r-1', items: [{ kind: 'tool_result', summary: 'x', output: 'big' }] })[0]?.path).toBe('items.0.output');
      expect(parse(ledgerOpen.input, { runId: 'has space', goal: 'g' })[0]).toEqual({ path: 'runId', message: 'runId must be printable ASCII with no spaces (the id your agent run already uses)' });
      expect(parse(ledgerOpen.input, { runId: 'r-1', goal: 'g', tenant: 'other' })[0]?.path).toBe('tenant');
      expect(parse(ledgerProposeCompletion.input, { runId: 'r-1', summary: ' ' })[0]).toEqual({ path: 'summary', message: 'summary must say what was done: the task-complete summary' });
    });

    it('fills defaults for an accepted input', () => {
      expect(ledgerOpen.input.parse({ runId: 'r-1', goal: ' Count words ' })).toEqual({ runId: 'r-1', goal: 'Count words', policy: 'full' });
      expect(ledgerProposeCompletion.input.parse({ runId: 'r-1', summary: 'Did it.' })).toEqual({ runId: 'r-1', summary: 'Did it.', openItems: [] });
    });
  });

  it('a BadInputError is what the domain throws for an impossible budget', () => {
    expect(thrown(() => openLedger(undefined, { runId: 'b-1', goal: 'g', policy: 'full', cycleBudget: 0, at: AT }))).toBeInstanceOf(BadInputError);
  });
});
