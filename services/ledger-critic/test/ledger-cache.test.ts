import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger, recordEvidence } from '../src/domain/ledger-commands.js';
import { replayLedger, type LedgerState } from '../src/domain/replay-ledger.js';
import { LedgerCache, freezeApplied, deepFreeze } from '../src/ledger-cache.js';
import type { LedgerCommands } from '../src/ledger-handlers.js';
import { readEvents, readHead, type LedgerKey } from '../src/ledger-store.js';
import { ok } from './drive-ledger.js';
import { commandsOn, useLedgerDatabase, type LedgerDatabase } from './ledger-test-env.js';

const AT = '2025-03-01T10:00:00.000Z';
const TENANT = 'acme';

/** A ledger state of `items` evidence items, frozen as the cache wants it. */
function ledgerOf(runId: string, items: number): LedgerState {
  const opened = openLedger(undefined, { runId, goal: 'Collect readings', policy: 'full', cycleBudget: 3, at: AT });
  if (items === 0) return freezeApplied(opened.state, opened.events);
  const recorded = recordEvidence(opened.state, { runId, items: Array.from({ length: items }, (_, i) => ok('runtime_observation', 'probe', `reading ${i}`)), at: AT });
  return deepFreeze(recorded.state);
}

describe('the ledger cache', () => {
  const key = (runId: string): LedgerKey => ({ tenant: TENANT, runId });

  it('drops the least recently used ledgers past its item and ledger bounds', () => {
    const cache = new LedgerCache({ maxItems: 25, maxLedgers: 3 });
    cache.remember(key('a'), ledgerOf('a', 9)); // weight 10
    cache.remember(key('b'), ledgerOf('b', 9));
    expect(cache.get(key('a'))?.runId).toBe('a'); // a is now the most recently used
    cache.remember(key('c'), ledgerOf('c', 9)); // 30 > 25: b goes
    expect([cache.get(key('a'))?.runId, cache.get(key('b')), cache.get(key('c'))?.runId]).toEqual(['a', undefined, 'c']);
    expect(cache.size).toEqual({ ledgers: 2, items: 20 });
    cache.remember(key('d'), ledgerOf('d', 0));
    cache.remember(key('e'), ledgerOf('e', 0)); // a fourth ledger: a, the least recently used, goes
    expect(cache.get(key('a'))).toBeUndefined();
    expect(cache.size).toEqual({ ledgers: 3, items: 12 });
    // A ledger heavier than the whole cache is not kept, and pushes nothing out.
    cache.remember(key('f'), ledgerOf('f', 30));
    expect(cache.get(key('f'))).toBeUndefined();
    expect(cache.size.ledgers).toBe(3);
  });

  it('keeps a tenant’s ledger apart from another tenant’s run of the same id, and never goes back a version', () => {
    const cache = new LedgerCache();
    const older = ledgerOf('r', 1);
    const newer = deepFreeze(recordEvidence(older, { runId: 'r', items: [ok('tool_result', 'shell', 'later')], at: AT }).state);
    cache.remember(key('r'), newer);
    cache.remember(key('r'), older);
    expect(cache.get(key('r'))).toBe(newer);
    expect(cache.get({ tenant: 'other', runId: 'r' })).toBeUndefined();
  });

  it('holds only frozen states, frozen down to the evidence a write added', () => {
    const cache = new LedgerCache();
    const opened = openLedger(undefined, { runId: 'r', goal: 'Collect readings', policy: 'full', cycleBudget: 3, at: AT });
    expect(() => cache.remember(key('r'), opened.state)).toThrow(/frozen/);
    const base = freezeApplied(opened.state, opened.events);
    const next = recordEvidence(base, { runId: 'r', items: [ok('tool_result', 'shell', 'renamed a.txt')], at: AT });
    const frozen = freezeApplied(next.state, next.events);
    expect([Object.isFrozen(frozen), Object.isFrozen(frozen.evidence), Object.isFrozen(frozen.evidence[0])]).toEqual([true, true, true]);
    expect(() => (frozen.evidence as unknown[]).push({})).toThrow(TypeError);
    // The command worked on the frozen state without changing it.
    expect(base.evidence).toEqual([]);
  });
});

