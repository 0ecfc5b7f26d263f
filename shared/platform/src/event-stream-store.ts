import type { Logger } from './logger.js';
import type { Queryable } from './postgres.js';

/**
 * The Postgres side of an event-sourced aggregate (a ledger, a board),
 * written once: an append-only stream per aggregate with optimistic
 * concurrency on its head row, the processed-job records that make a write
 * job exactly-once, periodic snapshots written after commit, and replay.
 * A stream brings its own events, fold, tables and domain rules
 * (EventStreamSpec); this file runs the SQL and decides nothing else.
 *
 * The tables it expects, in the stream's own schema (each service's
 * migrations create them):
 * - events (tenant, <id>, seq, type, payload jsonb), primary key (tenant, <id>, seq);
 * - heads (tenant, <id>, version, updated_at, and the spec's head columns);
 * - snapshots (tenant, <id>, version, state jsonb, updated_at, and `format` when the spec numbers formats);
 * - processed jobs (tenant, job_id, operation, <id>, result jsonb, processed_at), primary key (tenant, job_id).
 */

/** An event as the stream stores it: its place in the stream, and its type (a column, for reading by type). */
export interface StreamEvent {
  seq: number;
  type: string;
}

/** A fold of a stream's events: its version is the seq of the last event folded in. */
export interface StreamState {
  version: number;
}

/** Every stream lives in a tenant; the spec names the aggregate's id column beside it. */
export interface StreamKey {
  tenant: string;
}

export interface EventStreamTables {
  events: string;
  heads: string;
  snapshots: string;
  processedJobs: string;
}

/** What a stream is: the kit's type parameters, and the hooks only the stream knows. */
export interface EventStreamSpec<Key extends StreamKey, Event extends StreamEvent, State extends StreamState, Head extends object = object> {
  /** Names the stream in messages: "ledger acme/r1 moved past version 3". */
  name: string;
  tables: EventStreamTables;
  /** The column that holds the aggregate's id beside `tenant` (run_id, board_id) in every table. */
  idColumn: string;
  idOf(key: Key): string;
  /** Validates a stored payload as an event (throws on one it cannot read). */
  parseEvent(payload: unknown): Event;
  /** Applies events on top of a state (undefined: the stream's start); a new state, the input left as it was. */
  fold(state: State | undefined, events: readonly Event[]): State | undefined;
  /** A snapshot is due once the head is this many events past the stored one. */
  snapshotEvery: number;
  /** Another reason a snapshot is due at `state` (a closed ledger: its last one). */
  snapshotAlsoWhen?(state: State): boolean;
  /**
   * Snapshots written by earlier versions of the service. With `format`, the
   * snapshots table has a `format` column: a row of this format is read as it
   * is, any other goes through `upcast`. Without it every row goes through
   * `upcast`, which must tell old shapes from new by the state itself.
   */
  snapshots?: {
    format?: number;
    upcast?(stored: unknown, from: { format: number | undefined; db: Queryable; key: Key }): State | Promise<State>;
  };
  /** Columns of the head row kept beside the version (the ledger's status), written from each appended state. */
  head?: { columns: ReadonlyArray<keyof Head & string>; of(state: State): Head };
  /**
   * Makes a folded state safe to share through the cache (StreamStateCache
   * holds only frozen states). `fromFrozen`: the fold started from a frozen
   * state, so only what `applied` added needs freezing. Without it the fold
   * is taken to freeze its own results.
   */
  freeze?(state: State, applied: readonly Event[], fromFrozen: boolean): State;
  /** The error for a stream whose events end before its head (a bug or a bad write); a plain Error without it. */
  brokenStream?(message: string): Error;
}

/** A stream's head row: where it ends, where its stored snapshot is, and the spec's head columns. */
export type StreamHead<Head extends object = object> = Head & {
  /** The last event's seq. */
  version: number;
  /** The version of the stored snapshot when the head was read (0: none); a newer one may have landed since. */
  snapshotVersion: number;
};

