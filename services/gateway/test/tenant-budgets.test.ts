/**
 * Costs and budgets per tenant (issue 17, item 3; docs/architecture.md,
 * "Costs and budgets"): every call is charged its cost against its tenant's
 * rate budget and holds a slot of its concurrency budget while it runs, both
 * counted in Redis; past either it is refused 429 with Retry-After and a
 * detail naming the limit. One gateway with small defaults (20 cost units per
 * 5 s window, 2 operations in flight) and an in-process worker on the
 * extractor's queue that holds a call until the test lets it go. Each test
 * has tenants of its own, so their budgets never meet.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, consumerRedisOptions, createLogger, createMetrics, handle, parseConfig, startServiceWorker, type PlatformMetrics, type ServiceWorker } from '@vouch/platform';
import { NotFoundError, OPERATIONS, QUEUES, artifactGrep, defineOperation, mediaRecent, visionAnalyze, type GrepResult } from '@vouch/contracts';
import { TEST_DATABASE_URL, TEST_REDIS_URL, eventually, makePng } from '@vouch/testing';
import { createApiKey } from '../src/api-keys.js';
import { gatewayEnvSchema } from '../src/config.js';
import { imagePixels } from '../src/media/image-pixels.js';
import { estimateCost } from '../src/operation-costs.js';
import { connectMcp, textOf } from './mcp-client.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

/** An rpc the worker answers at once, or holds while the test holds its token's gate; `fail` answers 404. */
const hold = defineOperation({
  name: 'test.hold',
  summary: 'answer, or wait for the test',
  description: 'Answers with its token, after the test opens the token\'s gate when it holds one.',
  owner: { queue: QUEUES.extractor },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/test/hold' },
  scope: 'artifacts:read',
  input: z.object({ token: z.string().max(100), fail: z.boolean().default(false) }).strict(),
  output: z.object({ token: z.string() }),
  agentFacing: false,
  example: { token: 't' },
  timeoutMs: 1_500,
  retry: { attempts: 1, backoffMs: 0 },
});
const holdJob = defineOperation({ ...hold, name: 'test.holdJob', mode: 'job', http: { method: 'POST', path: '/v1/test/hold-job' } });
const TABLE = [...OPERATIONS, hold, holdJob];

const RATE = 20;
const WINDOW_SECONDS = 5;

/** A scan of 100 cost units (64 KiB a unit) for the grep stand-in to report. */
const SCANNED_BYTES = 100 * 64 * 1024;
const grepAnswer: GrepResult = {
  status: 'complete',
  found: false,
  matches: [],
  provenance: { capBytes: 1_048_576, returnedBytes: 0, scanCapBytes: 536_870_912, scannedBytes: SCANNED_BYTES, filesTotal: 3, filesScanned: 3, matchesReturned: 0, matchesCounted: 0, truncated: false, truncatedBy: [] },
  narrowing: null,
};

