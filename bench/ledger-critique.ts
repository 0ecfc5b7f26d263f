/**
 * Two tables, as the evidence grows (10, 100, 1,000 and 10,000 items).
 *
 * 1. Critique time under a 20-claim completion, reviewed by the rule critic
 *    as the ledger-critic service runs it (load the ledger from its snapshot,
 *    derive and reconcile the claims, build the packet, append the review in
 *    one transaction, and write the snapshot when the review closes the
 *    ledger). Beside each figure, baselines measured in the same run:
 *
 *   domain         the pure review alone (draft, find the candidates, plan, conclude) on the loaded
 *                  state, given the stored index keys and features as the service reads them
 *   pg rows        raw Postgres: SELECT of the same number of evidence rows from a plain table
 *   pg snap read   raw Postgres: SELECT of the ledger's snapshot row (jsonb, parsed)
 *   pg snap r+w    raw Postgres: that SELECT plus writing the same jsonb back, in one transaction
 *                  (what every write paid while each one rewrote the snapshot)
 *   snapshot KB    the ledger state as JSON: what a cold read loads and a snapshot write writes
 *   features KB    what the critic read from the evidence, as JSON, kept apart from the state
 *                  (ledger_observations): a review reads every item's index keys and the
 *                  words of only the candidates it judges
 *
 * 2. The cost of one ledger.recordEvidence write (a 1-item batch) into a
 *    ledger that already holds that many items:
 *
 *   cold           a fresh command set (empty cache): lock the head, read the snapshot and the events after it, append
 *   warm           the command set that wrote the ledger last (cache hit): lock the head, append
 *   pg insert      raw Postgres: INSERT of one event row of the same size into a plain table (autocommit)
 *   snapshot       writing the ledger's snapshot, which one write in SNAPSHOT_EVERY also does
 *
 *    At 10,000 the ledger holds a few items less, so that the measured writes
 *    stay under the 10,000-item cap (LEDGER_LIMITS.evidencePerLedger).
 *
 *   npx tsx --conditions=@vouch/source bench/ledger-critique.ts
 *   BENCH_REPS=7 BENCH_SIZES=10,100,1000,10000 npx tsx --conditions=@vouch/source bench/ledger-critique.ts
 *
 * Prints medians over BENCH_REPS repetitions (after one warm-up) and the
 * growth ratio of each column per step of evidence. Needs the local Postgres
 * (DATABASE_URL, default the `test` database); it works in a schema of its own
 * and drops it at the end.
 */
import { Registry } from 'prom-client';
import { LEDGER_LIMITS, type EvidenceInput } from '@vouch/contracts';
import { createPool, runMigrations, withTransaction, type Pool } from '@vouch/platform';
import { TEST_DATABASE_URL, useTestSchema } from '@vouch/testing';
import { concludeCompletionReview, draftCompletionReview, findReviewCandidates, openLedger, planCompletionReview, recordEvidence } from '../services/ledger-critic/src/domain/ledger-commands.js';
import type { LedgerEvent } from '../services/ledger-critic/src/domain/ledger-events.js';
import type { StoredObservation } from '@vouch/judge';
import type { LedgerState } from '../services/ledger-critic/src/domain/replay-ledger.js';
import { MIGRATIONS_DIR } from '../services/ledger-critic/src/ledger-critic-service.js';
import { createLedgerCommands } from '../services/ledger-critic/src/ledger-handlers.js';
import { SNAPSHOT_EVERY, appendEvents, loadLedger, saveObservations, saveSnapshot, type LedgerKey } from '../services/ledger-critic/src/ledger-store.js';
import { createLlmCritic } from '../services/ledger-critic/src/llm-critic.js';
import { createLedgerMetrics } from '../services/ledger-critic/src/metrics.js';

