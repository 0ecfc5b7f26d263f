/**
 * What one call of each operation costs, and what that projects to
 * (issue 21; docs/capacity.md reads its figures from here).
 *
 * The whole stack runs as deployed (the gateway and the four services as
 * their own processes, services/gateway/test/process-stack.ts) on a Redis
 * server this bench starts on its own loopback port and a database it
 * creates, so that nothing else on the machine (a test suite, another bench)
 * counts in the figures. Each operation is called BENCH_CALLS times (80; the
 * image path a quarter of that), one call at a time, and per call it reads:
 *
 *   Redis      commands (INFO commandstats) and the server's CPU time (INFO cpu)
 *   Postgres   transactions and rows written (pg_stat_database of its database),
 *              and the CPU time of the stack's backends (/proc)
 *   processes  the CPU time of the gateway and of the service that does the work (/proc)
 *
 * The stack's own idle work (workers' blocking polls, the dispatcher's lease)
 * is measured over BENCH_IDLE_S (10) seconds first and taken off at its
 * rate. Postgres publishes a backend's counters within about 10 s of its last
 * transaction, so the bench waits BENCH_SETTLE_S (11) seconds before each
 * reading. Baselines in the same run, on the same Redis and database: raw
 * BullMQ (Queue.add and a Worker in this process, job.waitUntilFinished),
 * and raw Postgres (a single-row INSERT, autocommit). CPU times are the
 * scheduler's own nanosecond counts and depend less on what else the machine
 * runs than wall times do (a busy machine still inflates them through shared
 * caches), so the load average is printed beside them.
 *
 *   npm run bench:capacity
 *   BENCH_CALLS=200 npm run bench:capacity
 *
 * The projection divides one core by each resource's CPU time per call:
 * the calls per second one Redis server (single-threaded), one replica of
 * each service (one event loop) and one Postgres core can carry, and how
 * many of each a million jobs an hour (278 a second) of that operation needs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import { Redis } from 'ioredis';

const CALLS = Number(process.env.BENCH_CALLS ?? 80);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 10);
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 11);
const REDIS_PORT = Number(process.env.BENCH_REDIS_PORT ?? 16_399);
const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DATABASE = `vouch_capacity_${process.pid}`;
const JOBS_PER_HOUR = 1_000_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * CPU time of a process so far, in ms, 0 once it is gone: the scheduler's own count of the time its threads ran
 * (/proc/PID/schedstat, in ns), summed over its threads, where /proc/PID/stat counts 10 ms ticks.
 */
function cpuMs(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).reduce((n, tid) => n + Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6, 0);
  } catch {
    return 0;
  }
}

// ── our own Redis and database ──────────────────────────────────────────
const redisServer: ChildProcess = spawn('redis-server', ['--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
// However the bench ends, its Redis goes with it.
process.on('exit', () => redisServer.kill('SIGKILL'));
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE ${DATABASE}`);
const redisUrl = `redis://127.0.0.1:${REDIS_PORT}`;
const databaseUrl = new URL(ADMIN_URL);
databaseUrl.pathname = `/${DATABASE}`;
// The stack and the helpers below read these when they are imported.
process.env.REDIS_URL = redisUrl;
process.env.DATABASE_URL = databaseUrl.href;
const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
for (let i = 0; i < 50 && (await redis.ping().catch(() => '')) !== 'PONG'; i++) await sleep(100);

const { startProcessStack } = await import('../services/gateway/test/process-stack.js');
const { renderText } = await import('../services/vision-router/test/render-text.js');
const { Queue, Worker, QueueEvents } = await import('bullmq');

// The bench's reader of counters (its own backend is left out of them), and the raw baseline's connection (counted).
const db = new pg.Client({ connectionString: databaseUrl.href });
await db.connect();
const rawDb = new pg.Client({ connectionString: databaseUrl.href });
await rawDb.connect();

interface Counters {
  at: number;
  redisCalls: number;
  redisCpuMs: number;
  xacts: number;
  rowsWritten: number;
  pgCpuMs: number;
  proc: Record<string, number>;
}

let pids: Record<string, number> = {};

async function redisCounters(): Promise<{ calls: number; cpuMs: number }> {
  const stats = await redis.info('commandstats');
  const calls = [...stats.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
  const cpu = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0);
  // The INFO commands this bench sends are its own, not the stack's: two per reading.
  return { calls: calls - 2, cpuMs: (field('used_cpu_user') + field('used_cpu_sys')) * 1000 };
}

async function counters(): Promise<Counters> {
  const r = await redisCounters();
  const row = (
    await db.query<{ xacts: string; written: string }>(
      `SELECT xact_commit + xact_rollback AS xacts, tup_inserted + tup_updated + tup_deleted AS written FROM pg_stat_database WHERE datname = $1`,
      [DATABASE],
    )
  ).rows[0]!;
  // The stack's backends: every connection to our database but this bench's own.
  const backends = (await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [DATABASE])).rows;
  return {
    at: performance.now(),
    redisCalls: r.calls,
    redisCpuMs: r.cpuMs,
    xacts: Number(row.xacts),
    rowsWritten: Number(row.written),
    pgCpuMs: backends.reduce((n, b) => n + cpuMs(b.pid), 0),
    proc: Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuMs(pid)])),
  };
}

