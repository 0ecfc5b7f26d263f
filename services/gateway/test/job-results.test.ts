/**
 * What a caller reads about its jobs: one consistent read, no missed
 * outcomes after a start, Idempotency-Keys that survive a failure, rpc
 * results that leave Redis once delivered, and pings that never pile up.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DependencyError, OPERATIONS, QUEUES, defineOperation } from '@vouch/contracts';
import { EVENT_STREAM_MAX_LEN, consumerRedisOptions, createLogger, createMetrics, handle, startServiceWorker, type ServiceWorker } from '@vouch/platform';
import { TEST_REDIS_URL } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

const echoInput = z.object({ text: z.string().max(100), delayMs: z.number().int().min(0).max(10_000).default(0) }).strict();
const echoJob = defineOperation({
  name: 'test.echoJob',
  summary: 'echo',
  description: 'Echoes text after delayMs.',
  owner: { queue: QUEUES.extractor },
  mode: 'job',
  http: { method: 'POST', path: '/v1/test/echo-job' },
  scope: 'media:read',
  input: echoInput,
  output: z.object({ echoed: z.string() }),
  agentFacing: false,
  example: { text: 'hello' },
  retry: { attempts: 1, backoffMs: 0 },
});
const echoRpc = defineOperation({ ...echoJob, name: 'test.echoRpc', mode: 'rpc', http: { method: 'POST', path: '/v1/test/echo-rpc' }, timeoutMs: 5_000 });
/** Fails with a dependency outage while `outage` is on. */
const fragile = defineOperation({ ...echoRpc, name: 'test.fragile', http: { method: 'POST', path: '/v1/test/fragile' }, timeoutMs: 5_000 });
const TABLE = [...OPERATIONS, echoJob, echoRpc, fragile];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

describe('job results', () => {
  let gw: GatewayUnderTest;
  let worker: ServiceWorker;
  let redis: Redis;
  let key: string;
  let outage = true;
  const runs = new Map<string, number>();

  const startWorker = (prefix: string, concurrency = 8) =>
    startServiceWorker({
      service: 'extractor',
      version: '1.0.0',
      queue: QUEUES.extractor,
      operations: [echoJob, echoRpc, fragile],
      handlers: [echoJob, echoRpc, fragile].map((op) =>
        handle(op, async ({ text, delayMs }) => {
          runs.set(text, (runs.get(text) ?? 0) + 1);
          if (op === fragile && outage) throw new DependencyError('the store is down: retry later');
          if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
          return { echoed: text };
        }),
      ),
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix,
      concurrency,
      logger: createLogger({ service: 'extractor', level: 'silent' }),
      metrics: createMetrics({ service: 'extractor', collectDefaults: false }),
    });

  beforeAll(async () => {
    gw = await startGatewayUnderTest('job_results', {}, TABLE);
    key = await gw.createKey('acme');
    worker = startWorker(gw.prefix);
    await worker.worker.waitUntilReady();
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await worker?.close(1_000);
    await gw?.stop();
    redis?.disconnect();
  });

  const post = async (path: string, json: unknown, headers: Record<string, string> = {}) => {
    const res = await gw.fetch(path, { key, json, headers });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  };
  const get = async (path: string) => {
    const res = await gw.fetch(path, { key });
    return { status: res.status, body: (await res.json()) as Json };
  };

  it('never reads a job as completed without its result, finish time and attempts', async () => {
    // Each job is read over and over while it finishes; a state read apart
    // from the fields used to say "completed" with result null about 5 % of the time.
    const bad: Json[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const accepted = await post('/v1/test/echo-job', { text: `read-${i}`, delayMs: 5 });
        for (;;) {
          const { body } = await get(accepted.body.statusUrl);
          if (body.state === 'completed') {
            if (body.result?.echoed !== `read-${i}` || body.finishedAt === null || body.attemptsMade !== 1) bad.push(body);
            return;
          }
        }
      }),
    );
    expect(bad).toEqual([]);
  });

  it('runs an Idempotency-Key again after a 5xx, and replays it once it succeeded', async () => {
    outage = true;
    const first = await post('/v1/test/fragile', { text: 'fragile' }, { 'Idempotency-Key': 'fragile-1' });
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).not.toBeNull();
    outage = false;
    const retried = await post('/v1/test/fragile', { text: 'fragile' }, { 'Idempotency-Key': 'fragile-1' });
    expect(retried).toMatchObject({ status: 200, body: { echoed: 'fragile' } });
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const replayed = await post('/v1/test/fragile', { text: 'fragile' }, { 'Idempotency-Key': 'fragile-1' });
    expect(replayed).toMatchObject({ status: 200, body: { echoed: 'fragile' } });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(runs.get('fragile')).toBe(2);
  });

  it('removes an rpc result from Redis once it is delivered, and trims the events stream', async () => {
    const before = await redis.keys(`${gw.prefix}:extractor:*`);
    for (let i = 0; i < 5; i++) expect((await post('/v1/test/echo-rpc', { text: `rpc-${i}` })).status).toBe(200);
    // Removal runs after the answer is sent: give it a moment to land.
    await expect.poll(async () => (await redis.keys(`${gw.prefix}:extractor:j*`)).filter((k) => !before.includes(k)), { timeout: 5_000 }).toEqual([]);
    expect(await redis.hget(`${gw.prefix}:extractor:meta`, 'opts.maxLenEvents')).toBe(String(EVENT_STREAM_MAX_LEN));
  });
});

