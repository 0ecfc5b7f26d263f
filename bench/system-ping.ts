/**
 * system.ping round trip, three ways in one run, each on its own BullMQ
 * prefix with its own worker process (so no side parses another's events):
 *
 *   gateway  HTTP → auth → validation → BullMQ → worker → QueueEvents → HTTP (the real gateway process)
 *   floor    a bare node:http server doing the same add-and-wait and nothing else (bench/http-floor.ts)
 *   raw      BullMQ in this process: queue.add → job.waitUntilFinished
 *
 *   npm run bench:ping                      # 5 s per point, 3 rounds, concurrency 1, 8, 32
 *   BENCH_SECONDS=10 BENCH_ROUNDS=5 BENCH_CONCURRENCY=1,32 npm run bench:ping
 *
 * Latencies are exact (performance.now around each request, keep-alive
 * connections, one per concurrent caller), not floored to whole
 * milliseconds. Prints per concurrency the median over rounds of p50, p99
 * and requests/s of each, and the gateway's and the floor's ratios to raw.
 * Needs the local Redis and Postgres. The gateway logs at warn
 * (BENCH_GATEWAY_LOG_LEVEL). To see where the gateway's time goes, profile
 * it under the load: BENCH_GATEWAY_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'.
 */
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents } from 'bullmq';
import { QUEUES, SYSTEM_JOBS } from '@vouch/contracts';
import { consumerRedisOptions, createPool, runMigrations } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, spawnTsProcess, useTestPrefix, useTestSchema, type TestPrefix } from '@vouch/testing';
import { createApiKey } from '../services/gateway/src/api-keys.js';
import { MIGRATIONS_DIR } from '../services/gateway/src/gateway.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '1,8,32').split(',').map(Number);
const GATEWAY_PORT = Number(process.env.BENCH_PORT ?? 18_181);
const FLOOR_PORT = GATEWAY_PORT + 1;

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

/** Runs `connections` callers back to back for SECONDS; each call's latency is measured exactly. */
async function measure(connections: number, call: () => Promise<void>): Promise<Point> {
  const latencies: number[] = [];
  const deadline = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        await call();
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), rps: latencies.length / SECONDS };
}

/** A keep-alive POST client: one socket per concurrent caller, as a load balancer would hold them. */
function poster(port: number, path: string, headers: Record<string, string>, body: string): () => Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const payload = Buffer.from(body);
  return () =>
    new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': payload.length } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${path} answered ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(payload);
    });
}

async function waitForReady(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await fetch(`${url}/readyz`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the gateway at ${url} did not become ready`);
}

const prefixes: TestPrefix[] = [];
const schema = await useTestSchema('bench_ping');
const children: ChildProcess[] = [];
const base = { REDIS_URL: TEST_REDIS_URL, DATABASE_URL: TEST_DATABASE_URL, DB_SCHEMA: schema.schema };

/** A ping worker process on its own prefix, like a deployed service. */
async function workerOn(label: string): Promise<string> {
  const prefix = await useTestPrefix(label);
  prefixes.push(prefix);
  const worker = spawnTsProcess(fileURLToPath(new URL('./ping-worker.ts', import.meta.url)), { ...base, BULLMQ_PREFIX: prefix.prefix, WORKER_CONCURRENCY: '32' });
  children.push(worker.proc);
  await worker.waitFor('ready', 60_000);
  return prefix.prefix;
}

try {
  await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: MIGRATIONS_DIR });
  const pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema, max: 1 });
  const { key } = await createApiKey(pool, { tenant: 'bench', scopes: ['system:read'] });
  await pool.end();

  const [gatewayPrefix, floorPrefix, rawPrefix] = [await workerOn('bench_ping_gw'), await workerOn('bench_ping_floor'), await workerOn('bench_ping_raw')];

  const gateway = spawnTsProcess(fileURLToPath(new URL('../services/gateway/src/main.ts', import.meta.url)), {
    ...base,
    BULLMQ_PREFIX: gatewayPrefix,
    PORT: String(GATEWAY_PORT),
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.BENCH_GATEWAY_LOG_LEVEL ?? 'warn',
  }, (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean));
  children.push(gateway.proc);
  const floor = spawnTsProcess(fileURLToPath(new URL('./http-floor.ts', import.meta.url)), { ...base, BULLMQ_PREFIX: floorPrefix, PORT: String(FLOOR_PORT) });
  children.push(floor.proc);
  await waitForReady(`http://127.0.0.1:${GATEWAY_PORT}`);
  await floor.waitFor('ready', 60_000);

  const body = JSON.stringify({ service: QUEUES.extractor });
  const viaGateway = poster(GATEWAY_PORT, '/v1/system/ping', { authorization: `Bearer ${key}` }, body);
  const viaFloor = poster(FLOOR_PORT, '/', {}, body);
  const connection = consumerRedisOptions(TEST_REDIS_URL);
  const queue = new Queue(QUEUES.extractor, { connection, prefix: rawPrefix });
  const events = new QueueEvents(QUEUES.extractor, { connection, prefix: rawPrefix });
  events.setMaxListeners(10_000); // one listener per waiting call, as waitUntilFinished adds
  queue.setMaxListeners(10_000); // and one "closing" listener on the queue
  await events.waitUntilReady();
  const raw = async () => {
    // waitUntilFinished checks the job after attaching its listener, so the job must outlive its completion a little.
    const job = await queue.add(SYSTEM_JOBS.ping, { tenant: 'system', input: {} }, { removeOnComplete: { age: 60 }, removeOnFail: { age: 60 } });
    await job.waitUntilFinished(events, 10_000);
  };

  // Warm-up: JIT, connection pools, BullMQ scripts, the key cache.
  for (const call of [viaGateway, viaFloor, raw]) await measure(4, call);

  console.log(`system.ping round trip, ${SECONDS} s per point, median of ${ROUNDS} rounds (latency in ms, throughput in requests/s)`);
  console.log('| c | gateway p50 | p99 | rps | floor p50 | p99 | rps | raw p50 | p99 | rps | gateway/raw p50 | gateway/raw rps | floor/raw p50 | floor/raw rps |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const c of CONCURRENCIES) {
    const runs: Record<'gw' | 'floor' | 'raw', Point[]> = { gw: [], floor: [], raw: [] };
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate so drift on a shared machine falls on every side.
      runs.gw.push(await measure(c, viaGateway));
      runs.floor.push(await measure(c, viaFloor));
      runs.raw.push(await measure(c, raw));
    }
    const [g, f, b] = (['gw', 'floor', 'raw'] as const).map((k) => ({
      p50: median(runs[k].map((p) => p.p50)),
      p99: median(runs[k].map((p) => p.p99)),
      rps: median(runs[k].map((p) => p.rps)),
    })) as [Point, Point, Point];
    const cells = [g, f, b].flatMap((p) => [p.p50.toFixed(2), p.p99.toFixed(2), p.rps.toFixed(0)]);
    console.log(`| ${c} | ${cells.join(' | ')} | ${(g.p50 / b.p50).toFixed(2)} | ${(g.rps / b.rps).toFixed(2)} | ${(f.p50 / b.p50).toFixed(2)} | ${(f.rps / b.rps).toFixed(2)} |`);
  }
  await events.close();
  await queue.close();
} finally {
  for (const child of children) child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1_500));
  for (const p of prefixes) await p.cleanup();
  await schema.cleanup();
}
process.exit(0);
