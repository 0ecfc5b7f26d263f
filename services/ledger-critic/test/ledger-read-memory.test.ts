/**
 * Reads must not fill Redis: with noeviction, whatever a request leaves there
 * is a budget every tenant shares. Ten reads of a large ledger used to add
 * 174 MB (each full snapshot stayed an hour as a job result, plus a copy in
 * the events stream); now a read returns a page and its result leaves Redis
 * once delivered.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVIDENCE_PAGE } from '@vouch/contracts';
import { TEST_REDIS_URL } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from '../../gateway/test/gateway-under-test.js';
import { ok } from './drive-ledger.js';
import { startLedgerServiceUnderTest, type LedgerServiceUnderTest } from './ledger-test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

const RUN = 'big-ledger';
const ITEMS = 2_000;

/** Bytes Redis uses for every key under the prefix (MEMORY USAGE, every element sampled). */
async function memoryUnder(redis: Redis, prefix: string): Promise<number> {
  let total = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) total += (await redis.memory('USAGE', key, 'SAMPLES', 0)) ?? 0;
  } while (cursor !== '0');
  return total;
}

describe('reading a large ledger', () => {
  let gw: GatewayUnderTest;
  let svc: LedgerServiceUnderTest;
  let redis: Redis;
  let key: string;

  beforeAll(async () => {
    gw = await startGatewayUnderTest('ledger_read_mem');
    svc = await startLedgerServiceUnderTest('ledger_read_mem', {}, { prefix: gw.prefix });
    key = await gw.createKey('acme');
    redis = new Redis(TEST_REDIS_URL);
    expect((await gw.fetch('/v1/ledgers', { key, json: { runId: RUN, goal: 'Collect two thousand readings' } })).status).toBe(200);
    const filler = 'x'.repeat(1_500);
    for (let batch = 0; batch < ITEMS / 500; batch++) {
      const items = Array.from({ length: 500 }, (_, i) => ok('runtime_observation', 'probe', `reading r-${batch * 500 + i}: ${filler}`));
      expect((await gw.fetch(`/v1/ledgers/${RUN}/evidence`, { key, json: { items } })).status).toBe(200);
    }
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await svc?.stop();
    await gw?.stop();
  });

  it('pages its evidence, in order, to the end', async () => {
    const seen: number[] = [];
    let after = 0;
    for (;;) {
      const res = await gw.fetch(`/v1/ledgers/${RUN}?evidenceAfter=${after}&evidenceLimit=${EVIDENCE_PAGE.max}`, { key });
      const body = (await res.json()) as Json;
      expect(res.status).toBe(200);
      expect(body.evidencePage).toMatchObject({ total: ITEMS, after, limit: EVIDENCE_PAGE.max });
      seen.push(...body.evidence.map((e: { seq: number }) => e.seq));
      if (body.evidencePage.nextAfter === null) break;
      after = body.evidencePage.nextAfter;
    }
    expect(seen).toEqual(Array.from({ length: ITEMS }, (_, i) => i + 1));
  });

  it('leaves at most a page-sized trace in Redis per read', async () => {
    const first = (await (await gw.fetch(`/v1/ledgers/${RUN}`, { key })).json()) as Json;
    const pageBytes = Buffer.byteLength(JSON.stringify(first));
    expect(first.evidence).toHaveLength(EVIDENCE_PAGE.default);
    expect(pageBytes).toBeLessThan(400_000);
    // Let removals of delivered results land, then measure ten more reads.
    await new Promise((r) => setTimeout(r, 500));
    const before = await memoryUnder(redis, gw.prefix);
    for (let i = 0; i < 10; i++) expect((await gw.fetch(`/v1/ledgers/${RUN}`, { key })).status).toBe(200);
    await expect.poll(async () => (await redis.keys(`${gw.prefix}:ledger-critic:j*`)).length, { timeout: 5_000 }).toBe(0);
    const grown = (await memoryUnder(redis, gw.prefix)) - before;
    // What is left is the events stream's copy of each result (trimmed to a bounded length).
    expect(grown / 10).toBeLessThan(1.5 * pageBytes);
  });
});
