import { BadInputError, EVIDENCE_KINDS, type EvidenceInput } from '@vouch/contracts';
import { StreamWriteConflict, withTransaction } from '@vouch/platform';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger, recordEvidence } from '../src/domain/ledger-commands.js';
import { replayLedger, type LedgerState } from '../src/domain/replay-ledger.js';
import { SNAPSHOT_EVERY, appendEvents, loadLedger, loadSnapshot, readEvents, readHead, readObservationKeys, type LedgerKey } from '../src/ledger-store.js';
import { failed, ok } from './drive-ledger.js';
import { commandsOn, useLedgerDatabase, type LedgerDatabase } from './ledger-test-env.js';

const AT = '2025-03-01T10:00:00.000Z';
const TENANT = 'acme';

describe('the ledger store on Postgres', () => {
  let db: LedgerDatabase;
  let runs = 0;
  const nextKey = (): LedgerKey => ({ tenant: TENANT, runId: `store-${++runs}` });

  beforeAll(async () => {
    db = await useLedgerDatabase('ledger_store');
  });
  afterAll(async () => {
    await db?.cleanup();
  });

  const opened = (key: LedgerKey) => openLedger(undefined, { runId: key.runId, goal: 'Rename the files', policy: 'full', cycleBudget: 3, at: AT });
  const eventCount = async (key: LedgerKey) => (await db.pool.query(`SELECT count(*)::int AS n FROM ledger_events WHERE tenant = $1 AND run_id = $2`, [key.tenant, key.runId])).rows[0].n as number;

  it('appends at the expected version, and refuses a second writer at the same version without changing anything', async () => {
    const key = nextKey();
    const open = opened(key);
    await withTransaction(db.pool, (tx) => appendEvents(tx, key, 0, open.events, open.state));
    const first = recordEvidence(open.state, { runId: key.runId, items: [ok('tool_result', 'shell', 'renamed a.txt to b.txt')], at: AT });
    const rival = recordEvidence(open.state, { runId: key.runId, items: [ok('tool_result', 'shell', 'renamed c.txt to d.txt')], at: AT });
    await withTransaction(db.pool, (tx) => appendEvents(tx, key, 1, first.events, first.state));

    await expect(withTransaction(db.pool, (tx) => appendEvents(tx, key, 1, rival.events, rival.state))).rejects.toBeInstanceOf(StreamWriteConflict);
    expect(await eventCount(key)).toBe(2);
    expect(await loadLedger(db.pool, key)).toStrictEqual(first.state);
    // A second opening of the same run collides as well.
    await expect(withTransaction(db.pool, (tx) => appendEvents(tx, key, 0, open.events, open.state))).rejects.toBeInstanceOf(StreamWriteConflict);
  });

  it('lets exactly one of two concurrent writers at one version commit', async () => {
    const key = nextKey();
    const open = opened(key);
    await withTransaction(db.pool, (tx) => appendEvents(tx, key, 0, open.events, open.state));
    const writers = ['a', 'b'].map((name) => recordEvidence(open.state, { runId: key.runId, items: [ok('tool_result', 'shell', `writer ${name}`)], at: AT }));
    const results = await Promise.allSettled(writers.map((w) => withTransaction(db.pool, (tx) => appendEvents(tx, key, 1, w.events, w.state))));
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(StreamWriteConflict);
    const stored = (await loadLedger(db.pool, key))!;
    expect(stored.version).toBe(2);
    expect(replayLedger(await readEvents(db.pool, key))).toStrictEqual(stored);
  });

  it('keeps concurrent evidence batches through the commands: each lands once, in its own seq', async () => {
    const key = nextKey();
    const { commands } = commandsOn(db.pool);
    await commands.open({ tenant: TENANT, jobId: `open-${key.runId}` }, { runId: key.runId, goal: 'Collect readings', policy: 'full' });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        commands.recordEvidence({ tenant: TENANT, jobId: `ev-${key.runId}-${i}` }, { runId: key.runId, items: [ok('runtime_observation', 'probe', `reading r-${i}: ${i} mV`)] }),
      ),
    );
    expect(answers.flatMap((a) => a.recorded.map((r) => r.seq)).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const stored = (await loadLedger(db.pool, key))!;
    expect(stored.evidence.map((e) => e.summary).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `reading r-${i}: ${i} mV`).sort());
    expect(replayLedger(await readEvents(db.pool, key))).toStrictEqual(stored);
  });

  it('settles two concurrent openings of one run: one opens it, the other finds it opened', async () => {
    const key = nextKey();
    const { commands } = commandsOn(db.pool);
    const input = { runId: key.runId, goal: 'Collect readings', policy: 'full' as const };
    const answers = await Promise.all(['a', 'b'].map((n) => commands.open({ tenant: TENANT, jobId: `open-${key.runId}-${n}` }, input)));
    expect(answers.map((a) => a.alreadyOpened).sort()).toEqual([false, true]);
    expect(await eventCount(key)).toBe(1);
  });

  it('returns the recorded result to a re-run of a recordEvidence job and records nothing twice', async () => {
    const key = nextKey();
    const { commands } = commandsOn(db.pool);
    const caller = { tenant: TENANT, jobId: `retry-${key.runId}` };
    await commands.open({ tenant: TENANT, jobId: `open-${key.runId}` }, { runId: key.runId, goal: 'Collect readings', policy: 'full' });
    const input = { runId: key.runId, items: [ok('runtime_observation', 'probe', 'reading r-1: 5 mV'), failed('tool_result', 'probe', 'reading r-2 timed out')] };
    const first = await commands.recordEvidence(caller, input);
    const again = await commands.recordEvidence(caller, input);
    expect(again).toStrictEqual(first);
    expect(first).toMatchObject({ version: 2, evidenceCount: 2, recorded: [{ id: 'ev-1', seq: 1 }, { id: 'ev-2', seq: 2 }] });
    expect(await eventCount(key)).toBe(2);
  });

  it('refuses text with a NUL character as bad input naming the field, and writes nothing', async () => {
    const key = nextKey();
    const { commands } = commandsOn(db.pool);
    await commands.open({ tenant: TENANT, jobId: `open-${key.runId}` }, { runId: key.runId, goal: 'Collect readings', policy: 'full' });
    const attempt = commands.recordEvidence({ tenant: TENANT, jobId: `nul-${key.runId}` }, { runId: key.runId, items: [ok('tool_result', 'shell', 'ok'), ok('tool_result', 'shell', 'bad\u0000byte')] });
    await expect(attempt).rejects.toBeInstanceOf(BadInputError);
    await expect(attempt).rejects.toMatchObject({ fields: [{ path: 'items.1.summary', message: 'must not contain NUL characters (\\u0000)' }] });
    expect(await eventCount(key)).toBe(1);
  });

  // The domain's property test folds events in memory; this one stores them.
  it('stores a snapshot equal to the replay of its stored events, for generated runs (property)', async () => {
    const evidence: fc.Arbitrary<EvidenceInput> = fc.record({
      kind: fc.constantFrom(...EVIDENCE_KINDS),
      toolName: fc.constantFrom('shell', 'curl', 'editor'),
      success: fc.boolean(),
      summary: fc.constantFrom('wrote main.c', 'checked https://site.example.com: 200', 'sent report.csv to #17', 'failed on v2.1.0 build', 'measured 115200 baud'),
    });
    const step = fc.oneof(
      fc.record({ kind: fc.constant('record' as const), items: fc.array(evidence, { minLength: 1, maxLength: 3 }) }),
      fc.record({ kind: fc.constant('propose' as const), summary: fc.constantFrom('Wrote main.c and sent report.csv.', 'Checked https://site.example.com.', 'Built v2.1.0.') }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 3 }), async (steps, cycleBudget) => {
        const key = nextKey();
        const { commands } = commandsOn(db.pool, { cycleBudget });
        let job = 0;
        const caller = () => ({ tenant: TENANT, jobId: `${key.runId}-job-${++job}` });
        await commands.open(caller(), { runId: key.runId, goal: 'Build the firmware and publish the report', policy: 'full' });
        for (const s of steps) {
          try {
            if (s.kind === 'record') await commands.recordEvidence(caller(), { runId: key.runId, items: s.items });
            else await commands.proposeCompletion(caller(), { runId: key.runId, summary: s.summary, openItems: [] });
          } catch (error) {
            expect((error as { code?: string }).code).toBe('CONFLICT'); // a closed ledger
          }
        }
        const events = await readEvents(db.pool, key);
        const stored = (await loadLedger(db.pool, key)) as LedgerState;
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
        expect(stored.version).toBe(events.length);
        expect(replayLedger(events)).toStrictEqual(stored);
        expect(await readHead(db.pool, key)).toMatchObject({ version: events.length, status: stored.status });
        // Every evidence item has its stored features, kept apart from the state.
        expect((await readObservationKeys(db.pool, key, stored.evidence.length)).map((r) => r.seq)).toEqual(stored.evidence.map((e) => e.seq));
        // A snapshot, where one was written (a closed ledger has one), is the replay of the events up to its version.
        const snapshot = await loadSnapshot(db.pool, key);
        if (snapshot) expect(replayLedger(events.slice(0, snapshot.version))).toStrictEqual(snapshot);
        if (stored.status === 'approved' || stored.status === 'incomplete_verification') expect(snapshot?.version).toBe(events.length);
      }),
      { numRuns: 12 },
    );
  });

  it(`writes the snapshot every ${SNAPSHOT_EVERY} events and when the ledger closes; a load is that snapshot plus the events after it`, async () => {
    const key = nextKey();
    const { commands } = commandsOn(db.pool, { cycleBudget: 1 });
    let job = 0;
    const caller = () => ({ tenant: TENANT, jobId: `${key.runId}-job-${++job}` });
    await commands.open(caller(), { runId: key.runId, goal: 'Collect readings', policy: 'full' });
    expect(await readHead(db.pool, key)).toEqual({ version: 1, status: 'open', snapshotVersion: 0 });
    expect(await loadSnapshot(db.pool, key)).toBeUndefined();

    // One event per write: the one that makes version SNAPSHOT_EVERY writes the snapshot, the next ones do not.
    const extra = 7;
    for (let i = 1; i < SNAPSHOT_EVERY + extra; i++) {
      await commands.recordEvidence(caller(), { runId: key.runId, items: [ok('runtime_observation', 'probe', `reading r-${i}: ${i} mV`)] });
    }
    const events = await readEvents(db.pool, key);
    expect(events).toHaveLength(SNAPSHOT_EVERY + extra);
    expect(await readHead(db.pool, key)).toEqual({ version: SNAPSHOT_EVERY + extra, status: 'open', snapshotVersion: SNAPSHOT_EVERY });
    const snapshot = (await loadSnapshot(db.pool, key))!;
    expect(snapshot.version).toBe(SNAPSHOT_EVERY);
    expect(snapshot).toStrictEqual(replayLedger(events.slice(0, SNAPSHOT_EVERY)));
    const loaded = (await loadLedger(db.pool, key))!;
    expect(loaded).toStrictEqual(replayLedger(events));
    expect(loaded.evidence).toHaveLength(SNAPSHOT_EVERY + extra - 1);
    // A worker with an empty cache reads the same ledger as the one that wrote it.
    expect(await commandsOn(db.pool).commands.get({ tenant: TENANT }, { runId: key.runId })).toStrictEqual(await commands.get({ tenant: TENANT }, { runId: key.runId }));

    // The review that closes the ledger (budget 1) writes its final snapshot.
    const outcome = await commands.proposeCompletion(caller(), { runId: key.runId, summary: 'Collected reading r-3: 3 mV.', openItems: [] });
    const closedAt = SNAPSHOT_EVERY + extra + 3;
    expect(await readHead(db.pool, key)).toEqual({ version: closedAt, status: outcome.status, snapshotVersion: closedAt });
    const all = await readEvents(db.pool, key);
    expect(await loadSnapshot(db.pool, key)).toStrictEqual(replayLedger(all));
    expect(await loadLedger(db.pool, key)).toStrictEqual(replayLedger(all));
  });
});