describe('tenant budgets', () => {
  let gw: GatewayUnderTest;
  let worker: ServiceWorker;
  let workerMetrics: PlatformMetrics;
  let redis: Redis;
  const gates = new Map<string, { open: () => void; opened: Promise<void> }>();
  const started = new Set<string>();

  /** Holds the worker's run of `token` until the returned function is called. */
  const gate = (token: string): (() => void) => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    gates.set(token, { open, opened });
    return open;
  };

  beforeAll(async () => {
    gw = await startGatewayUnderTest('tenant_budgets', { TENANT_RATE_BUDGET: String(RATE), TENANT_RATE_WINDOW_SECONDS: String(WINDOW_SECONDS), TENANT_CONCURRENCY_BUDGET: '2' }, TABLE);
    redis = new Redis(TEST_REDIS_URL);
    const answer = handle(hold, async ({ token, fail }) => {
      started.add(token);
      await gates.get(token)?.opened;
      if (fail) throw new NotFoundError(`no ${token}: send another token`);
      return { token };
    });
    workerMetrics = createMetrics({ service: 'extractor', collectDefaults: false });
    worker = startServiceWorker({
      service: 'extractor',
      version: '9.9.9',
      queue: QUEUES.extractor,
      operations: [hold, holdJob, artifactGrep],
      handlers: [answer, { ...answer, operation: holdJob }, handle(artifactGrep, async () => grepAnswer)],
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix: gw.prefix,
      concurrency: 16,
      tenantConcurrency: 16,
      logger: createLogger({ service: 'extractor', level: 'silent' }),
      metrics: workerMetrics,
    });
    await worker.worker.waitUntilReady();
  });

  afterAll(async () => {
    for (const g of gates.values()) g.open();
    await worker?.close(2_000);
    redis?.disconnect();
    await gw?.stop();
  });

  const recent = (key: string) => gw.fetch('/v1/media/recent?surface=api&chatKey=c', { key });
  const holdCall = (key: string, token: string, init: { fail?: boolean; signal?: AbortSignal; headers?: Record<string, string> } = {}) =>
    gw.fetch('/v1/test/hold', { key, json: { token, ...(init.fail ? { fail: true } : {}) }, ...(init.signal ? { signal: init.signal } : {}), headers: init.headers ?? {} });
  /** What a media.recent call of this test costs: its input's bytes and the call. */
  const recentCost = estimateCost(mediaRecent, mediaRecent.input.parse({ surface: 'api', chatKey: 'c' }) as Record<string, unknown>);
  const spent = async (tenant: string) => Number((await redis.get(gw.gateway.budgets.rateKey(tenant))) ?? 0);
  const inFlight = (tenant: string) => redis.zcard(gw.gateway.budgets.inflightKey(tenant));
  const heldBy = (tenant: string, n: number) => eventually(`${n} of ${tenant}'s calls in flight`, async () => ((await inFlight(tenant)) === n ? true : undefined));
  const workerStarted = (token: string) => eventually(`the worker starting ${token}`, () => (started.has(token) ? true : undefined));

  it('refuses a tenant past its rate budget with 429, a Retry-After until its window ends and a detail naming the limit, and charges the refusal nothing', async () => {
    expect(recentCost).toBe(2);
    const key = await gw.createKey('rate-a');
    const statuses: number[] = [];
    for (let i = 0; i < RATE / recentCost; i++) statuses.push((await recent(key)).status);
    expect(statuses).toEqual(Array(RATE / recentCost).fill(200));
    expect(await spent('rate-a')).toBe(RATE);

    const refused = await recent(key);
    const pttl = await redis.pttl(gw.gateway.budgets.rateKey('rate-a'));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as Json;
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    // The real time until the window ends, not a fixed guess: the window's TTL in Redis, rounded up.
    expect(Math.abs(retryAfter - Math.ceil(pttl / 1000))).toBeLessThanOrEqual(1);
    expect(body).toMatchObject({ status: 429, code: 'TOO_MANY_REQUESTS', details: { limit: 'rate', tenant: 'rate-a', budget: RATE, windowSeconds: WINDOW_SECONDS, used: RATE, cost: 2, retryAfterSeconds: retryAfter } });
    expect(body.detail).toBe(
      `tenant rate-a's rate budget of ${RATE} cost units per ${WINDOW_SECONDS} s is spent: ${RATE} used in this window, and this media.recent costs 2. ` +
        `Retry after ${retryAfter} s, when the window ends, or ask an operator to raise this key's rate (npm run keys -- budget ${key.split('_')[1]} --rate N)`,
    );
    expect(await spent('rate-a')).toBe(RATE);
  });

  it('takes a refused Idempotency-Key as free, and admits the tenant again once Retry-After has passed', async () => {
    const key = await createApiKey(gw.gateway.pool, { tenant: 'rate-b', budgets: { rate: 4 } }).then((k) => k.key);
    expect((await recent(key)).status).toBe(200);
    expect((await recent(key)).status).toBe(200);
    // Two seconds into the window, it ends in about three: Retry-After says so, not a fixed guess.
    await new Promise((r) => setTimeout(r, 2_000));
    const refused = await holdCall(key, 'after-window', { headers: { 'Idempotency-Key': 'once-free' } });
    const pttl = await redis.pttl(gw.gateway.budgets.rateKey('rate-b'));
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS - 1);
    expect(Math.abs(retryAfter - Math.ceil(pttl / 1000))).toBeLessThanOrEqual(1);
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 100));
    const admitted = await holdCall(key, 'after-window', { headers: { 'Idempotency-Key': 'once-free' } });
    expect(admitted.status).toBe(200);
    expect(admitted.headers.get('idempotent-replayed')).toBeNull();
    expect(await admitted.json()).toEqual({ token: 'after-window' });
  });

  it('refuses a tenant holding its concurrency budget with 429 while its calls run, and admits the next call once one has ended', async () => {
    const key = await gw.createKey('conc-a');
    const openFirst = gate('conc-1');
    const openSecond = gate('conc-2');
    const first = holdCall(key, 'conc-1');
    const second = holdCall(key, 'conc-2');
    await heldBy('conc-a', 2);

    const refused = await holdCall(key, 'conc-3');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    const body = (await refused.json()) as Json;
    expect(body.details).toEqual({ limit: 'concurrency', tenant: 'conc-a', budget: 2, inFlight: 2, retryAfterSeconds: 1 });
    expect(body.detail).toBe(
      `tenant conc-a already has 2 operations in flight, its concurrency budget of 2: retry after 1 s, when one of them may have ended, or ask an operator to raise this key's concurrency (npm run keys -- budget ${key.split('_')[1]} --concurrency N)`,
    );
    expect(started.has('conc-3')).toBe(false);

    openFirst();
    expect((await first).status).toBe(200);
    const third = await holdCall(key, 'conc-3');
    expect(third.status).toBe(200);
    openSecond();
    expect((await second).status).toBe(200);
    await heldBy('conc-a', 0);
  });

  it('frees a concurrency slot on every outcome: an answer, a failure, a job queued, a timeout, a caller gone, a refusal', async () => {
    const key = await createApiKey(gw.gateway.pool, { tenant: 'leaks', budgets: { rate: 1_000_000, concurrency: 1 } }).then((k) => k.key);
    expect((await holdCall(key, 'ok')).status).toBe(200);
    expect(await inFlight('leaks')).toBe(0);
    expect((await holdCall(key, 'missing', { fail: true })).status).toBe(404);
    expect(await inFlight('leaks')).toBe(0);
    expect((await gw.fetch('/v1/test/hold-job', { key, json: { token: 'job' } })).status).toBe(202);
    expect(await inFlight('leaks')).toBe(0);
    expect((await recent(key)).status).toBe(200);
    expect(await inFlight('leaks')).toBe(0);

    // Past the operation's 1.5 s: 504 with the job still running; the slot is the request's, not the job's.
    const openSlow = gate('slow');
    expect((await holdCall(key, 'slow')).status).toBe(504);
    expect(await inFlight('leaks')).toBe(0);
    openSlow();

    // The caller hangs up while its call runs: the slot is freed when the gateway stops waiting for it.
    const openGone = gate('gone');
    const hangUp = new AbortController();
    const gone = holdCall(key, 'gone', { signal: hangUp.signal }).catch((err: unknown) => err);
    await workerStarted('gone');
    expect(await inFlight('leaks')).toBe(1);
    hangUp.abort();
    expect(await gone).toBeInstanceOf(Error);
    openGone();
    await heldBy('leaks', 0);

    // A call refused for the rate budget gives back the slot it took first.
    const poor = await createApiKey(gw.gateway.pool, { tenant: 'leaks', budgets: { rate: 1, concurrency: 1 } }).then((k) => k.key);
    expect((await recent(poor)).status).toBe(429);
    expect(await inFlight('leaks')).toBe(0);
    expect((await holdCall(key, 'after-all')).status).toBe(200);
  });

  it('applies a key\'s own budgets over the defaults, from `npm run keys -- create --rate/--concurrency` and `budget`, to its tenant\'s shared counts', { timeout: 90_000 }, async () => {
    const made = gw.keys('create', '--tenant', 'override', '--concurrency', '1', '--rate', '4', '--json');
    expect(made.status, made.stderr).toBe(0);
    const narrow: Json = JSON.parse(made.stdout);
    expect(narrow.budgets).toEqual({ rate: 4, concurrency: 1 });
    const wide = await gw.createKey('override');

    // Concurrency: one call in flight fills the narrow key's budget of 1, not the default key's 2; the count is the tenant's.
    const open = gate('ov-1');
    const first = holdCall(wide, 'ov-1');
    await heldBy('override', 1);
    const refused = await holdCall(narrow.key, 'ov-2');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as Json).details).toMatchObject({ limit: 'concurrency', budget: 1, inFlight: 1 });
    open();
    expect((await first).status).toBe(200);

    // Rate: the narrow key stops at 4 units where the default key goes on to 20.
    const used = await spent('override');
    const units = [];
    while (units.length < 5) {
      const res = await recent(narrow.key);
      if (res.status !== 200) {
        expect(((await res.json()) as Json).details).toMatchObject({ limit: 'rate', budget: 4 });
        break;
      }
      units.push(recentCost);
    }
    expect(used + units.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(4);
    expect((await recent(wide)).status).toBe(200);

    // `budget KEY --rate default` takes the key back to the gateway's default, in running gateways at once:
    // three calls in a row (6 units) pass, which its old budget of 4 would have refused in any window.
    const raised = gw.keys('budget', narrow.id, '--rate', 'default');
    expect(raised.status, raised.stderr).toBe(0);
    expect(raised.stdout.trim()).toBe(`key ${narrow.id} of tenant override: rate=default concurrency=1`);
    const after = [];
    for (let i = 0; i < 3; i++) after.push((await recent(narrow.key)).status);
    expect(after).toEqual([200, 200, 200]);
    const listed = gw.keys('list', '--tenant', 'override');
    expect(listed.stdout.split('\n').find((line) => line.startsWith(narrow.id))?.split('\t').at(-1)).toBe('rate=default concurrency=1');
  });

  it('refuses bad overrides, naming the flag and what to send instead', { timeout: 90_000 }, async () => {
    const zero = gw.keys('create', '--tenant', 'bad', '--rate', '0');
    expect(zero.status).toBe(2);
    expect(zero.stderr.split('\n')[0]).toBe('keys: --rate "0": must be a whole number of cost units per window from 1 to 2000000000');
    const { record } = await createApiKey(gw.gateway.pool, { tenant: 'bad' });
    const lots = gw.keys('budget', record.id, '--concurrency', 'lots');
    expect(lots.status).toBe(2);
    expect(lots.stderr.split('\n')[0]).toBe(
      'keys: --concurrency "lots": must be a whole number of operations in flight from 1 to 100000, or default for the gateway\'s TENANT_CONCURRENCY_BUDGET',
    );
    await expect(createApiKey(gw.gateway.pool, { tenant: 'bad', budgets: { rate: 1.5 } })).rejects.toThrow(
      'invalid rate budget 1.5: must be a whole number of cost units per window from 1 to 2000000000',
    );
    await expect(gw.gateway.pool.query('UPDATE api_keys SET concurrency_budget = 0 WHERE id = $1', [record.id])).rejects.toThrow(/api_keys_concurrency_budget_positive/);
  });

  it('leaves tenant B alone while tenant A is over its budgets', async () => {
    const a = await createApiKey(gw.gateway.pool, { tenant: 'noisy', budgets: { rate: 2, concurrency: 1 } }).then((k) => k.key);
    const b = await gw.createKey('quiet');
    expect((await recent(a)).status).toBe(200);
    expect((await recent(a)).status).toBe(429);
    expect((await recent(b)).status).toBe(200);

    const noisyHolds = await createApiKey(gw.gateway.pool, { tenant: 'noisy-2', budgets: { concurrency: 1 } }).then((k) => k.key);
    const open = gate('noisy-hold');
    const held = holdCall(noisyHolds, 'noisy-hold');
    await heldBy('noisy-2', 1);
    expect((await holdCall(noisyHolds, 'noisy-more')).status).toBe(429);
    expect((await holdCall(b, 'quiet-call')).status).toBe(200);
    expect((await holdCall(b, 'quiet-call-2')).status).toBe(200);
    open();
    expect((await held).status).toBe(200);
  });

  it('replays an answered Idempotency-Key without charging it or refusing it, even with the budget spent', async () => {
    const key = await createApiKey(gw.gateway.pool, { tenant: 'replay', budgets: { rate: 6 } }).then((k) => k.key);
    const first = await holdCall(key, 'replayed', { headers: { 'Idempotency-Key': 'idem-1' } });
    expect(first.status).toBe(200);
    let spentAll = false;
    for (let i = 0; i < 5 && !spentAll; i++) spentAll = (await recent(key)).status === 429;
    expect(spentAll).toBe(true);
    const before = await spent('replay');
    const again = await holdCall(key, 'replayed', { headers: { 'Idempotency-Key': 'idem-1' } });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual({ token: 'replayed' });
    expect(await spent('replay')).toBe(before);
    // A new request is still refused.
    expect((await holdCall(key, 'new', { headers: { 'Idempotency-Key': 'idem-2' } })).status).toBe(429);
  });

  it('charges a grep the bytes it scanned once it answers, so the next call waits', async () => {
    const key = await createApiKey(gw.gateway.pool, { tenant: 'scanner', budgets: { rate: 50 } }).then((k) => k.key);
    const input = { workspace: 'router-firmware', pattern: 'baudRate' };
    const estimate = estimateCost(artifactGrep, artifactGrep.input.parse(input) as Record<string, unknown>);
    expect(estimate).toBe(2);
    expect((await gw.fetch('/v1/artifacts/grep', { key, json: input })).status).toBe(200);
    expect(await spent('scanner')).toBe(estimate + 100);
    const refused = await recent(key);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as Json).details).toMatchObject({ limit: 'rate', budget: 50, used: estimate + 100 });
  });

  it('refuses an MCP tool call over budget as a tool error naming the limit', async () => {
    const key = await createApiKey(gw.gateway.pool, { tenant: 'mcp-budget', budgets: { rate: 2 } }).then((k) => k.key);
    const client = await connectMcp(gw.url, key, 'current');
    try {
      const ok = await client.callTool({ name: 'media_recent', arguments: { surface: 'api', chatKey: 'c' } });
      expect(ok.isError).toBeFalsy();
      const refused = await client.callTool({ name: 'media_recent', arguments: { surface: 'api', chatKey: 'c' } });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ error: { code: 'TOO_MANY_REQUESTS', status: 429, details: { limit: 'rate', tenant: 'mcp-budget', budget: 2 } } });
      expect(textOf(refused)).toContain("tenant mcp-budget's rate budget of 2 cost units per 5 s is spent");
    } finally {
      await client.close();
    }
  });

  it('counts each tenant\'s cost and refusals on the gateway\'s /metrics, and its queue wait on the worker\'s', async () => {
    const key = await createApiKey(gw.gateway.pool, { tenant: 'metered', budgets: { rate: 2 + 2 } }).then((k) => k.key);
    const holdCost = estimateCost(hold, { token: 'metered', fail: false });
    expect((await holdCall(key, 'metered')).status).toBe(200);
    expect((await recent(key)).status).toBe(200);
    expect((await recent(key)).status).toBe(429);
    const text = await (await gw.fetch('/metrics')).text();
    expect(text).toContain(`vouch_tenant_cost_units_total{tenant="metered",service="gateway"} ${holdCost + recentCost}`);
    expect(text).toContain('vouch_tenant_budget_refusals_total{tenant="metered",limit="rate",service="gateway"} 1');
    expect(text).toContain('vouch_tenant_budget_refusals_total{tenant="conc-a",limit="concurrency",service="gateway"} 1');
    const workerText = await workerMetrics.registry.metrics();
    expect(workerText).toContain('vouch_tenant_queue_wait_seconds_count{service="extractor",queue="extractor",tenant="metered"} 1\n');
  });

  it('finds the pixels of the image a vision request names, the way the vision-router resolves it, for its cost', async () => {
    const key = await gw.createKey('pixels');
    const png = await makePng({ width: 1000, height: 1000, color: 'white' });
    const registered = await gw.fetch('/v1/media', { key, json: { surface: 'api', chatKey: 'c', messageId: '7', imageBase64: png.toString('base64') } });
    expect(registered.status).toBe(200);
    const pool = gw.gateway.pool;
    const max = 50_000_000;
    expect(await imagePixels(pool, 'pixels', { surface: 'api', chatKey: 'c', replyToMessageId: '7' }, max)).toBe(1_000_000);
    expect(await imagePixels(pool, 'pixels', { surface: 'api', chatKey: 'c', alias: 'img-1' }, max)).toBe(1_000_000);
    expect(await imagePixels(pool, 'pixels', { surface: 'api', chatKey: 'c' }, max)).toBe(1_000_000);
    expect(await imagePixels(pool, 'pixels', { surface: 'api', chatKey: 'c', alias: 'img-9' }, max)).toBeUndefined();
    expect(await imagePixels(pool, 'other-tenant', { surface: 'api', chatKey: 'c', alias: 'img-1' }, max)).toBeUndefined();
    expect(await imagePixels(pool, 'pixels', { imageBase64: (await makePng({ width: 300, height: 200, color: 'red' })).toString('base64') }, max)).toBe(60_000);
    expect(await imagePixels(pool, 'pixels', { imageBase64: 'bm90IGFuIGltYWdl' }, max)).toBeUndefined();
    expect(await imagePixels(pool, 'pixels', { surface: 'api', chatKey: 'c' }, 4_000)).toBe(4_000);

    const input = visionAnalyze.input.parse({ surface: 'api', chatKey: 'c', prompt: 'what does it say?', requestedDetail: 'text' }) as Record<string, unknown>;
    expect(estimateCost(visionAnalyze, input, { imagePixels: 1_000_000 }) - estimateCost(visionAnalyze, input, {})).toBe(100);
  });
});

