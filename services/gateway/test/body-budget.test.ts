import { request, type ClientRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@vouch/testing';
import { bodyLimitFor } from '../src/config.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

/**
 * The body budget, one request at a time: with room for one large body, a
 * second is refused 503 with Retry-After (declared or chunked), small
 * requests pass, and the budget comes back when the first is answered.
 */

const MB = 1_000_000;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

function answerOf(req: ClientRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      });
    });
  });
}

/** A media.register body of exactly `size` bytes (its image is zeros: a 415 once read). */
const registerBody = (size: number) => {
  const head = '{"surface":"api","chatKey":"budget","imageBase64":"';
  const room = size - head.length - 2;
  return Buffer.from(`${head}${'A'.repeat(room - (room % 4))}${' '.repeat(room % 4)}"}`);
};

describe('the request body budget', () => {
  let gw: GatewayUnderTest;
  let key: string;
  const budget = bodyLimitFor({ MEDIA_MAX_BYTES: 10 * 1024 * 1024 });

  const open = (headers: Record<string, string | number>, path = '/v1/media') =>
    request({ host: '127.0.0.1', port: gw.gateway.port, method: 'POST', path, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers } });
  const held = async () => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    return Number(/^vouch_http_body_bytes_held\{[^}]*\} (\d+)$/m.exec(text)?.[1]);
  };

  beforeAll(async () => {
    gw = await startGatewayUnderTest('body_budget', { BODY_BUDGET_BYTES: String(budget) });
    key = await gw.createKey('acme');
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('refuses a second large body while the first holds the budget, lets small ones pass, and admits again once the first is answered', async () => {
    const firstBody = registerBody(10 * MB);
    const first = open({ 'content-length': firstBody.length });
    const firstAnswer = answerOf(first);
    first.write(firstBody.subarray(0, MB)); // the rest comes later: the body is admitted and being read
    await eventually('the first body to be admitted', async () => ((await held()) === firstBody.length ? true : undefined));

    const declared = open({ 'content-length': 8 * MB });
    const declaredAnswer = answerOf(declared);
    declared.end(registerBody(8 * MB));
    const refused = await declaredAnswer;
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.body).toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
      detail: `the gateway holds as many request bodies as it may at once (BODY_BUDGET_BYTES=${budget}): retry this 8000000-byte body in a few seconds`,
    });

    const chunked = open({ 'transfer-encoding': 'chunked' });
    const chunkedAnswer = answerOf(chunked);
    chunked.end(registerBody(8 * MB));
    const refusedMidStream = await chunkedAnswer;
    expect(refusedMidStream.status).toBe(503);
    expect(refusedMidStream.headers['retry-after']).toBe('5');
    expect(refusedMidStream.body.detail).toContain('retry this body in a few seconds');

    const small = await gw.fetch('/v1/media/resolve', { key, json: { surface: 'api', chatKey: 'budget' } });
    expect(small.status).toBe(404);

    first.end(firstBody.subarray(MB));
    expect((await firstAnswer).status).toBe(415);
    await eventually('the budget to come back', async () => ((await held()) === 0 ? true : undefined));

    const again = open({ 'content-length': 8 * MB });
    const againAnswer = answerOf(again);
    again.end(registerBody(8 * MB));
    expect((await againAnswer).status).toBe(415);
    expect(await held()).toBe(0);
  });

  it('admits one whole chunked body of several streamed side by side, instead of a share to each and then none', async () => {
    const SIDE_BY_SIDE = 4;
    const CHUNK = 512 * 1024;
    const body = registerBody(10 * MB);
    const requests = Array.from({ length: SIDE_BY_SIDE }, () => open({ 'transfer-encoding': 'chunked' }));
    const answered: number[] = [];
    const answers = requests.map(async (req) => {
      const answer = await answerOf(req);
      answered.push(answer.status);
      return answer;
    });
    const write = (req: ClientRequest, chunk: Buffer) => new Promise<void>((resolve) => req.write(chunk, () => resolve()));
    // Round by round, a chunk to each: counted as they streamed, four bodies
    // of 3.5 MB filled the budget and every one was refused.
    for (let at = 0; at < body.length; at += CHUNK) {
      await Promise.all(requests.map((req) => write(req, body.subarray(at, at + CHUNK))));
      // After the first round every body is past 64 KiB: decided, one way or the other.
      if (at === 0) await eventually('three bodies to be refused and one to hold the budget', async () => (answered.length === 3 && (await held()) === budget ? true : undefined), 10_000);
    }
    for (const req of requests) req.end();
    const statuses = (await Promise.all(answers)).map((a) => a.status).sort();
    expect(statuses).toEqual([415, 503, 503, 503]);
    await eventually('the budget to come back', async () => ((await held()) === 0 ? true : undefined));
  });

  it('gives back what an admitted chunked body did not use once it is read', async () => {
    const req = open({ 'transfer-encoding': 'chunked' });
    const answer = answerOf(req);
    const body = registerBody(1 * MB);
    req.write(body.subarray(0, 512 * 1024));
    await eventually('the body to take the largest body', async () => ((await held()) === budget ? true : undefined));
    req.end(body.subarray(512 * 1024));
    expect((await answer).status).toBe(415);
    await eventually('the budget to come back', async () => ((await held()) === 0 ? true : undefined));
  });

  it('still reads a compressed body, holding the largest body while it inflates', async () => {
    const body = gzipSync(JSON.stringify({ surface: 'api', chatKey: 'budget' }));
    const req = open({ 'content-encoding': 'gzip', 'content-length': body.length }, '/v1/media/resolve');
    const answer = answerOf(req);
    req.end(body);
    expect((await answer).status).toBe(404);
    await eventually('the budget to come back', async () => ((await held()) === 0 ? true : undefined));
  });
});

