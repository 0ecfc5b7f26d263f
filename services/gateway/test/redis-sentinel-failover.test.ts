/**
 * Redis through Sentinel (issue 21): the gateway and the ledger-critic, as
 * processes, reach Redis only through three sentinels (REDIS_SENTINELS). The
 * primary is SIGKILLed while writers send ledger evidence with
 * Idempotency-Keys; the sentinels promote the replica and the stack follows
 * it without a restart. During the switch every answer is a 200 or a 503 with
 * Retry-After (never a 500, never a hang); a 503 sent again with its key
 * succeeds; afterwards every accepted write is in the ledger exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '@vouch/platform';
import { TEST_DATABASE_URL, eventually } from '@vouch/testing';
import { startProcessStack, type ProcessStack } from './process-stack.js';
import { SENTINEL_GROUP, startSentinelSetup, type SentinelSetup } from './redis-sentinel.js';

const WRITERS = 4;
/** Writes accepted before the kill, so the primary dies under load. */
const BEFORE_KILL = 20;
/** Writes each writer has accepted after the promotion before the writers stop. */
const AFTER_PROMOTION = 5;
/** An answer slower than this counts as a hang. */
const HANG_MS = 15_000;
/** The whole switch must be over within this. */
const DEADLINE_MS = 60_000;

interface Answer {
  key: string;
  writer: number;
  startedAt: number;
  endedAt: number;
  status: number | 'hang';
  retryAfter: string | null;
  body: string;
}

