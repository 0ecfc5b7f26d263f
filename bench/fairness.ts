/**
 * Noisy neighbours, measured (issue 17): tenant A floods one expensive
 * operation while tenant B calls a cheap one, one call at a time, against
 * the gateway and the queue services running as their own processes
 * (services/gateway/test/process-stack.ts, the settings of
 * docker-compose.yml). For each flood, per round: B's latency alone (the
 * baseline, measured just before in the same round), one of A's calls alone
 * (the bound's "one job"), then B's latency under A's flood; and the RSS of
 * the service doing A's work before, at its peak and after.
 *
 *   claims  70 board.claimCard waiting for work that never comes   B: board.show                      RSS: gateway (the waits are held there)
 *   ocr     12 vision.analyze (text) of 40-megapixel PNGs          B: vision.analyze of a 1-line PNG   RSS: vision-router
 *   grep    6 artifact.grep with no literal over 64 MB (8 files)    B: artifact.read of a 6-byte file   RSS: extractor
 *   bodies  20 artifact.read over /v1 with 8 MB bodies               B: artifact.read of a 6-byte file   RSS: gateway
 *   mcp     20 parallel MCP artifact_read with 8 MB bodies          B: artifact.read of a 6-byte file   RSS: gateway
 *
 *   npm run bench:fairness                                     # every flood, 3 rounds
 *   BENCH_KINDS=claims,ocr BENCH_ROUNDS=5 npm run bench:fairness
 *   BENCH_FAIR_SLOTS=off npm run bench:fairness                # per-tenant worker slots off (TENANT_CONCURRENCY = WORKER_CONCURRENCY): the shared FIFO
 *   BENCH_CPU_PROF=/tmp/prof BENCH_KINDS=bodies npm run bench:fairness   # and a CPU profile of each process, written when it stops
 *
 * The bound holds when B's loaded p99 ≤ 2 × its unloaded p99 + one of A's
 * jobs. Each figure is the median over BENCH_ROUNDS rounds (default 3). B
 * calls for at least BENCH_PHASE_S (6) and BENCH_SAMPLES calls (40) per
 * phase (6 s: the loaded phase holds the moment A's waiting claims look
 * again, 5 s after they start), and under the flood goes on until A has had
 * time for 3 of its jobs, but stops after BENCH_MAX_LOADED_S (30) once it
 * has 3. A's key has budgets it cannot reach,
 * so its flood meets the queues, not the gateway's 429s (those are
 * tenant-budgets.test.ts's); A's answers are counted by status. Sizes:
 * BENCH_CLAIMS, BENCH_OCR_CALLERS, BENCH_OCR_SIZE (8000x5000),
 * BENCH_GREP_CALLERS, BENCH_GREP_MB, BENCH_BODY_CALLERS, BENCH_MCP_CALLERS,
 * BENCH_BODY_MB. "RSS after" is read once the service has been idle until
 * it is within 20 % of "before", or BENCH_RSS_WAIT_S (30) has passed: V8's
 * own schedule; then the bench forces a full collection in that process
 * (its inspector, shared/testing/src/inspector.ts) and reads it again.
 * Needs the local Redis and Postgres; other work on the machine shows in
 * every figure, so the load average is printed beside them.
 */
import { availableParallelism, loadavg } from 'node:os';
import { DEPLOYED_VARS, startProcessStack, type QueueServiceName } from '../services/gateway/test/process-stack.js';
import { FLOOD_KINDS, FLOOD_SERVICES, measureFlood, type FloodFigures, type FloodKind, type FloodSizes } from '../services/gateway/test/tenant-floods.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('BENCH_ROUNDS', 3);
const KINDS = (process.env.BENCH_KINDS ?? FLOOD_KINDS.join(',')).split(',') as FloodKind[];
const FAIR_SLOTS = process.env.BENCH_FAIR_SLOTS !== 'off';
const [OCR_WIDTH, OCR_HEIGHT] = (process.env.BENCH_OCR_SIZE ?? '8000x5000').split('x').map(Number) as [number, number];
const BODY_CHARS = env('BENCH_BODY_MB', 8) * 1_000_000;
const GREP_FILE_CHARS = 8_000_000;

const sizes: FloodSizes = {
  claimCallers: env('BENCH_CLAIMS', 70),
  ocrCallers: env('BENCH_OCR_CALLERS', 12),
  ocrWidth: OCR_WIDTH,
  ocrHeight: OCR_HEIGHT,
  grepCallers: env('BENCH_GREP_CALLERS', 6),
  grepFiles: Math.max(1, Math.round((env('BENCH_GREP_MB', 64) * 1_000_000) / GREP_FILE_CHARS)),
  grepFileChars: GREP_FILE_CHARS,
  bodyCallers: env('BENCH_BODY_CALLERS', 20),
  mcpCallers: env('BENCH_MCP_CALLERS', 20),
  bodyChars: BODY_CHARS,
};

