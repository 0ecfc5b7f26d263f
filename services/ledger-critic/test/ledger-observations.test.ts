import { readFileSync } from 'node:fs';
import { LedgerViewSchema, ledgerGet, type CritiqueOutcome, type EvidenceInput } from '@vouch/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { draftCompletionReview, findReviewCandidates, reviewInMemory } from '../src/domain/ledger-commands.js';
import { FEATURES_VERSION, extractObservationFeatures } from '@vouch/judge';
import { replayLedger, type LedgerState } from '../src/domain/replay-ledger.js';
import { SNAPSHOT_FORMAT } from '../src/domain/upcast-snapshot.js';
import { loadLedger, loadSnapshot, readEvents, readObservationKeys, type LedgerKey } from '../src/ledger-store.js';
import { failed, ok } from './drive-ledger.js';
import { commandsOn, useLedgerDatabase, type LedgerDatabase } from './ledger-test-env.js';

/**
 * What the critic reads from each observation is stored once, when the
 * observation is recorded, in its own table (ledger_observations): not in the
 * events, the snapshot or what reads return, and read by reviews only as far
 * as they need it.
 */

const TENANT = 'acme';
const GOAL = 'Back up the orders database and confirm the dump restores';
const SUMMARY = 'Dumped orders-db to orders-2025-03-01.sql.gz (2.3 GB). Restored it into orders-restore-test and verified 48,210 rows.';
const DUMP = ok('tool_result', 'pg_dump', 'orders-db dumped to orders-2025-03-01.sql.gz, 2.3 GB');
const RESTORE = ok('tool_result', 'psql', 'restored orders-2025-03-01.sql.gz into orders-restore-test: 48210 rows in orders');
const heartbeat = (i: number): EvidenceInput => ok('runtime_observation', 'monitor', `heartbeat ${i}: replica lag ${i % 3} s on replica-${i % 5}`);

interface ObservationRow {
  seq: number;
  features_version: number;
  keys: string[];
  reading: unknown;
}

