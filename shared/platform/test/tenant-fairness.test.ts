import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { QueueName } from '@vouch/contracts';
import { TEST_REDIS_URL, TsProcesses, eventually, metricValue, useTestPrefix } from '@vouch/testing';
import { handle } from '../src/handlers.js';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { consumerRedisOptions } from '../src/redis.js';
import { TENANT_DEFER_MAX_MS, defaultTenantShare, deferDelayMs } from '../src/tenant-slots.js';
import { startServiceWorker, type ServiceWorker } from '../src/worker.js';
import { tenantWorkOperation } from './fixtures/tenant-work.js';

const SLOT_WORKER = fileURLToPath(new URL('./fixtures/tenant-slot-worker.ts', import.meta.url));
const JOB_MS = 300;

/** Runs, and the most jobs in flight at once, per tenant, as the handler saw them. */
class TenantLedger {
  readonly runs = new Map<string, number>();
  readonly inFlight = new Map<string, number>();
  readonly maxInFlight = new Map<string, number>();
  /** Labels in the order their runs started. */
  readonly started: string[] = [];
  enter(tenant: string, label: string): void {
    this.started.push(label);
    this.runs.set(label, (this.runs.get(label) ?? 0) + 1);
    const now = (this.inFlight.get(tenant) ?? 0) + 1;
    this.inFlight.set(tenant, now);
    this.maxInFlight.set(tenant, Math.max(now, this.maxInFlight.get(tenant) ?? 0));
  }
  leave(tenant: string): void {
    this.inFlight.set(tenant, (this.inFlight.get(tenant) ?? 1) - 1);
  }
}

/** Jobs whose run lasts until the test opens their gate, by label, instead of `ms`. */
const gates = new Map<string, Promise<void>>();

function startWorker(queue: QueueName, prefix: string, concurrency: number, ledger: TenantLedger, extra: { tenantLeaseMs?: number } = {}) {
  const work = tenantWorkOperation(queue);
  const metrics = createMetrics({ service: 'fairness-test', collectDefaults: false });
  const sw = startServiceWorker({
    service: 'fairness-test',
    version: '0.0.0-test',
    queue,
    operations: [work],
    handlers: [
      handle(work, async ({ label, ms }, ctx) => {
        ledger.enter(ctx.tenant, label);
        try {
          await (gates.get(label) ?? new Promise((r) => setTimeout(r, ms)));
          return { label };
        } finally {
          ledger.leave(ctx.tenant);
        }
      }),
    ],
    connection: consumerRedisOptions(TEST_REDIS_URL),
    prefix,
    concurrency,
    logger: createLogger({ service: 'fairness-test', level: 'silent' }),
    metrics,
    ...extra,
  });
  return { sw, metrics };
}

