import { fileURLToPath } from 'node:url';
import type { Job } from 'bullmq';
import type { CritiqueOutcome } from '@vouch/contracts';
import { TEST_DATABASE_URL, TEST_REDIS_URL, eventually, spawnTsProcess, startOllamaTestServer, useTestPrefix, useTestSchema, type OllamaTestServer, type TsProcess } from '@vouch/testing';
import { createPool, type Pool } from '@vouch/platform';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { replayLedger } from '../src/domain/replay-ledger.js';
import { loadLedger, readEvents, readObservationKeys } from '../src/ledger-store.js';
import { ok } from './drive-ledger.js';
import { LedgerJobs } from './ledger-test-env.js';

const SERVICE = fileURLToPath(new URL('./fixtures/ledger-critic-process.ts', import.meta.url));
const MODEL = 'qwen2.5:7b-instruct';

const GOAL = 'Back up the orders database and confirm the dump restores';
const SUMMARY = 'Dumped orders-db to orders-2025-03-01.sql.gz (2.3 GB). Restored it into orders-restore-test and verified 48,210 rows.';
const EVIDENCE = [
  ok('tool_result', 'pg_dump', 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB'),
  ok('tool_result', 'psql', 'restored orders-2025-03-01.sql.gz into orders-restore-test: 48210 rows in orders'),
];

describe('a ledger-critic worker killed mid-critique', () => {
  let prefix: Awaited<ReturnType<typeof useTestPrefix>>;
  let schema: Awaited<ReturnType<typeof useTestSchema>>;
  let ollama: OllamaTestServer;
  let jobs: LedgerJobs;
  let pool: Pool;
  const children: TsProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    prefix = await useTestPrefix('ledger_crash');
    schema = await useTestSchema('ledger_crash');
    ollama = await startOllamaTestServer({ models: [{ name: MODEL, capabilities: ['completion'] }] });
    jobs = new LedgerJobs(prefix.prefix);
    await jobs.ready();
    env = {
      REDIS_URL: TEST_REDIS_URL,
      DATABASE_URL: TEST_DATABASE_URL,
      BULLMQ_PREFIX: prefix.prefix,
      DB_SCHEMA: schema.schema,
      HTTP_PORT: '0',
      WORKER_CONCURRENCY: '1',
      OLLAMA_HOST: ollama.url,
      LEDGER_CRITIC_MODEL: MODEL,
      LEDGER_CRITIC_TIMEOUT_MS: '20000',
      SHUTDOWN_GRACE_MS: '5000',
    };
  });

  // A test that fails half-way must not leave its worker taking the next test's jobs.
  afterEach(async () => {
    const alive = children.filter((c) => c.proc.exitCode === null && c.proc.signalCode === null);
    for (const c of alive) c.proc.kill('SIGKILL');
    await Promise.all(alive.map((c) => c.exited));
  });

  afterAll(async () => {
    for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await jobs?.close();
    await ollama?.close();
    await pool?.end();
    await prefix?.cleanup();
    await schema?.cleanup();
  });

  const spawnService = (extra: Record<string, string> = {}) => {
    const child = spawnTsProcess(SERVICE, { ...env, LOG_LEVEL: 'warn', ...extra });
    children.push(child);
    return child;
  };

  /** Events of the run that belong to one proposal: exactly one attempt and one critique when nothing was duplicated. */
  const reviewEvents = async (runId: string, proposalId: string) => {
    const events = await readEvents(pool, { tenant: 'acme', runId });
    const mine = events.filter((e) => (e.type === 'completion_proposed' && e.proposal.proposalId === proposalId) || (e.type === 'critique_recorded' && e.critique.proposalId === proposalId));
    return { events, mine: mine.map((e) => e.type) };
  };

  const openRun = async (runId: string) => {
    await jobs.run('ledger.open', 'acme', { runId, goal: GOAL });
    await jobs.run('ledger.recordEvidence', 'acme', { runId, items: EVIDENCE });
  };

  it('while its critic call is in flight: another worker re-runs the review and records it exactly once', async () => {
    const a = spawnService();
    await a.waitFor('ready');
    pool ??= createPool({ url: TEST_DATABASE_URL, schema: schema.schema });
    const runId = 'crash-mid-critique';
    await openRun(runId);

    // The first worker's critic call hangs; the kill lands while it waits.
    ollama.reset();
    ollama.replyOnce({ json: { decision: 'approve', reasons: ['never delivered'], missingEvidence: [] }, delayMs: 30_000 });
    ollama.reply({ json: { decision: 'approve', reasons: ['the dump and the restore are shown'], missingEvidence: [] } });
    const job: Job = await jobs.add('ledger.proposeCompletion', 'acme', { runId, summary: SUMMARY });
    await eventually('the first critic call', () => (ollama.calls.length === 1 ? true : undefined));
    a.proc.kill('SIGKILL');
    expect(await a.exited).toBeNull();

    const b = spawnService();
    await b.waitFor('ready');
    const outcome = await jobs.wait<CritiqueOutcome>(job, 20_000);
    expect(outcome).toMatchObject({ cycle: 1, decision: 'approve', status: 'approved', completed: true, alreadyReviewed: false });
    expect(outcome.critics.llm).toEqual({ ran: true, model: MODEL, decision: 'approve', reasons: ['the dump and the restore are shown'] });
    expect(ollama.calls).toHaveLength(2);
    expect(await (await jobs.queue.getJob(job.id!))!.getState()).toBe('completed');

    const { events, mine } = await reviewEvents(runId, job.id!);
    expect(mine).toEqual(['completion_proposed', 'critique_recorded']);
    expect(events.map((e) => e.type)).toEqual(['ledger_opened', 'evidence_recorded', 'completion_proposed', 'critique_recorded', 'status_changed']);
    expect(replayLedger(events)).toStrictEqual(await loadLedger(pool, { tenant: 'acme', runId }));
    expect((await readObservationKeys(pool, { tenant: 'acme', runId }, 10)).map((r) => r.seq)).toEqual([1, 2]);

    b.proc.kill('SIGTERM');
    expect(await b.exited).toBe(0);
  });

  it('after its review committed but before the job completed: the re-run returns the recorded outcome and appends nothing', async () => {
    const a = spawnService({ HOLD_AFTER_REVIEW_MS: '30000' });
    await a.waitFor('ready');
    pool ??= createPool({ url: TEST_DATABASE_URL, schema: schema.schema });
    const runId = 'crash-after-commit';
    await openRun(runId);
    ollama.reset();
    ollama.reply({ json: { decision: 'request_changes', reasons: ['show the checksum'], missingEvidence: [{ need: 'a checksum of the dump' }] } });

    const job: Job = await jobs.add('ledger.proposeCompletion', 'acme', { runId, summary: SUMMARY });
    await a.waitFor(`reviewed ${job.id} first`);
    a.proc.kill('SIGKILL');
    expect(await a.exited).toBeNull();

    const b = spawnService();
    await b.waitFor('ready');
    const outcome = await jobs.wait<CritiqueOutcome>(job, 20_000);
    await b.waitFor(`reviewed ${job.id} again`);
    expect(outcome).toMatchObject({ cycle: 1, decision: 'request_changes', status: 'request_changes', alreadyReviewed: true });
    expect(outcome.reasons).toContain('LLM critic: show the checksum');
    // The re-run did not ask the critic again.
    expect(ollama.calls).toHaveLength(1);

    const { events, mine } = await reviewEvents(runId, job.id!);
    expect(mine).toEqual(['completion_proposed', 'critique_recorded']);
    expect(events).toHaveLength(5);
    expect(replayLedger(events)).toStrictEqual(await loadLedger(pool, { tenant: 'acme', runId }));
    expect((await readObservationKeys(pool, { tenant: 'acme', runId }, 10)).map((r) => r.seq)).toEqual([1, 2]);

    b.proc.kill('SIGTERM');
    expect(await b.exited).toBe(0);
  });
});
