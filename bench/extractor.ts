/**
 * The extractor's figures, each beside a baseline measured in the same run.
 *
 * 1. artifact.grep throughput over BENCH_MB (default 120) MB of artifacts
 *    (BENCH_FILES files), end to end through the extractor's queue (job added,
 *    bodies searched, result back), against GNU grep over the same bytes
 *    written to files (page-cached), `grep -n -r -E` with its output to a file:
 *
 *      literal          `baudRate\s*[:=]\s*[0-9]+` (Buffer.indexOf prefilter, RE2 on candidate lines)
 *      literal, -i      the same, case-insensitive (a case-insensitive literal prefilter)
 *      no literal       `\w+\s*[:=]\s*[0-9]{5,}` (no literal to skip by: RE2 on every line)
 *      cold             the literal pattern with an empty body cache (bodies read
 *                       from Postgres), via the commands directly (no queue)
 *
 *    Ratio = GNU grep time / extractor time (1.0 = as fast as grep; target ≥ 0.5).
 *
 * 2. Deterministic extraction latency per artifact (baudRate + channel from a
 *    ~170 KB file), through the queue (artifact.extractDeterministic job),
 *    beside a no-op round trip through the same queue (system.ping).
 *
 *   npx tsx --conditions=@vouch/source bench/extractor.ts
 *   BENCH_MB=120 BENCH_REPS=7 npx tsx --conditions=@vouch/source bench/extractor.ts
 *
 * Needs the local Redis and Postgres; works under its own BullMQ prefix and
 * Postgres schema and removes both at the end.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Queue, QueueEvents, type Job } from 'bullmq';
import { Registry } from 'prom-client';
import { QUEUES, SYSTEM_JOBS, type Artifact, type DerivedExtract, type GrepResult, type JobEnvelope } from '@vouch/contracts';
import { createLogger, parseConfig } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, useTestPrefix, useTestSchema } from '@vouch/testing';
import { BodyCache } from '../services/extractor/src/body-cache.js';
import { extractorEnvSchema } from '../services/extractor/src/config.js';
import { createDeterministicExtractor } from '../services/extractor/src/deterministic-extractor.js';
import { createExtractorCommands } from '../services/extractor/src/extractor-handlers.js';
import { startExtractor } from '../services/extractor/src/extractor-service.js';
import { createExtractorMetrics } from '../services/extractor/src/metrics.js';
import { harnessFile } from '../harness/src/harness-files.js';

const MB = Number(process.env.BENCH_MB ?? 120);
const FILES = Number(process.env.BENCH_FILES ?? 120);
const REPS = Number(process.env.BENCH_REPS ?? 7);
const EXTRACTS = Number(process.env.BENCH_EXTRACTS ?? 40);
const TENANT = 'bench';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;
const mbps = (bytes: number, t: number) => `${(bytes / 1e6 / (t / 1000)).toFixed(0)} MB/s`;

/** A source-like file of about `bytes` bytes with one baudRate definition. */
function sourceFile(i: number, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  let n = 0;
  const at = 1_000 + ((i * 7_919) % 8_000);
  while (size < bytes) {
    const line = n === at ? `  baudRate: ${9600 * (1 + (i % 12))},` : `  reg_${i}_${n}: 0x${((n * 2654435761 + i) >>> 0).toString(16).padStart(8, '0')}, // channel bank ${n % 17} filler ${'.'.repeat(n % 24)}`;
    lines.push(line);
    size += line.length + 1;
    n += 1;
  }
  return `${lines.join('\n')}\n`;
}

