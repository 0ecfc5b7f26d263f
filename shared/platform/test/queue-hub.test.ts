import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { QUEUES, defineOperation } from '@vouch/contracts';
import { TEST_REDIS_URL, startTcpProxy, useTestPrefix, type TcpProxy, type TestPrefix } from '@vouch/testing';
import { handle } from '../src/handlers.js';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { QueueHub } from '../src/queue-hub.js';
import { consumerRedisOptions } from '../src/redis.js';
import { startServiceWorker, type ServiceWorker } from '../src/worker.js';

/**
 * Issue 17 item 5: the events streams are trimmed to a few dozen entries, so
 * a listener that falls behind (here: cut off from Redis) may find a job's
 * completed entry gone. The hub notices that the stream was trimmed past what
 * its listener read and reads the waited-for jobs instead.
 */
const held = defineOperation({
  name: 'test.held',
  summary: 'held',
  description: 'Finishes when the test lets it.',
  owner: { queue: QUEUES.extractor },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/test/held' },
  scope: 'media:read',
  input: z.object({ text: z.string().max(100) }).strict(),
  output: z.object({ echoed: z.string() }),
  agentFacing: false,
  example: { text: 'hello' },
  retry: { attempts: 1, backoffMs: 0 },
});

describe('a waiter whose listener missed the outcome', () => {
  let prefix: TestPrefix;
  let worker: ServiceWorker;
  let producer: Redis;
  let proxy: TcpProxy;
  let hub: QueueHub;
  let started: () => void = () => {};
  let release: () => void = () => {};

  beforeAll(async () => {
    prefix = await useTestPrefix('missed_events');
    worker = startServiceWorker({
      service: 'extractor',
      version: '1.0.0',
      queue: QUEUES.extractor,
      operations: [held],
      handlers: [
        handle(held, async ({ text }) => {
          started();
          await new Promise<void>((resolve) => (release = resolve));
          return { echoed: text };
        }),
      ],
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix: prefix.prefix,
      concurrency: 1,
      logger: createLogger({ service: 'extractor', level: 'silent' }),
      metrics: createMetrics({ service: 'extractor', collectDefaults: false }),
    });
    await worker.worker.waitUntilReady();
    producer = new Redis(TEST_REDIS_URL);
    await producer.ping();
    const target = new URL(TEST_REDIS_URL);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    // The hub's listeners go through the proxy; its producer does not.
    hub = new QueueHub({ producer, redisUrl: proxy.through(TEST_REDIS_URL), prefix: prefix.prefix, name: 'hub-test' });
    await hub.listenAll();
  });
  afterAll(async () => {
    release();
    await hub?.close();
    await proxy?.close();
    await worker?.close(1_000);
    producer?.disconnect();
    await prefix?.cleanup();
  });

  it('gets the result from the job when the completed entry was trimmed before the listener read it', async () => {
    const running = new Promise<void>((resolve) => (started = resolve));
    const outcome = hub.run(held, QUEUES.extractor, { tenant: 'acme', input: { text: 'missed' } }, 'jmissed1', { timeoutMs: 15_000, mayExist: false });
    await running;
    await proxy.cut();
    release();
    await expect.poll(() => hub.queue(QUEUES.extractor).getJobState('jmissed1'), { timeout: 5_000 }).toBe('completed');
    // Later entries push it out of the stream before the listener could read it.
    const stream = `${prefix.prefix}:${QUEUES.extractor}:events`;
    for (let i = 0; i < 5; i++) await producer.xadd(stream, '*', 'event', 'drained');
    await producer.xtrim(stream, 'MAXLEN', 2);
    await proxy.restore();
    expect(await outcome).toEqual({ kind: 'completed', value: { echoed: 'missed' } });
  });
});

/**
 * Issue 18: a hub closed while Redis is away (its listeners between reconnect
 * attempts) must still close. ioredis never emits 'end' for a client that is
 * disconnected while it waits to reconnect, and BullMQ's QueueEvents.close()
 * waits for that 'end': a gateway stopping during a Redis outage hung here.
 */
describe('closing a hub whose listeners are waiting to reconnect', () => {
  let prefix: TestPrefix;
  let producer: Redis;
  let proxy: TcpProxy;

  beforeAll(async () => {
    prefix = await useTestPrefix('close_reconnecting');
    producer = new Redis(TEST_REDIS_URL);
    await producer.ping();
    const target = new URL(TEST_REDIS_URL);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  });
  afterAll(async () => {
    await proxy?.close();
    producer?.disconnect();
    await prefix?.cleanup();
  });

  it('resolves close() within a few seconds while Redis is unreachable', async () => {
    const hub = new QueueHub({ producer, redisUrl: proxy.through(TEST_REDIS_URL), prefix: prefix.prefix, name: 'hub-close-test' });
    await hub.listenAll();
    await proxy.cut();
    // Reconnect attempts back off to 2 s apart, so the listeners are now waiting between them.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const outcome = await Promise.race([
      hub.close().then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still closing after 5 s'), 5_000)),
    ]);
    expect(outcome).toBe('closed');
    // Closed for good: with Redis back, no listener of the hub reconnects.
    await proxy.restore();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(String(await producer.client('LIST'))).not.toContain('hub-close-test:events');
  });
});
