/**
 * /mcp takes bodies through the same door as /v1: the same per-request limit
 * (413 naming it), the same body budget (503 with Retry-After, one budget for
 * both), and no JSON-RPC batches, which MCP removed in 2025-06-18 and which
 * ran up to 100 calls from one request.
 */
import { request, type ClientRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '@vouch/contracts';
import { eventually, metricValue } from '@vouch/testing';
import { bodyLimitFor } from '../src/config.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

const MB = 1_000_000;
// The default limit, and room for one large body at a time: the least budget the gateway accepts.
const LIMIT = bodyLimitFor({ MEDIA_MAX_BYTES: 10 * 1024 * 1024 });
const BUDGET = LIMIT;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function answerOf(req: ClientRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
  });
}

/** A 2025-era tools/call of exactly `size` bytes: media_resolve with a field it refuses (a tool error, answered by the gateway itself). */
const toolCallBody = (size: number) => {
  const head = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"media_resolve","arguments":{"surface":"api","chatKey":"budget","padding":"';
  const tail = '"}}}';
  return Buffer.from(`${head}${'A'.repeat(size - head.length - tail.length)}${tail}`);
};

/** A media.register body of exactly `size` bytes (its image is zeros: a 415 once read). */
const registerBody = (size: number) => {
  const head = '{"surface":"api","chatKey":"budget","imageBase64":"';
  const room = size - head.length - 2;
  return Buffer.from(`${head}${'A'.repeat(room - (room % 4))}${' '.repeat(room % 4)}"}`);
};

let gw: GatewayUnderTest;
let key: string;
beforeAll(async () => {
  gw = await startGatewayUnderTest('mcp_body_limits', { BODY_BUDGET_BYTES: String(BUDGET) });
  key = await gw.createKey('mcp-limits');
});
afterAll(async () => {
  await gw?.stop();
});

const open = (path: string, headers: Record<string, string | number>) =>
  request({
    host: '127.0.0.1',
    port: gw.gateway.port,
    method: 'POST',
    path,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  });
const held = async () => {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  return Number(/^vouch_http_body_bytes_held\{[^}]*\} (\d+)$/m.exec(text)?.[1]);
};
const postMcp = (body: unknown) =>
  fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });

describe('/mcp request bodies', () => {
  it('refuses a body over the per-request limit with 413 naming the limit, as /v1 does', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: toolCallBody(LIMIT + 1),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await res.json()).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      detail: `the request body is larger than ${LIMIT} bytes: send a smaller image or payload`,
      instance: '/mcp',
    });
  });

  it('refuses a large body while another holds the budget with 503 and Retry-After, from one budget shared with /v1', async () => {
    const refusalsBefore = await metricValue(gw.gateway.metrics.registry, 'vouch_http_body_budget_refusals_total');
    const firstBody = toolCallBody(10 * MB);
    const first = open('/mcp', { 'content-length': firstBody.length });
    const firstAnswer = answerOf(first);
    first.write(firstBody.subarray(0, MB)); // the rest comes later: the body is admitted and being read
    await eventually('the first /mcp body to be admitted', async () => ((await held()) === firstBody.length ? true : undefined));

    const secondBody = toolCallBody(8 * MB);
    const second = open('/mcp', { 'content-length': secondBody.length });
    const secondAnswer = answerOf(second);
    second.end(secondBody);
    const refused = await secondAnswer;
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(JSON.parse(refused.text)).toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
      detail: `the gateway holds as many request bodies as it may at once (BODY_BUDGET_BYTES=${BUDGET}): retry this 8000000-byte body in a few seconds`,
    });

    // One budget for every door: the /mcp body holds it against /v1 too.
    const v1Body = registerBody(8 * MB);
    const v1 = open('/v1/media', { 'content-length': v1Body.length });
    const v1Answer = answerOf(v1);
    v1.end(v1Body);
    expect((await v1Answer).status).toBe(503);
    expect(await metricValue(gw.gateway.metrics.registry, 'vouch_http_body_budget_refusals_total')).toBe(refusalsBefore + 2);

    first.end(firstBody.subarray(MB));
    expect((await firstAnswer).status).toBe(200);
    await eventually('the budget to come back', async () => ((await held()) === 0 ? true : undefined));

    const again = open('/mcp', { 'content-length': secondBody.length });
    const againAnswer = answerOf(again);
    again.end(secondBody);
    expect((await againAnswer).status).toBe(200);
    await eventually('the budget to come back', async () => ((await held()) === 0 ? true : undefined));
  });
});

describe('JSON-RPC batches on /mcp', () => {
  const propose = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ledger_proposeCompletion', arguments: { runId: `batch-${id}`, summary: 'Done.' } } });
  const queued = () => gw.gateway.hub.queue(QUEUES.ledgerCritic).getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized');

  const total = async () => Object.values(await queued()).reduce((a, b) => a + b, 0);

  it('refuses a batch with a JSON-RPC Invalid Request naming the way out, and runs none of its calls', async () => {
    const res = await postMcp([propose(1), propose(2), propose(3)]);
    const text = await res.text(); // the whole answer: a call of a batch that ran has been queued by now
    expect(await total()).toBe(0);
    expect(res.status).toBe(400);
    const body = JSON.parse(text) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(body.error.message).toMatch(/batches are not supported/);
    expect(body.error.message).toMatch(/one JSON-RPC message per request/);

    // The same call on its own is queued: the count above would have seen it.
    const single = await postMcp(propose(4));
    expect(single.status).toBe(200);
    await single.text();
    expect(await total()).toBe(1);
  });

  it('refuses a batch of one and an empty batch the same way', async () => {
    const before = await total();
    for (const batch of [[propose(5)], []]) {
      const res = await postMcp(batch);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/batches are not supported/);
    }
    expect(await total()).toBe(before);
  });
});
