import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, useTestSchema, type TestSchema } from '@vouch/testing';
import { StreamStateCache, deepFreeze } from '../src/event-stream-cache.js';
import { StreamWriteConflict, defineEventStream } from '../src/event-stream-store.js';
import { retryStreamConflicts, writeStreamJob } from '../src/event-stream-write.js';
import { createPool, withTransaction } from '../src/postgres.js';

/**
 * The event-stream kit on the real Postgres, with a stream of its own: a
 * tally of amounts per counter. Its snapshots changed shape once (format 1
 * kept `sum`, format 2 keeps `total`), and its head row keeps a label beside
 * the version, as the ledger's keeps its status.
 */
interface CounterKey {
  tenant: string;
  counterId: string;
}
type TallyEvent = { seq: number; type: 'opened'; label: string } | { seq: number; type: 'added'; amount: number };
interface Tally {
  version: number;
  label: string;
  total: number;
}

function fold(state: Tally | undefined, events: readonly TallyEvent[]): Tally | undefined {
  let s = state;
  for (const e of events) {
    if (e.seq !== (s?.version ?? 0) + 1) throw new Error(`tally: event ${e.seq} does not follow ${s?.version ?? 0}`);
    s = e.type === 'opened' ? { version: e.seq, label: e.label, total: 0 } : { ...s!, version: e.seq, total: s!.total + e.amount };
  }
  return s;
}

const SNAPSHOT_EVERY = 3;
const tally = defineEventStream<CounterKey, TallyEvent, Tally, { label: string }>({
  name: 'tally',
  tables: { events: 'tally_events', heads: 'tally_heads', snapshots: 'tally_snapshots', processedJobs: 'tally_processed_jobs' },
  idColumn: 'counter_id',
  idOf: (key) => key.counterId,
  parseEvent: (payload) => payload as TallyEvent,
  fold,
  snapshotEvery: SNAPSHOT_EVERY,
  snapshots: {
    format: 2,
    upcast: (stored, { format }) => {
      if (format !== 1) throw new Error(`tally: no upcaster for snapshot format ${format}`);
      const { version, label, sum } = stored as { version: number; label: string; sum: number };
      return { version, label, total: sum };
    },
  },
  head: { columns: ['label'], of: (state) => ({ label: state.label }) },
  freeze: (state) => deepFreeze(state),
});

const TABLES = `
CREATE TABLE tally_events (tenant text NOT NULL, counter_id text NOT NULL, seq integer NOT NULL CHECK (seq > 0), type text NOT NULL, payload jsonb NOT NULL, PRIMARY KEY (tenant, counter_id, seq));
CREATE TABLE tally_heads (tenant text NOT NULL, counter_id text NOT NULL, version integer NOT NULL, label text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant, counter_id));
CREATE TABLE tally_snapshots (tenant text NOT NULL, counter_id text NOT NULL, version integer NOT NULL, state jsonb NOT NULL, format integer NOT NULL DEFAULT 1, updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant, counter_id));
CREATE TABLE tally_processed_jobs (tenant text NOT NULL, job_id text NOT NULL, operation text NOT NULL, counter_id text NOT NULL, result jsonb NOT NULL, processed_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant, job_id));
`;

const opened = (label: string): TallyEvent => ({ seq: 1, type: 'opened', label });
const added = (seq: number, amount: number): TallyEvent => ({ seq, type: 'added', amount });
/** The first `n` events of a counter: opened, then amounts 1, 2, 3, … */
const stream = (n: number): TallyEvent[] => Array.from({ length: n }, (_, k) => (k === 0 ? opened('c') : added(k + 1, k)));

