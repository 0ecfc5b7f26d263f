import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '@vouch/contracts';
import { TEST_DATABASE_URL, TEST_REDIS_URL, eventually, startTcpProxy, type TcpProxy } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { startLedgerServiceUnderTest, type LedgerServiceUnderTest } from './ledger-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

describe('the ledger-critic when its Postgres goes away', () => {
  let gw: GatewayUnderTest;
  let svc: LedgerServiceUnderTest;
  let proxy: TcpProxy;
  let queue: Queue;
  let key: string;

  beforeAll(async () => {
    const db = new URL(TEST_DATABASE_URL);
    proxy = await startTcpProxy({ host: db.hostname, port: Number(db.port || 5432) });
    gw = await startGatewayUnderTest('ledger_outage');
    // The service reaches Postgres only through the proxy, so cutting it is Postgres going away for this worker alone.
    svc = await startLedgerServiceUnderTest('ledger_outage', { DATABASE_URL: proxy.through(TEST_DATABASE_URL) }, { prefix: gw.prefix });
    queue = new Queue(QUEUES.ledgerCritic, { connection: { url: TEST_REDIS_URL }, prefix: gw.prefix });
    key = await gw.createKey('acme');
  });
  afterAll(async () => {
    await proxy?.restore();
    await queue?.close();
    await svc?.stop();
    await gw?.stop();
    await proxy?.close();
  });

  const call = async (path: string, init: { json?: unknown } = {}) => {
    const res = await gw.fetch(path, { key, ...init });
    const text = await res.text();
    return { status: res.status, retryAfter: res.headers.get('retry-after'), text, body: JSON.parse(text) as Json };
  };

  it('answers 503 DEPENDENCY_UNAVAILABLE with Retry-After, naming no address, and recovers when Postgres is back', async () => {
    expect((await call('/v1/ledgers', { json: { runId: 'run-before', goal: 'Rotate the TLS certificate on the edge proxy' } })).status).toBe(200);

    await proxy.cut();
    for (const [path, init] of [
      ['/v1/ledgers/run-before', {}],
      ['/v1/ledgers/run-before/evidence', { json: { items: [{ kind: 'tool_result', summary: 'openssl shows the new certificate' }] } }],
      ['/v1/ledgers', { json: { runId: 'run-during', goal: 'Renew the certificate' } }],
    ] as const) {
      const res = await call(path, init);
      expect(res.status, `${path}: ${res.text}`).toBe(503);
      expect(res.retryAfter).toBe('5');
      expect(res.body).toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE', detail: 'a dependency of ledger-critic is unavailable: retry in a few seconds' });
      for (const needle of ['127.0.0.1', String(proxy.port), 'ECONNREFUSED', 'connect', 'terminated']) expect(res.text).not.toContain(needle);
    }
    // Each rpc failed once and was not retried behind the caller's back.
    const failed = await queue.getFailed();
    expect(failed.length).toBeGreaterThanOrEqual(3);
    expect(failed.every((job) => job.attemptsMade === 1)).toBe(true);

    await proxy.restore();
    const back = await eventually('the ledger answers again', async () => {
      const res = await call('/v1/ledgers/run-before');
      return res.status === 200 ? res : undefined;
    });
    expect(back.body).toMatchObject({ runId: 'run-before', status: 'open' });
  });

  it('retries a critique job through the outage and finishes it once Postgres is back', async () => {
    expect((await call('/v1/ledgers', { json: { runId: 'run-job', goal: 'Rotate the TLS certificate on the edge proxy' } })).status).toBe(200);
    await proxy.cut();
    const accepted = await call('/v1/ledgers/run-job/completion', { json: { summary: 'Rotated the certificate on edge-proxy-1.' } });
    expect(accepted.status).toBe(202);
    const jobId = (accepted.body.jobId as string).split('.')[1]!;
    await eventually('the first attempt failed', async () => ((await queue.getJob(jobId))?.attemptsMade ?? 0) >= 1 || undefined);
    await proxy.restore();
    const done = await call(`/v1/jobs/${accepted.body.jobId}?wait=30`);
    expect(done.body).toMatchObject({ state: 'completed', result: { runId: 'run-job', cycle: 1 } });
    expect(done.body.attemptsMade).toBeGreaterThanOrEqual(2);
  });
});
