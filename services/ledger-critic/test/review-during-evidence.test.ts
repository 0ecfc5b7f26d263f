import type { CriticPacket, CritiqueOutcome, EvidenceInput, LedgerSnapshot } from '@vouch/contracts';
import { startOllamaTestServer, type OllamaTestServer } from '@vouch/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayLedger, toLedgerView } from '../src/domain/replay-ledger.js';
import { readEvents, readObservationKeys } from '../src/ledger-store.js';
import { ok } from './drive-ledger.js';
import { LedgerJobs, startLedgerServiceUnderTest, type LedgerServiceUnderTest } from './ledger-test-env.js';

/**
 * Issue 6 item 8: a completion proposal made while evidence streams into the
 * same run is always reviewed. The review decides on the version it read and
 * records it; evidence that lands while the critics run is evidence since that
 * review, for the next cycle.
 */

const MODEL = 'qwen2.5:7b-instruct';
const GOAL = 'Back up the orders database and confirm the dump restores';
const SUMMARY = 'Dumped orders-db to orders-2025-03-01.sql.gz (2.3 GB). Restored it into orders-restore-test and verified 48,210 rows.';
const DUMP = ok('tool_result', 'pg_dump', 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB');
const RESTORE = ok('tool_result', 'psql', 'restored orders-2025-03-01.sql.gz into orders-restore-test: 48210 rows in orders');
/** Parallel evidence writes around one proposal, as in the report (99 writes, 7 proposals). */
const WRITES = 99;
const HALF = Math.floor(WRITES / 2);

const progress = (i: number): EvidenceInput => ok('runtime_observation', 'monitor', `heartbeat ${i}: replica lag 0 s`);

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('a completion proposal while evidence streams into the same run', () => {
  let ollama: OllamaTestServer;
  let svc: LedgerServiceUnderTest;
  let jobs: LedgerJobs;

  beforeAll(async () => {
    ollama = await startOllamaTestServer({ models: [{ name: MODEL, capabilities: ['completion'], size: 4_700_000_000 }] });
    svc = await startLedgerServiceUnderTest('ledger_streaming', { OLLAMA_HOST: ollama.url, LEDGER_CRITIC_MODEL: MODEL, WORKER_CONCURRENCY: '8' });
    jobs = new LedgerJobs(svc.prefix);
    await jobs.ready();
  });
  afterAll(async () => {
    await jobs?.close();
    await svc?.stop();
    await ollama?.close();
  });

  it('is reviewed once, on the version it read, and the next cycle sees the later evidence as since', async () => {
    const runId = 'stream-llm-1';
    const key = { tenant: 'acme', runId };
    await jobs.run('ledger.open', 'acme', { runId, goal: GOAL });
    await jobs.run('ledger.recordEvidence', 'acme', { runId, items: [DUMP] });

    // The critic model answers only once the evidence writes are under way, so
    // the review's conclusion races the rest of them.
    const asked = deferred();
    const release = deferred();
    ollama.replyOnce(async () => {
      asked.resolve();
      await release.promise;
      return { json: { decision: 'approve', reasons: ['looks done'], missingEvidence: [] } };
    });
    ollama.reply({ json: { decision: 'approve', reasons: ['the dump and the restore are both shown'], missingEvidence: [] } });

    const proposal = await jobs.add('ledger.proposeCompletion', 'acme', { runId, summary: SUMMARY });
    await asked.promise;
    const items = [RESTORE, ...Array.from({ length: WRITES - 1 }, (_, i) => progress(i + 1))];
    const writes = items.map((item) => jobs.add('ledger.recordEvidence', 'acme', { runId, items: [item] }));
    const written = (await Promise.all(writes)).map((job) => jobs.wait<{ recorded: Array<{ seq: number }> }>(job, 100_000));
    // Half of them (the restore first among them) land while the critic thinks; the rest race its conclusion.
    await Promise.all(written.slice(0, HALF));
    release.resolve();

    const outcome = await jobs.wait<CritiqueOutcome>(proposal, 100_000);
    await Promise.all(written);
    // One review, one question to the model: no review was thrown away and asked again.
    expect(ollama.calls).toHaveLength(1);
    // It decided on what it read: the dump alone, so the restore is still missing.
    expect(outcome).toMatchObject({ runId, cycle: 1, decision: 'request_changes', status: 'request_changes', completed: false, alreadyReviewed: false });
    expect(outcome.missingEvidence.map((m) => m.claimText)).toEqual(['Restored it into orders-restore-test', 'verified 48,210 rows']);

    const events = await readEvents(svc.service.pool, key);
    const critique = events.find((e) => e.type === 'critique_recorded');
    if (critique?.type !== 'critique_recorded') throw new Error('no critique recorded');
    // What it saw: the ledger at version 2 (opened, the dump), evidence up to seq 1.
    expect(critique.critique).toMatchObject({ cycle: 1, baseVersion: 2, evidenceSeqAtCritique: 1 });
    expect(critique.packet.evidence.map((e) => e.id)).toEqual(['ev-1']);
    // Appended at the head it found, after the evidence that landed meanwhile.
    const proposed = events.find((e) => e.type === 'completion_proposed')!;
    expect(proposed.seq).toBeGreaterThan(2 + HALF);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

    // The next cycle gets every write since the first review as "since" evidence, and the restore settles it.
    const second = await jobs.run<CritiqueOutcome>('ledger.proposeCompletion', 'acme', { runId, summary: SUMMARY });
    expect(second).toMatchObject({ cycle: 2, decision: 'approve', status: 'approved', completed: true });
    const latest = await jobs.run<{ packet: CriticPacket }>('ledger.packet', 'acme', { runId });
    const prior = latest.packet.priorCritique!;
    expect(prior).toMatchObject({ cycle: 1, decision: 'request_changes', noEvidenceSince: false });
    expect(prior.evidenceSince.length + prior.evidenceSinceOmitted).toBe(WRITES);
    expect(prior.objections.map((o) => [o.claimText, o.resolution])).toEqual([
      ['Restored it into orders-restore-test', 'resolved_by_new_evidence'],
      ['verified 48,210 rows', 'resolved_by_new_evidence'],
    ]);

    // Replaying the stream rebuilds the ledger exactly.
    const snapshot = await jobs.run<LedgerSnapshot>('ledger.get', 'acme', { runId });
    expect(toLedgerView(replayLedger(await readEvents(svc.service.pool, key))!)).toStrictEqual(snapshot);
    // Every item streamed in has its stored features, once.
    expect((await readObservationKeys(svc.service.pool, key, 1 + WRITES)).map((r) => r.seq)).toEqual(Array.from({ length: 1 + WRITES }, (_, i) => i + 1));
  }, 120_000);

  it('reviews every proposal of several runs, the rule critic alone, each amid 99 parallel evidence writes', async () => {
    const runs = ['stream-rule-1', 'stream-rule-2', 'stream-rule-3'];
    for (const runId of runs) {
      // The fast policy keeps the LLM critic out: the rule critic decides alone, in milliseconds.
      await jobs.run('ledger.open', 'acme', { runId, goal: GOAL, policy: 'fast' });
      // The restore is never recorded, so each review requests changes and the run stays open for the writes after it.
      await jobs.run('ledger.recordEvidence', 'acme', { runId, items: [DUMP] });
    }
    const outcomes = await Promise.all(
      runs.map(async (runId) => {
        const writes = Array.from({ length: WRITES }, (_, i) => jobs.add('ledger.recordEvidence', 'acme', { runId, items: [progress(i)] }));
        // The proposal goes in among the writes, not before or after them.
        const proposal = jobs.add('ledger.proposeCompletion', 'acme', { runId, summary: SUMMARY });
        // Hundreds of jobs on a shared, busy machine: wait on each as long as the whole test may take.
        const waited = [...(await Promise.all(writes.slice(0, HALF))), await proposal, ...(await Promise.all(writes.slice(HALF)))].map((job) => jobs.wait(job, 100_000));
        const results = await Promise.allSettled(waited);
        return { runId, proposal: results[HALF]!, failed: results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : [])) };
      }),
    );
    for (const { runId, proposal, failed } of outcomes) {
      expect(failed, runId).toEqual([]);
      expect(proposal.status === 'fulfilled' ? proposal.value : undefined, runId).toMatchObject({ cycle: 1, decision: 'request_changes', status: 'request_changes' });
    }
  }, 120_000);
});
