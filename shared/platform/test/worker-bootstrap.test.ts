import { Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DependencyError, NotFoundError, decodeJobError, defineOperation, type QueueName } from '@vouch/contracts';
import { TEST_REDIS_URL, useTestPrefix } from '@vouch/testing';
import { assertHandlersComplete, handle } from '../src/handlers.js';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { consumerRedisOptions } from '../src/redis.js';
import { startServiceWorker, type ServiceWorker } from '../src/worker.js';

const QUEUE = 'test-bootstrap' as QueueName;
const op = (name: string) =>
  defineOperation({
    name,
    summary: name,
    description: name,
    owner: { queue: QUEUE },
    mode: 'job',
    http: { method: 'POST', path: `/v1/${name}` },
    scope: 'admin',
    input: z.object({ n: z.number().int().min(0) }).strict(),
    output: z.object({ doubled: z.number() }),
    agentFacing: false,
    example: { n: 1 },
  });
const double = op('test.double');
const flaky = op('test.flaky');
const missing = op('test.missing');
const broken = op('test.broken');

describe('assertHandlersComplete', () => {
  const h = (o: typeof double) => handle(o, async ({ n }) => ({ doubled: n * 2 }));
  it('refuses a missing handler, a duplicate and a stray, naming each', () => {
    expect(() => assertHandlersComplete('svc', [double, flaky], [h(double), h(double), h(missing)])).toThrow(
      'svc refuses to start: operation test.double has 2 handlers; operation test.flaky has no handler; handler for test.missing, which this service does not serve',
    );
  });
  it('accepts exactly one handler per operation', () => {
    expect(() => assertHandlersComplete('svc', [double], [h(double)])).not.toThrow();
  });
});

