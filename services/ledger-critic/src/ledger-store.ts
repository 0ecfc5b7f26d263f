import type { LedgerStatus } from '@vouch/contracts';
import type { Queryable } from '@vouch/platform';
import { parseLedgerEvent, type LedgerEvent } from './domain/ledger-events.js';
import type { ObservationFeatures, StoredObservation } from '@vouch/judge';
import { applyEvents, type LedgerState } from './domain/replay-ledger.js';
import { isClosed } from './domain/terminal-status.js';
import { SNAPSHOT_FORMAT, lacksBaseVersions, upcastSnapshot } from './domain/upcast-snapshot.js';

/**
 * Postgres I/O of the ledger, and nothing else: the event stream, its head
 * row, its periodic snapshot, the features the critic read from each evidence
 * item, and the processed-job records. Every decision is made by the pure
 * domain; callers run the writes in one transaction (withTransaction).
 */

/** A ledger is one run within one tenant. */
export interface LedgerKey {
  tenant: string;
  runId: string;
}

/**
 * A write lost a race: another writer appended at the same expected version,
 * or recorded the same job, first. Nothing was written; reload and decide
 * again.
 */
export class LedgerWriteConflict extends Error {
  constructor(
    readonly key: LedgerKey,
    readonly expectedVersion: number,
    cause?: unknown,
  ) {
    super(`ledger ${key.tenant}/${key.runId} moved past version ${expectedVersion} during the write`, cause === undefined ? undefined : { cause });
    this.name = 'LedgerWriteConflict';
  }
}

const UNIQUE_VIOLATION = '23505';

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === UNIQUE_VIOLATION;
}

/**
 * The full snapshot is written every SNAPSHOT_EVERY events and when the ledger
 * closes, not by every write: rewriting it (2.4 MB of jsonb at 10,000
 * evidence items, ~100 ms to read and write it back) made every write cost
 * O(ledger size). At 200, one write in 200 pays the snapshot write (~75 ms at
 * that size; `npm run bench:ledger`), under 0.4 ms a write on average, and a
 * read without a cached state applies at most 199 events after the snapshot,
 * a few milliseconds for one-batch writes. (A tail of big batches is bounded
 * by the 10,000-item cap: at worst about one more read of the ledger.)
 */
export const SNAPSHOT_EVERY = 200;

/** Whether an append that brings the ledger to `state` should also write its snapshot. */
export function snapshotDue(snapshotVersion: number, state: LedgerState): boolean {
  // A closed ledger takes no more events: its snapshot is final and every read of it is one row.
  return state.version - snapshotVersion >= SNAPSHOT_EVERY || isClosed(state.status);
}

/** The ledger's head row: where its stream ends and where its latest snapshot is. */
export interface LedgerHead {
  /** The last event's seq. */
  version: number;
  status: LedgerStatus;
  /** The version of the latest snapshot; 0 when there is none yet. */
  snapshotVersion: number;
}

/**
 * The ledger's head; undefined when the run has no ledger. `lock` (inside a
 * transaction) makes concurrent writers of one ledger queue behind each other
 * instead of all deciding on the same version and all but one losing; the
 * version checks in appendEvents stay the guarantee.
 */
export async function readHead(db: Queryable, key: LedgerKey, opts: { lock?: boolean } = {}): Promise<LedgerHead | undefined> {
  const { rows } = await db.query<{ version: number; status: LedgerStatus; snapshot_version: number }>(
    `SELECT version, status, snapshot_version FROM ledger_heads WHERE tenant = $1 AND run_id = $2${opts.lock ? ' FOR UPDATE' : ''}`,
    [key.tenant, key.runId],
  );
  const row = rows[0];
  return row && { version: row.version, status: row.status, snapshotVersion: row.snapshot_version };
}

/**
 * The ledger's latest snapshot: the fold of its events up to the snapshot's
 * version; undefined when none was written yet. A snapshot an earlier version
 * of the service wrote is upcast to today's state (upcast-snapshot.ts).
 */
export async function loadSnapshot(db: Queryable, key: LedgerKey): Promise<LedgerState | undefined> {
  const { rows } = await db.query<{ state: unknown; format: number }>(`SELECT state, format FROM ledger_snapshots WHERE tenant = $1 AND run_id = $2`, [key.tenant, key.runId]);
  const row = rows[0];
  if (!row) return undefined;
  if (row.format === SNAPSHOT_FORMAT) return row.state as LedgerState;
  const version = (row.state as { version?: number }).version ?? 0;
  return upcastSnapshot(row.state, lacksBaseVersions(row.state) ? await readCritiqueSeqs(db, key, version) : []);
}