describe('tenant slot arithmetic', () => {
  it('waits 250 ms after a first deferral, doubling up to 5 s, within 20% jitter', () => {
    expect([0, 1, 2, 3, 4, 5, 40].map((n) => deferDelayMs(n, 0.5))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
    expect(deferDelayMs(0, 0)).toBe(200);
    expect(deferDelayMs(0, 0.999_999)).toBe(300);
    expect(deferDelayMs(99, 0.999_999)).toBe(Math.round(TENANT_DEFER_MAX_MS * 1.2));
  });
  it('gives a tenant half of each worker by default', () => {
    expect([1, 2, 4, 64].map(defaultTenantShare)).toEqual([0.5, 1, 2, 32]);
  });
});

describe('tenant fairness at the worker', () => {
  let prefix: Awaited<ReturnType<typeof useTestPrefix>>;
  const queues: Queue[] = [];
  const events: QueueEvents[] = [];
  const workers: ServiceWorker[] = [];
  const children = new TsProcesses();

  const open = async (name: QueueName) => {
    const connection = consumerRedisOptions(TEST_REDIS_URL);
    const queue = new Queue(name, { connection, prefix: prefix.prefix });
    const qe = new QueueEvents(name, { connection, prefix: prefix.prefix });
    queues.push(queue);
    events.push(qe);
    await qe.waitUntilReady();
    return { queue, qe };
  };

  beforeAll(async () => {
    prefix = await useTestPrefix('fairness');
  });
  afterEach(async () => {
    await children.killAll();
  });
  afterAll(async () => {
    await children.killAll();
    for (const w of workers) await w.close(1_000);
    for (const qe of events) await qe.close();
    for (const q of queues) await q.close();
    await prefix?.cleanup();
  });

  it("runs tenant B's job within about one job's time while tenant A has 20 queued, and runs each of A's once without using attempts", async () => {
    const name = 'test-fairness' as QueueName;
    const { queue, qe } = await open(name);
    const ledger = new TenantLedger();
    const { sw, metrics } = startWorker(name, prefix.prefix, 4, ledger);
    workers.push(sw);
    await sw.worker.waitUntilReady();

    const aJobs = await queue.addBulk(
      Array.from({ length: 20 }, (_, i) => ({ name: 'test.work', data: { tenant: 'tenant-a', requestId: `a-${i}`, input: { label: `a-${i}`, ms: JOB_MS } }, opts: { jobId: `a-${i}`, attempts: 3 } })),
    );
    const addedAt = Date.now();
    const bJob = await queue.add('test.work', { tenant: 'tenant-b', requestId: 'b-0', input: { label: 'b-0', ms: JOB_MS } }, { jobId: 'b-0', attempts: 3 });
    // Its result comes through the queue's event stream, as the gateway's waits read it.
    expect(await bJob.waitUntilFinished(qe, 20_000)).toEqual({ label: 'b-0' });
    const bWaitedMs = Date.now() - addedAt;
    // The bound in order, which load cannot blur: shared FIFO starts all 20 of A's before B; fair, B starts in the first
    // round, beside at most the jobs A was running (its share, 2) and the ones the other free slots took meanwhile.
    expect(ledger.started.indexOf('b-0')).toBeLessThanOrEqual(4);
    // And in time: at most about one job's time (300 ms) plus slack, where shared FIFO took 1.5 s (5 rounds of 4).
    expect(bWaitedMs).toBeLessThan(1200);

    // Every job of A moved aside still delivers its result, runs exactly once, and spends no attempt on the moves.
    const results: unknown[] = [];
    for (const j of aJobs) results.push(await j.waitUntilFinished(qe, 30_000));
    expect(results).toEqual(aJobs.map((_, i) => ({ label: `a-${i}` })));
    expect([...ledger.runs.entries()].sort()).toEqual([...aJobs.map((_, i) => [`a-${i}`, 1] as const), ['b-0', 1] as const].sort());
    const attempts = await Promise.all(aJobs.map(async (j) => (await queue.getJob(j.id!))!.attemptsMade));
    expect(attempts).toEqual(aJobs.map(() => 1));
    // A never held more than its share: half the worker's 4 slots.
    expect(ledger.maxInFlight.get('tenant-a')).toBe(2);
    expect(await metricValue(metrics.registry, 'vouch_jobs_processed_total', { queue: name, outcome: 'failed' })).toBe(0);
    expect(await metricValue(metrics.registry, 'vouch_jobs_processed_total', { queue: name, outcome: 'completed' })).toBe(21);
    expect(await metricValue(metrics.registry, 'vouch_jobs_deferred_total', { queue: name })).toBeGreaterThan(0);
    expect(await metricValue(metrics.registry, 'vouch_job_wait_seconds', { queue: name })).toBe(21);
  });

  it("a freed slot brings its tenant's parked job back at once, not when the job's own wait runs out", async () => {
    const name = 'test-fairness-wake' as QueueName;
    const { queue, qe } = await open(name);
    const ledger = new TenantLedger();
    // Two slots, so tenant A's share is one: its second job is moved aside while the first holds the slot.
    const { sw } = startWorker(name, prefix.prefix, 2, ledger);
    workers.push(sw);
    await sw.worker.waitUntilReady();
    let open_ = () => {};
    gates.set('held', new Promise<void>((r) => (open_ = r)));
    const held = await queue.add('test.work', { tenant: 'tenant-a', requestId: 'held', input: { label: 'held', ms: 0 } }, { jobId: 'held' });
    await eventually('the held job starting', () => (ledger.started.includes('held') ? true : undefined));
    const parked = await queue.add('test.work', { tenant: 'tenant-a', requestId: 'parked', input: { label: 'parked', ms: 0 } }, { jobId: 'parked' });
    // Moved aside four times (250, 500, 1000 ms between): its next own look is 2 s ± 20 % away.
    await eventually(
      'the parked job moved aside a fourth time',
      async () => ((await queue.getJob('parked'))?.attemptsStarted === 4 && (await queue.getJobState('parked')) === 'delayed' ? true : undefined),
      10_000,
      20,
    );
    const freedAt = Date.now();
    open_();
    expect(await parked.waitUntilFinished(qe, 10_000)).toEqual({ label: 'parked' });
    // Woken by the freed slot, not by its wait of at least 1.6 s.
    expect(Date.now() - freedAt).toBeLessThan(1_000);
    expect(await held.waitUntilFinished(qe, 1_000)).toEqual({ label: 'held' });
    expect(ledger.runs.get('parked')).toBe(1);
  });

  it("a worker killed while it holds a tenant's slot blocks that tenant only until the slot's lease expires", async () => {
    const name = 'test-fairness-crash' as QueueName;
    const { queue, qe } = await open(name);
    const holder = children.spawn(SLOT_WORKER, { REDIS_URL: TEST_REDIS_URL, BULLMQ_PREFIX: prefix.prefix, TEST_QUEUE: name, TENANT_LEASE_MS: '2000' });
    await holder.waitFor('ready');
    await queue.add('test.work', { tenant: 'tenant-a', requestId: 'held', input: { label: 'held', ms: 60_000 } }, { jobId: 'held' });
    await holder.waitFor('started held');
    holder.proc.kill('SIGKILL');
    expect(await holder.exited).toBeNull();

    // One slot per tenant (concurrency 1); the killed worker's lease still holds tenant A's.
    const ledger = new TenantLedger();
    const { sw, metrics } = startWorker(name, prefix.prefix, 1, ledger, { tenantLeaseMs: 2_000 });
    workers.push(sw);
    const next = await queue.add('test.work', { tenant: 'tenant-a', requestId: 'next', input: { label: 'next', ms: 0 } }, { jobId: 'next', attempts: 1 });
    // Held back while the dead worker's lease lives…
    await eventually('a deferral of tenant A', async () => ((await metricValue(metrics.registry, 'vouch_jobs_deferred_total', { queue: name })) > 0 ? true : undefined), 10_000);
    // …and run once it expires: the killed job's lock (60 s) has not run out, so nothing else freed the slot.
    expect(await next.waitUntilFinished(qe, 15_000)).toEqual({ label: 'next' });
    expect((await queue.getJob('next'))!.attemptsMade).toBe(1);
    expect(await queue.getJobState('held')).toBe('active');
  });
});
