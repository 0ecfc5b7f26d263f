/**
 * The queue dashboard shows every tenant's jobs: only operator keys open it,
 * and it changes nothing unless the gateway is configured to allow it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, SERVICE_QUEUES } from '@vouch/contracts';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

function operatorKey(gw: GatewayUnderTest): string {
  const r = gw.keys('create', '--operator', '--name', 'on-call', '--json');
  if (r.status !== 0) throw new Error(`keys create --operator failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { key: string }).key;
}

const basic = (key: string) => `Basic ${Buffer.from(`operator:${key}`).toString('base64')}`;

describe('the queue dashboard', () => {
  let gw: GatewayUnderTest;
  let operator: string;
  let tenantAdmin: string;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('dashboard');
    operator = operatorKey(gw);
    tenantAdmin = await gw.createKey('acme', 'admin');
  });
  afterAll(async () => {
    await gw?.stop();
  });

  const call = async (path: string, init: RequestInit & { key?: string } = {}) => {
    const res = await gw.fetch(path, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined) as Json };
  };

  it('opens to an operator key, as a bearer token or a browser\'s Basic auth password', async () => {
    const page = await call('/admin/queues', { key: operator });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<!DOCTYPE html>');
    const queues = await call('/admin/queues/api/queues', { headers: { Authorization: basic(operator) } });
    expect(queues.status).toBe(200);
    expect(queues.body.queues.map((q: { name: string }) => q.name).sort()).toEqual([...SERVICE_QUEUES].sort());
    expect(queues.body.queues.every((q: { readOnlyMode: boolean }) => q.readOnlyMode)).toBe(true);
  });

  it('is closed to every tenant key, even one with the admin scope', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues', `/admin/queues/api/queues/${QUEUES.ledgerCritic}/waiting`]) {
      const res = await call(path, { key: tenantAdmin });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body.detail).toContain('operator keys');
    }
    const forged = await call(`/admin/queues/api/queues/${QUEUES.ledgerCritic}/add`, {
      key: tenantAdmin,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ledger.recordEvidence', data: { tenant: 'globex', input: {} } }),
    });
    expect(forged.status).toBe(403);
    expect(await gw.gateway.hub.queue(QUEUES.ledgerCritic).getJobCounts('waiting')).toEqual({ waiting: 0 });
  });

  it('asks for credentials when none are sent, and refuses unknown keys', async () => {
    const none = await call('/admin/queues');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Basic realm="vouch operators"');
    expect((await call('/admin/queues', { headers: { Authorization: basic('vk_nope') } })).status).toBe(401);
  });

  it('changes nothing when read-only: no pause, clean, obliterate or forged job', async () => {
    const queue = gw.gateway.hub.queue(QUEUES.ledgerCritic);
    for (const [method, path, body] of [
      ['PUT', `/admin/queues/api/queues/${QUEUES.ledgerCritic}/pause`, undefined],
      ['PUT', `/admin/queues/api/queues/${QUEUES.ledgerCritic}/clean/completed`, undefined],
      ['PUT', `/admin/queues/api/queues/${QUEUES.ledgerCritic}/obliterate`, undefined],
      ['POST', `/admin/queues/api/queues/${QUEUES.ledgerCritic}/add`, { name: 'ledger.recordEvidence', data: { tenant: 'acme', input: {} } }],
      ['PUT', '/admin/queues/api/queues/pause', undefined],
    ] as const) {
      const res = await call(path, { key: operator, method, headers: { 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.detail).toContain('read-only');
    }
    expect(await queue.isPaused()).toBe(false);
    expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 0 });
  });

  it('gives an operator key no tenant operation', async () => {
    const res = await call('/v1/media/recent?surface=api&chatKey=c', { key: operator });
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('operator key opens the queue dashboard only');
  });

  it('cannot be minted as a tenant', () => {
    const asTenant = gw.keys('create', '--tenant', '@operators');
    expect(asTenant.status).not.toBe(0);
    expect(asTenant.stderr).toContain('invalid tenant');
    const mixed = gw.keys('create', '--operator', '--tenant', 'acme');
    expect(mixed.status).not.toBe(0);
    expect(mixed.stderr).toContain('an operator key has no tenant');
  });
});

describe('the queue dashboard with DASHBOARD_WRITABLE=true', () => {
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('dashboard_rw', { DASHBOARD_WRITABLE: 'true' });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('lets an operator pause and resume a queue', async () => {
    const operator = operatorKey(gw);
    const queue = gw.gateway.hub.queue(QUEUES.extractor);
    const pause = await gw.fetch(`/admin/queues/api/queues/${QUEUES.extractor}/pause`, { key: operator, method: 'PUT' });
    expect(pause.status).toBe(200);
    expect(await queue.isPaused()).toBe(true);
    expect((await gw.fetch(`/admin/queues/api/queues/${QUEUES.extractor}/resume`, { key: operator, method: 'PUT' })).status).toBe(200);
    expect(await queue.isPaused()).toBe(false);
  });
});