/**
 * A write lost a race: another writer appended at the same expected version,
 * or the same job recorded its result first. Nothing was written; reload and
 * decide again.
 */
export class StreamWriteConflict extends Error {
  constructor(
    readonly stream: string,
    readonly key: StreamKey,
    readonly id: string,
    readonly expectedVersion: number,
    cause?: unknown,
  ) {
    super(`${stream} ${key.tenant}/${id} moved past version ${expectedVersion} during the write`, cause === undefined ? undefined : { cause });
    this.name = 'StreamWriteConflict';
  }
}

/** The job whose result a write records with its events, so that a re-run of the job returns it instead of writing again. */
export interface ProcessedJobRecord {
  jobId: string;
  operation: string;
  result: unknown;
}

/**
 * More data-modifying statements run in the append's one statement, as CTEs
 * (a projection of the events): `bind` takes a value and gives its
 * placeholder. Each writer of one aggregate holds its head lock for one
 * round trip fewer per statement folded in.
 */
export type AlsoInAppend = (bind: (value: unknown) => string) => string[];

export interface AppendOptions {
  processedJob?: ProcessedJobRecord | undefined;
  alsoInStatement?: AlsoInAppend | undefined;
}

const UNIQUE_VIOLATION = '23505';
const isUniqueViolation = (err: unknown) => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === UNIQUE_VIOLATION;
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** The I/O of one kind of stream; built once per service by defineEventStream. */
export interface EventStreamStore<Key extends StreamKey, Event extends StreamEvent, State extends StreamState, Head extends object = object> {
  readonly spec: EventStreamSpec<Key, Event, State, Head>;
  /** The conflict error of this stream, for a writer that finds it moved on by its own check. */
  conflict(key: Key, expectedVersion: number, cause?: unknown): StreamWriteConflict;
  /**
   * The aggregate's head; undefined when it has none. `lock` (inside a
   * transaction) makes writers of one aggregate queue behind each other
   * instead of all deciding on the same version and all but one losing; the
   * version checks in append stay the guarantee.
   */
  readHead(db: Queryable, key: Key, opts?: { lock?: boolean }): Promise<StreamHead<Head> | undefined>;
  /**
   * What a write job reads first, in one round trip: the result the job
   * already recorded (a BullMQ re-run), else the head, locked.
   */
  lockHeadForJob(tx: Queryable, key: Key, jobId: string): Promise<{ prior: unknown; head: StreamHead<Head> | undefined }>;
  /** The result a job recorded when it wrote, if it did; undefined otherwise. */
  findProcessedJob(db: Queryable, tenant: string, jobId: string): Promise<unknown>;
  /** The events after `afterVersion` (0: the whole stream), oldest first, each validated. */
  readEvents(db: Queryable, key: Key, afterVersion?: number): Promise<Event[]>;
  /** The stored snapshot, upcast to today's state; undefined when none was written. */
  loadSnapshot(db: Queryable, key: Key): Promise<State | undefined>;
  /**
   * Replay: the stored snapshot plus the events after it; undefined when the
   * aggregate has no events. Events are never changed or removed, so the two
   * reads need no transaction: a snapshot written in between is still the
   * fold up to its own version.
   */
  load(db: Queryable, key: Key): Promise<State | undefined>;
  /**
   * The committed state at `head` (read, or locked by a writer, just before):
   * `cached` when it is at the head; else `cached` plus the events after it,
   * when it is no further behind than the snapshot; else the snapshot plus
   * the events after it. The result is frozen (spec.freeze) and not yet
   * cached: a writer caches what it commits, after COMMIT.
   */
  loadCommitted(db: Queryable, key: Key, head: StreamHead<Head> | undefined, cached: State | undefined): Promise<State | undefined>;
  /**
   * Appends events at `expectedVersion` (0 for a new aggregate) and moves the
   * head to `state`, which must be the fold of the stream after them, with
   * the job's record and `alsoInStatement`, in one statement. Throws
   * StreamWriteConflict when the stream moved on or the job was recorded
   * first; run it inside the transaction that should roll back with it.
   * Says whether a snapshot is due: the caller writes `state` with
   * saveSnapshotAfterCommit once the transaction has committed.
   */
  append(tx: Queryable, key: Key, expectedVersion: number, events: readonly Event[], state: State, opts?: AppendOptions): Promise<{ snapshotDue: boolean }>;
  /**
   * Stores a committed `state` as the snapshot unless a newer one is stored:
   * writers snapshot after their commit and without the head lock, so two
   * may race, and the later version wins whatever the order.
   */
  saveSnapshot(db: Queryable, key: Key, state: State): Promise<void>;
  /**
   * saveSnapshot for a writer whose write has committed: the write stands
   * whether or not its snapshot is stored (a snapshot only shortens reads),
   * so a failure is logged, not thrown.
   */
  saveSnapshotAfterCommit(db: Queryable, key: Key, state: State, logger: Logger | undefined): Promise<void>;
  /**
   * Forgets processed-job records older than `olderThanMs`. BullMQ keeps a
   * finished job for at most a week and never re-runs a finished one, so
   * older records can no longer be asked for.
   */
  pruneProcessedJobs(db: Queryable, olderThanMs: number): Promise<number>;
}

