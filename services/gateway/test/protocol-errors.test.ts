import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

/** Writes raw bytes to the gateway and reads until it closes the connection. */
function rawExchange(port: number, bytes: string | Buffer): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    socket.write(bytes);
  });
}

describe('protocol-level errors at the gateway', () => {
  let gw: GatewayUnderTest;
  let key: string;
  beforeAll(async () => {
    gw = await startGatewayUnderTest('protocol_errors');
    key = await gw.createKey('acme');
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('answers oversized headers with a 431 problem document, not a bare status line', async () => {
    const res = await rawExchange(gw.gateway.port, `GET /v1/system/status HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(res.body)).toMatchObject({ status: 431, code: 'HEADERS_TOO_LARGE', detail: expect.stringContaining('headers are larger than'), requestId: res.headers['x-request-id'] });
  });

  it('answers a request that is not HTTP with a 400 problem document', async () => {
    const res = await rawExchange(gw.gateway.port, 'HELLO THERE\r\n\r\n');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(res.body)).toMatchObject({ status: 400, code: 'BAD_INPUT', detail: expect.stringContaining('not valid HTTP/1.1') });
  });

  it('refuses a JSON body declared in another charset with 415 naming UTF-8, and takes charset=utf-8 in any case', async () => {
    for (const charset of ['utf-16le', 'utf-16', 'iso-8859-1', 'latin1', 'utf8']) {
      const body = Buffer.from(JSON.stringify({ service: 'ledger-critic' }), charset.startsWith('utf-16') ? 'utf16le' : 'latin1');
      const res = await gw.fetch('/v1/system/ping', { key, method: 'POST', body, headers: { 'content-type': `application/json; charset=${charset}` } });
      expect(res.status, charset).toBe(415);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const problem = (await res.json()) as { code: string; detail: string };
      expect(problem.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(problem.detail).toContain('must be UTF-8');
    }
    for (const charset of ['utf-8', 'UTF-8']) {
      const res = await gw.fetch('/v1/media/resolve', { key, method: 'POST', body: JSON.stringify({ surface: 'api', chatKey: 'c' }), headers: { 'content-type': `application/json; charset=${charset}` } });
      expect(res.status, charset).toBe(404);
    }
  });
});