describe("each tenant's share of the body budget", () => {
  let gw: GatewayUnderTest;
  const keys: Record<string, string> = {};
  const largest = bodyLimitFor({ MEDIA_MAX_BYTES: 10 * 1024 * 1024 });

  const open = (tenant: string, headers: Record<string, string | number>) =>
    request({ host: '127.0.0.1', port: gw.gateway.port, method: 'POST', path: '/v1/media', headers: { authorization: `Bearer ${keys[tenant]}`, 'content-type': 'application/json', ...headers } });
  const send = async (tenant: string, body: Buffer) => {
    const req = open(tenant, { 'content-length': body.length });
    const answer = answerOf(req);
    req.end(body);
    return answer;
  };
  const heldBytes = async () => Number(/^vouch_http_body_bytes_held\{[^}]*\} (\d+)$/m.exec(await (await fetch(`${gw.url}/metrics`)).text())?.[1]);

  beforeAll(async () => {
    // Room for three large bodies in all, one per tenant.
    gw = await startGatewayUnderTest('body_share', { BODY_BUDGET_BYTES: String(3 * largest), BODY_BUDGET_TENANT_BYTES: String(largest) });
    keys.acme = await gw.createKey('acme');
    keys.globex = await gw.createKey('globex');
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it("refuses a tenant's second large body 429 while its first holds its share, and still admits another tenant's", async () => {
    const firstBody = registerBody(10 * MB);
    const first = open('acme', { 'content-length': firstBody.length });
    const firstAnswer = answerOf(first);
    first.write(firstBody.subarray(0, MB));
    await eventually("acme's first body to be admitted", async () => ((await heldBytes()) === firstBody.length ? true : undefined));

    const refused = await send('acme', registerBody(8 * MB));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.body).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      detail: `your requests hold as many body bytes as one tenant may at once (BODY_BUDGET_TENANT_BYTES=${largest}): retry this 8000000-byte body in a few seconds, once one of your large requests has been answered, or send fewer large bodies side by side`,
    });

    // Another tenant's large body is read (and refused 415 for its image of zeros, as acme's would be).
    expect((await send('globex', registerBody(8 * MB))).status).toBe(415);

    first.end(firstBody.subarray(MB));
    expect((await firstAnswer).status).toBe(415);
    await eventually('the budget to come back', async () => ((await heldBytes()) === 0 ? true : undefined));
    expect((await send('acme', registerBody(8 * MB))).status).toBe(415);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/^vouch_http_body_budget_refusals_total\{[^}]*budget="tenant"[^}]*\} 1$/m);
  });
});