interface Cost {
  name: string;
  calls: number;
  /** Jobs (gateway calls, each one BullMQ job) in one unit measured: 3 for a ledger run of three calls. */
  jobs: number;
  wallMs: number;
  redisCalls: number;
  redisCpuUs: number;
  xacts: number;
  rowsWritten: number;
  pgCpuUs: number;
  proc: Record<string, number>;
}

let idleRate: Omit<Cost, 'name' | 'calls' | 'jobs' | 'wallMs'> | undefined;

function perCall(name: string, calls: number, jobs: number, wallMs: number, a: Counters, b: Counters): Cost {
  const seconds = (b.at - a.at) / 1000;
  const idle = (k: 'redisCalls' | 'redisCpuUs' | 'xacts' | 'rowsWritten' | 'pgCpuUs') => (idleRate ? idleRate[k] * seconds : 0);
  const each = (x: number) => Math.max(0, x) / calls;
  return {
    name,
    calls,
    jobs,
    wallMs,
    redisCalls: each(b.redisCalls - a.redisCalls - idle('redisCalls')),
    redisCpuUs: each((b.redisCpuMs - a.redisCpuMs) * 1000 - idle('redisCpuUs')),
    xacts: each(b.xacts - a.xacts - idle('xacts')),
    rowsWritten: each(b.rowsWritten - a.rowsWritten - idle('rowsWritten')),
    pgCpuUs: each((b.pgCpuMs - a.pgCpuMs) * 1000 - idle('pgCpuUs')),
    proc: Object.fromEntries(Object.keys(b.proc).map((k) => [k, each((b.proc[k] ?? 0) - (a.proc[k] ?? 0) - (idleRate ? (idleRate.proc[k] ?? 0) * seconds : 0))])),
  };
}

/** Runs `call` `calls` times, one at a time, between two settled readings. */
async function measure(name: string, jobs: number, calls: number, call: (i: number) => Promise<void>): Promise<Cost> {
  await sleep(SETTLE_S * 1000);
  const before = await counters();
  const walls: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await call(i);
    walls.push(performance.now() - started);
  }
  await sleep(SETTLE_S * 1000);
  const after = await counters();
  const cost = perCall(name, calls, jobs, median(walls), before, after);
  process.stdout.write(`  measured ${name}\n`);
  return cost;
}

