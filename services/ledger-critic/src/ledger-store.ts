import type { LedgerStatus } from '@vouch/contracts';
import { deepFreeze, defineEventStream, type Queryable, type StreamHead } from '@vouch/platform';
import { parseLedgerEvent, type LedgerEvent } from './domain/ledger-events.js';
import type { ObservationFeatures, StoredObservation } from '@vouch/judge';
import { LedgerStreamError, applyEvents, type LedgerState } from './domain/replay-ledger.js';
import { freezeApplied } from './ledger-cache.js';
import { isClosed } from './domain/terminal-status.js';
import { SNAPSHOT_FORMAT, lacksBaseVersions, upcastSnapshot } from './domain/upcast-snapshot.js';

/**
 * Postgres I/O of the ledger, and nothing else: the event stream (its head
 * row, periodic snapshot and processed-job records, through the platform's
 * event-stream kit) and the features the critic read from each evidence
 * item. Every decision is made by the pure domain; callers run the writes in
 * one transaction (withTransaction).
 */

/** A ledger is one run within one tenant. */
export interface LedgerKey {
  tenant: string;
  runId: string;
}

/**
 * The full snapshot is written every SNAPSHOT_EVERY events and when the ledger
 * closes, not by every write: rewriting it (2.4 MB of jsonb at 10,000
 * evidence items, ~100 ms to read and write it back) made every write cost
 * O(ledger size). At 200, one write in 200 pays the snapshot write (~75 ms at
 * that size; `npm run bench:ledger`), under 0.4 ms a write on average, and a
 * read without a cached state applies at most 199 events after the snapshot,
 * a few milliseconds for one-batch writes. (A tail of big batches is bounded
 * by the 10,000-item cap: at worst about one more read of the ledger.) It is
 * written after the write that made it due has committed, outside the head
 * lock, so the writers queued behind that one do not wait for it either.
 */
export const SNAPSHOT_EVERY = 200;

/**
 * The ledger's event stream: its events, head row (with the ledger's status
 * beside the version), snapshots and processed-job records, through the
 * platform's event-stream kit. ledger_heads.snapshot_version is no longer
 * read or written: snapshots land after commit, so the stored snapshot's
 * version is read from ledger_snapshots, as the board's is.
 */
export const ledgerStream = defineEventStream<LedgerKey, LedgerEvent, LedgerState, { status: LedgerStatus }>({
  name: 'ledger',
  tables: { events: 'ledger_events', heads: 'ledger_heads', snapshots: 'ledger_snapshots', processedJobs: 'ledger_processed_jobs' },
  idColumn: 'run_id',
  idOf: (key) => key.runId,
  parseEvent: parseLedgerEvent,
  fold: applyEvents,
  snapshotEvery: SNAPSHOT_EVERY,
  // A closed ledger takes no more events: its snapshot is final and every read of it is one row.
  snapshotAlsoWhen: (state) => isClosed(state.status),
  snapshots: {
    format: SNAPSHOT_FORMAT,
    upcast: async (stored, { db, key }) => {
      const version = (stored as { version?: number }).version ?? 0;
      return upcastSnapshot(stored, lacksBaseVersions(stored) ? await readCritiqueSeqs(db, key, version) : []);
    },
  },
  head: { columns: ['status'], of: (state) => ({ status: state.status }) },
  freeze: (state, applied, fromFrozen) => (fromFrozen ? freezeApplied(state, applied) : deepFreeze(state)),
  brokenStream: (message) => new LedgerStreamError(message),
});

/** The ledger's head row: where its stream ends, its status, and where its latest snapshot is. */
export type LedgerHead = StreamHead<{ status: LedgerStatus }>;

/** The seqs of the ledger's critique_recorded events up to `throughVersion`, in order: cycle k's is the k-th. */
async function readCritiqueSeqs(db: Queryable, key: LedgerKey, throughVersion: number): Promise<number[]> {
  const { rows } = await db.query<{ seq: number }>(
    `SELECT seq FROM ledger_events WHERE tenant = $1 AND run_id = $2 AND seq <= $3 AND type = 'critique_recorded' ORDER BY seq`,
    [key.tenant, key.runId, throughVersion],
  );
  return rows.map((r) => r.seq);
}

/** The ledger's head; undefined when the run has no ledger. */
export const readHead = ledgerStream.readHead;
/** The ledger's latest snapshot, upcast to today's state (upcast-snapshot.ts); undefined when none was written yet. */
export const loadSnapshot = ledgerStream.loadSnapshot;
/** The ledger's state: its latest snapshot plus the events after it; undefined when the run has no ledger. */
export const loadLedger = ledgerStream.load;
/** The ledger's events after `afterVersion` (0: the whole stream), oldest first, each event validated. */
export const readEvents = ledgerStream.readEvents;
/** Stores a committed state of the ledger as its snapshot, unless a newer one is stored. */
export const saveSnapshot = ledgerStream.saveSnapshot;
/** Appends events at an expected version (see EventStreamStore.append); says whether a snapshot is due after commit. */
export const appendEvents = ledgerStream.append;
/** The ledger's committed state at a head just read, through a cached state (see EventStreamStore.loadCommitted). */
export const loadCommitted = ledgerStream.loadCommitted;

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