const SIZES = (process.env.BENCH_SIZES ?? '10,100,1000,10000').split(',').map(Number);
const REPS = Number(process.env.BENCH_REPS ?? 7);
const CLAIMS = 20;
const BATCH = 500; // LEDGER_LIMITS.evidencePerCall
const TENANT = 'bench';
const GOAL = `Roll out the ${CLAIMS} api services to their hosts`;
const SUMMARY = Array.from({ length: CLAIMS }, (_, k) => `Deployed api-${k + 1} v1.${k + 1}.0 to host-${k + 1}.`).join(' ');
const AT = '2025-03-01T10:00:00.000Z';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

async function timed(fn: () => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** Evidence item i: most are rollout steps of one of the claims' services (in turn), every seventh an unrelated probe. */
function evidenceItem(i: number): EvidenceInput {
  const k = (i % CLAIMS) + 1;
  if (i % 7 === 6) return { kind: 'runtime_observation', toolName: 'probe', success: true, summary: `health probe ${i}: node-${i} answered in ${i % 90} ms` };
  return { kind: 'delivery_result', toolName: 'deploy', success: true, summary: `deploy step ${i}: api-${k} v1.${k}.0 rolled out to host-${k}, ${i % 5} pods restarted` };
}

/** The events, stored features and final state of a ledger holding n evidence items, built with the domain commands. */
function buildLedger(runId: string, n: number): { events: LedgerEvent[]; observations: StoredObservation[]; state: LedgerState } {
  const opened = openLedger(undefined, { runId, goal: GOAL, policy: 'full', cycleBudget: 3, at: AT });
  const events = [...opened.events];
  const observations: StoredObservation[] = [];
  let state = opened.state;
  for (let start = 0; start < n; start += BATCH) {
    const items = Array.from({ length: Math.min(BATCH, n - start) }, (_, j) => evidenceItem(start + j));
    const decision = recordEvidence(state, { runId, items, at: AT });
    events.push(...decision.events);
    observations.push(...decision.observations);
    state = decision.state;
  }
  return { events, observations, state };
}

interface Row {
  n: number;
  critique: number;
  domain: number;
  pgRows: number;
  pgSnapRead: number;
  pgSnapReadWrite: number;
  snapshotKb: number;
  /** The stored features of all its evidence (ledger_observations), as JSON. */
  featuresKb: number;
  decision: string;
}

/** A command set of its own: what a freshly started worker has, an empty ledger cache included. */
function newCommands(pool: Pool): ReturnType<typeof createLedgerCommands> {
  const metrics = createLedgerMetrics(new Registry());
  return createLedgerCommands({ pool, metrics, critic: createLlmCritic({ host: undefined, model: 'none', timeoutMs: 1_000, metrics }), cycleBudget: 3 });
}

/**
 * Stores a ledger of n items built in big batches, with its snapshot at the
 * head, as a ledger that grew through many writes has one at most
 * SNAPSHOT_EVERY events back.
 */
async function storeLedger(pool: Pool, key: LedgerKey, n: number): Promise<{ state: LedgerState; observations: StoredObservation[] }> {
  const built = buildLedger(key.runId, n);
  await withTransaction(pool, async (tx) => {
    await appendEvents(tx, key, 0, built.events, built.state);
    for (let start = 0; start < built.observations.length; start += BATCH) await saveObservations(tx, key, built.observations.slice(start, start + BATCH));
    await saveSnapshot(tx, key, built.state);
  });
  return { state: built.state, observations: built.observations };
}

async function measure(pool: Pool, n: number): Promise<Row> {
  const commands = newCommands(pool);

  // A plain table with the same evidence as rows: the raw-Postgres baseline for reading n items.
  await pool.query(`DELETE FROM bench_evidence`);
  await pool.query(
    `INSERT INTO bench_evidence (seq, kind, tool_name, success, summary) SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::bool[], $5::text[])`,
    (() => {
      const items = Array.from({ length: n }, (_, i) => evidenceItem(i));
      return [items.map((_, i) => i + 1), items.map((e) => e.kind), items.map((e) => e.toolName ?? null), items.map((e) => e.success ?? null), items.map((e) => e.summary)];
    })(),
  );
  await pool.query(`ANALYZE bench_evidence`);

  const critique: number[] = [];
  const domain: number[] = [];
  const pgRows: number[] = [];
  const pgSnapRead: number[] = [];
  const pgSnapReadWrite: number[] = [];
  let snapshotKb = 0;
  let featuresKb = 0;
  let decision = '';
  for (let rep = 0; rep <= REPS; rep++) {
    const key = { tenant: TENANT, runId: `bench-${n}-${rep}` };
    const { observations } = await storeLedger(pool, key, n);
    const loaded = (await loadLedger(pool, key))!;
    const inMemory = observations.map((o) => o.features);
    const keys = inMemory.map((f) => f.k);
    const features = new Map(observations.map((o) => [o.seq, o.features]));

    // The service path: what a ledger.proposeCompletion job does once it holds the input.
    let outcome: Awaited<ReturnType<typeof commands.proposeCompletion>> | undefined;
    const tCritique = await timed(async () => {
      outcome = await commands.proposeCompletion({ tenant: TENANT, jobId: `review-${n}-${rep}` }, { runId: key.runId, summary: SUMMARY, openItems: [] });
    });
    decision = outcome!.decision;

    // The pure review alone, on the same state the service loaded.
    const tDomain = await timed(() => {
      const start = draftCompletionReview(loaded, { runId: key.runId, proposalId: `domain-${rep}`, summary: SUMMARY, openItems: [], at: AT });
      if (start.kind !== 'draft') throw new Error('expected a fresh review');
      const review = planCompletionReview(start.draft, findReviewCandidates(start.draft, keys), features, { llmConfigured: false });
      concludeCompletionReview(loaded, review, { ran: false, note: 'bench' });
    });

    const tRows = await timed(() => pool.query(`SELECT seq, kind, tool_name, success, summary FROM bench_evidence ORDER BY seq`));
    const tSnapRead = await timed(() => pool.query(`SELECT state FROM ledger_snapshots WHERE tenant = $1 AND run_id = $2`, [key.tenant, key.runId]));
    const tSnapReadWrite = await timed(() =>
      withTransaction(pool, async (tx) => {
        const { rows } = await tx.query<{ state: unknown }>(`SELECT state FROM ledger_snapshots WHERE tenant = $1 AND run_id = $2 FOR UPDATE`, [key.tenant, key.runId]);
        await tx.query(`UPDATE ledger_snapshots SET state = $3::jsonb, updated_at = now() WHERE tenant = $1 AND run_id = $2`, [key.tenant, key.runId, JSON.stringify(rows[0]!.state)]);
      }),
    );
    snapshotKb = Buffer.byteLength(JSON.stringify(loaded)) / 1024;
    featuresKb = Buffer.byteLength(JSON.stringify(inMemory)) / 1024;
    if (rep === 0) continue; // warm-up
    critique.push(tCritique);
    domain.push(tDomain);
    pgRows.push(tRows);
    pgSnapRead.push(tSnapRead);
    pgSnapReadWrite.push(tSnapReadWrite);
  }
  return { n, critique: median(critique), domain: median(domain), pgRows: median(pgRows), pgSnapRead: median(pgSnapRead), pgSnapReadWrite: median(pgSnapReadWrite), snapshotKb, featuresKb, decision };
}

interface WriteRow {
  n: number;
  held: number;
  cold: number;
  warm: number;
  pgInsert: number;
  snapshot: number;
}

/** Writes a cold and a warm series each make, warm-ups included. */
const WRITES_PER_SIZE = 2 * (REPS + 1);

async function measureWrite(pool: Pool, n: number): Promise<WriteRow> {
  const held = Math.min(n, LEDGER_LIMITS.evidencePerLedger - WRITES_PER_SIZE);
  const key = { tenant: TENANT, runId: `write-${n}` };
  const { state } = await storeLedger(pool, key, held);
  let job = 0;
  const writeOne = (commands: ReturnType<typeof createLedgerCommands>) => {
    job += 1;
    return commands.recordEvidence({ tenant: TENANT, jobId: `write-${n}-${job}` }, { runId: key.runId, items: [evidenceItem(held + job)] });
  };

  const cold: number[] = [];
  for (let rep = 0; rep <= REPS; rep++) {
    const commands = newCommands(pool);
    const t = await timed(() => writeOne(commands));
    if (rep > 0) cold.push(t);
  }
  const warm: number[] = [];
  const commands = newCommands(pool);
  for (let rep = 0; rep <= REPS; rep++) {
    const t = await timed(() => writeOne(commands)); // the first one fills the cache
    if (rep > 0) warm.push(t);
  }

  // The same one-item event as a plain row: the floor of appending anything to Postgres.
  const event = { type: 'evidence_recorded', seq: 0, at: AT, items: [{ id: 'ev-0', seq: 0, ...evidenceItem(held), observedAt: AT, recordedAt: AT }] };
  const pgInsert: number[] = [];
  for (let rep = 0; rep <= REPS; rep++) {
    const t = await timed(() =>
      pool.query(`INSERT INTO bench_events (tenant, run_id, seq, type, payload) VALUES ($1, $2, $3, $4, $5::jsonb)`, [TENANT, key.runId, rep + 1, event.type, JSON.stringify({ ...event, seq: rep + 1 })]),
    );
    if (rep > 0) pgInsert.push(t);
  }

  const snapshot: number[] = [];
  for (let rep = 0; rep <= REPS; rep++) {
    const t = await timed(() => withTransaction(pool, (tx) => saveSnapshot(tx, key, state)));
    if (rep > 0) snapshot.push(t);
  }
  return { n, held, cold: median(cold), warm: median(warm), pgInsert: median(pgInsert), snapshot: median(snapshot) };
}

const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1).padStart(9);
const ratio = (x: number) => `${x.toFixed(2)}x`.padStart(9);