const costs: Cost[] = [];
const loadBefore = loadavg().map((l) => l.toFixed(2)).join(' ');
let stack: Awaited<ReturnType<typeof startProcessStack>> | undefined;
try {
  // ── baselines: raw BullMQ and raw Postgres on the same servers ────────
  const raw = new Queue('capacity-raw', { connection: { host: '127.0.0.1', port: REDIS_PORT } });
  const rawEvents = new QueueEvents('capacity-raw', { connection: { host: '127.0.0.1', port: REDIS_PORT } });
  const rawWorker = new Worker('capacity-raw', async () => ({ ok: true }), { connection: { host: '127.0.0.1', port: REDIS_PORT, maxRetriesPerRequest: null } });
  await rawEvents.waitUntilReady();
  await rawWorker.waitUntilReady();
  await db.query('CREATE TABLE capacity_raw (id bigserial PRIMARY KEY, payload jsonb NOT NULL)');
  pids = { bench: process.pid };
  idleRate = undefined;
  const idleA = await counters();
  await sleep(IDLE_S * 1000);
  const idleB = await counters();
  const rawIdle = perCall('idle', 1, 1, 0, idleA, idleB);
  const idleSeconds = (idleB.at - idleA.at) / 1000;
  idleRate = { ...rawIdle, redisCalls: rawIdle.redisCalls / idleSeconds, redisCpuUs: rawIdle.redisCpuUs / idleSeconds, xacts: rawIdle.xacts / idleSeconds, rowsWritten: rawIdle.rowsWritten / idleSeconds, pgCpuUs: rawIdle.pgCpuUs / idleSeconds, proc: Object.fromEntries(Object.entries(rawIdle.proc).map(([k, v]) => [k, v / idleSeconds])) };
  costs.push(await measure('raw BullMQ job (add, work, wait)', 1, CALLS * 4, async () => {
    const job = await raw.add('ping', { at: Date.now() });
    await job.waitUntilFinished(rawEvents, 10_000);
  }));
  costs.push(await measure('raw Postgres INSERT (autocommit)', 1, CALLS * 4, async (i) => {
    await rawDb.query('INSERT INTO capacity_raw (payload) VALUES ($1)', [{ i, summary: 'a row of about the size of an event' }]);
  }));
  await rawWorker.close();
  await rawEvents.close();
  await raw.close();

  // ── the stack ──────────────────────────────────────────────────────────
  stack = await startProcessStack('capacity', { services: ['board-dispatcher', 'extractor', 'ledger-critic', 'vision-router'] });
  const s = stack;
  pids = Object.fromEntries((['gateway', 'board-dispatcher', 'extractor', 'ledger-critic', 'vision-router'] as const).map((n) => [n, s.process(n).proc.pid!]));
  const keyOf: Record<string, string> = {};
  for (const agent of ['planner', 'worker', 'verifier']) keyOf[agent] = await s.createKey('cap', { agent });
  const call = async <T = Record<string, unknown>>(agent: string, method: string, path: string, json?: unknown): Promise<T> => {
    const res = await fetch(`${s.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${keyOf[agent]}`, 'content-type': 'application/json' },
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  };

  // The idle rate again, now with the stack's own background work.
  idleRate = undefined;
  await sleep(SETTLE_S * 1000);
  const stackIdleA = await counters();
  await sleep(IDLE_S * 1000);
  const stackIdleB = await counters();
  const stackIdle = perCall('idle', 1, 1, 0, stackIdleA, stackIdleB);
  const stackIdleSeconds = (stackIdleB.at - stackIdleA.at) / 1000;
  idleRate = {
    redisCalls: stackIdle.redisCalls / stackIdleSeconds,
    redisCpuUs: stackIdle.redisCpuUs / stackIdleSeconds,
    xacts: stackIdle.xacts / stackIdleSeconds,
    rowsWritten: stackIdle.rowsWritten / stackIdleSeconds,
    pgCpuUs: stackIdle.pgCpuUs / stackIdleSeconds,
    proc: Object.fromEntries(Object.entries(stackIdle.proc).map(([k, v]) => [k, v / stackIdleSeconds])),
  };

  costs.push(await measure('system.ping', 1, CALLS, async () => {
    await call('worker', 'POST', '/v1/system/ping', { service: 'ledger-critic' });
  }));
  const body = (i: number) => `// file ${i}\n${Array.from({ length: 60 }, (_, k) => `export const setting${k} = ${(i * 7 + k) % 997}; // a line of configuration`).join('\n')}\n`;
  costs.push(await measure('artifact.read (3 KB)', 1, CALLS, async (i) => {
    await call('worker', 'POST', '/v1/artifacts/read', { workspace: 'cap', path: `src/config-${i}.ts`, content: body(i) });
  }));
  costs.push(await measure(`artifact.grep (${CALLS} files)`, 1, CALLS, async (i) => {
    await call('worker', 'POST', '/v1/artifacts/grep', { workspace: 'cap', pattern: `setting${i % 60}\\s*=`, pathPrefix: 'src/' });
  }));
  costs.push(await measure('ledger run: open, evidence, completion (3 calls)', 3, CALLS, async (i) => {
    const runId = `run-${i}`;
    await call('worker', 'POST', '/v1/ledgers', { runId, goal: 'Set the router baud rate to 115200 and confirm it', policy: 'full' });
    await call('worker', 'POST', `/v1/ledgers/${runId}/evidence`, { items: [{ kind: 'tool_result', toolName: 'shell', success: true, summary: 'cat config/router.yaml shows baudRate: 115200' }] });
    const handle = await call<{ jobId: string }>('worker', 'POST', `/v1/ledgers/${runId}/completion`, { summary: 'Set baudRate to 115200 in config/router.yaml and confirmed it with cat.' });
    const job = await call<{ state: string }>('worker', 'GET', `/v1/jobs/${encodeURIComponent(handle.jobId)}?wait=10`);
    if (job.state !== 'completed') throw new Error(`completion of ${runId}: ${job.state}`);
  }));
  await call('planner', 'POST', '/v1/boards', { boardId: 'cap', title: 'Capacity', scope: { kind: 'run', ref: 'cap' }, owner: 'planner' });
  costs.push(await measure('board card: add, claim, submit, review (4 calls)', 4, CALLS, async () => {
    await call('planner', 'POST', '/v1/boards/cap/cards', { cards: [{ title: 'List the routers', assignee: 'worker', evidenceRequirements: ['the inventory output'] }] });
    const claimed = await call<{ claimed: boolean; claimToken: string; card: { id: string } }>('worker', 'POST', '/v1/board-claims', { boardId: 'cap', waitSeconds: 10 });
    if (!claimed.claimed) throw new Error('no card to claim');
    const evidence = [{ kind: 'tool_result', ref: 'call-17', summary: 'the inventory output: 12 routers, 3 on firmware 1.2', covers: ['r1'] }];
    await call('worker', 'POST', `/v1/boards/cap/cards/${claimed.card.id}/submission`, { claimToken: claimed.claimToken, summary: 'Listed 12 routers', evidence });
    await call('verifier', 'POST', `/v1/boards/cap/cards/${claimed.card.id}/review`, { decision: 'auto' });
  }));
  const images = await Promise.all(Array.from({ length: Math.max(8, Math.round(CALLS / 2)) }, (_, i) => renderText({ text: `Order ${4400 + i} shipped`, size: 28 })));
  costs.push(await measure('image: media.register, vision.analyze (2 calls)', 2, images.length, async (i) => {
    const { alias } = await call<{ alias: string }>('worker', 'POST', '/v1/media', { surface: 'api', chatKey: 'cap', messageId: String(i), imageBase64: images[i]!.toString('base64') });
    await call('worker', 'POST', '/v1/vision/analyze', { surface: 'api', chatKey: 'cap', alias, prompt: 'What does the label say?', requestedDetail: 'text' });
  }));
} finally {
  await stack?.stop();
  await db.end();
  await rawDb.end();
  await redis.quit().catch(() => {});
  redisServer.kill('SIGTERM');
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin.end();
}

