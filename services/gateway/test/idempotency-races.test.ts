/**
 * Duplicate requests in flight with one Idempotency-Key: every one gets the
 * answer of the single attempt that runs, never a 504 for a job whose result
 * was delivered (and removed) while a duplicate was re-attaching to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DependencyError, OPERATIONS, QUEUES, defineOperation } from '@vouch/contracts';
import { consumerRedisOptions, createLogger, createMetrics, handle, startServiceWorker, type ServiceWorker } from '@vouch/platform';
import { TEST_REDIS_URL } from '@vouch/testing';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

/** A write: each run is one effect. A short timeout makes a false 504 show in seconds, not 30. */
const record = defineOperation({
  name: 'test.record',
  summary: 'record a note',
  description: 'Records a note once per run and answers with how many runs recorded it.',
  owner: { queue: QUEUES.extractor },
  mode: 'rpc',
  http: { method: 'POST', path: '/v1/test/record' },
  scope: 'media:write',
  input: z.object({ note: z.string().max(100), delayMs: z.number().int().min(0).max(1_000).default(0) }).strict(),
  output: z.object({ note: z.string(), effects: z.number().int() }),
  agentFacing: false,
  example: { note: 'hello' },
  timeoutMs: 3_000,
  retry: { attempts: 1, backoffMs: 0 },
});
/** The same write, failing with a dependency outage (503, worth a retry) while `outage` is on. */
const fragileRecord = defineOperation({ ...record, name: 'test.fragileRecord', http: { method: 'POST', path: '/v1/test/fragile-record' } });
const TABLE = [...OPERATIONS, record, fragileRecord];

const PARALLEL = 50;
const ROUNDS = 6;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by assertion, not by type
type Json = any;

describe('duplicate requests in flight with one Idempotency-Key', () => {
  let gw: GatewayUnderTest;
  let worker: ServiceWorker;
  let key: string;
  let outage = true;
  const effects = new Map<string, number>();

  beforeAll(async () => {
    gw = await startGatewayUnderTest('idem_races', {}, TABLE);
    key = await gw.createKey('acme', 'media:write,system:read');
    worker = startServiceWorker({
      service: 'extractor',
      version: '1.0.0',
      queue: QUEUES.extractor,
      operations: [record, fragileRecord],
      handlers: [record, fragileRecord].map((op) =>
        handle(op, async ({ note, delayMs }) => {
          effects.set(note, (effects.get(note) ?? 0) + 1);
          if (op === fragileRecord && outage) throw new DependencyError('the store is down: retry later');
          if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
          return { note, effects: effects.get(note)! };
        }),
      ),
      connection: consumerRedisOptions(TEST_REDIS_URL),
      prefix: gw.prefix,
      concurrency: 8,
      logger: createLogger({ service: 'extractor', level: 'silent' }),
      metrics: createMetrics({ service: 'extractor', collectDefaults: false }),
    });
    await worker.worker.waitUntilReady();
  });
  afterAll(async () => {
    await worker?.close(1_000);
    await gw?.stop();
  });

  /** PARALLEL identical requests at once: same body, same key, same API key. */
  const duplicates = (path: string, json: unknown, idempotencyKey: string) =>
    Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        const res = await gw.fetch(path, { key, json, headers: { 'Idempotency-Key': idempotencyKey } });
        return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Json };
      }),
    );

  it('answers every duplicate with the one answer and runs the write once, round after round', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const note = `race-${round}`;
      // No delay finishes the job while duplicates are still attaching to it; a short one while they wait.
      const answers = await duplicates('/v1/test/record', { note, delayMs: round % 2 ? 20 : 0 }, `race-key-${round}`);
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      expect(answers.map((a) => a.body)).toEqual(Array.from({ length: PARALLEL }, () => ({ note, effects: 1 })));
      expect(effects.get(note)).toBe(1);
    }
  }, 30_000);

  it('answers every duplicate of a ping with the one pong, though a ping keeps no result', async () => {
    for (let round = 0; round < 3; round++) {
      const answers = await duplicates('/v1/system/ping', { service: 'extractor' }, `ping-key-${round}`);
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      // One job's pong: a second run would answer with another time. (A replay's keys come back in jsonb's order.)
      expect(answers.map((a) => a.body)).toEqual(Array.from({ length: PARALLEL }, () => answers[0]!.body));
    }
  }, 30_000);

  it('answers every duplicate of an attempt that failed with a 5xx worth a retry, and runs again on the retry', async () => {
    outage = true;
    const failed = await duplicates('/v1/test/fragile-record', { note: 'fragile' }, 'fragile-key');
    expect(failed.filter((a) => a.status !== 503 || a.body.code !== 'DEPENDENCY_UNAVAILABLE' || a.retryAfter === null)).toEqual([]);
    outage = false;
    const before = effects.get('fragile')!;
    const retried = await duplicates('/v1/test/fragile-record', { note: 'fragile' }, 'fragile-key');
    expect(retried.filter((a) => a.status !== 200)).toEqual([]);
    expect(retried.map((a) => a.body)).toEqual(Array.from({ length: PARALLEL }, () => ({ note: 'fragile', effects: before + 1 })));
    expect(effects.get('fragile')).toBe(before + 1);
  }, 30_000);
});