/** The seqs of the ledger's critique_recorded events up to `throughVersion`, in order: cycle k's is the k-th. */
async function readCritiqueSeqs(db: Queryable, key: LedgerKey, throughVersion: number): Promise<number[]> {
  const { rows } = await db.query<{ seq: number }>(
    `SELECT seq FROM ledger_events WHERE tenant = $1 AND run_id = $2 AND seq <= $3 AND type = 'critique_recorded' ORDER BY seq`,
    [key.tenant, key.runId, throughVersion],
  );
  return rows.map((r) => r.seq);
}

/**
 * The ledger's state: its latest snapshot plus the events after it;
 * undefined when the run has no ledger. Events are never changed or removed,
 * so the two reads need no transaction: a snapshot written in between is
 * still the fold up to its own version.
 */
export async function loadLedger(db: Queryable, key: LedgerKey): Promise<LedgerState | undefined> {
  const snapshot = await loadSnapshot(db, key);
  return applyEvents(snapshot, await readEvents(db, key, snapshot?.version ?? 0));
}

/** Replaces the ledger's snapshot with `state`, which must be the fold of its events up to state.version. */
export async function saveSnapshot(tx: Queryable, key: LedgerKey, state: LedgerState): Promise<void> {
  await tx.query(
    `INSERT INTO ledger_snapshots (tenant, run_id, version, state, format) VALUES ($1, $2, $3, $4::jsonb, $5)
     ON CONFLICT (tenant, run_id) DO UPDATE SET version = EXCLUDED.version, state = EXCLUDED.state, format = EXCLUDED.format, updated_at = now()`,
    [key.tenant, key.runId, state.version, JSON.stringify(state), SNAPSHOT_FORMAT],
  );
  await tx.query(`UPDATE ledger_heads SET snapshot_version = $3 WHERE tenant = $1 AND run_id = $2`, [key.tenant, key.runId, state.version]);
}

/**
 * Appends events at `expectedVersion` (0 for a new ledger) and moves the head
 * to `state`, which must be the fold of the stream after them; writes the
 * snapshot too when one is due (snapshotDue). Throws LedgerWriteConflict when
 * the stream has moved on; run it inside the transaction that should roll
 * back with it.
 */
export async function appendEvents(tx: Queryable, key: LedgerKey, expectedVersion: number, events: readonly LedgerEvent[], state: LedgerState): Promise<void> {
  if (events.length === 0) return;
  events.forEach((event, k) => {
    if (event.seq !== expectedVersion + k + 1) throw new Error(`ledger ${key.runId}: event ${k} has seq ${event.seq}, expected ${expectedVersion + k + 1}`);
  });
  if (state.version !== expectedVersion + events.length) throw new Error(`ledger ${key.runId}: the state is at version ${state.version}, not at the last event's seq`);

  const params: unknown[] = [key.tenant, key.runId];
  const rows = events.map((event) => {
    params.push(event.seq, event.type, JSON.stringify(event));
    const n = params.length;
    return `($1, $2, $${n - 2}, $${n - 1}, $${n}::jsonb)`;
  });
  try {
    // A concurrent writer's uncommitted row with the same seq makes this wait
    // for it, then fail with a unique violation once it commits.
    await tx.query(`INSERT INTO ledger_events (tenant, run_id, seq, type, payload) VALUES ${rows.join(', ')}`, params);
  } catch (err) {
    if (isUniqueViolation(err)) throw new LedgerWriteConflict(key, expectedVersion, err);
    throw err;
  }

  const moved =
    expectedVersion === 0
      ? await tx.query<{ snapshot_version: number }>(
          `INSERT INTO ledger_heads (tenant, run_id, version, status) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING snapshot_version`,
          [key.tenant, key.runId, state.version, state.status],
        )
      : await tx.query<{ snapshot_version: number }>(
          `UPDATE ledger_heads SET version = $3, status = $4, updated_at = now() WHERE tenant = $1 AND run_id = $2 AND version = $5 RETURNING snapshot_version`,
          [key.tenant, key.runId, state.version, state.status, expectedVersion],
        );
  const head = moved.rows[0];
  if (moved.rowCount !== 1 || !head) throw new LedgerWriteConflict(key, expectedVersion);
  if (snapshotDue(head.snapshot_version, state)) await saveSnapshot(tx, key, state);
}

