/**
 * system.ping round trip: through the gateway (HTTP → auth → validation →
 * BullMQ → worker → QueueEvents → HTTP) against raw BullMQ add → complete on
 * the same Redis, the same queue and the same worker process, in one run.
 *
 *   npm run bench:ping                      # 5 s per point, 3 rounds, concurrency 1, 8, 32
 *   BENCH_SECONDS=10 BENCH_ROUNDS=5 npm run bench:ping
 *
 * Prints per concurrency the median over rounds of p50, p99 and requests/s for
 * both, and their ratio. Needs the local Redis and Postgres. The gateway logs
 * at warn (BENCH_GATEWAY_LOG_LEVEL) so this process does not spend the run
 * reading its per-request log lines.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Queue, QueueEvents } from 'bullmq';
import { QUEUES, SYSTEM_JOBS } from '@vouch/contracts';
import { consumerRedisOptions, createPool, runMigrations } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, spawnTsProcess, useTestPrefix, useTestSchema } from '@vouch/testing';
import { createApiKey } from '../services/gateway/src/api-keys.js';
import { MIGRATIONS_DIR } from '../services/gateway/src/gateway.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '1,8,32').split(',').map(Number);
const PORT = Number(process.env.BENCH_PORT ?? 18_181);

interface Point {
  p50: number;
  p99: number;
  rps: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function waitForReady(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the gateway at ${url} did not become ready`);
}

async function gatewayPoint(url: string, key: string, connections: number): Promise<Point> {
  const result = await autocannon({
    url: `${url}/v1/system/ping`,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ service: QUEUES.extractor }),
    connections,
    duration: SECONDS,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`gateway answered ${result.non2xx} non-2xx and ${result.errors} errors`);
  return { p50: result.latency.p50, p99: result.latency.p99, rps: result.requests.average };
}

async function rawPoint(queue: Queue, events: QueueEvents, connections: number): Promise<Point> {
  const latencies: number[] = [];
  const deadline = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        const job = await queue.add(SYSTEM_JOBS.ping, { tenant: 'system', input: {} }, { removeOnComplete: { age: 3_600, count: 10_000 }, removeOnFail: { age: 7 * 86_400 } });
        await job.waitUntilFinished(events, 10_000);
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), rps: latencies.length / SECONDS };
}

const prefix = await useTestPrefix('bench_ping');
const schema = await useTestSchema('bench_ping');
const children: ChildProcess[] = [];
const env = { REDIS_URL: TEST_REDIS_URL, DATABASE_URL: TEST_DATABASE_URL, BULLMQ_PREFIX: prefix.prefix, DB_SCHEMA: schema.schema, LOG_LEVEL: 'warn' };
try {
  await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: MIGRATIONS_DIR });
  const pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema, max: 1 });
  const { key } = await createApiKey(pool, { tenant: 'bench', scopes: ['system:read'] });
  await pool.end();

  const worker = spawnTsProcess(fileURLToPath(new URL('./ping-worker.ts', import.meta.url)), { ...env, WORKER_CONCURRENCY: '32' });
  children.push(worker.proc);
  await worker.waitFor('ready', 30_000);
  const gatewayEnv = { ...env, PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: process.env.BENCH_GATEWAY_LOG_LEVEL ?? 'warn' };
  children.push(spawnTsProcess(fileURLToPath(new URL('../services/gateway/src/main.ts', import.meta.url)), gatewayEnv).proc);
  const url = `http://127.0.0.1:${PORT}`;
  await waitForReady(url);
  const connection = consumerRedisOptions(TEST_REDIS_URL);
  const queue = new Queue(QUEUES.extractor, { connection, prefix: prefix.prefix });
  const events = new QueueEvents(QUEUES.extractor, { connection, prefix: prefix.prefix });
  events.setMaxListeners(10_000); // one listener per waiting request, as in the gateway
  await events.waitUntilReady();

  // Warm-up: JIT, connection pools, BullMQ scripts.
  await gatewayPoint(url, key, 4);
  await rawPoint(queue, events, 4);

  console.log(`system.ping round trip, ${SECONDS} s per point, median of ${ROUNDS} rounds (ms; requests/s)`);
  console.log('concurrency | gateway p50 | gateway p99 | gateway rps | raw p50 | raw p99 | raw rps | p50 ratio | rps ratio');
  for (const c of CONCURRENCIES) {
    const gw: Point[] = [];
    const raw: Point[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate so drift on a shared machine falls on both sides.
      gw.push(await gatewayPoint(url, key, c));
      raw.push(await rawPoint(queue, events, c));
    }
    const g = { p50: median(gw.map((p) => p.p50)), p99: median(gw.map((p) => p.p99)), rps: median(gw.map((p) => p.rps)) };
    const b = { p50: median(raw.map((p) => p.p50)), p99: median(raw.map((p) => p.p99)), rps: median(raw.map((p) => p.rps)) };
    console.log(
      [c, g.p50.toFixed(2), g.p99.toFixed(2), g.rps.toFixed(0), b.p50.toFixed(2), b.p99.toFixed(2), b.rps.toFixed(0), (g.p50 / b.p50).toFixed(2), (g.rps / b.rps).toFixed(2)]
        .map(String)
        .join(' | '),
    );
  }
  await events.close();
  await queue.close();
} finally {
  for (const child of children) child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1_500));
  await prefix.cleanup();
  await schema.cleanup();
}