/** The I/O of a stream as `spec` describes it. Table and column names are checked here once: they are written into SQL. */
export function defineEventStream<Key extends StreamKey, Event extends StreamEvent, State extends StreamState, Head extends object = object>(
  spec: EventStreamSpec<Key, Event, State, Head>,
): EventStreamStore<Key, Event, State, Head> {
  const { events: EVENTS, heads: HEADS, snapshots: SNAPSHOTS, processedJobs: PROCESSED } = spec.tables;
  const ID = spec.idColumn;
  const headColumns = spec.head?.columns ?? [];
  for (const name of [EVENTS, HEADS, SNAPSHOTS, PROCESSED, ID, ...headColumns]) {
    if (!IDENTIFIER.test(name)) throw new Error(`event stream ${spec.name}: ${JSON.stringify(name)} is not a plain table or column name (lowercase letters, digits and _)`);
  }
  const format = spec.snapshots?.format;
  const freeze = spec.freeze ?? ((state: State) => state);
  const brokenStream = spec.brokenStream ?? ((message: string) => new Error(message));
  /** The stored snapshot's version, 0 without one, as an SQL expression over `h`, a head row: the one place it is true, since snapshots land after commit. */
  const SNAPSHOT_VERSION_OF_HEAD = `coalesce((SELECT s.version FROM ${SNAPSHOTS} s WHERE s.tenant = h.tenant AND s.${ID} = h.${ID}), 0)`;
  const HEAD_FIELDS = headColumns.map((c) => `, h.${c}`).join('');

  type HeadRow = Record<string, unknown> & { version: number; snapshot_version: number };
  const toHead = (row: HeadRow): StreamHead<Head> => {
    const head: Record<string, unknown> = { version: row.version };
    for (const c of headColumns) head[c] = row[c];
    head.snapshotVersion = row.snapshot_version;
    return head as StreamHead<Head>;
  };
  const conflict = (key: Key, expectedVersion: number, cause?: unknown) => new StreamWriteConflict(spec.name, key, spec.idOf(key), expectedVersion, cause);

  async function findProcessedJob(db: Queryable, tenant: string, jobId: string): Promise<unknown> {
    const { rows } = await db.query<{ result: unknown }>(`SELECT result FROM ${PROCESSED} WHERE tenant = $1 AND job_id = $2`, [tenant, jobId]);
    return rows[0]?.result;
  }

  async function readEvents(db: Queryable, key: Key, afterVersion = 0): Promise<Event[]> {
    const id = spec.idOf(key);
    const { rows } = await db.query<{ seq: number; payload: unknown }>(`SELECT seq, payload FROM ${EVENTS} WHERE tenant = $1 AND ${ID} = $2 AND seq > $3 ORDER BY seq`, [key.tenant, id, afterVersion]);
    return rows.map((row) => {
      const event = spec.parseEvent(row.payload);
      if (event.seq !== row.seq) throw new Error(`${spec.name} ${id}: the event stored at seq ${row.seq} says seq ${event.seq}`);
      return event;
    });
  }

  async function loadSnapshot(db: Queryable, key: Key): Promise<State | undefined> {
    const { rows } = await db.query<{ state: unknown; format?: number }>(`SELECT state${format === undefined ? '' : ', format'} FROM ${SNAPSHOTS} WHERE tenant = $1 AND ${ID} = $2`, [
      key.tenant,
      spec.idOf(key),
    ]);
    const row = rows[0];
    if (!row) return undefined;
    if (format !== undefined && row.format === format) return row.state as State;
    const upcast = spec.snapshots?.upcast;
    return upcast ? await upcast(row.state, { format: row.format, db, key }) : (row.state as State);
  }

  async function saveSnapshot(db: Queryable, key: Key, state: State): Promise<void> {
    const withFormat = format !== undefined;
    await db.query(
      `INSERT INTO ${SNAPSHOTS} (tenant, ${ID}, version, state${withFormat ? ', format' : ''}) VALUES ($1, $2, $3, $4::jsonb${withFormat ? ', $5' : ''})
       ON CONFLICT (tenant, ${ID}) DO UPDATE SET version = EXCLUDED.version, state = EXCLUDED.state${withFormat ? ', format = EXCLUDED.format' : ''}, updated_at = now()
       WHERE ${SNAPSHOTS}.version < EXCLUDED.version`,
      [key.tenant, spec.idOf(key), state.version, JSON.stringify(state), ...(withFormat ? [format] : [])],
    );
  }

  return {
    spec,
    conflict,
    findProcessedJob,
    readEvents,
    loadSnapshot,
    saveSnapshot,

    async readHead(db, key, opts = {}) {
      const { rows } = await db.query<HeadRow>(
        `SELECT h.version, ${SNAPSHOT_VERSION_OF_HEAD} AS snapshot_version${HEAD_FIELDS} FROM ${HEADS} h WHERE h.tenant = $1 AND h.${ID} = $2${opts.lock ? ' FOR UPDATE OF h' : ''}`,
        [key.tenant, spec.idOf(key)],
      );
      return rows[0] && toHead(rows[0]);
    },

    async lockHeadForJob(tx, key, jobId) {
      const { rows } = await tx.query<HeadRow & { prior: unknown }>(
        `SELECT h.version, ${SNAPSHOT_VERSION_OF_HEAD} AS snapshot_version${HEAD_FIELDS}, (SELECT result FROM ${PROCESSED} WHERE tenant = $1 AND job_id = $3) AS prior
         FROM ${HEADS} h WHERE h.tenant = $1 AND h.${ID} = $2 FOR UPDATE OF h`,
        [key.tenant, spec.idOf(key), jobId],
      );
      const row = rows[0];
      if (!row) return { prior: await findProcessedJob(tx, key.tenant, jobId), head: undefined };
      return { prior: row.prior ?? undefined, head: toHead(row) };
    },

    async load(db, key) {
      const snapshot = await loadSnapshot(db, key);
      return spec.fold(snapshot, await readEvents(db, key, snapshot?.version ?? 0));
    },

    async loadCommitted(db, key, head, cached) {
      if (!head) return undefined;
      if (cached && cached.version === head.version) return cached;
      const fromCache = cached !== undefined && cached.version < head.version && cached.version >= head.snapshotVersion;
      const base = fromCache ? cached : head.snapshotVersion > 0 ? await loadSnapshot(db, key) : undefined;
      const tail = await readEvents(db, key, base?.version ?? 0);
      const state = spec.fold(base, tail);
      // Without a lock a writer may have moved the head on since it was read, never back.
      if (!state || state.version < head.version) throw brokenStream(`${spec.name} ${spec.idOf(key)}: its head is at version ${head.version}, but its events end at ${state?.version ?? 0}`);
      return freeze(state, tail, fromCache);
    },

    async append(tx, key, expectedVersion, events, state, opts = {}) {
      if (events.length === 0) return { snapshotDue: false };
      const id = spec.idOf(key);
      events.forEach((event, k) => {
        if (event.seq !== expectedVersion + k + 1) throw new Error(`${spec.name} ${id}: event ${k} has seq ${event.seq}, expected ${expectedVersion + k + 1}`);
      });
      if (state.version !== expectedVersion + events.length) throw new Error(`${spec.name} ${id}: the state is at version ${state.version}, not at the last event's seq`);

      const params: unknown[] = [key.tenant, id, state.version];
      const bind = (value: unknown) => `$${params.push(value)}`;
      const fields = spec.head?.of(state) as Record<string, unknown> | undefined;
      const head =
        expectedVersion === 0
          ? `INSERT INTO ${HEADS} (tenant, ${ID}, version${headColumns.map((c) => `, ${c}`).join('')}) VALUES ($1, $2, $3${headColumns.map((c) => `, ${bind(fields?.[c])}`).join('')})
             ON CONFLICT DO NOTHING RETURNING 0 AS snapshot_version`
          : `UPDATE ${HEADS} h SET version = $3${headColumns.map((c) => `, ${c} = ${bind(fields?.[c])}`).join('')}, updated_at = now()
             WHERE h.tenant = $1 AND h.${ID} = $2 AND h.version = ${bind(expectedVersion)} RETURNING ${SNAPSHOT_VERSION_OF_HEAD} AS snapshot_version`;
      const ctes = [
        `ev AS (INSERT INTO ${EVENTS} (tenant, ${ID}, seq, type, payload)
           SELECT $1, $2, e.seq, e.type, e.payload FROM unnest(${bind(events.map((e) => e.seq))}::int[], ${bind(events.map((e) => e.type))}::text[], ${bind(events.map((e) => JSON.stringify(e)))}::jsonb[]) AS e(seq, type, payload))`,
        `hd AS (${head})`,
      ];
      const job = opts.processedJob;
      if (job) ctes.push(`pj AS (INSERT INTO ${PROCESSED} (tenant, job_id, operation, ${ID}, result) VALUES ($1, ${bind(job.jobId)}, ${bind(job.operation)}, $2, ${bind(JSON.stringify(job.result))}::jsonb))`);
      (opts.alsoInStatement?.(bind) ?? []).forEach((statement, k) => ctes.push(`also_${k} AS (${statement})`));

      let moved: { rows: Array<{ snapshot_version: number | null }> };
      try {
        // A concurrent writer's uncommitted row with the same seq (or job) makes this wait for it, then fail with a unique violation once it commits.
        moved = await tx.query<{ snapshot_version: number | null }>(`WITH ${ctes.join(',\n')} SELECT (SELECT snapshot_version FROM hd) AS snapshot_version`, params);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(key, expectedVersion, err);
        throw err;
      }
      const snapshotVersion = moved.rows[0]?.snapshot_version;
      // No head row moved: another writer moved it first (or created it, for a new aggregate).
      if (snapshotVersion === null || snapshotVersion === undefined) throw conflict(key, expectedVersion);
      return { snapshotDue: state.version - snapshotVersion >= spec.snapshotEvery || (spec.snapshotAlsoWhen?.(state) ?? false) };
    },

    async saveSnapshotAfterCommit(db, key, state, logger) {
      await saveSnapshot(db, key, state).catch((err: unknown) =>
        logger?.warn({ err, stream: spec.name, id: spec.idOf(key), version: state.version }, `${spec.name} snapshot not written; a later write writes one`),
      );
    },

    async pruneProcessedJobs(db, olderThanMs) {
      const { rowCount } = await db.query(`DELETE FROM ${PROCESSED} WHERE processed_at < now() - make_interval(secs => $1)`, [olderThanMs / 1000]);
      return rowCount ?? 0;
    },
  };
}