describe('startServiceWorker', () => {
  let prefix: Awaited<ReturnType<typeof useTestPrefix>>;
  let queue: Queue;
  let events: QueueEvents;
  let sw: ServiceWorker;
  const metrics = createMetrics({ service: 'bootstrap-test', collectDefaults: false });
  let flakyCalls = 0;
  /** The actor each test.double job's handler saw, by n. */
  const actors = new Map<number, unknown>();

  beforeAll(async () => {
    prefix = await useTestPrefix('bootstrap');
    const connection = consumerRedisOptions(TEST_REDIS_URL);
    queue = new Queue(QUEUE, { connection, prefix: prefix.prefix });
    events = new QueueEvents(QUEUE, { connection, prefix: prefix.prefix });
    await events.waitUntilReady();
    sw = startServiceWorker({
      service: 'bootstrap-test',
      version: '1.2.3',
      queue: QUEUE,
      operations: [double, flaky, broken],
      handlers: [
        handle(double, async ({ n }, ctx) => {
          actors.set(n, ctx.actor);
          if (n === 404) throw new NotFoundError('no such n: list them first');
          return { doubled: n * 2 };
        }),
        handle(flaky, async ({ n }) => {
          flakyCalls += 1;
          if (flakyCalls === 1) throw new DependencyError('ollama unreachable: retry later');
          return { doubled: n * 2 };
        }),
        handle(broken, async () => ({ doubled: 'nope' }) as unknown as { doubled: number }),
      ],
      connection,
      prefix: prefix.prefix,
      concurrency: 2,
      // n above 10,000 doubles past 5 digits: the test of the result cap uses it.
      maxResultBytes: 16,
      logger: createLogger({ service: 'bootstrap-test', level: 'silent' }),
      metrics,
    });
  });

  afterAll(async () => {
    await sw?.close(1_000);
    await events?.close();
    await queue?.close();
    await prefix?.cleanup();
  });

  const failure = async (jobId: string) => {
    const job = await queue.getJob(jobId);
    await expect(job!.waitUntilFinished(events, 10_000)).rejects.toThrow();
    const fresh = await queue.getJob(jobId);
    return { job: fresh!, error: decodeJobError(fresh!.failedReason) };
  };

  it('answers system.ping with its name, version and concurrency', async () => {
    const job = await queue.add('system.ping', {});
    const result = await job.waitUntilFinished(events, 10_000);
    expect(result).toMatchObject({ service: 'bootstrap-test', version: '1.2.3', concurrency: 2, pid: process.pid });
    expect(result.uptimeSeconds).toBeGreaterThanOrEqual(0);
  });

  it('runs the handler with validated input', async () => {
    const job = await queue.add('test.double', { tenant: 't1', input: { n: 21 } });
    expect(await job.waitUntilFinished(events, 10_000)).toEqual({ doubled: 42 });
  });

  it('fails bad input once, without retries, naming the field', async () => {
    const job = await queue.add('test.double', { tenant: 't1', input: { n: 'x' } }, { attempts: 5, backoff: { type: 'fixed', delay: 10 } });
    const { job: failed, error } = await failure(job.id!);
    expect(failed.attemptsMade).toBe(1);
    expect(error.code).toBe('BAD_INPUT');
    expect(error.fields).toEqual([{ path: 'input.n', message: 'Invalid input: expected number, received string' }]);
  });

  it('does not retry a typed not-found error and keeps its message', async () => {
    const job = await queue.add('test.double', { tenant: 't1', input: { n: 404 } }, { attempts: 5 });
    const { job: failed, error } = await failure(job.id!);
    expect(failed.attemptsMade).toBe(1);
    expect(error).toEqual({ code: 'NOT_FOUND', message: 'no such n: list them first' });
  });

  it('retries a dependency outage with backoff and then succeeds', async () => {
    const job = await queue.add('test.flaky', { tenant: 't1', input: { n: 5 } }, { attempts: 3, backoff: { type: 'exponential', delay: 20 } });
    expect(await job.waitUntilFinished(events, 10_000)).toEqual({ doubled: 10 });
    expect((await queue.getJob(job.id!))!.attemptsMade).toBe(2);
  });

  it('hands the handler the actor the gateway put on the job, none when there is none, and refuses a malformed one', async () => {
    const withActor = await queue.add('test.double', { tenant: 't1', input: { n: 7 }, actor: { agent: 'worker-1', keyId: 'k0000000001' } });
    await withActor.waitUntilFinished(events, 10_000);
    expect(actors.get(7)).toEqual({ agent: 'worker-1', keyId: 'k0000000001' });
    const without = await queue.add('test.double', { tenant: 't1', input: { n: 8 } });
    await without.waitUntilFinished(events, 10_000);
    expect(actors.has(8)).toBe(true);
    expect(actors.get(8)).toBeUndefined();
    const malformed = await queue.add('test.double', { tenant: 't1', input: { n: 9 }, actor: { agent: 'Not An Agent', keyId: 'k' } }, { attempts: 3 });
    const { job: failed, error } = await failure(malformed.id!);
    expect(failed.attemptsMade).toBe(1);
    expect(error).toEqual({ code: 'BAD_INPUT', message: 'test.double: job data has a malformed actor; jobs must be enqueued through the gateway' });
    expect(actors.has(9)).toBe(false);
  });

  it('rejects a job without a tenant and a handler output that breaks the contract', async () => {
    const noTenant = await queue.add('test.double', { input: { n: 1 } } as never);
    expect((await failure(noTenant.id!)).error.message).toContain('job data has no tenant');
    const bad = await queue.add('test.broken', { tenant: 't1', input: { n: 1 } }, { attempts: 3 });
    const { job: failed, error } = await failure(bad.id!);
    expect(failed.attemptsMade).toBe(1);
    // The broken contract is the service's bug: the caller gets a generic message, the log the details.
    expect(error).toEqual({ code: 'INTERNAL', message: `internal error in bootstrap-test: see the logs under job id ${bad.id}` });
  });

  it('refuses a result above the cap instead of storing it in Redis, without retries', async () => {
    const job = await queue.add('test.double', { tenant: 't1', input: { n: 12_345_678 } }, { attempts: 3 });
    const { job: failed, error } = await failure(job.id!);
    expect(failed.attemptsMade).toBe(1);
    expect(error).toEqual({ code: 'INTERNAL', message: 'test.double: its result is 20 bytes, above the 16-byte cap on job results: ask for a smaller page' });
  });

  it('counts outcomes and durations per queue', async () => {
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/vouch_jobs_processed_total\{queue="test-bootstrap",outcome="completed",service="bootstrap-test"\} [1-9]/);
    expect(text).toMatch(/vouch_jobs_processed_total\{queue="test-bootstrap",outcome="failed",service="bootstrap-test"\} [1-9]/);
    expect(text).toMatch(/vouch_job_duration_seconds_count\{service="bootstrap-test",queue="test-bootstrap"\} [1-9]/);
  });
});
