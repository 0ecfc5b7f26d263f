import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BadInputError, DependencyError, NotFoundError, defineOperation, type QueueName } from '@vouch/contracts';
import { TEST_REDIS_URL, useTestPrefix } from '@vouch/testing';
import { handle } from '../src/handlers.js';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { createOperationCaller, type OperationCaller } from '../src/operation-call.js';
import { DEFAULT_RETRY } from '../src/queue-hub.js';
import { consumerRedisOptions } from '../src/redis.js';
import { startServiceWorker, type ServiceWorker } from '../src/worker.js';

const QUEUE = 'test-calls' as QueueName;
const op = (name: string, queue: QueueName = QUEUE) =>
  defineOperation({
    name,
    summary: name,
    description: name,
    owner: { queue },
    mode: 'rpc',
    http: { method: 'POST', path: `/v1/${name}` },
    scope: 'admin',
    input: z.object({ n: z.number().int().min(0, 'n is at least 0') }).strict(),
    output: z.object({ doubled: z.number(), tenant: z.string() }),
    agentFacing: false,
    example: { n: 1 },
  });
const double = op('test.double');
const lookup = op('test.lookup');
const orphan = op('test.orphan', 'test-nobody' as QueueName);

describe('createOperationCaller: one service runs another\'s operation over the queues', () => {
  let prefix: Awaited<ReturnType<typeof useTestPrefix>>;
  let sw: ServiceWorker;
  let calls: OperationCaller;

  beforeAll(async () => {
    prefix = await useTestPrefix('op_calls');
    sw = startServiceWorker({
      service: 'calls-test',
      version: '1.0.0',
      queue: QUEUE,
      operations: [double, lookup],
      handlers: [
        handle(double, async ({ n }, ctx) => ({ doubled: n * 2, tenant: ctx.tenant })),
        handle(lookup, async ({ n }) => {
          throw new NotFoundError(`no thing ${n}: list them first`, { n });
        }),
      ],
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix: prefix.prefix,
      concurrency: 2,
      logger: createLogger({ service: 'calls-test', level: 'silent' }),
      metrics: createMetrics({ service: 'calls-test', collectDefaults: false }),
    });
    await sw.worker.waitUntilReady();
    calls = createOperationCaller({ redisUrl: TEST_REDIS_URL, prefix: prefix.prefix, name: 'calls-test' });
  });
  afterAll(async () => {
    await calls?.close();
    await sw?.close(1_000);
    await prefix?.cleanup();
  });

  it('returns the validated output, run under the tenant it names', async () => {
    await expect(calls.call(double, 'acme', { n: 21 })).resolves.toEqual({ doubled: 42, tenant: 'acme' });
  });

  it('brings the callee\'s typed error back as the same type', async () => {
    const error = await calls.call(lookup, 'acme', { n: 7 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).message).toBe('no thing 7: list them first');
  });

  it('refuses input outside the schema before sending anything', async () => {
    const error = await calls.call(double, 'acme', { n: -1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadInputError);
    expect((error as Error).message).toBe('test.double: invalid input: input.n: n is at least 0');
  });

  it('a callee that never answers is a DependencyError after the timeout (a calling job retries it)', async () => {
    const error = await calls.call(orphan, 'acme', { n: 1 }, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect((error as Error).message).toBe('test.orphan did not answer within 300 ms: is test-nobody running?');
  });

  it('adds its job under the one retry policy the gateway uses (DEFAULT_RETRY), as the gateway would', async () => {
    await calls.call(orphan, 'acme', { n: 2 }, { timeoutMs: 200 }).catch(() => undefined);
    const queue = new Queue('test-nobody', { connection: consumerRedisOptions(TEST_REDIS_URL), prefix: prefix.prefix, skipMetasUpdate: true });
    try {
      const job = (await queue.getJobs(['waiting'])).find((j) => (j.data as { input: { n: number } }).input.n === 2);
      expect(job?.data).toEqual({ tenant: 'acme', input: { n: 2 } });
      expect(DEFAULT_RETRY).toEqual({ attempts: 3, backoffMs: 1_000 });
      expect(job?.opts).toMatchObject({ attempts: 3, backoff: { type: 'exponential', delay: 1_000 } });
    } finally {
      await queue.close();
    }
  });
});
