import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation, type QueueName } from '@vouch/contracts';
import { TEST_REDIS_URL, startTcpProxy, useTestPrefix, type TcpProxy } from '@vouch/testing';
import { EVENT_STREAM_MAX_LEN, MISSED_EVENTS_CHECK_MS, compareStreamIds, lastEventId, listenToQueue } from '../src/event-stream.js';
import { handle } from '../src/handlers.js';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { createOperationCaller } from '../src/operation-call.js';
import { QueueHub } from '../src/queue-hub.js';
import { consumerRedisOptions } from '../src/redis.js';
import { startServiceWorker, type ServiceWorker } from '../src/worker.js';

/**
 * Issue 17 item 5: no result is kept in the events streams. BullMQ copies a
 * job's whole result into the stream's `completed` entry, so the stream is
 * kept to EVENT_STREAM_MAX_LEN entries, and a waiter whose listener missed a
 * trimmed entry reads the job instead.
 */
const QUEUE = 'test-streams' as QueueName;
/** A result the size of a large page: about 100 KB of JSON. */
const PAGE_BYTES = 100_000;
const page = defineOperation({
  name: 'test.page',
  summary: 'page',
  description: 'Returns a large page, or waits for the test to let it finish.',
  owner: { queue: QUEUE },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/test/page' },
  scope: 'admin',
  input: z.object({ n: z.number().int().min(0), hold: z.boolean().default(false) }).strict(),
  output: z.object({ n: z.number(), text: z.string() }),
  agentFacing: false,
  example: { n: 1 },
  retry: { attempts: 1, backoffMs: 0 },
});

