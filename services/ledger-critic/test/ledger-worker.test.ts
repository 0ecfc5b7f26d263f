import type { CritiqueOutcome, CriticPacket, LedgerSnapshot } from '@vouch/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../src/ledger-store.js';
import { ok } from './drive-ledger.js';
import { JobFailed, LedgerJobs, startLedgerServiceUnderTest, type LedgerServiceUnderTest } from './ledger-test-env.js';

const GOAL = 'Back up the orders database and confirm the dump restores';
const SUMMARY = 'Dumped orders-db to orders-2025-03-01.sql.gz (2.3 GB). Restored it into orders-restore-test and verified 48,210 rows.';
const DUMP = ok('tool_result', 'pg_dump', 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB');
const RESTORE = ok('tool_result', 'psql', 'restored orders-2025-03-01.sql.gz into orders-restore-test: 48210 rows in orders');
const RUN = 'backup-run-1';

describe('ledger operations through a real BullMQ worker, without Ollama', () => {
  let svc: LedgerServiceUnderTest;
  let jobs: LedgerJobs;
  let firstReviewJob: string;

  beforeAll(async () => {
    svc = await startLedgerServiceUnderTest('ledger_worker', { LEDGER_CYCLE_BUDGET: '4' });
    jobs = new LedgerJobs(svc.prefix);
    await jobs.ready();
  });
  afterAll(async () => {
    await jobs?.close();
    await svc?.stop();
  });

  const failure = async (promise: Promise<unknown>): Promise<JobFailed> => {
    try {
      await promise;
    } catch (error) {
      if (error instanceof JobFailed) return error;
      throw error;
    }
    throw new Error('expected the job to fail');
  };

  it('opens a ledger, records evidence, and reviews a completion as a job that says the LLM critic did not run and why', async () => {
    const opened = await jobs.run<LedgerSnapshot & { alreadyOpened: boolean }>('ledger.open', 'acme', { runId: RUN, goal: GOAL });
    expect(opened).toMatchObject({ runId: RUN, goal: GOAL, policy: 'full', cycleBudget: 4, status: 'open', completed: false, version: 1, alreadyOpened: false });
    const recorded = await jobs.run('ledger.recordEvidence', 'acme', { runId: RUN, items: [DUMP] });
    expect(recorded).toEqual({ runId: RUN, status: 'open', version: 2, recorded: [{ id: 'ev-1', seq: 1 }], evidenceCount: 1 });

    const job = await jobs.add('ledger.proposeCompletion', 'acme', { runId: RUN, summary: SUMMARY });
    firstReviewJob = job.id!;
    const outcome = await jobs.wait<CritiqueOutcome>(job);
    expect(outcome).toMatchObject({ runId: RUN, cycle: 1, cycleBudget: 4, decision: 'request_changes', status: 'request_changes', completed: false, alreadyReviewed: false });
    expect(outcome.critics.llm).toEqual({ ran: false, note: 'no LLM critic configured (Ollama): the rule critic decided alone' });
    expect(outcome.missingEvidence.map((m) => m.claimText)).toEqual(['Restored it into orders-restore-test', 'verified 48,210 rows']);
    const events = await readEvents(svc.service.pool, { tenant: 'acme', runId: RUN });
    const proposed = events.find((e) => e.type === 'completion_proposed');
    // The proposal is identified by its job, so a re-run of the job finds it.
    expect(proposed && proposed.type === 'completion_proposed' ? proposed.proposal.proposalId : undefined).toBe(firstReviewJob);
  });

  it('puts evidence recorded after a critique under that critique in the next packet', async () => {
    await jobs.run('ledger.recordEvidence', 'acme', { runId: RUN, items: [RESTORE] });
    const outcome = await jobs.run<CritiqueOutcome>('ledger.proposeCompletion', 'acme', { runId: RUN, summary: SUMMARY });
    expect(outcome).toMatchObject({ cycle: 2, decision: 'approve', status: 'approved', completed: true });

    const latest = await jobs.run<{ cycle: number; packet: CriticPacket; prompt: string }>('ledger.packet', 'acme', { runId: RUN });
    expect(latest.cycle).toBe(2);
    expect(latest.packet.priorCritique).toMatchObject({ cycle: 1, decision: 'request_changes', noEvidenceSince: false, evidenceSinceOmitted: 0 });
    expect(latest.packet.priorCritique!.evidenceSince.map((e) => [e.id, e.summary])).toEqual([['ev-2', RESTORE.summary]]);
    expect(latest.packet.priorCritique!.objections.map((o) => [o.claimText, o.resolution, o.evidenceIds])).toEqual([
      ['Restored it into orders-restore-test', 'resolved_by_new_evidence', ['ev-2']],
      ['verified 48,210 rows', 'resolved_by_new_evidence', ['ev-2']],
    ]);
    expect(latest.prompt).toContain(`Evidence recorded since the prior critique (review 1):\n- ev-2`);
    const first = await jobs.run<{ cycle: number; packet: CriticPacket }>('ledger.packet', 'acme', { runId: RUN, cycle: 1 });
    expect(first.packet.priorCritique).toBeNull();

    const rendered = await jobs.run<{ status: string; completed: boolean; text: string }>('ledger.render', 'acme', { runId: RUN, form: 'admin' });
    expect(rendered).toMatchObject({ status: 'approved', completed: true });
    expect(rendered.text).toContain('Verified');
  });

  it('returns the recorded outcome when a critique job runs again, and appends nothing', async () => {
    const before = await readEvents(svc.service.pool, { tenant: 'acme', runId: RUN });
    const again = await svc.service.commands.proposeCompletion({ tenant: 'acme', jobId: firstReviewJob }, { runId: RUN, summary: SUMMARY, openItems: [] });
    expect(again).toMatchObject({ cycle: 1, decision: 'request_changes', alreadyReviewed: true });
    expect(await readEvents(svc.service.pool, { tenant: 'acme', runId: RUN })).toHaveLength(before.length);
  });

  it('fails bad requests at once, without retries, with a typed reason, and changes nothing', async () => {
    const before = await jobs.run<LedgerSnapshot>('ledger.get', 'acme', { runId: RUN });

    const unknown = await failure(jobs.run('ledger.recordEvidence', 'acme', { runId: 'no-such-run', items: [DUMP] }, { attempts: 3 }));
    expect(unknown.body).toMatchObject({ code: 'NOT_FOUND', message: 'no ledger for run "no-such-run": open one with ledger.open first' });
    expect(unknown.job.attemptsMade).toBe(1);

    const closed = await failure(jobs.run('ledger.recordEvidence', 'acme', { runId: RUN, items: [ok('tool_result', 'shell', 'late')] }));
    expect(closed.body.code).toBe('CONFLICT');
    expect(closed.body.message).toContain(`the ledger of run "${RUN}" was approved and takes no more evidence`);

    const wrongKind = await failure(jobs.run('ledger.recordEvidence', 'acme', { runId: RUN, items: [{ kind: 'screenshot', summary: 'x' }] }));
    expect(wrongKind.body).toMatchObject({ code: 'BAD_INPUT', fields: [{ path: 'input.items.0.kind' }] });

    expect(await jobs.run('ledger.get', 'acme', { runId: RUN })).toStrictEqual(before);
  });

  it("keeps each tenant's ledgers apart", async () => {
    const foreign = await failure(jobs.run('ledger.get', 'globex', { runId: RUN }));
    expect(foreign.body.code).toBe('NOT_FOUND');
    const theirs = await jobs.run<LedgerSnapshot & { alreadyOpened: boolean }>('ledger.open', 'globex', { runId: RUN, goal: 'Something else entirely', policy: 'fast', cycleBudget: 1 });
    expect(theirs).toMatchObject({ goal: 'Something else entirely', version: 1, alreadyOpened: false });
    expect(await jobs.run('ledger.get', 'acme', { runId: RUN })).toMatchObject({ goal: GOAL, status: 'approved' });
  });

  it('exposes the ledger metrics on the service /metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${svc.service.ops.port}/metrics`)).text();
    expect(text).toContain('vouch_ledger_critiques_total{decision="request_changes",service="ledger-critic"} 1');
    expect(text).toContain('vouch_ledger_critiques_total{decision="approve",service="ledger-critic"} 1');
    expect(text).toContain('vouch_ledger_terminal_status_total{status="approved",service="ledger-critic"} 1');
    expect(text).toContain('vouch_ledger_critique_duration_seconds_count{service="ledger-critic"} 2');
    expect(text).toContain('vouch_ledger_llm_critic_calls_total{outcome="skipped",service="ledger-critic"} 2');
    expect(text).toMatch(/vouch_ledger_claims_total\{status="supported",service="ledger-critic"\} [1-9]/);
  });
});