/** The ledger's events after `afterVersion` (0: the whole stream), oldest first, each event validated. */
export async function readEvents(db: Queryable, key: LedgerKey, afterVersion = 0): Promise<LedgerEvent[]> {
  const { rows } = await db.query<{ seq: number; payload: unknown }>(`SELECT seq, payload FROM ledger_events WHERE tenant = $1 AND run_id = $2 AND seq > $3 ORDER BY seq`, [
    key.tenant,
    key.runId,
    afterVersion,
  ]);
  return rows.map((row) => {
    const event = parseLedgerEvent(row.payload);
    if (event.seq !== row.seq) throw new Error(`ledger ${key.runId}: the event stored at seq ${row.seq} says seq ${event.seq}`);
    return event;
  });
}

/**
 * Stores the features of evidence items. Run it in the transaction that
 * appends their evidence_recorded event, so an item never exists without its
 * row (nor a row without its item). Outside one it fills in rows rebuilt for
 * items recorded before they were stored, or read by an older FEATURES_VERSION;
 * a row of a newer version (a newer replica wrote it) is left as it is.
 */
export async function saveObservations(db: Queryable, key: LedgerKey, observations: readonly StoredObservation[]): Promise<void> {
  if (observations.length === 0) return;
  await db.query(
    `INSERT INTO ledger_observations (tenant, run_id, seq, features_version, keys, reading)
     SELECT $1, $2, o.seq, o.v, o.k, o.r FROM jsonb_to_recordset($3::jsonb) AS o(seq integer, v integer, k jsonb, r jsonb)
     ON CONFLICT (tenant, run_id, seq) DO UPDATE SET features_version = EXCLUDED.features_version, keys = EXCLUDED.keys, reading = EXCLUDED.reading
     WHERE ledger_observations.features_version < EXCLUDED.features_version`,
    [key.tenant, key.runId, JSON.stringify(observations.map(({ seq, features: { v, k, ...reading } }) => ({ seq, v, k, r: reading })))],
  );
}

/** The index keys stored for the ledger's evidence seq 1 to `throughSeq`, with the features version that read them; items without a row are absent. */
export async function readObservationKeys(db: Queryable, key: LedgerKey, throughSeq: number): Promise<Array<{ seq: number; v: number; k: string[] }>> {
  if (throughSeq < 1) return [];
  const { rows } = await db.query<{ seq: number; v: number; k: string[] }>(
    `SELECT seq, features_version AS v, keys AS k FROM ledger_observations WHERE tenant = $1 AND run_id = $2 AND seq <= $3 ORDER BY seq`,
    [key.tenant, key.runId, throughSeq],
  );
  return rows;
}

/** The stored features of the given evidence seqs; items without a row are absent. */
export async function readObservations(db: Queryable, key: LedgerKey, seqs: readonly number[]): Promise<StoredObservation[]> {
  if (seqs.length === 0) return [];
  const { rows } = await db.query<{ seq: number; v: number; k: string[]; r: Omit<ObservationFeatures, 'v' | 'k'> }>(
    `SELECT seq, features_version AS v, keys AS k, reading AS r FROM ledger_observations WHERE tenant = $1 AND run_id = $2 AND seq = ANY($3::int[]) ORDER BY seq`,
    [key.tenant, key.runId, seqs],
  );
  return rows.map((row) => ({ seq: row.seq, features: { v: row.v, ...row.r, k: row.k } }));
}

/** The result a job recorded when it wrote, if it did. */
export async function findProcessedJob(db: Queryable, tenant: string, jobId: string): Promise<unknown> {
  const { rows } = await db.query<{ result: unknown }>(`SELECT result FROM ledger_processed_jobs WHERE tenant = $1 AND job_id = $2`, [tenant, jobId]);
  return rows[0]?.result;
}

/** Records a job's result; a second run of the job that got this far first loses with LedgerWriteConflict. */
export async function recordProcessedJob(tx: Queryable, record: { key: LedgerKey; jobId: string; operation: string; expectedVersion: number; result: unknown }): Promise<void> {
  try {
    await tx.query(`INSERT INTO ledger_processed_jobs (tenant, job_id, operation, run_id, result) VALUES ($1, $2, $3, $4, $5::jsonb)`, [
      record.key.tenant,
      record.jobId,
      record.operation,
      record.key.runId,
      JSON.stringify(record.result),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw new LedgerWriteConflict(record.key, record.expectedVersion, err);
    throw err;
  }
}

/**
 * Forgets processed-job records older than `olderThanMs`. BullMQ keeps a
 * finished job for at most a week (failed ones, at the gateway's settings) and
 * never re-runs a finished one, so older records can no longer be asked for.
 */
export async function pruneProcessedJobs(db: Queryable, olderThanMs: number): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM ledger_processed_jobs WHERE processed_at < now() - make_interval(secs => $1)`, [olderThanMs / 1000]);
  return rowCount ?? 0;
}