class Client {
  readonly queue: Queue<JobEnvelope>;
  readonly events: QueueEvents;
  constructor(name: string, prefix: string) {
    this.queue = new Queue<JobEnvelope>(name, { connection: { url: TEST_REDIS_URL }, prefix });
    this.events = new QueueEvents(name, { connection: { url: TEST_REDIS_URL }, prefix });
  }
  async run<T>(op: string, input: unknown): Promise<T> {
    const job: Job<JobEnvelope> = await this.queue.add(op, { tenant: TENANT, input }, { removeOnComplete: true, removeOnFail: true });
    return (await job.waitUntilFinished(this.events, 120_000)) as T;
  }
  async close() {
    await this.events.close();
    await this.queue.close();
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

const prefix = await useTestPrefix('bench_extractor');
const schema = await useTestSchema('bench_extractor');
const dir = await mkdtemp(join(tmpdir(), 'vouch-bench-grep-'));
const env = parseConfig(extractorEnvSchema, {
  REDIS_URL: TEST_REDIS_URL,
  DATABASE_URL: TEST_DATABASE_URL,
  BULLMQ_PREFIX: prefix.prefix,
  DB_SCHEMA: schema.schema,
  HTTP_PORT: '0',
  LOG_LEVEL: 'silent',
  WORKER_CONCURRENCY: '2',
  EXTRACTOR_BODY_CACHE_BYTES: String(1024 ** 3),
  EXTRACTOR_GREP_SCAN_CAP_BYTES: String(2 * 1024 ** 3),
});
const svc = await startExtractor(env, { logger: createLogger({ service: 'extractor', level: 'silent' }) });
const cpu = new Client(QUEUES.extractor, prefix.prefix);
await cpu.events.waitUntilReady();
try {
  // --- 1. grep ---------------------------------------------------------------
  const per = Math.ceil((MB * 1e6) / FILES);
  let total = 0;
  console.log(`recording ${FILES} artifacts of ~${(per / 1e6).toFixed(2)} MB through artifact.read …`);
  for (let i = 0; i < FILES; i++) {
    const text = sourceFile(i, per);
    total += Buffer.byteLength(text);
    const path = `src/bank-${String(i % 10)}/file-${String(i).padStart(4, '0')}.ts`;
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
    await cpu.run<Artifact>('artifact.read', { workspace: 'bench', path, content: text });
  }
  console.log(`${(total / 1e6).toFixed(1)} MB in ${FILES} artifacts; GNU ${execFileSync('grep', ['--version'], { encoding: 'utf8' }).split('\n')[0]}`);

  const gnu = (args: string[]) => {
    const out = join(dir, '..', `grep-out-${process.pid}.txt`);
    const t0 = performance.now();
    try {
      execFileSync('sh', ['-c', `grep ${args.map((a) => `'${a}'`).join(' ')} > '${out}'`]);
    } catch {
      // exit 1: no match; still timed
    }
    return performance.now() - t0;
  };
  const ours = (input: Record<string, unknown>) => timed(() => cpu.run<GrepResult>('artifact.grep', { workspace: 'bench', capBytes: 1_000_000, ...input }));

  const rows: string[][] = [];
  const cases: Array<{ name: string; input: Record<string, unknown>; grepArgs: string[] }> = [
    { name: 'literal', input: { pattern: 'baudRate\\s*[:=]\\s*[0-9]+' }, grepArgs: ['-n', '-r', '-E', 'baudRate[[:space:]]*[:=][[:space:]]*[0-9]+', dir] },
    { name: 'literal, -i', input: { pattern: 'baudRate\\s*[:=]\\s*[0-9]+', ignoreCase: true }, grepArgs: ['-n', '-r', '-i', '-E', 'baudRate[[:space:]]*[:=][[:space:]]*[0-9]+', dir] },
    { name: 'no literal', input: { pattern: '\\w+\\s*[:=]\\s*[0-9]{5,}' }, grepArgs: ['-n', '-r', '-E', '[[:alnum:]_]+[[:space:]]*[:=][[:space:]]*[0-9]{5,}', dir] },
  ];
  for (const c of cases) {
    const first = await ours(c.input);
    const g0 = gnu(c.grepArgs);
    void g0;
    const oursMs: number[] = [];
    const grepMs: number[] = [];
    for (let r = 0; r < REPS; r++) {
      oursMs.push((await ours(c.input)).ms);
      grepMs.push(gnu(c.grepArgs));
    }
    const o = median(oursMs);
    const g = median(grepMs);
    if (first.value.provenance.scannedBytes !== total) throw new Error(`grep scanned ${first.value.provenance.scannedBytes} of ${total} bytes`);
    rows.push([c.name, ms(o), mbps(total, o), ms(g), mbps(total, g), (g / o).toFixed(2), String(first.value.provenance.matchesCounted)]);
  }
  // Cold: bodies read from Postgres, no cache (commands directly, same store).
  const cold = createExtractorCommands({ pool: svc.pool, metrics: createExtractorMetrics(new Registry()), bodies: new BodyCache(0), deterministic: createDeterministicExtractor(), grepScanCapBytes: 2 * 1024 ** 3 });
  const coldMs: number[] = [];
  for (let r = 0; r < Math.max(3, Math.floor(REPS / 2)); r++) {
    coldMs.push((await timed(() => cold.grep({ tenant: TENANT, jobId: `cold-${r}` }, { workspace: 'bench', pattern: 'baudRate\\s*[:=]\\s*[0-9]+', ignoreCase: false, capBytes: 1_000_000 }))).ms);
  }
  const gLit = Number(rows[0]![3]!.split(' ')[0]);
  rows.push(['cold (Postgres)', ms(median(coldMs)), mbps(total, median(coldMs)), rows[0]![3]!, rows[0]![4]!, (gLit / median(coldMs)).toFixed(2), rows[0]![6]!]);

  console.log(`\n1. artifact.grep over ${(total / 1e6).toFixed(1)} MB (${FILES} artifacts), medians of ${REPS}; ratio = GNU grep time / extractor time`);
  const header = ['case', 'extractor', 'throughput', 'GNU grep', 'throughput', 'ratio', 'matches'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  console.log(fmt(header));
  for (const r of rows) console.log(fmt(r));

  // --- 2. deterministic extraction -------------------------------------------
  const ids: Artifact[] = [];
  for (let i = 0; i < EXTRACTS; i++) {
    const f = harnessFile(i);
    ids.push(await cpu.run<Artifact>('artifact.read', { workspace: 'extract', path: f.path, content: f.text }));
  }
  const extractMs: number[] = [];
  const pingMs: number[] = [];
  for (const a of ids) {
    const x = await timed(() => cpu.run<DerivedExtract>('artifact.extractDeterministic', { artifactId: a.artifactId, requirements: [{ id: 'baudRate' }, { id: 'channel' }] }));
    if (!x.value.coverage.complete) throw new Error(`extract of ${a.path} incomplete`);
    extractMs.push(x.ms);
    const t0 = performance.now();
    const job = await cpu.queue.add(SYSTEM_JOBS.ping, { tenant: 'system', input: {} }, { removeOnComplete: true });
    await job.waitUntilFinished(cpu.events, 10_000);
    pingMs.push(performance.now() - t0);
  }
  console.log(`\n2. deterministic extraction (baudRate + channel) of ${EXTRACTS} artifacts of ~${(ids[0]!.byteSize / 1e3).toFixed(0)} KB, through the queue`);
  console.log(`   extract: median ${ms(median(extractMs))}, p95 ${ms(p95(extractMs))}; queue round trip (system.ping): median ${ms(median(pingMs))}`);
} finally {
  await cpu.close();
  await svc.stop();
  for (const name of [QUEUES.extractor, QUEUES.extractorGpu]) {
    const q = new Queue(name, { connection: { url: TEST_REDIS_URL }, prefix: prefix.prefix });
    await q.obliterate({ force: true }).catch(() => {});
    await q.close();
  }
  await prefix.cleanup();
  await schema.cleanup();
  await rm(dir, { recursive: true, force: true });
  await rm(join(dir, '..', `grep-out-${process.pid}.txt`), { force: true });
}