// ── report ────────────────────────────────────────────────────────────────
const f = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '-');
const services = ['gateway', 'board-dispatcher', 'extractor', 'ledger-critic', 'vision-router'];
console.log(`\n## Cost per call (${CALLS} calls each; load ${loadBefore} → ${loadavg().map((l) => l.toFixed(2)).join(' ')})\n`);
console.log('| Operation | wall p50 ms | Redis cmds | Redis CPU µs | PG xacts | PG rows written | PG CPU µs | ' + services.map((s) => `${s} CPU ms`).join(' | ') + ' |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ' + services.map(() => '---:').join(' | ') + ' |');
for (const c of costs) {
  console.log(`| ${c.name} | ${f(c.wallMs, 1)} | ${f(c.redisCalls, 1)} | ${f(c.redisCpuUs)} | ${f(c.xacts, 1)} | ${f(c.rowsWritten, 1)} | ${f(c.pgCpuUs)} | ${services.map((s) => (s in c.proc ? f(c.proc[s]!, 2) : '-')).join(' | ')} |`);
}

const perSecond = JOBS_PER_HOUR / 3600;
/** One unit's cost per job: a ledger run of three calls is three jobs. */
const perJob = (c: Cost) => ({ redisCpuUs: c.redisCpuUs / c.jobs, pgCpuUs: c.pgCpuUs / c.jobs, proc: Object.fromEntries(Object.entries(c.proc).map(([k, v]) => [k, v / c.jobs])) });
// Below a few µs a cost is the idle rate's noise, not the operation's: no rate is printed for it.
const rateOf = (cpu: number, unit: number) => (cpu > unit / 1e5 ? unit / cpu : Number.POSITIVE_INFINITY);
console.log(`\n## Jobs per second one core carries, and what ${JOBS_PER_HOUR.toLocaleString('en')} jobs an hour (${f(perSecond)} a second) of each kind needs\n`);
console.log('| Operation | one Redis (jobs/s) | Redis servers | one Postgres core (jobs/s) | Postgres cores | busiest process | its jobs/s per replica | its replicas | runs out first |');
console.log('| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |');
const rows = [...costs];
// The stack's kinds in equal numbers of jobs: the mix an agent platform sends, roughly.
const stackCosts = costs.filter((c) => !c.name.startsWith('raw '));
const mixJobs = stackCosts.reduce((n, c) => n + c.jobs, 0);
const mixProc: Record<string, number> = {};
for (const c of stackCosts) for (const [k, v] of Object.entries(perJob(c).proc)) mixProc[k] = (mixProc[k] ?? 0) + (v * c.jobs) / mixJobs;
rows.push({
  name: `mix: the ${stackCosts.length} kinds above, each its share of jobs`,
  calls: 0,
  jobs: 1,
  wallMs: Number.NaN,
  redisCalls: stackCosts.reduce((n, c) => n + c.redisCalls, 0) / mixJobs,
  redisCpuUs: stackCosts.reduce((n, c) => n + c.redisCpuUs, 0) / mixJobs,
  xacts: stackCosts.reduce((n, c) => n + c.xacts, 0) / mixJobs,
  rowsWritten: stackCosts.reduce((n, c) => n + c.rowsWritten, 0) / mixJobs,
  pgCpuUs: stackCosts.reduce((n, c) => n + c.pgCpuUs, 0) / mixJobs,
  proc: mixProc,
});
for (const c of rows) {
  const each = perJob(c);
  const redisRate = rateOf(each.redisCpuUs, 1e6);
  const pgRate = rateOf(each.pgCpuUs, 1e6);
  const [busiest, ms] = Object.entries(each.proc).sort((a, b) => b[1] - a[1])[0] ?? ['-', 0];
  const procRate = rateOf(ms, 1000);
  const limits: Array<[string, number]> = [['Redis', redisRate], ['Postgres (per core)', pgRate], [busiest, procRate]];
  const first = limits.toSorted((a, b) => a[1] - b[1])[0]?.[0];
  console.log(`| ${c.name} | ${f(redisRate)} | ${f(perSecond / redisRate, 2)} | ${f(pgRate)} | ${f(perSecond / pgRate, 2)} | ${busiest} | ${f(procRate)} | ${f(perSecond / procRate, 1)} | ${first} |`);
}
if (mixJobs > 0) {
  console.log(`\nIn the mix, per job: ${Object.entries(mixProc).map(([k, v]) => `${k} ${f(v, 2)} ms`).join(', ')} of CPU; Redis ${f(rows.at(-1)!.redisCpuUs)} µs; Postgres ${f(rows.at(-1)!.pgCpuUs)} µs.`);
}
