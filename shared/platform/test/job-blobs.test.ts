import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { QUEUES, decodeJobError, defineOperation } from '@vouch/contracts';
import { TEST_REDIS_URL, useTestPrefix, type TestPrefix } from '@vouch/testing';
import { handle } from '../src/handlers.js';
import { BLOB_MIN_CHARS, BLOB_READ_BYTES, BLOB_TTL_S, blobKey, dropBlobs, stashBlobs, unstashBlobs } from '../src/job-blobs.js';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { QueueHub } from '../src/queue-hub.js';
import { consumerRedisOptions } from '../src/redis.js';
import { startServiceWorker, type ServiceWorker } from '../src/worker.js';

// Large input strings travel beside their job (job-blobs.ts): BullMQ's scripts held Redis for tens of milliseconds
// per 8 MB body, and every other tenant's commands waited for them.

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const large = (seed: string) => `${seed}\n`.repeat(Math.ceil((BLOB_MIN_CHARS + 10) / (seed.length + 1)));

const digest = defineOperation({
  name: 'test.digest',
  summary: 'digest',
  description: 'Answers the length and sha256 of its text, failing its first try when asked.',
  owner: { queue: QUEUES.extractor },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/test/digest' },
  scope: 'media:read',
  input: z.object({ text: z.string().max(1_000_000), note: z.string().max(100), failFirst: z.boolean() }).strict(),
  output: z.object({ chars: z.number(), sha256: z.string(), note: z.string(), dataBytes: z.number() }),
  agentFacing: false,
  example: { text: 'hello', note: 'n', failFirst: false },
  retry: { attempts: 2, backoffMs: 0 },
});