for (const kind of KINDS) if (!FLOOD_KINDS.includes(kind)) throw new Error(`BENCH_KINDS: no flood ${kind}; the floods are ${FLOOD_KINDS.join(', ')}`);
const services = [...new Set(KINDS.flatMap((k) => FLOOD_SERVICES[k]))];
// Off: each service lets one tenant hold every slot, as the shared FIFO did before issue 17.
const vars = FAIR_SLOTS ? {} : Object.fromEntries(services.map((s: QueueServiceName) => [s, { TENANT_CONCURRENCY: DEPLOYED_VARS[s].WORKER_CONCURRENCY! }]));

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const ms = (x: number) => (x < 10 ? x.toFixed(1) : x.toFixed(0));
const mib = (x: number) => String(Math.round(x / (1024 * 1024)));

// BENCH_CPU_PROF=DIR: each process writes a V8 CPU profile there when the bench stops it (open it in Chrome's DevTools).
const profileDir = process.env.BENCH_CPU_PROF;
const nodeArgs = profileDir ? Object.fromEntries(['gateway', ...services].map((name) => [name, ['--cpu-prof', `--cpu-prof-dir=${profileDir}/${name}`]])) : undefined;

const loadBefore = load();
// inspect: each process's inspector is open on loopback, so that after V8's own return the bench can force a collection.
const stack = await startProcessStack('bench_fairness', { services, vars, nodeArgs, inspect: true });
const results: FloodFigures[] = [];
/** RSS of the flood's service after a forced full collection, read once the natural return above is over. */
const collected = new Map<FloodKind, number>();
try {
  for (const kind of KINDS) {
    const figures = await measureFlood(stack, kind, sizes, {
      rounds: ROUNDS,
      samples: env('BENCH_SAMPLES', 40),
      phaseMs: env('BENCH_PHASE_S', 6) * 1000,
      jobSamples: 3,
      floodJobs: 3,
      maxLoadedMs: env('BENCH_MAX_LOADED_S', 30) * 1000,
      rssReturnMs: env('BENCH_RSS_WAIT_S', 30) * 1000,
    });
    results.push(figures);
    await stack.collectGarbage(figures.service);
    await new Promise((r) => setTimeout(r, 1_000));
    collected.set(kind, stack.rss(figures.service));
    console.error(`${kind} done (load ${load()})`);
  }
} finally {
  await stack.stop();
}

console.log(`Tenant B's cheap call alone and under tenant A's flood, median of ${ROUNDS} rounds (ms); fair slots ${FAIR_SLOTS ? 'on (default TENANT_CONCURRENCY)' : 'OFF (TENANT_CONCURRENCY = WORKER_CONCURRENCY)'}`);
console.log(`load average (1/5/15 min): ${loadBefore} at the start, ${load()} at the end, on ${availableParallelism()} cores`);
console.log('| flood (A) | cheap call (B) | B alone p50 | p99 | B under flood p50 | p99 | p99 ratio | one job of A | bound (2×p99 + job) | holds | A\'s answers | RSS of | before MiB | peak | after | back in | after a forced collection |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const f of results) {
  const answers = Object.entries(f.answers).map(([status, n]) => `${n}× ${status}`).join(', ');
  const back = f.rss.returnedInMs === null ? `not within ${env('BENCH_RSS_WAIT_S', 30)} s` : `${(f.rss.returnedInMs / 1000).toFixed(1)} s`;
  console.log(
    `| ${f.flood} | ${f.cheap} | ${ms(f.unloaded.p50)} | ${ms(f.unloaded.p99)} | ${ms(f.loaded.p50)} | ${ms(f.loaded.p99)} | ${f.ratio.toFixed(2)} | ${ms(f.jobMs)} | ${ms(f.boundMs)} | ${f.holds ? 'yes' : '**no**'} | ${answers} | ${f.service} | ${mib(f.rss.before)} | ${mib(f.rss.peak)} | ${mib(f.rss.after)} | ${back} | ${mib(collected.get(f.kind)!)} |`,
  );
}
console.log(`B's calls per phase (median): ${results.map((f) => `${f.kind} ${f.samples.unloaded} alone / ${f.samples.loaded} under the flood`).join('; ')}`);
process.exit(0);