describe('observation features, kept apart from the ledger', () => {
  let db: LedgerDatabase;
  let runs = 0;
  const nextKey = (): LedgerKey => ({ tenant: TENANT, runId: `obs-${++runs}` });
  const rowsOf = async (key: LedgerKey): Promise<ObservationRow[]> =>
    (await db.pool.query<ObservationRow>(`SELECT seq, features_version, keys, reading FROM ledger_observations WHERE tenant = $1 AND run_id = $2 ORDER BY seq`, [key.tenant, key.runId])).rows;

  beforeAll(async () => {
    db = await useLedgerDatabase('ledger_observations');
  });
  afterAll(async () => {
    await db?.cleanup();
  });

  it('are stored with their evidence in one transaction, once per item, and never in the events, the snapshot or a read', async () => {
    const key = nextKey();
    const { commands } = commandsOn(db.pool, { cycleBudget: 1 });
    await commands.open({ tenant: TENANT, jobId: `open-${key.runId}` }, { runId: key.runId, goal: GOAL, policy: 'full' });
    const batch = [DUMP, failed('tool_result', 'psql', 'restore into orders-restore-test failed: disk full')];
    // Three runs of one job at once, as BullMQ may re-run a stalled one: one batch, one row per item.
    const answers = await Promise.all([1, 2, 3].map(() => commands.recordEvidence({ tenant: TENANT, jobId: `batch-${key.runId}` }, { runId: key.runId, items: batch })));
    expect(answers.map((a) => a.recorded)).toEqual([1, 2, 3].map(() => [{ id: 'ev-1', seq: 1 }, { id: 'ev-2', seq: 2 }]));
    await commands.recordEvidence({ tenant: TENANT, jobId: `restore-${key.runId}` }, { runId: key.runId, items: [RESTORE] });

    const rows = await rowsOf(key);
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3]);
    [...batch, RESTORE].forEach((item, i) => {
      const { v, k, ...reading } = extractObservationFeatures(item.summary, item.toolName);
      expect(rows[i]).toEqual({ seq: i + 1, features_version: v, keys: k, reading });
    });
    expect(rows[0]!.features_version).toBe(FEATURES_VERSION);

    // A write the ledger refuses stores nothing: the review (budget 1) closes it.
    const outcome = await commands.proposeCompletion({ tenant: TENANT, jobId: `review-${key.runId}` }, { runId: key.runId, summary: SUMMARY, openItems: [] });
    expect(outcome).toMatchObject({ cycle: 1, decision: 'approve', status: 'approved' });
    await expect(commands.recordEvidence({ tenant: TENANT, jobId: `late-${key.runId}` }, { runId: key.runId, items: [heartbeat(1)] })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await rowsOf(key)).toHaveLength(3);

    const payloads = (await db.pool.query<{ payload: Record<string, unknown> }>(`SELECT payload FROM ledger_events WHERE tenant = $1 AND run_id = $2 AND type = 'evidence_recorded'`, [key.tenant, key.runId])).rows;
    for (const { payload } of payloads) expect(Object.keys(payload).sort()).toEqual(['at', 'items', 'seq', 'type']);
    const snapshot = (await db.pool.query<{ state: Record<string, unknown>; format: number }>(`SELECT state, format FROM ledger_snapshots WHERE tenant = $1 AND run_id = $2`, [key.tenant, key.runId])).rows[0]!;
    expect(snapshot.format).toBe(SNAPSHOT_FORMAT);
    expect(Object.keys(snapshot.state).sort()).toEqual([...Object.keys(LedgerViewSchema.shape).filter((k) => k !== 'evidencePage'), 'packets'].sort());
    const view = await commands.get({ tenant: TENANT }, { runId: key.runId });
    expect(Object.keys(view).sort()).toEqual(Object.keys(LedgerViewSchema.shape).sort());
    expect(ledgerGet.output.parse(view)).toStrictEqual(view);
  });

  it('are not kept when the transaction that records their evidence fails after writing them', async () => {
    const key = nextKey();
    const { commands } = commandsOn(db.pool);
    await commands.open({ tenant: TENANT, jobId: `open-${key.runId}` }, { runId: key.runId, goal: GOAL, policy: 'full' });
    await commands.recordEvidence({ tenant: TENANT, jobId: `first-${key.runId}` }, { runId: key.runId, items: [DUMP] });
    // The write's last statement fails, after its event and its features were written: Postgres refuses the processed-job record.
    await db.pool.query(`
      CREATE OR REPLACE FUNCTION refuse_doomed_job() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.job_id LIKE 'doomed-%' THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_doomed_job BEFORE INSERT ON ledger_processed_jobs FOR EACH ROW EXECUTE FUNCTION refuse_doomed_job();
    `);
    try {
      await expect(commands.recordEvidence({ tenant: TENANT, jobId: `doomed-${key.runId}` }, { runId: key.runId, items: [RESTORE, heartbeat(1)] })).rejects.toThrow();
    } finally {
      await db.pool.query(`DROP TRIGGER refuse_doomed_job ON ledger_processed_jobs; DROP FUNCTION refuse_doomed_job()`);
    }
    expect((await rowsOf(key)).map((r) => r.seq)).toEqual([1]);
    expect((await readEvents(db.pool, key)).map((e) => e.type)).toEqual(['ledger_opened', 'evidence_recorded']);
    // The retried job records the batch and its features together.
    await commands.recordEvidence({ tenant: TENANT, jobId: `retry-${key.runId}` }, { runId: key.runId, items: [RESTORE, heartbeat(1)] });
    expect((await rowsOf(key)).map((r) => r.seq)).toEqual([1, 2, 3]);
  });

  it('are read by a review as far as it needs them: the index keys of the evidence it sees, the words of its candidates only', async () => {
    const key = nextKey();
    // The real pool, watched: every statement the commands send through it is noted, then run.
    const statements: Array<{ sql: string; params: unknown[] }> = [];
    const watched = new Proxy(db.pool, {
      get(target, prop) {
        if (prop === 'query') {
          return (sql: string, params: unknown[] = []) => {
            statements.push({ sql, params });
            return target.query(sql, params);
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const { commands } = commandsOn(watched);
    await commands.open({ tenant: TENANT, jobId: `open-${key.runId}` }, { runId: key.runId, goal: GOAL, policy: 'full' });
    const items = [DUMP, ...Array.from({ length: 240 }, (_, i) => heartbeat(i)), RESTORE];
    await commands.recordEvidence({ tenant: TENANT, jobId: `batch-${key.runId}` }, { runId: key.runId, items });
    const ledger = (await loadLedger(db.pool, key))!;

    const cmd = { runId: key.runId, proposalId: `review-${key.runId}`, summary: SUMMARY, openItems: [], at: ledger.updatedAt };
    const start = draftCompletionReview(ledger, cmd);
    if (start.kind !== 'draft') throw new Error('expected a fresh review');
    const found = findReviewCandidates(start.draft, (await readObservationKeys(db.pool, key, items.length)).map((r) => r.k));
    expect(found.seqs.length).toBeGreaterThan(0);
    expect(found.seqs.length).toBeLessThan(items.length / 2);

    statements.length = 0;
    const outcome = await commands.proposeCompletion({ tenant: TENANT, jobId: cmd.proposalId }, { runId: key.runId, summary: SUMMARY, openItems: [] });
    const reads = statements.filter((s) => /FROM ledger_observations/.test(s.sql));
    expect(reads.map((s) => [/reading/.test(s.sql) ? 'words' : 'keys', s.params.slice(2)])).toEqual([
      ['keys', [items.length]],
      ['words', [found.seqs]],
    ]);
    // Decided exactly as a review with every item's features in memory.
    const inMemory = reviewInMemory(ledger, cmd, { llmConfigured: false });
    if (inMemory.kind !== 'review') throw new Error('expected a fresh review');
    expect(outcome).toMatchObject({ cycle: 1, decision: inMemory.review.rule.decision, status: 'approved' });
    expect((await loadLedger(db.pool, key))!.proposedClaims).toStrictEqual(JSON.parse(JSON.stringify(inMemory.review.claims)));
  });

  it('are rebuilt from the summary for evidence recorded without them and for an older features version, to the same review', async () => {
    const review = async (key: LedgerKey, commands: ReturnType<typeof commandsOn>['commands']): Promise<{ outcome: CritiqueOutcome; state: LedgerState }> => {
      const outcome = await commands.proposeCompletion({ tenant: TENANT, jobId: `review-${key.runId}` }, { runId: key.runId, summary: SUMMARY, openItems: [] });
      return { outcome, state: (await loadLedger(db.pool, key))! };
    };
    const items = [DUMP, heartbeat(1), failed('tool_result', 'psql', 'restore into orders-restore-test failed: disk full'), heartbeat(2), RESTORE];
    const build = async () => {
      const key = nextKey();
      const { commands } = commandsOn(db.pool);
      await commands.open({ tenant: TENANT, jobId: `open-${key.runId}` }, { runId: key.runId, goal: GOAL, policy: 'full' });
      for (const [i, item] of items.entries()) await commands.recordEvidence({ tenant: TENANT, jobId: `ev-${key.runId}-${i}` }, { runId: key.runId, items: [item] });
      return { key, commands };
    };
    const intact = await build();
    const stripped = await build();
    const expected = await rowsOf(intact.key);
    // Items 1 and 5 as if recorded before the table existed; 3 as read by an older version of the extraction.
    await db.pool.query(`DELETE FROM ledger_observations WHERE tenant = $1 AND run_id = $2 AND seq IN (1, 5)`, [stripped.key.tenant, stripped.key.runId]);
    await db.pool.query(`UPDATE ledger_observations SET features_version = 0, keys = '[]', reading = 'null' WHERE tenant = $1 AND run_id = $2 AND seq = 3`, [
      stripped.key.tenant,
      stripped.key.runId,
    ]);

    const a = await review(intact.key, intact.commands);
    const b = await review(stripped.key, stripped.commands);
    expect(b.outcome).toStrictEqual({ ...a.outcome, runId: stripped.key.runId });
    expect(b.state.proposedClaims).toStrictEqual(a.state.proposedClaims);
    expect(b.state.unresolved).toStrictEqual(a.state.unresolved);
    // And the next review finds them stored.
    expect(await rowsOf(stripped.key)).toEqual(expected);
  });
});

/** A ledger as an earlier version of the service stored it (test/fixtures, each with a note of how it was made). */
interface StoredLedgerFixture {
  note: string;
  commit: string;
  events: Array<{ seq: number; type: string } & Record<string, unknown>>;
  snapshot: { version: number } & Record<string, unknown>;
}

const FIXTURES: Array<{ name: string; file: string }> = [
  { name: 'before issue 8 (critiques without baseVersion, claims without evidenceSpans)', file: 'ledger-written-before-issue-8.json' },
  { name: 'by issue 8 (features in the events and the snapshot)', file: 'ledger-written-by-issue-8.json' },
];

describe('a ledger written by an earlier version of the service', () => {
  let db: LedgerDatabase;

  beforeAll(async () => {
    db = await useLedgerDatabase('ledger_upcast');
  });
  afterAll(async () => {
    await db?.cleanup();
  });

  for (const [n, { name, file }] of FIXTURES.entries()) {
    it(`written ${name}: its snapshot is upcast on read to the replay of its events, and it takes the next review`, async () => {
      const fixture = JSON.parse(readFileSync(new URL(`./fixtures/${file}`, import.meta.url), 'utf8')) as StoredLedgerFixture;
      const key = { tenant: TENANT, runId: `old-${n}` };
      // Stored as that version stored them: the rows as they are, the snapshot without a format (a snapshot written before formats were numbered).
      for (const event of fixture.events) {
        await db.pool.query(`INSERT INTO ledger_events (tenant, run_id, seq, type, payload) VALUES ($1, $2, $3, $4, $5::jsonb)`, [key.tenant, key.runId, event.seq, event.type, JSON.stringify(event)]);
      }
      await db.pool.query(`INSERT INTO ledger_snapshots (tenant, run_id, version, state) VALUES ($1, $2, $3, $4::jsonb)`, [key.tenant, key.runId, fixture.snapshot.version, JSON.stringify(fixture.snapshot)]);
      const last = fixture.events.at(-1)!;
      await db.pool.query(`INSERT INTO ledger_heads (tenant, run_id, version, status, snapshot_version) VALUES ($1, $2, $3, $4, $5)`, [
        key.tenant,
        key.runId,
        last.seq,
        String(last.to),
        fixture.snapshot.version,
      ]);

      const events = await readEvents(db.pool, key);
      const snapshot = (await loadSnapshot(db.pool, key))!;
      expect(snapshot).toStrictEqual(replayLedger(events.slice(0, fixture.snapshot.version)));
      expect(snapshot.critiques.map((c) => c.baseVersion)).toEqual([2]);
      expect(snapshot).not.toHaveProperty('observations');
      const ledger = (await loadLedger(db.pool, key))!;
      expect(ledger).toStrictEqual(replayLedger(events));
      expect(ledger.critiques.map((c) => [c.cycle, c.baseVersion])).toEqual([
        [1, 2],
        [2, 7],
      ]);

      // A worker that never saw it reads it through the operations: every answer is valid output.
      const { commands } = commandsOn(db.pool);
      const view = await commands.get({ tenant: TENANT }, { runId: key.runId });
      expect(ledgerGet.output.parse(view)).toStrictEqual(view);
      await commands.render({ tenant: TENANT }, { runId: key.runId, form: 'admin' });
      await commands.packet({ tenant: TENANT }, { runId: key.runId });

      // Its evidence has no stored features: the next review reads them from the summaries, stores them, and closes the ledger (budget 3).
      const outcome = await commands.proposeCompletion({ tenant: TENANT, jobId: `review-3-${key.runId}` }, { runId: key.runId, summary: SUMMARY, openItems: [] });
      expect(outcome).toMatchObject({ cycle: 3, decision: 'approve', status: 'approved', completed: true });
      expect((await readObservationKeys(db.pool, key, 3)).map((r) => [r.seq, r.v])).toEqual([
        [1, FEATURES_VERSION],
        [2, FEATURES_VERSION],
        [3, FEATURES_VERSION],
      ]);
      const format = (await db.pool.query<{ format: number; version: number }>(`SELECT format, version FROM ledger_snapshots WHERE tenant = $1 AND run_id = $2`, [key.tenant, key.runId])).rows[0];
      expect(format).toEqual({ format: SNAPSHOT_FORMAT, version: 13 });
      const all = await readEvents(db.pool, key);
      expect(await loadSnapshot(db.pool, key)).toStrictEqual(replayLedger(all));
    });
  }
});
