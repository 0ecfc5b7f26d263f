import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OPERATIONS, QUEUES, defineOperation } from '@vouch/contracts';
import { consumerRedisOptions, createLogger, createMetrics, createPool, handle, startServiceWorker, type Pool, type ServiceWorker } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, closedPort, startSilentServer, type SilentServer } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

// How a handler fails, one way per value; `tag` keeps the runs of each test apart.
const FailureInput = z.object({ what: z.enum(['bad-sql', 'missing-table', 'bug', 'odd', 'outage', 'hung', 'outage-once']), tag: z.string() }).strict();
const base = {
  summary: 'fail on purpose',
  description: 'Fails the way `what` names, on a real Postgres or a real dead port.',
  owner: { queue: QUEUES.extractor },
  scope: 'media:read' as const,
  input: FailureInput,
  output: z.object({ ok: z.boolean(), runs: z.number() }),
  agentFacing: false,
  example: { what: 'bad-sql' as const, tag: 'example' },
};
const failRpc = defineOperation({ ...base, name: 'test.failRpc', mode: 'rpc', http: { method: 'POST', path: '/v1/test/fail-rpc' }, timeoutMs: 20_000, retry: { attempts: 3, backoffMs: 100 } });
const failJob = defineOperation({ ...base, name: 'test.failJob', mode: 'job', http: { method: 'POST', path: '/v1/test/fail-job' }, retry: { attempts: 3, backoffMs: 100 } });

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

/** What no answer may hold: driver text, SQL, addresses, storage names. */
function expectNoInternals(body: string, extra: string[] = []): void {
  for (const needle of ['ECONNREFUSED', 'invalid input syntax', 'not a number', 'no_such_table', 'does not exist', '22P02', '42P01', 'Cannot read', 'undefined', '10.1.2.3', '127.0.0.1', 'timeout exceeded', 'vouch:extractor', ' at ', ...extra]) {
    expect(body, `the answer holds "${needle}"`).not.toContain(needle);
  }
}

