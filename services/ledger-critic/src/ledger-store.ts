import type { Queryable } from '@vouch/platform';
import { parseLedgerEvent, type LedgerEvent } from './domain/ledger-events.js';
import type { LedgerState } from './domain/replay-ledger.js';

/**
 * Postgres I/O of the ledger, and nothing else: the event stream, its
 * snapshot, and the processed-job records. Every decision is made by the pure
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
 * The ledger's state from its snapshot; undefined when the run has no ledger.
 * `forUpdate` (inside a transaction) makes concurrent writers of one ledger
 * queue behind each other instead of all deciding on the same version and all
 * but one losing; the version check in appendEvents stays the guarantee.
 */
export async function loadLedger(db: Queryable, key: LedgerKey, opts: { forUpdate?: boolean } = {}): Promise<LedgerState | undefined> {
  const { rows } = await db.query<{ state: LedgerState }>(`SELECT state FROM ledger_snapshots WHERE tenant = $1 AND run_id = $2${opts.forUpdate ? ' FOR UPDATE' : ''}`, [
    key.tenant,
    key.runId,
  ]);
  return rows[0]?.state;
}

/**
 * Appends events at `expectedVersion` (0 for a new ledger) and replaces the
 * snapshot with `state`, which must be the fold of the stream after them.
 * Throws LedgerWriteConflict when the stream has moved on; run it inside the
 * transaction that should roll back with it.
 */
export async function appendEvents(tx: Queryable, key: LedgerKey, expectedVersion: number, events: readonly LedgerEvent[], state: LedgerState): Promise<void> {
  if (events.length === 0) return;
  events.forEach((event, k) => {
    if (event.seq !== expectedVersion + k + 1) throw new Error(`ledger ${key.runId}: event ${k} has seq ${event.seq}, expected ${expectedVersion + k + 1}`);
  });
  if (state.version !== expectedVersion + events.length) throw new Error(`ledger ${key.runId}: the snapshot is at version ${state.version}, not at the last event's seq`);

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

  const snapshot = JSON.stringify(state);
  const written =
    expectedVersion === 0
      ? await tx.query(`INSERT INTO ledger_snapshots (tenant, run_id, version, state) VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT DO NOTHING`, [
          key.tenant,
          key.runId,
          state.version,
          snapshot,
        ])
      : await tx.query(`UPDATE ledger_snapshots SET version = $3, state = $4::jsonb, updated_at = now() WHERE tenant = $1 AND run_id = $2 AND version = $5`, [
          key.tenant,
          key.runId,
          state.version,
          snapshot,
          expectedVersion,
        ]);
  if (written.rowCount !== 1) throw new LedgerWriteConflict(key, expectedVersion);
}

/** The ledger's whole event stream, oldest first, each event validated. */
export async function readEvents(db: Queryable, key: LedgerKey): Promise<LedgerEvent[]> {
  const { rows } = await db.query<{ seq: number; payload: unknown }>(`SELECT seq, payload FROM ledger_events WHERE tenant = $1 AND run_id = $2 ORDER BY seq`, [
    key.tenant,
    key.runId,
  ]);
  return rows.map((row) => {
    const event = parseLedgerEvent(row.payload);
    if (event.seq !== row.seq) throw new Error(`ledger ${key.runId}: the event stored at seq ${row.seq} says seq ${event.seq}`);
    return event;
  });
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