describe('large inputs beside their job', () => {
  let prefix: TestPrefix;
  let redis: Redis;
  let worker: ServiceWorker;
  let hub: QueueHub;
  const tries = new Map<string, number>();

  beforeAll(async () => {
    prefix = await useTestPrefix('job_blobs');
    redis = new Redis(TEST_REDIS_URL);
    await redis.ping();
    worker = startServiceWorker({
      service: 'extractor',
      version: '1.0.0',
      queue: QUEUES.extractor,
      operations: [digest],
      handlers: [
        handle(digest, async ({ text, note, failFirst }, ctx) => {
          const n = (tries.get(ctx.jobId) ?? 0) + 1;
          tries.set(ctx.jobId, n);
          if (failFirst && n === 1) throw new Error('a first try that fails for no known reason: retried');
          // What the job itself carries in Redis while it runs: the reference, not the text.
          const dataBytes = Buffer.byteLength((await redis.hget(`${prefix.prefix}:${QUEUES.extractor}:${ctx.jobId}`, 'data')) ?? '');
          return { chars: text.length, sha256: sha(text), note, dataBytes };
        }),
      ],
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix: prefix.prefix,
      concurrency: 2,
      logger: createLogger({ service: 'extractor', level: 'silent' }),
      metrics: createMetrics({ service: 'extractor', collectDefaults: false }),
    });
    await worker.worker.waitUntilReady();
    hub = new QueueHub({ producer: redis, redisUrl: TEST_REDIS_URL, prefix: prefix.prefix, name: 'blob-test' });
    await hub.listenAll();
  });
  afterAll(async () => {
    await hub?.close();
    await worker?.close(1_000);
    redis?.disconnect();
    await prefix?.cleanup();
  });

  const where = (jobId: string) => ({ prefix: prefix.prefix, queue: QUEUES.extractor, jobId });
  const run = (jobId: string, input: { text: string; note: string; failFirst: boolean }) =>
    hub.run(digest, QUEUES.extractor, { tenant: 'acme', input }, jobId, { timeoutMs: 20_000, mayExist: false });

  it('stores a string of BLOB_MIN_CHARS or more under a key of its own, with a TTL, and leaves shorter ones in place', async () => {
    const text = large('stash');
    const short = 'x'.repeat(BLOB_MIN_CHARS - 1);
    const envelope = await stashBlobs(redis, where('j-stash'), { tenant: 'acme', input: { text, short, n: 3 } });
    expect(envelope).toEqual({ tenant: 'acme', input: { text: { vouchBlob: { chars: text.length } }, short, n: 3 } });
    const key = blobKey(prefix.prefix, QUEUES.extractor, 'j-stash', 'text');
    expect(await redis.get(key)).toBe(text);
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(BLOB_TTL_S - 60);
    expect(ttl).toBeLessThanOrEqual(BLOB_TTL_S);
    expect(await unstashBlobs(redis, where('j-stash'), envelope.input)).toEqual({ text, short, n: 3 });
    // The key comes from the job, never from the data: another job's id finds nothing.
    await expect(unstashBlobs(redis, where('j-other'), envelope.input)).rejects.toThrow(/\(text\) is no longer stored beside it.*send the request again/);
    await dropBlobs(redis, where('j-stash'), envelope.input);
    expect(await redis.exists(key)).toBe(0);
  });

  it('reads a blob of several ranges back whole, multibyte characters cut by the range boundaries included', async () => {
    const text = 'é𝄞ab\n'.repeat(300_000); // about 2.7 MB of UTF-8: three ranges, boundaries inside characters
    expect(Buffer.byteLength(text)).toBeGreaterThan(2 * BLOB_READ_BYTES);
    const envelope = await stashBlobs(redis, where('j-ranges'), { tenant: 'acme', input: { text } });
    expect(await unstashBlobs(redis, where('j-ranges'), envelope.input)).toEqual({ text });
  });

  it('runs a job with a large input whose data in Redis holds only a reference, and deletes the input when it ends', async () => {
    const text = large('body');
    const out = await run('j-large', { text, note: 'kept inline', failFirst: false });
    expect(out).toMatchObject({ kind: 'completed', value: { chars: text.length, sha256: sha(text), note: 'kept inline' } });
    expect((out as { value: { dataBytes: number } }).value.dataBytes).toBeLessThan(1_000);
    expect(await redis.exists(blobKey(prefix.prefix, QUEUES.extractor, 'j-large', 'text'))).toBe(0);
  });

  it('keeps the input for a retry, and deletes it after the attempt that ends the job', async () => {
    const text = large('retry');
    const out = await run('j-retry', { text, note: 'second try', failFirst: true });
    expect(out).toMatchObject({ kind: 'completed', value: { chars: text.length, sha256: sha(text) } });
    expect(tries.get('j-retry')).toBe(2);
    expect(await redis.exists(blobKey(prefix.prefix, QUEUES.extractor, 'j-retry', 'text'))).toBe(0);
  });

  it('fails a job whose input is gone at once, as bad input naming the field and the way out, without retrying it', async () => {
    const envelope = await stashBlobs(redis, where('j-gone'), { tenant: 'acme', input: { text: large('gone'), note: 'n', failFirst: false } });
    await redis.del(blobKey(prefix.prefix, QUEUES.extractor, 'j-gone', 'text'));
    // Added as stashed, with its blob deleted meanwhile (as after BLOB_TTL_S).
    await hub.queue(QUEUES.extractor).add(digest.name, envelope, { jobId: 'j-gone', attempts: 2 });
    await expect.poll(() => hub.queue(QUEUES.extractor).getJobState('j-gone'), { timeout: 10_000 }).toBe('failed');
    const job = await hub.queue(QUEUES.extractor).getJob('j-gone');
    expect(job!.attemptsMade).toBe(1);
    expect(decodeJobError(job!.failedReason)).toMatchObject({ code: 'BAD_INPUT', message: expect.stringMatching(/^test\.digest: the job's large input \(text\) is no longer stored.*send the request again$/) });
    expect(tries.has('j-gone')).toBe(false);
  });
});