describe('the event-stream kit on Postgres', () => {
  let schema: TestSchema;
  let pool: pg.Pool;
  let counters = 0;
  const nextKey = (): CounterKey => ({ tenant: 'acme', counterId: `c-${++counters}` });
  const count = async (table: string, key: CounterKey) =>
    (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant = $1 AND counter_id = $2`, [key.tenant, key.counterId])).rows[0]!.n;
  /** Appends events in a transaction of their own; says whether a snapshot is due. */
  const append = (key: CounterKey, expected: number, events: TallyEvent[], jobId?: string) =>
    withTransaction(pool, (tx) =>
      tally.append(tx, key, expected, events, fold(fold(undefined, stream(expected)), events)!, {
        processedJob: jobId ? { jobId, operation: 'tally.add', result: { jobId } } : undefined,
      }),
    );

  beforeAll(async () => {
    schema = await useTestSchema('event_stream_kit');
    pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema, max: 4 });
    await pool.query(`CREATE SCHEMA "${schema.schema}"`);
    await pool.query(TABLES);
  });
  afterAll(async () => {
    await pool?.end();
    await schema?.cleanup();
  });

  it('appends at the expected version and refuses a stale one with a conflict, changing nothing', async () => {
    const key = nextKey();
    await append(key, 0, stream(2));
    const stale = append(key, 1, [added(2, 100)]);
    await expect(stale).rejects.toBeInstanceOf(StreamWriteConflict);
    await expect(stale).rejects.toMatchObject({ expectedVersion: 1, message: `tally acme/${key.counterId} moved past version 1 during the write` });
    // A second creation at version 0 collides as well.
    await expect(append(key, 0, stream(1))).rejects.toBeInstanceOf(StreamWriteConflict);
    expect(await count('tally_events', key)).toBe(2);
    expect(await tally.readHead(pool, key)).toEqual({ version: 2, label: 'c', snapshotVersion: 0 });
    expect(await tally.load(pool, key)).toEqual({ version: 2, label: 'c', total: 1 });
  });

  it('refuses a head that moved even where no event collides: the head row, not only the events, fences the version', async () => {
    const key = nextKey();
    await append(key, 0, stream(1));
    // Another writer moved the head to 5 without events 2 to 5 (as a bad write would): an append at 1 must not pass it by.
    await pool.query(`UPDATE tally_heads SET version = 5 WHERE tenant = $1 AND counter_id = $2`, [key.tenant, key.counterId]);
    await expect(append(key, 1, [added(2, 7)])).rejects.toBeInstanceOf(StreamWriteConflict);
    expect(await count('tally_events', key)).toBe(1);
  });

  it('writes a job at most once: a re-run gets the recorded result, and a job recorded first makes a second append conflict', async () => {
    const key = nextKey();
    const cache = new StreamStateCache<CounterKey, Tally>((k) => k.counterId, { max: 10, describe: (k) => `tally ${k.counterId}` });
    let decided = 0;
    const run = (jobId: string, amount: number) =>
      writeStreamJob({
        pool,
        store: tally,
        cache,
        key,
        job: { jobId, operation: 'tally.add' },
        decide: (_tx, current) => {
          decided += 1;
          const events = current ? [added(current.version + 1, amount)] : [opened('c'), added(2, amount)];
          const state = fold(current, events)!;
          return { events, state, result: { total: state.total, version: state.version } };
        },
        tries: 3,
        gaveUp: (err) => err,
      });
    expect(await run('job-1', 5)).toEqual({ total: 5, version: 2 });
    // BullMQ runs job-1 again: the result it recorded comes back, nothing is decided or appended.
    expect(await run('job-1', 5)).toEqual({ total: 5, version: 2 });
    expect(decided).toBe(1);
    expect(await count('tally_events', key)).toBe(2);
    expect(await tally.findProcessedJob(pool, key.tenant, 'job-1')).toEqual({ total: 5, version: 2 });
    expect(await tally.findProcessedJob(pool, key.tenant, 'job-2')).toBeUndefined();

    // Two runs of one job racing: the one that records second conflicts, and its events roll back with it.
    await append(key, 2, [added(3, 1)], 'job-3');
    await expect(append(key, 3, [added(4, 1)], 'job-3')).rejects.toBeInstanceOf(StreamWriteConflict);
    expect(await count('tally_events', key)).toBe(3);
    expect(await tally.readHead(pool, key)).toMatchObject({ version: 3 });
  });

  it('leaves the snapshot to the writer after commit, and a snapshot that lands late never replaces a newer one', async () => {
    const key = nextKey();
    const events = stream(7);
    expect(await append(key, 0, events.slice(0, 2))).toEqual({ snapshotDue: false });
    // The append that brings the head SNAPSHOT_EVERY events past the stored snapshot says so, and writes none itself.
    expect(await append(key, 2, events.slice(2, 3))).toEqual({ snapshotDue: true });
    expect(await tally.loadSnapshot(pool, key)).toBeUndefined();
    expect(await tally.readHead(pool, key)).toMatchObject({ version: 3, snapshotVersion: 0 });
    // Still due on the next append, until a writer stores one.
    expect(await append(key, 3, events.slice(3, 6))).toEqual({ snapshotDue: true });

    const at3 = fold(undefined, events.slice(0, 3))!;
    const at6 = fold(undefined, events.slice(0, 6))!;
    await tally.saveSnapshotAfterCommit(pool, key, at6, undefined);
    // The writer of version 3 was slower: its snapshot lands after the one at 6 and is dropped.
    await tally.saveSnapshot(pool, key, at3);
    expect(await tally.loadSnapshot(pool, key)).toEqual(at6);
    expect(await tally.readHead(pool, key)).toMatchObject({ version: 6, snapshotVersion: 6 });
    expect(await append(key, 6, events.slice(6, 7))).toEqual({ snapshotDue: false });
    // Racing writers, in any order: the newest version stays.
    await Promise.all([3, 7, 6, 3].map((v) => tally.saveSnapshot(pool, key, fold(undefined, events.slice(0, v))!)));
    expect((await tally.loadSnapshot(pool, key))!.version).toBe(7);
  });

  it('replays the snapshot plus the events after it, and upcasts a snapshot of an older format', async () => {
    const key = nextKey();
    const events = stream(5);
    await append(key, 0, events);
    // A format-1 snapshot at version 3, as an earlier version of the service wrote it (total was called sum), and with a
    // total that its events do not give: the replay must start from the snapshot, not from the stream's start.
    await pool.query(`INSERT INTO tally_snapshots (tenant, counter_id, version, state, format) VALUES ($1, $2, 3, $3::jsonb, 1)`, [
      key.tenant,
      key.counterId,
      JSON.stringify({ version: 3, label: 'c', sum: 1000 }),
    ]);
    expect(await tally.loadSnapshot(pool, key)).toEqual({ version: 3, label: 'c', total: 1000 });
    expect(await tally.load(pool, key)).toEqual({ version: 5, label: 'c', total: 1000 + 3 + 4 });

    // A snapshot in today's format is read as it is, and replaces the older one.
    await tally.saveSnapshot(pool, key, { version: 4, label: 'c', total: 2000 });
    expect((await pool.query(`SELECT format FROM tally_snapshots WHERE tenant = $1 AND counter_id = $2`, [key.tenant, key.counterId])).rows[0]).toEqual({ format: 2 });
    expect(await tally.load(pool, key)).toEqual({ version: 5, label: 'c', total: 2004 });
    // A format with no upcaster is an error, not a silent misreading.
    await pool.query(`UPDATE tally_snapshots SET format = 9 WHERE tenant = $1 AND counter_id = $2`, [key.tenant, key.counterId]);
    await expect(tally.load(pool, key)).rejects.toThrow('no upcaster for snapshot format 9');
  });

  it('loads the committed state through the cache by head version: the cached state at the head, its tail, or the snapshot', async () => {
    const key = nextKey();
    const events = stream(8);
    await append(key, 0, events.slice(0, 4));
    const head4 = (await tally.readHead(pool, key))!;
    const at4 = await tally.loadCommitted(pool, key, head4, undefined);
    expect(at4).toEqual(fold(undefined, events.slice(0, 4)));
    expect(Object.isFrozen(at4)).toBe(true);
    // At the head: the cached object itself, no read.
    expect(await tally.loadCommitted(pool, key, head4, at4)).toBe(at4);

    // Behind the head: the cached state plus the events after it.
    await append(key, 4, events.slice(4, 6));
    const head6 = (await tally.readHead(pool, key))!;
    expect(await tally.loadCommitted(pool, key, head6, at4)).toEqual(fold(undefined, events.slice(0, 6)));

    // Behind the stored snapshot: the snapshot is the base, not the older cached state (marked here by a total no event gives).
    await tally.saveSnapshot(pool, key, { version: 5, label: 'c', total: 500 });
    const head6again = (await tally.readHead(pool, key))!;
    expect(head6again.snapshotVersion).toBe(5);
    expect(await tally.loadCommitted(pool, key, head6again, at4)).toEqual({ version: 6, label: 'c', total: 505 });

    // A head past the stream's end is a broken stream.
    await expect(tally.loadCommitted(pool, key, { ...head6, version: 9 }, undefined)).rejects.toThrow(`tally ${key.counterId}: its head is at version 9, but its events end at 6`);
  });

  it('caches only frozen states, and never goes back to an older version', () => {
    const cache = new StreamStateCache<CounterKey, Tally>((k) => k.counterId, { max: 2, describe: (k) => `tally ${k.counterId}` });
    const key = nextKey();
    const newer = deepFreeze({ version: 4, label: 'c', total: 6 });
    cache.remember(key, newer);
    cache.remember(key, deepFreeze({ version: 3, label: 'c', total: 3 }));
    expect(cache.get(key)).toBe(newer);
    expect(() => cache.remember(key, { version: 5, label: 'c', total: 10 })).toThrow(`tally ${key.counterId}: only a frozen state may be cached`);
    expect(cache.get(key)).toBe(newer);

    // By weight: a state heavier than the whole cache is not kept, nor its older state.
    const weighed = new StreamStateCache<CounterKey, Tally>((k) => k.counterId, { max: 10, maxWeight: 100, weightOf: (s) => s.total, describe: (k) => k.counterId });
    weighed.remember(key, deepFreeze({ version: 1, label: 'c', total: 60 }));
    expect(weighed.held).toEqual({ count: 1, weight: 60 });
    weighed.remember(key, deepFreeze({ version: 2, label: 'c', total: 101 }));
    expect(weighed.get(key)).toBeUndefined();
  });

  it('retries a write that lost a race, and gives up after the tries it was given', async () => {
    const key = nextKey();
    let attempts = 0;
    const lost = () => {
      attempts += 1;
      return Promise.reject(tally.conflict(key, attempts));
    };
    await expect(retryStreamConflicts(3, lost, (err, tries) => new Error(`gave up after ${tries} tries at version ${err.expectedVersion}`))).rejects.toThrow('gave up after 3 tries at version 3');
    expect(attempts).toBe(3);
    // Any other error is no race: it goes out at once.
    attempts = 0;
    await expect(
      retryStreamConflicts(
        3,
        () => {
          attempts += 1;
          return Promise.reject(new Error('disk full'));
        },
        (err) => err,
      ),
    ).rejects.toThrow('disk full');
    expect(attempts).toBe(1);
    // A try that wins after losing returns its result.
    attempts = 0;
    expect(await retryStreamConflicts(3, () => (++attempts < 2 ? Promise.reject(tally.conflict(key, 1)) : Promise.resolve('won')), (err) => err)).toBe('won');
  });
});