describe('Redis through Sentinel: the primary killed under load', () => {
  let sentinels: SentinelSetup;
  let stack: ProcessStack;
  let pool: Pool;
  let apiKey: string;

  beforeAll(async () => {
    sentinels = await startSentinelSetup();
    const redisVars = { REDIS_URL: `redis://127.0.0.1:${sentinels.primaryPort}`, REDIS_SENTINELS: sentinels.sentinelsVar, REDIS_SENTINEL_NAME: SENTINEL_GROUP };
    stack = await startProcessStack('sentinel_failover', { services: ['ledger-critic'], vars: { gateway: redisVars, 'ledger-critic': redisVars } });
    pool = createPool({ url: TEST_DATABASE_URL, schema: stack.schema('ledger-critic'), applicationName: 'sentinel-failover', max: 2 });
    apiKey = await stack.createKey('acme');
  }, 180_000);

  afterAll(async () => {
    await pool?.end();
    await stack?.stop();
    await sentinels?.stop();
  }, 60_000);

  const post = async (path: string, json: unknown, idempotencyKey: string): Promise<{ status: number | 'hang'; retryAfter: string | null; body: string }> => {
    try {
      const res = await fetch(`${stack.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify(json),
        signal: AbortSignal.timeout(HANG_MS),
      });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
    } catch (err) {
      if (err instanceof DOMException && err.name === 'TimeoutError') return { status: 'hang', retryAfter: null, body: '' };
      throw err;
    }
  };

  /**
   * Four writers record evidence with Idempotency-Keys; after BEFORE_KILL
   * accepted writes `disrupt` runs, and the writers go on until each has
   * written AFTER_PROMOTION times through `expectedPrimary`. Checks the
   * answers and the ledger, and returns the figures.
   */
  const underLoad = async (tag: string, disrupt: () => void | Promise<void>, expectedPrimary: number) => {
    const runs = Array.from({ length: WRITERS }, (_, w) => `sentinel-${tag}-${w}`);
    for (const runId of runs) {
      const opened = await post('/v1/ledgers', { runId, goal: 'Record evidence while the Redis primary fails over' }, `open-${runId}`);
      expect(opened.status, opened.body).toBe(200);
    }
    const summaryOf = (key: string) => `sentinel write ${key}`;
    const bodyOf = (key: string) => ({ items: [{ kind: 'tool_result', toolName: 'shell', success: true, summary: summaryOf(key) }] });

    const answers: Answer[] = [];
    const accepted: string[] = [];
    const acceptedAfter = (w: number, t: number) => answers.filter((a) => a.writer === w && a.status === 200 && a.startedAt > t).length;
    let stopping = false;
    const started = Date.now();
    const writer = async (w: number) => {
      for (let i = 0; !stopping && Date.now() - started < DEADLINE_MS; i++) {
        const key = `${tag}-w${w}-${i}`;
        // One key until it is accepted (a 503 is sent again with the same key), or the deadline.
        while (Date.now() - started < DEADLINE_MS) {
          const startedAt = Date.now();
          const a = await post(`/v1/ledgers/${runs[w]}/evidence`, bodyOf(key), key);
          answers.push({ key, writer: w, startedAt, endedAt: Date.now(), ...a });
          if (a.status === 200) {
            accepted.push(key);
            break;
          }
          if (a.status !== 503) break; // a failure the assertions below name
          await new Promise((r) => setTimeout(r, Math.min(Number(a.retryAfter ?? 1), 1) * 250));
        }
      }
    };
    const writing = Promise.all(runs.map((_, w) => writer(w)));

    await eventually('writes before the switch', () => (accepted.length >= BEFORE_KILL ? true : undefined), 30_000);
    const disruptedAt = Date.now();
    await disrupt();
    await eventually('the sentinels to promote the replica', async () => ((await sentinels.currentPrimaryPort()) === expectedPrimary ? true : undefined), 30_000, 100);
    const promotedAt = Date.now();
    await eventually('every writer to write through the new primary', () => (runs.every((_, w) => acceptedAfter(w, promotedAt) >= AFTER_PROMOTION) ? true : undefined), DEADLINE_MS, 100);
    stopping = true;
    await writing;

    const during = answers.filter((a) => a.endedAt >= disruptedAt);
    const unavailable = during.filter((a) => a.status === 503);
    const firstAfter = answers.filter((a) => a.status === 200 && a.startedAt > disruptedAt).sort((x, y) => x.endedAt - y.endedAt)[0];
    const slowest = Math.max(...during.map((a) => a.endedAt - a.startedAt));
    console.log(
      `sentinel ${tag}: promoted ${promotedAt - disruptedAt} ms after the switch began; first write sent after it accepted ${firstAfter ? firstAfter.endedAt - disruptedAt : 'never'} ms after it; ` +
        `${during.length} answers since: ${unavailable.length} x 503, ${during.filter((a) => a.status === 200).length} x 200, ` +
        `others ${JSON.stringify(during.filter((a) => a.status !== 200 && a.status !== 503).map((a) => [a.key, a.status]))}; slowest ${slowest} ms; ${accepted.length} writes accepted in all`,
    );

    // Only 200s and 503s, every 503 with Retry-After, no hang.
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => `${a.key}: ${a.status} ${a.body.slice(0, 300)}`)).toEqual([]);
    expect(unavailable.filter((a) => !/^\d+$/.test(a.retryAfter ?? ''))).toEqual([]);
    // Every key was accepted in the end (a 503 sent again with its key succeeds).
    const keys = [...new Set(answers.map((a) => a.key))];
    expect(keys.filter((k) => !accepted.includes(k))).toEqual([]);
    expect(accepted.length).toBe(keys.length);

    // Every accepted write is in the ledger exactly once.
    const counted = async () => {
      const { rows } = await pool.query<{ summary: string; n: string }>(
        `SELECT item->>'summary' AS summary, count(*) AS n FROM ledger_events, jsonb_array_elements(payload->'items') AS item
         WHERE tenant = 'acme' AND type = 'evidence_recorded' AND run_id = ANY($1) GROUP BY 1`,
        [runs],
      );
      return new Map(rows.map((r) => [r.summary, Number(r.n)]));
    };
    const once = await counted();
    expect(keys.filter((k) => once.get(summaryOf(k)) !== 1).map((k) => `${k}: ${once.get(summaryOf(k)) ?? 0}`)).toEqual([]);
    expect(once.size).toBe(keys.length);

    // The keys that met a 503, sent again now: the stored answer, and still one write each.
    for (const key of new Set(unavailable.map((a) => a.key))) {
      const w = Number(/-w(\d+)-/.exec(key)![1]);
      const again = await post(`/v1/ledgers/${runs[w]}/evidence`, bodyOf(key), key);
      expect(again.status, again.body).toBe(200);
    }
    const after = await counted();
    expect(keys.filter((k) => after.get(summaryOf(k)) !== 1)).toEqual([]);
  };

  it('follows the promotion when the primary is killed: 503 with Retry-After during the switch, every accepted write once', async () => {
    await underLoad('kill', () => sentinels.killPrimary(), sentinels.replicaPort);
  }, 240_000);

  it('follows a switch that leaves the old primary running (SENTINEL FAILOVER, as a managed failover does)', async () => {
    // The killed primary comes back; the sentinels make it a replica of the new one.
    await sentinels.restartOldPrimaryAsReplica();
    await underLoad('switch', () => sentinels.failover(), sentinels.primaryPort);
  }, 240_000);
});