describe('the events streams', () => {
  let prefix: Awaited<ReturnType<typeof useTestPrefix>>;
  let sw: ServiceWorker;
  let redis: Redis;
  /** Lets a held job finish. */
  let release: () => void = () => {};
  let started: () => void = () => {};

  beforeAll(async () => {
    prefix = await useTestPrefix('event_streams');
    redis = new Redis(TEST_REDIS_URL);
    sw = startServiceWorker({
      service: 'streams-test',
      version: '1.0.0',
      queue: QUEUE,
      operations: [page],
      handlers: [
        handle(page, async ({ n, hold }) => {
          if (hold) {
            started();
            await new Promise<void>((resolve) => (release = resolve));
          }
          return { n, text: String(n % 10).repeat(PAGE_BYTES) };
        }),
      ],
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix: prefix.prefix,
      concurrency: 4,
      logger: createLogger({ service: 'streams-test', level: 'silent' }),
      metrics: createMetrics({ service: 'streams-test', collectDefaults: false }),
    });
    await sw.worker.waitUntilReady();
  });
  afterAll(async () => {
    release();
    await sw?.close(1_000);
    redis?.disconnect();
    await prefix?.cleanup();
  });

  const streamKey = () => `${prefix.prefix}:${QUEUE}:events`;

  it('keep a bounded number of entries, so 100 large results leave at most a few of them in Redis', async () => {
    const calls = createOperationCaller({ redisUrl: TEST_REDIS_URL, prefix: prefix.prefix, name: 'streams-test' });
    try {
      const N = 100;
      for (let i = 0; i < N; i += 4) {
        const got = await Promise.all([0, 1, 2, 3].map((k) => calls.call(page, 'acme', { n: i + k, hold: false })));
        expect(got.map((g) => g.text.length)).toEqual([PAGE_BYTES, PAGE_BYTES, PAGE_BYTES, PAGE_BYTES]);
      }
      expect(await redis.hget(`${prefix.prefix}:${QUEUE}:meta`, 'opts.maxLenEvents')).toBe(String(EVENT_STREAM_MAX_LEN));
      // MAXLEN ~ drops whole stream nodes (at most 100 entries each): the stream may keep one node's worth past the bound.
      expect(await redis.xlen(streamKey())).toBeLessThanOrEqual(EVENT_STREAM_MAX_LEN + 100);
      const entries = await redis.xrange(streamKey(), '-', '+');
      const results = entries.filter(([, fields]) => fields[1] === 'completed');
      // Each job leaves at least two entries after it is added (active, completed).
      expect(results.length).toBeLessThanOrEqual(EVENT_STREAM_MAX_LEN / 2);
      const bytes = Number(await redis.call('MEMORY', 'USAGE', streamKey(), 'SAMPLES', '0'));
      expect(bytes).toBeLessThan((EVENT_STREAM_MAX_LEN / 2 + 1) * PAGE_BYTES * 1.2);
      expect(bytes).toBeLessThan((N * PAGE_BYTES) / 5);
      // Delivered results leave Redis with their jobs.
      const queue = new Queue(QUEUE, { connection: redis, prefix: prefix.prefix, skipMetasUpdate: true });
      await expect.poll(() => queue.getCompletedCount(), { timeout: 5_000 }).toBe(0);
      await queue.close();
    } finally {
      await calls.close();
    }
  });

  it('tell a waiter it may have missed an entry even after its listener has read past the gap', async () => {
    const proxy: TcpProxy = await startTcpProxy({ host: new URL(TEST_REDIS_URL).hostname, port: Number(new URL(TEST_REDIS_URL).port || 6379) });
    const listening = await listenToQueue(QUEUE, { redis, connection: consumerRedisOptions(proxy.through(TEST_REDIS_URL)), prefix: prefix.prefix });
    try {
      await redis.xadd(streamKey(), '*', 'event', 'drained');
      await expect.poll(async () => (await listening.missedSince(listening.lastId)).next, { timeout: 5_000 }).toBe(await lastEventId(redis, streamKey()));
      const mark = (await listening.missedSince(listening.lastId)).next;
      expect((await listening.missedSince(mark)).missed).toBe(false);
      await proxy.cut();
      const skipped = await redis.xadd(streamKey(), '*', 'event', 'drained');
      for (let i = 0; i < 3; i++) await redis.xadd(streamKey(), '*', 'event', 'drained');
      await redis.xtrim(streamKey(), 'MAXLEN', 2);
      await proxy.restore();
      // The listener reads what is left, past the entry it never saw...
      const last = await lastEventId(redis, streamKey());
      await expect.poll(() => listening.lastId, { timeout: 10_000 }).toBe(last);
      expect(compareStreamIds(listening.lastId, skipped!)).toBeGreaterThan(0);
      // ...and a waiter that last looked before the gap still hears of it, once.
      await new Promise((r) => setTimeout(r, MISSED_EVENTS_CHECK_MS));
      const check = await listening.missedSince(mark);
      expect(check).toEqual({ missed: true, next: last });
      expect((await listening.missedSince(check.next)).missed).toBe(false);
    } finally {
      await listening.events.close().catch(() => {});
      await proxy.close();
    }
  });

  it('still deliver a result whose completed entry was trimmed before the listener read it', async () => {
    const proxy: TcpProxy = await startTcpProxy({ host: new URL(TEST_REDIS_URL).hostname, port: Number(new URL(TEST_REDIS_URL).port || 6379) });
    // The hub's listener goes through the proxy; its adds and reads do not.
    const hub = new QueueHub({ producer: redis, redisUrl: proxy.through(TEST_REDIS_URL), prefix: prefix.prefix, name: 'streams-test', queues: [QUEUE] });
    await hub.listenAll();
    try {
      const running = new Promise<void>((resolve) => (started = resolve));
      const result = hub.run(page, QUEUE, { tenant: 'acme', input: { n: 7, hold: true } }, 'missed-1', { timeoutMs: 20_000, mayExist: false });
      await running;
      // The listener is cut off while the job completes and its entry is trimmed away.
      await proxy.cut();
      release();
      await expect.poll(() => hub.queue(QUEUE).getJobState('missed-1'), { timeout: 5_000 }).toBe('completed');
      // Later entries push it out of the stream before the listener could read it.
      for (let i = 0; i < 5; i++) await redis.xadd(streamKey(), '*', 'event', 'drained');
      await redis.xtrim(streamKey(), 'MAXLEN', 2);
      await proxy.restore();
      const got = await result;
      expect(got.kind).toBe('completed');
      const value = (got as { value: { n: number; text: string } }).value;
      expect(value.n).toBe(7);
      expect(value.text).toBe('7'.repeat(PAGE_BYTES));
    } finally {
      await hub.close();
      await proxy.close();
    }
  });
});