describe('budget configuration', () => {
  const env = { REDIS_URL: TEST_REDIS_URL, DATABASE_URL: TEST_DATABASE_URL };

  it('defaults to budgets no ordinary use reaches, and refuses bad ones naming each variable', () => {
    expect(parseConfig(gatewayEnvSchema, env)).toMatchObject({ TENANT_RATE_BUDGET: 600_000, TENANT_RATE_WINDOW_SECONDS: 60, TENANT_CONCURRENCY_BUDGET: 128 });
    let error: unknown;
    try {
      parseConfig(gatewayEnvSchema, { ...env, TENANT_RATE_BUDGET: '0', TENANT_RATE_WINDOW_SECONDS: '86401', TENANT_CONCURRENCY_BUDGET: 'many', METRICS_TENANT_LABELS: '-1' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect((error as ConfigError).variables.sort()).toEqual(['METRICS_TENANT_LABELS', 'TENANT_CONCURRENCY_BUDGET', 'TENANT_RATE_BUDGET', 'TENANT_RATE_WINDOW_SECONDS']);
    expect(message).toContain('TENANT_RATE_BUDGET must be at least 1 (cost units per window)');
    expect(message).toContain('TENANT_RATE_WINDOW_SECONDS must be at most 86400 (seconds, a day)');
    expect(message).toContain('METRICS_TENANT_LABELS must be at least 0');
  });
});