const schema = await useTestSchema('bench_ledger');
const pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema, max: 4 });
try {
  await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: MIGRATIONS_DIR });
  await pool.query(`CREATE TABLE bench_evidence (seq integer PRIMARY KEY, kind text NOT NULL, tool_name text, success boolean, summary text NOT NULL)`);
  await pool.query(`CREATE TABLE bench_events (LIKE ledger_events INCLUDING ALL)`);

  console.log(`ledger critique, ${CLAIMS} claims, rule critic only; median of ${REPS} repetitions after 1 warm-up; times in ms`);
  const rows: Row[] = [];
  const header = `${'evidence'.padStart(8)} ${'critique'.padStart(9)} ${'domain'.padStart(9)} ${'pg rows'.padStart(9)} ${'pg snap'.padStart(9)} ${'pg snap'.padStart(9)} ${'snapshot'.padStart(9)} ${'features'.padStart(9)}  decision`;
  console.log(header);
  console.log(`${''.padStart(8)} ${'(service)'.padStart(9)} ${'(pure)'.padStart(9)} ${'SELECT n'.padStart(9)} ${'read'.padStart(9)} ${'read+wr'.padStart(9)} ${'KB'.padStart(9)} ${'KB apart'.padStart(9)}`);
  for (const n of SIZES) {
    const row = await measure(pool, n);
    rows.push(row);
    console.log(
      `${String(n).padStart(8)} ${ms(row.critique)} ${ms(row.domain)} ${ms(row.pgRows)} ${ms(row.pgSnapRead)} ${ms(row.pgSnapReadWrite)} ${row.snapshotKb.toFixed(0).padStart(9)} ${row.featuresKb.toFixed(0).padStart(9)}  ${row.decision}`,
    );
  }

  console.log('\ngrowth per step (time ratio beside the evidence ratio; linear growth has them equal)');
  console.log(`${'step'.padStart(14)} ${'evidence'.padStart(9)} ${'critique'.padStart(9)} ${'domain'.padStart(9)} ${'pg rows'.padStart(9)} ${'snap r+w'.padStart(9)}`);
  const superlinear: string[] = [];
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1]!;
    const b = rows[i]!;
    const grow = b.n / a.n;
    console.log(`${`${a.n} → ${b.n}`.padStart(14)} ${ratio(grow)} ${ratio(b.critique / a.critique)} ${ratio(b.domain / a.domain)} ${ratio(b.pgRows / a.pgRows)} ${ratio(b.pgSnapReadWrite / a.pgSnapReadWrite)}`);
    // 25% of slack for timing noise; fixed costs make small steps grow well below linear.
    if (b.critique / a.critique > grow * 1.25) superlinear.push(`critique ${a.n} → ${b.n}`);
    if (b.domain / a.domain > grow * 1.25) superlinear.push(`pure review ${a.n} → ${b.n}`);
  }
  const last = rows.at(-1)!;
  console.log(
    `\nper evidence item at ${last.n}: critique ${((last.critique / last.n) * 1000).toFixed(1)} µs, of which the pure review ${((last.domain / last.n) * 1000).toFixed(1)} µs; ` +
      `the snapshot read+write floor is ${((last.pgSnapReadWrite / last.n) * 1000).toFixed(1)} µs`,
  );
  console.log(
    superlinear.length
      ? `grew faster than the evidence (beyond 25% noise allowance) at: ${superlinear.join(', ')}`
      : 'critique and pure review time grew no faster than the evidence at any step (within a 25% noise allowance)',
  );

  console.log(`\none ledger.recordEvidence write of 1 item into a ledger of n items; median of ${REPS} after 1 warm-up; times in ms`);
  console.log(`${'evidence'.padStart(8)} ${'cold'.padStart(9)} ${'warm'.padStart(9)} ${'pg insert'.padStart(9)} ${'snapshot'.padStart(9)}`);
  console.log(`${'(held)'.padStart(8)} ${'(no cache)'.padStart(9)} ${'(cached)'.padStart(9)} ${'1 event'.padStart(9)} ${'write'.padStart(9)}`);
  const writes: WriteRow[] = [];
  for (const n of SIZES) {
    const row = await measureWrite(pool, n);
    writes.push(row);
    console.log(`${String(row.held).padStart(8)} ${ms(row.cold)} ${ms(row.warm)} ${ms(row.pgInsert)} ${ms(row.snapshot)}`);
  }
  console.log('\ngrowth per step (time ratio beside the evidence ratio; a size-independent write stays near 1x)');
  console.log(`${'step'.padStart(14)} ${'evidence'.padStart(9)} ${'cold'.padStart(9)} ${'warm'.padStart(9)} ${'pg insert'.padStart(9)}`);
  for (let i = 1; i < writes.length; i++) {
    const a = writes[i - 1]!;
    const b = writes[i]!;
    console.log(`${`${a.held} → ${b.held}`.padStart(14)} ${ratio(b.held / a.held)} ${ratio(b.cold / a.cold)} ${ratio(b.warm / a.warm)} ${ratio(b.pgInsert / a.pgInsert)}`);
  }
  const first = writes[0]!;
  const big = writes.at(-1)!;
  console.log(
    `\nat ${big.held} items a warm write takes ${ratio(big.warm / first.warm).trim()} the time it takes at ${first.held} and ${ratio(big.warm / big.pgInsert).trim()} a raw one-row INSERT; ` +
      `with the snapshot written every ${SNAPSHOT_EVERY} events it costs ${(big.warm + big.snapshot / SNAPSHOT_EVERY).toFixed(2)} ms on average (the old floor, a snapshot read+write per write: ${rows.at(-1)!.pgSnapReadWrite.toFixed(1)} ms)`,
  );
} finally {
  await pool.end();
  await schema.cleanup();
}