describe('pings', () => {
  let gw: GatewayUnderTest;
  let redis: Redis;
  let key: string;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('pings', {}, TABLE);
    key = await gw.createKey('ops', 'system:read');
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await gw?.stop();
    redis?.disconnect();
  });

  it('refuses a ping at once when no worker is connected, and leaves no job behind', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => gw.fetch('/v1/system/ping', { key, json: { service: 'vision-router' } })));
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).not.toBeNull();
      expect(((await res.json()) as Json).detail).toBe('no vision-router worker is connected: the service is not running; start it, then retry');
    }
    expect(await gw.gateway.hub.queue(QUEUES.visionRouter).getJobCounts('waiting', 'active', 'completed', 'failed')).toEqual({ waiting: 0, active: 0, completed: 0, failed: 0 });
  });

  it('removes a ping that timed out, so a busy worker does not chew through it later', async () => {
    const worker = startServiceWorker({
      service: 'extractor',
      version: '1.0.0',
      queue: QUEUES.extractor,
      operations: [echoJob, echoRpc, fragile],
      handlers: [echoJob, echoRpc, fragile].map((op) => handle(op, async ({ text, delayMs }) => (await new Promise((r) => setTimeout(r, delayMs)), { echoed: text }))),
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix: gw.prefix,
      concurrency: 1,
      logger: createLogger({ service: 'extractor', level: 'silent' }),
      metrics: createMetrics({ service: 'extractor', collectDefaults: false }),
    });
    try {
      await worker.worker.waitUntilReady();
      // The only slot is busy for longer than the ping waits (5 s).
      const busy = await gw.fetch('/v1/test/echo-job', { key: await gw.createKey('acme'), json: { text: 'busy', delayMs: 10_000 } });
      expect(busy.status).toBe(202);
      await expect.poll(() => gw.gateway.hub.queue(QUEUES.extractor).getActiveCount(), { timeout: 5_000 }).toBe(1);
      const ping = await gw.fetch('/v1/system/ping', { key, json: { service: 'extractor' } });
      expect(ping.status).toBe(504);
      // Still busy for seconds: the ping is gone because it was removed, not because it ran.
      await expect.poll(() => gw.gateway.hub.queue(QUEUES.extractor).getWaitingCount(), { timeout: 2_000 }).toBe(0);
      expect(await gw.gateway.hub.queue(QUEUES.extractor).getActiveCount()).toBe(1);
    } finally {
      await worker.close(15_000);
    }
  }, 40_000);
});

describe('the first requests after a gateway starts', () => {
  it('see a running service as up and get their rpc results, restart after restart', async () => {
    const first = await startGatewayUnderTest('first_rpc', {}, TABLE);
    const worker = startServiceWorker({
      service: 'extractor',
      version: '1.0.0',
      queue: QUEUES.extractor,
      operations: [echoJob, echoRpc, fragile],
      handlers: [echoJob, echoRpc, fragile].map((op) => handle(op, async ({ text }) => ({ echoed: text }))),
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix: first.prefix,
      concurrency: 4,
      logger: createLogger({ service: 'extractor', level: 'silent' }),
      metrics: createMetrics({ service: 'extractor', collectDefaults: false }),
    });
    await worker.worker.waitUntilReady();
    const key = await first.createKey('acme', 'system:read,media:read');
    await first.gateway.stop();
    try {
      for (let restart = 0; restart < 5; restart++) {
        // A new gateway process on the same queues and keys: its first requests.
        const gw = await startGatewayUnderTest('first_rpc', { BULLMQ_PREFIX: first.prefix, DB_SCHEMA: first.schema }, TABLE);
        try {
          const [status, rpc] = await Promise.all([gw.fetch('/v1/system/status', { key }), gw.fetch('/v1/test/echo-rpc', { key, json: { text: `first-${restart}` } })]);
          const body = (await status.json()) as Json;
          const extractor = body.services.find((s: Json) => s.service === 'extractor');
          expect(extractor).toMatchObject({ up: true, workers: 1 });
          expect(JSON.stringify(body)).not.toMatch(/bull:|Missing key|t_first_rpc/);
          expect(rpc.status).toBe(200);
          expect(await rpc.json()).toEqual({ echoed: `first-${restart}` });
        } finally {
          await gw.stop();
        }
      }
    } finally {
      await worker.close(1_000);
      await first.stop();
    }
  }, 60_000);
});