describe('the ledger cache on Postgres', () => {
  let db: LedgerDatabase;
  let runs = 0;
  const nextKey = (): LedgerKey => ({ tenant: TENANT, runId: `cache-${++runs}` });

  beforeAll(async () => {
    db = await useLedgerDatabase('ledger_cache');
  });
  afterAll(async () => {
    await db?.cleanup();
  });

  /** A worker's commands, with its cache in view. */
  const worker = (): { commands: LedgerCommands; cache: LedgerCache } => {
    const cache = new LedgerCache();
    return { commands: commandsOn(db.pool, { cache }).commands, cache };
  };

  /** The cached state is the replay of the stored events up to its version: committed state, and nothing else. */
  const expectCommitted = async (cache: LedgerCache, key: LedgerKey, version: number) => {
    const cached = cache.get(key);
    expect(cached?.version).toBe(version);
    expect(cached).toStrictEqual(replayLedger((await readEvents(db.pool, key)).slice(0, version)));
  };

  it('brings a worker’s cached ledger up to date with another replica’s writes before it decides', async () => {
    const key = nextKey();
    const a = worker();
    const b = worker();
    let job = 0;
    const caller = () => ({ tenant: TENANT, jobId: `${key.runId}-job-${++job}` });
    const record = (w: { commands: LedgerCommands }, summary: string) => w.commands.recordEvidence(caller(), { runId: key.runId, items: [ok('runtime_observation', 'probe', summary)] });

    await a.commands.open(caller(), { runId: key.runId, goal: 'Collect readings', policy: 'full' });
    expect((await record(a, 'reading 1')).recorded).toEqual([{ id: 'ev-1', seq: 1 }]);
    await expectCommitted(a.cache, key, 2);
    expect((await record(b, 'reading 2')).recorded).toEqual([{ id: 'ev-2', seq: 2 }]); // b starts cold
    await expectCommitted(b.cache, key, 3);
    // a holds version 2; the head is at 3: a applies b's event before deciding.
    expect(await record(a, 'reading 3')).toMatchObject({ version: 4, evidenceCount: 3, recorded: [{ id: 'ev-3', seq: 3 }] });
    await expectCommitted(a.cache, key, 4);
    expect((await b.commands.get({ tenant: TENANT }, { runId: key.runId })).evidence.map((e) => e.summary)).toEqual(['reading 1', 'reading 2', 'reading 3']);
    await expectCommitted(b.cache, key, 4);
  });

  it('leaves the cache as it was when a write is refused or loses its race, and records nothing twice', async () => {
    const key = nextKey();
    const a = worker();
    await a.commands.open({ tenant: TENANT, jobId: `${key.runId}-open` }, { runId: key.runId, goal: 'Collect readings', policy: 'full' });
    await a.commands.recordEvidence({ tenant: TENANT, jobId: `${key.runId}-first` }, { runId: key.runId, items: [ok('runtime_observation', 'probe', 'reading 1')] });
    const before = a.cache.get(key);
    expect(before?.version).toBe(2);

    // Refused by the domain: nothing written, the cached object untouched.
    await expect(a.commands.open({ tenant: TENANT, jobId: `${key.runId}-reopen` }, { runId: key.runId, goal: 'Another goal', policy: 'full' })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(a.cache.get(key)).toBe(before);

    // Lost race: another session holds the head and records the same job id; a's write waits, appends,
    // then collides on the job record and rolls back; its retry returns the recorded result.
    const rival = await db.pool.connect();
    try {
      await rival.query('BEGIN');
      await rival.query(`SELECT version FROM ledger_heads WHERE tenant = $1 AND run_id = $2 FOR UPDATE`, [key.tenant, key.runId]);
      const recordedByRival = { runId: key.runId, status: 'open', version: 2, recorded: [], evidenceCount: 1 };
      await rival.query(`INSERT INTO ledger_processed_jobs (tenant, job_id, operation, run_id, result) VALUES ($1, $2, 'ledger.recordEvidence', $3, $4::jsonb)`, [
        key.tenant,
        `${key.runId}-contested`,
        key.runId,
        JSON.stringify(recordedByRival),
      ]);
      const rivalPid = (await rival.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const write = a.commands.recordEvidence({ tenant: TENANT, jobId: `${key.runId}-contested` }, { runId: key.runId, items: [ok('runtime_observation', 'probe', 'reading 2')] });
      for (let waited = 0; ; waited += 10) {
        const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [rivalPid]);
        if (rows[0]!.n > 0) break;
        if (waited > 5_000) throw new Error('the write never waited for the rival’s lock');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await rival.query('COMMIT');
      expect(await write).toEqual(recordedByRival);
    } finally {
      rival.release();
    }
    expect(a.cache.get(key)).toBe(before);
    expect(await readHead(db.pool, key)).toMatchObject({ version: 2 });
    await expectCommitted(a.cache, key, 2);
  });

  it('answers from its cache while the head has not moved, reading only the events after it when it has', async () => {
    const key = nextKey();
    const a = worker();
    let job = 0;
    const caller = () => ({ tenant: TENANT, jobId: `${key.runId}-job-${++job}` });
    await a.commands.open(caller(), { runId: key.runId, goal: 'Collect readings', policy: 'full' });
    await a.commands.recordEvidence(caller(), { runId: key.runId, items: [ok('runtime_observation', 'probe', 'reading 1')] });
    // Rewrite a stored event behind the service's back (nothing but its writers touch these rows):
    // a worker reading the events would see it, a cache hit does not.
    await db.pool.query(`UPDATE ledger_events SET payload = jsonb_set(payload, '{items,0,summary}', '"rewritten"') WHERE tenant = $1 AND run_id = $2 AND seq = 2`, [key.tenant, key.runId]);
    const summaries = async (w: { commands: LedgerCommands }) => (await w.commands.get({ tenant: TENANT }, { runId: key.runId })).evidence.map((e) => e.summary);
    expect(await summaries(a)).toEqual(['reading 1']);
    expect(await summaries(worker())).toEqual(['rewritten']);
    // A write from the cache, then a read after another worker's write: only the events after the cached version are read.
    await a.commands.recordEvidence(caller(), { runId: key.runId, items: [ok('runtime_observation', 'probe', 'reading 2')] });
    await worker().commands.recordEvidence(caller(), { runId: key.runId, items: [ok('runtime_observation', 'probe', 'reading 3')] });
    expect(await summaries(a)).toEqual(['reading 1', 'reading 2', 'reading 3']);
  });
});
