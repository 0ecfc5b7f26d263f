import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { NotFoundError, OPERATIONS, QUEUES, SERVICE_QUEUES, VouchClient, VouchError, defineOperation, mediaRecent } from '@vouch/contracts';
import { consumerRedisOptions, createLogger, createMetrics, handle, startServiceWorker, type ServiceWorker } from '@vouch/platform';
import { TEST_REDIS_URL } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

// Two operations on the extractor's queue, served in this test by an in-process worker.
const slowEcho = defineOperation({
  name: 'test.slowEcho',
  summary: 'echo after a delay',
  description: 'Echoes text after delayMs; fails with not-found for the text "missing".',
  owner: { queue: QUEUES.extractor },
  mode: 'job',
  http: { method: 'POST', path: '/v1/test/slow-echo' },
  scope: 'media:read',
  input: z.object({ text: z.string().max(100), delayMs: z.number().int().min(0).max(10_000).default(0) }).strict(),
  output: z.object({ echoed: z.string(), runs: z.number().int() }),
  agentFacing: true,
  example: { text: 'hello' },
  retry: { attempts: 1, backoffMs: 0 },
});
const quickEcho = defineOperation({ ...slowEcho, name: 'test.quickEcho', mode: 'rpc', http: { method: 'POST', path: '/v1/test/quick-echo' }, timeoutMs: 1_000 });
const TABLE = [...OPERATIONS, slowEcho, quickEcho];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

