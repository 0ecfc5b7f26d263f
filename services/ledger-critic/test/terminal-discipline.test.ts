import { CRITIQUE_DECISIONS, type CritiqueDecision } from '@vouch/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { combineVerdicts, planLlmCritic, stricterDecision } from '../src/domain/combine-verdicts.js';
import { parseLlmVerdict } from '../src/domain/llm-verdict.js';
import type { CritiqueVerdict } from '../src/domain/rule-critic.js';
import { statusAfterCritique } from '../src/domain/terminal-status.js';
import { LedgerDriver, failed, llmSays, ok } from './drive-ledger.js';
import { TASK_DOMAINS } from '@vouch/testing';

const GOAL = 'Back up the orders database and confirm the dump restores';
const SUMMARY = 'Dumped orders-db to orders-2025-03-01.sql.gz (2.3 GB). Restored it into orders-restore-test and verified 48,210 rows.';

describe('request_changes blocks completion', () => {
  it('keeps the run open and names the specific evidence missing', () => {
    const run = new LedgerDriver('backup-1');
    run.open(GOAL);
    run.record(ok('tool_result', 'pg_dump', 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB'));
    const outcome = run.propose({ summary: SUMMARY });
    expect(outcome).toMatchObject({ decision: 'request_changes', status: 'request_changes', completed: false, cycle: 1 });
    expect(outcome.missingEvidence.map((m) => [m.claimText, m.features])).toEqual([['Restored it into orders-restore-test', ['orders-restore-test']], ['verified 48,210 rows', ['48,210']]]);
    expect(outcome.missingEvidence[0]?.need).toContain('mentioning orders-restore-test');
    expect(run.ledger).toMatchObject({ status: 'request_changes', completed: false });
  });

  it('completes once the missing evidence is recorded and the attempt is reviewed again', () => {
    const run = new LedgerDriver('backup-1');
    run.open(GOAL);
    run.record(ok('tool_result', 'pg_dump', 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB'));
    run.propose({ summary: SUMMARY });
    run.record(ok('tool_result', 'psql', 'restored orders-2025-03-01.sql.gz into orders-restore-test: 48210 rows in orders'));
    const outcome = run.propose({ summary: SUMMARY });
    expect(outcome).toMatchObject({ decision: 'approve', status: 'approved', completed: true, cycle: 2 });
  });

  it('returns the recorded outcome to a retried job and appends nothing', () => {
    const run = new LedgerDriver('backup-1');
    run.open(GOAL);
    const first = run.propose({ summary: SUMMARY, proposalId: 'job-77' });
    const version = run.ledger.version;
    const again = run.propose({ summary: SUMMARY, proposalId: 'job-77' });
    expect(again).toStrictEqual({ ...first, alreadyReviewed: true });
    expect(run.ledger.version).toBe(version);
  });
});

describe('blocked critic yields incomplete_verification', () => {
  it('when verification is blocked by rule', () => {
    const run = new LedgerDriver('backup-2');
    run.open(GOAL);
    run.record(failed('tool_result', 'pg_dump', 'orders-db: permission denied for table orders'));
    const outcome = run.propose({ summary: 'Dumped orders-db to orders.sql.' });
    expect(outcome).toMatchObject({ decision: 'blocked', status: 'incomplete_verification', completed: false });
    expect(outcome.critics.llm).toMatchObject({ ran: false });
  });

  it('when the LLM critic blocks', () => {
    const run = new LedgerDriver('backup-3');
    run.open(GOAL);
    run.record(ok('tool_result', 'pg_dump', 'orders-db dumped to orders.sql'));
    const outcome = run.propose({ summary: 'Dumped orders-db to orders.sql.', llm: llmSays('blocked', ['the restore host is unreachable from this run']) });
    expect(outcome).toMatchObject({ decision: 'blocked', status: 'incomplete_verification', completed: false });
    expect(outcome.critics).toMatchObject({ rule: { decision: 'approve' }, llm: { ran: true, decision: 'blocked' } });
    expect(() => run.record(ok('tool_result', 'psql', 'restore ok'))).toThrow(/ended as incomplete_verification/);
  });
});

describe('cycle exhaustion yields incomplete_verification', () => {
  it('after the default budget of three reviews, never completed', () => {
    const run = new LedgerDriver('backup-4');
    run.open(GOAL);
    const outcomes = [1, 2, 3].map(() => run.propose({ summary: SUMMARY }));
    expect(outcomes.map((o) => [o.cycle, o.decision, o.status, o.completed])).toEqual([
      [1, 'request_changes', 'request_changes', false],
      [2, 'request_changes', 'request_changes', false],
      [3, 'request_changes', 'incomplete_verification', false],
    ]);
    expect(() => run.propose({ summary: SUMMARY })).toThrow(/takes no more completion attempts/);
  });

  it('honours a configured budget', () => {
    const run = new LedgerDriver('backup-5');
    run.open(GOAL, 'full', 1);
    expect(run.propose({ summary: SUMMARY })).toMatchObject({ status: 'incomplete_verification', cycleBudget: 1 });
  });

  it.each([
    ['approve', 1, 3, 'approved'],
    ['approve', 3, 3, 'approved'],
    ['request_changes', 2, 3, 'request_changes'],
    ['request_changes', 3, 3, 'incomplete_verification'],
    ['blocked', 1, 3, 'incomplete_verification'],
  ] as const)('%s in review %i of %i → %s', (decision, cycle, budget, status) => {
    expect(statusAfterCritique(decision, cycle, budget)).toMatchObject({ status, completed: status === 'approved' });
  });
});

describe('the LLM critic cannot approve past the rule floor', () => {
  it('in a run: an unsupported claim stays unapproved when the model approves', () => {
    const run = new LedgerDriver('backup-6');
    run.open(GOAL);
    const outcome = run.propose({ summary: SUMMARY, llm: llmSays('approve') });
    expect(outcome).toMatchObject({ decision: 'request_changes', completed: false, critics: { rule: { decision: 'request_changes' }, llm: { ran: true, decision: 'approve' } } });
    expect(outcome.reasons.at(-1)).toBe('the LLM critic would approve, but the rule floor (request_changes) holds');
  });

  it('for every pair of verdicts (property)', () => {
    const verdict = (decision: CritiqueDecision): CritiqueVerdict => ({ decision, reasons: [decision], missingEvidence: [] });
    fc.assert(
      fc.property(fc.constantFrom(...CRITIQUE_DECISIONS), fc.option(fc.constantFrom(...CRITIQUE_DECISIONS), { nil: undefined }), (rule, llm) => {
        const combined = combineVerdicts(verdict(rule), llm === undefined ? undefined : verdict(llm));
        expect(combined.floor).toBe(rule);
        expect(combined.decision).toBe(llm === undefined ? rule : stricterDecision(rule, llm));
        if (rule !== 'approve') expect(combined.decision).not.toBe('approve');
        if (rule === 'blocked') expect(combined.decision).toBe('blocked');
      }),
    );
  });

  it('lets a model that answers badly change nothing', () => {
    expect(parseLlmVerdict('{"decision":"approve"')).toMatchObject({ ok: false });
    expect(parseLlmVerdict('{"decision":"ship it","reasons":[],"missingEvidence":[]}')).toMatchObject({ ok: false });
    expect(parseLlmVerdict('{"decision":"request_changes","reasons":["r"],"missingEvidence":[{"need":"a log"}]}')).toMatchObject({ ok: true });
    const run = new LedgerDriver('backup-7');
    run.open(GOAL);
    run.record(ok('tool_result', 'pg_dump', 'orders-db dumped to orders.sql'));
    const outcome = run.propose({ summary: 'Dumped orders-db to orders.sql.', llm: () => ({ ran: true, model: 'm', error: 'not JSON' }) });
    expect(outcome).toMatchObject({ decision: 'approve', critics: { llm: { ran: true, note: 'its answer was not used: not JSON' } } });
  });

  it('runs only when configured, on a full policy, below a blocked floor', () => {
    expect(planLlmCritic('full', 'approve', true)).toEqual({ run: true });
    expect(planLlmCritic('full', 'request_changes', false)).toMatchObject({ run: false });
    expect(planLlmCritic('fast', 'approve', true)).toMatchObject({ run: false });
    expect(planLlmCritic('full', 'blocked', true)).toMatchObject({ run: false });
  });
});

describe('public fast simple task still reaches completion', () => {
  it('approves a simple answer with no evidence under the fast policy', () => {
    const run = new LedgerDriver('tg-chat-991');
    run.open('What is the capital of Australia?', 'fast');
    const outcome = run.propose({ summary: 'Answered the question.', visibleAnswer: 'The capital of Australia is Canberra.' });
    expect(outcome).toMatchObject({ decision: 'approve', status: 'approved', completed: true, critics: { llm: { ran: false } } });
  });

  it('still requires evidence for a claim that something was done, even under fast', () => {
    const run = new LedgerDriver('tg-chat-992');
    run.open('Send the agenda to the team', 'fast');
    expect(run.propose({ summary: 'Sent agenda.pdf to the team channel.' })).toMatchObject({ decision: 'request_changes', completed: false });
  });

  it('and the same simple answer needs evidence under the full policy', () => {
    const run = new LedgerDriver('tg-chat-993');
    run.open('What is the capital of Australia?', 'full');
    expect(run.propose({ summary: 'The capital of Australia is Canberra.' })).toMatchObject({ decision: 'request_changes', completed: false });
  });

  it.each(TASK_DOMAINS.map((d) => [d.name, d] as const))('a fully evidenced %s task is approved under either policy', (_name, domain) => {
    for (const policy of ['full', 'fast'] as const) {
      const run = new LedgerDriver(`${policy}-run`);
      run.open(domain.goal, policy);
      run.record(...domain.evidence);
      expect(run.propose({ summary: domain.summary }), policy).toMatchObject({ decision: 'approve', completed: true });
    }
  });
});