describe('a worker whose handler fails', () => {
  let gw: GatewayUnderTest;
  let worker: ServiceWorker;
  let pool: Pool;
  let deadPool: Pool;
  let hungPool: Pool;
  let silent: SilentServer;
  let deadPort: number;
  let key: string;
  const runs = new Map<string, number>();
  const logLines: Json[] = [];

  beforeAll(async () => {
    gw = await startGatewayUnderTest('worker_failures', {}, [...OPERATIONS, failRpc, failJob]);
    key = await gw.createKey('acme');
    deadPort = await closedPort();
    silent = await startSilentServer();
    const at = (port: number) => {
      const u = new URL(TEST_DATABASE_URL);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    };
    pool = createPool({ url: TEST_DATABASE_URL, schema: 'public', max: 2 });
    deadPool = createPool({ url: at(deadPort), schema: 'public', max: 2 });
    hungPool = createPool({ url: at(silent.port), schema: 'public', max: 2, connectTimeoutMs: 300 });
    const fail = (op: typeof failRpc) =>
      handle(op, async ({ what, tag }) => {
        const n = (runs.get(tag) ?? 0) + 1;
        runs.set(tag, n);
        if (what === 'bad-sql') await pool.query('SELECT $1::int AS n', ['not a number']);
        if (what === 'missing-table') await pool.query('SELECT * FROM no_such_table');
        if (what === 'bug') (undefined as unknown as { x: { y: number } }).x.y += 1;
        if (what === 'odd') throw new Error('odd failure talking to 10.1.2.3:7777 (key vouch:extractor:123)');
        if (what === 'outage') await deadPool.query('SELECT 1');
        if (what === 'hung') await hungPool.query('SELECT 1');
        if (what === 'outage-once' && n === 1) await deadPool.query('SELECT 1');
        return { ok: true, runs: n };
      });
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().trim().split('\n')) logLines.push(JSON.parse(line));
        done();
      },
    });
    worker = startServiceWorker({
      service: 'extractor',
      version: '0.0.0-test',
      queue: QUEUES.extractor,
      operations: [failRpc, failJob],
      handlers: [fail(failRpc), fail(failJob)],
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix: gw.prefix,
      concurrency: 4,
      logger: createLogger({ service: 'extractor', level: 'info', destination: sink }),
      metrics: createMetrics({ service: 'extractor', collectDefaults: false }),
    });
    await worker.worker.waitUntilReady();
  });

  afterAll(async () => {
    await worker?.close(1_000);
    await Promise.all([pool?.end(), deadPool?.end(), hungPool?.end()]);
    await silent?.close();
    await gw?.stop();
  });

  const post = async (path: string, json: unknown) => {
    const res = await gw.fetch(path, { key, json });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as Json };
  };
  const jobResult = async (jobId: string) => {
    const res = await gw.fetch(`/v1/jobs/${jobId}?wait=20`, { key });
    const text = await res.text();
    return { text, body: JSON.parse(text) as Json };
  };

  it('answers a Postgres outage in an rpc with 503 and Retry-After after one attempt, with no address or driver text', async () => {
    const res = await post('/v1/test/fail-rpc', { what: 'outage', tag: 'rpc-outage' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body).toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE', detail: 'a dependency of extractor is unavailable: retry in a few seconds' });
    expectNoInternals(res.text, [String(deadPort)]);
    // The caller was told to retry, so the job must not go on retrying behind its back.
    expect(runs.get('rpc-outage')).toBe(1);
  });

  it('answers a Postgres that accepts and never answers with 503 too', async () => {
    const res = await post('/v1/test/fail-rpc', { what: 'hung', tag: 'rpc-hung' });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('DEPENDENCY_UNAVAILABLE');
    expectNoInternals(res.text, [String(silent.port)]);
  });

  it('answers a Postgres data error with 500 and a generic message after one attempt, and logs the full error under the job and request id', async () => {
    const res = await post('/v1/test/fail-rpc', { what: 'bad-sql', tag: 'rpc-bad-sql' });
    expect(res.status).toBe(500);
    const requestId = res.headers.get('x-request-id');
    expect(res.body).toMatchObject({ code: 'INTERNAL', requestId, detail: `internal error in extractor: see the logs under request id ${requestId}` });
    expectNoInternals(res.text);
    expect(runs.get('rpc-bad-sql')).toBe(1);
    const logged = logLines.find((l) => l.requestId === requestId && l.level === 'error');
    expect(logged).toMatchObject({ op: 'test.failRpc', jobId: expect.any(String), retry: false });
    expect(logged.err.message).toContain('invalid input syntax for type integer');
    expect(logged.err.code).toBe('22P02');
  });

  it('does not retry a query on a missing table, or a programming error', async () => {
    const missing = await post('/v1/test/fail-rpc', { what: 'missing-table', tag: 'rpc-missing' });
    expect(missing.status).toBe(500);
    expectNoInternals(missing.text);
    expect(runs.get('rpc-missing')).toBe(1);
    const bug = await post('/v1/test/fail-rpc', { what: 'bug', tag: 'rpc-bug' });
    expect(bug.status).toBe(500);
    expectNoInternals(bug.text);
    expect(runs.get('rpc-bug')).toBe(1);
  });

  it('retries an unclassified error, then answers 500 without its message', async () => {
    const res = await post('/v1/test/fail-rpc', { what: 'odd', tag: 'rpc-odd' });
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('INTERNAL');
    expectNoInternals(res.text, ['7777', 'odd failure']);
    expect(runs.get('rpc-odd')).toBe(3);
  });

  it('retries a job through a Postgres outage and completes it once Postgres answers', async () => {
    const accepted = await post('/v1/test/fail-job', { what: 'outage-once', tag: 'job-outage-once' });
    expect(accepted.status).toBe(202);
    const done = await jobResult(accepted.body.jobId);
    expect(done.body).toMatchObject({ state: 'completed', attemptsMade: 2, result: { ok: true, runs: 2 } });
  });

  it('fails a job whose Postgres stays away after its attempts, as DEPENDENCY_UNAVAILABLE with a generic message', async () => {
    const accepted = await post('/v1/test/fail-job', { what: 'outage', tag: 'job-outage' });
    const done = await jobResult(accepted.body.jobId);
    expect(done.body).toMatchObject({ state: 'failed', attemptsMade: 3, error: { code: 'DEPENDENCY_UNAVAILABLE', message: 'a dependency of extractor is unavailable: retry in a few seconds' } });
    expectNoInternals(done.text, [String(deadPort)]);
  });

  it('fails a job on a Postgres data error at once, with a generic message', async () => {
    const accepted = await post('/v1/test/fail-job', { what: 'bad-sql', tag: 'job-bad-sql' });
    const done = await jobResult(accepted.body.jobId);
    expect(done.body, done.text).toMatchObject({ state: 'failed', attemptsMade: 1, error: { code: 'INTERNAL', message: expect.stringMatching(/^internal error in extractor: see the logs under request id /) } });
    expectNoInternals(done.text);
    expect(runs.get('job-bad-sql')).toBe(1);
  });
});