describe('operations served through a queue', () => {
  let gw: GatewayUnderTest;
  let worker: ServiceWorker;
  let acme: string;
  let globex: string;
  const runs = new Map<string, number>();

  beforeAll(async () => {
    gw = await startGatewayUnderTest('queue_ops', {}, TABLE);
    acme = await gw.createKey('acme');
    globex = await gw.createKey('globex');
    const echo = (op: typeof slowEcho) =>
      handle(op, async ({ text, delayMs }) => {
        if (text === 'missing') throw new NotFoundError('no such text: send another');
        runs.set(text, (runs.get(text) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, delayMs));
        return { echoed: text, runs: runs.get(text)! };
      });
    worker = startServiceWorker({
      service: 'extractor',
      version: '9.9.9',
      queue: QUEUES.extractor,
      operations: [slowEcho, quickEcho],
      handlers: [echo(slowEcho), echo(quickEcho)],
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix: gw.prefix,
      concurrency: 4,
      logger: createLogger({ service: 'extractor', level: 'silent' }),
      metrics: createMetrics({ service: 'extractor', collectDefaults: false }),
    });
    await worker.worker.waitUntilReady();
  });

  afterAll(async () => {
    await worker?.close(1_000);
    await gw?.stop();
  });

  const post = async (path: string, key: string, json: unknown, headers: Record<string, string> = {}) => {
    const res = await gw.fetch(path, { key, json, headers });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const get = async (path: string, key: string) => {
    const res = await gw.fetch(path, { key });
    return { status: res.status, body: (await res.json()) as Json };
  };

  it('answers a job operation with 202 and a handle whose status URL gives the result', async () => {
    const accepted = await post('/v1/test/slow-echo', acme, { text: 'hello', delayMs: 200 });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ operation: 'test.slowEcho', statusUrl: `/v1/jobs/${accepted.body.jobId}` });
    expect(accepted.body.jobId).toMatch(/^extractor\.j[0-9a-f]{32}$/);
    const done = await get(`${accepted.body.statusUrl}?wait=5`, acme);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ jobId: accepted.body.jobId, state: 'completed', result: { echoed: 'hello', runs: 1 }, attemptsMade: 1 });
    expect(done.body.finishedAt).not.toBeNull();
  });

  it('shows a job only to its own tenant', async () => {
    const accepted = await post('/v1/test/slow-echo', acme, { text: 'private' });
    const foreign = await get(`/v1/jobs/${accepted.body.jobId}`, globex);
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toContain('no job');
    expect((await get('/v1/jobs/not-a-job', acme)).status).toBe(400);
    expect((await get('/v1/jobs/extractor.jdoesnotexist', acme)).status).toBe(404);
  });

  it('reports a failed job with its typed reason', async () => {
    const accepted = await post('/v1/test/slow-echo', acme, { text: 'missing' });
    const failed = await get(`/v1/jobs/${accepted.body.jobId}?wait=5`, acme);
    expect(failed.body).toMatchObject({ state: 'failed', error: { code: 'NOT_FOUND', message: 'no such text: send another' } });
  });

  it('runs a job once for repeated requests with one Idempotency-Key', async () => {
    const first = await post('/v1/test/slow-echo', acme, { text: 'once', delayMs: 100 }, { 'Idempotency-Key': 'job-key-1' });
    const second = await post('/v1/test/slow-echo', acme, { text: 'once', delayMs: 100 }, { 'Idempotency-Key': 'job-key-1' });
    expect(second.body.jobId).toBe(first.body.jobId);
    expect(first.body.jobId).toMatch(/^extractor\.k[0-9a-f]{40}$/);
    await get(`/v1/jobs/${first.body.jobId}?wait=5`, acme);
    expect(runs.get('once')).toBe(1);
  });

  it('waits for an rpc operation and maps its typed failure to HTTP', async () => {
    const ok = await post('/v1/test/quick-echo', acme, { text: 'rpc' });
    expect(ok).toEqual({ status: 200, body: { echoed: 'rpc', runs: 1 } });
    const missing = await post('/v1/test/quick-echo', acme, { text: 'missing' });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'NOT_FOUND', detail: 'no such text: send another' });
  });

  it('answers 504 with the job id when an rpc operation outlives its timeout, and the job still finishes', async () => {
    const slow = await post('/v1/test/quick-echo', acme, { text: 'late', delayMs: 1_500 });
    expect(slow.status).toBe(504);
    expect(slow.body.code).toBe('TIMEOUT');
    expect(slow.body.details.jobId).toMatch(/^extractor\./);
    const later = await get(`/v1/jobs/${slow.body.details.jobId}?wait=5`, acme);
    expect(later.body).toMatchObject({ state: 'completed', result: { echoed: 'late' } });
  });

  it('pings a service through its queue and reports every service\'s status and depth', async () => {
    const admin = await gw.createKey('ops', 'system:read');
    const ping = await post('/v1/system/ping', admin, { service: 'extractor' });
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ service: 'extractor', version: '9.9.9', concurrency: 4, pid: process.pid });
    const status = await get('/v1/system/status', admin);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ redis: { up: true }, postgres: { up: true } });
    const byName = Object.fromEntries(status.body.services.map((s: { service: string }) => [s.service, s]));
    expect(Object.keys(byName).sort()).toEqual([...SERVICE_QUEUES].sort());
    expect(byName.extractor).toMatchObject({ up: true, workers: 1, ping: { service: 'extractor', version: '9.9.9' } });
    expect(byName.extractor.queue.completed).toBeGreaterThan(0);
    expect(byName['vision-router']).toMatchObject({ up: false, workers: 0, ping: null, reason: 'no worker is connected to the queue' });
  });

  it('is callable through the typed client derived from the table', async () => {
    const client = new VouchClient({ baseUrl: gw.url, apiKey: acme });
    const handle = await client.start(slowEcho, { text: 'typed', delayMs: 50 });
    expect(await client.result(slowEcho, handle, 5)).toEqual({ echoed: 'typed', runs: 1 });
    expect(await client.rpc(quickEcho, { text: 'typed-rpc' })).toEqual({ echoed: 'typed-rpc', runs: 1 });
    const failure = await client.rpc(quickEcho, { text: 'missing' }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(VouchError);
    expect(failure).toMatchObject({ code: 'NOT_FOUND', message: 'no such text: send another' });
    const bad = await client.rpc(mediaRecent, { surface: 'fax' as 'api', chatKey: 'c' }).catch((err: unknown) => err);
    expect(bad).toMatchObject({ code: 'BAD_INPUT', fields: [{ path: 'surface' }] });
  });

  it('exposes queue depth and HTTP metrics on /metrics', async () => {
    const text = await (await gw.fetch('/metrics')).text();
    expect(text).toMatch(/vouch_queue_jobs\{queue="extractor",state="completed",service="gateway"\} [1-9]/);
    expect(text).toMatch(/vouch_http_requests_total\{method="POST",route="\/v1\/test\/slow-echo",status="202",service="gateway"\} [1-9]/);
  });
});

describe('the gateway while Redis is down', () => {
  let gw: GatewayUnderTest;
  let key: string;

  beforeAll(async () => {
    // Nothing listens on port 1: every Redis command fails at once.
    gw = await startGatewayUnderTest('redis_down', { REDIS_URL: 'redis://127.0.0.1:1' });
    key = await gw.createKey('acme');
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('answers queue operations with 503 at once instead of buffering them', async () => {
    const started = Date.now();
    const res = await gw.fetch('/v1/system/ping', { key, json: { service: 'extractor' }, headers: { 'Idempotency-Key': 'while-down' } });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(((await res.json()) as Json).detail).toBe('the extractor queue is unavailable (Redis unreachable): retry in a few seconds');
  });

  it('keeps serving what needs only Postgres, and says it is not ready', async () => {
    expect((await gw.fetch('/v1/media/recent?surface=api&chatKey=c', { key })).status).toBe(200);
    const ready = await gw.fetch('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not ready', checks: { redis: false, postgres: true, migrations: true } });
    const status = (await (await gw.fetch('/v1/system/status', { key })).json()) as Json;
    expect(status.redis).toEqual({ up: false });
    expect(status.services.every((s: { up: boolean; reason: string }) => !s.up && s.reason === 'Redis is unreachable')).toBe(true);
  });
});
