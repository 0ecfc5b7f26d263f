import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { createPool, runMigrations, type Pool } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, eventually, spawnTsProcess, testActor, useTestPrefix, useTestSchema, type TestPrefix, type TestSchema, type TsProcess } from '@vouch/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBoardCommands, type BoardCommands } from '../src/board-handlers.js';
import { MIGRATIONS_DIR } from '../src/board-dispatcher-service.js';
import { readLease } from '../src/dispatcher-lease.js';
import { createLlmVerifier } from '../src/llm-verifier.js';
import { workQueueName } from '../src/work-queues.js';

const SERVICE = fileURLToPath(new URL('./fixtures/board-dispatcher-process.ts', import.meta.url));
/** Long enough that a loaded 2-core machine renews in time, short enough that failovers fit in a test. */
const TTL_MS = 2_000;
const TENANT = 'acme';
/**
 * Kill and pause rounds of the randomized run. Five by default: each round
 * waits on real processes (a pause is up to two TTLs), and most of the run's
 * time went on the twenty it had. `npm run test:chaos` runs the full twenty
 * (BOARD_CHAOS_ROUNDS=20); BOARD_CHAOS_SEED replays a run.
 */
const CHAOS_ROUNDS = Number(process.env.BOARD_CHAOS_ROUNDS ?? 5);
if (!Number.isInteger(CHAOS_ROUNDS) || CHAOS_ROUNDS < 1) throw new Error(`BOARD_CHAOS_ROUNDS must be a whole number of rounds, at least 1 (got ${process.env.BOARD_CHAOS_ROUNDS})`);

/**
 * Real board-dispatcher processes on one schema and prefix: they race for
 * the lease, get SIGKILLed and SIGSTOPped, and the board's event stream is
 * checked for what matters: every card dispatched exactly once.
 */
// Real processes on a shared 2-core machine: each test carries its own generous timeout; none waits on a fixed sleep but the chaos pauses.
describe('board-dispatcher processes sharing one lease', () => {
  let prefix: TestPrefix;
  let schema: TestSchema;
  let pool: Pool;
  let commands: BoardCommands;
  let env: Record<string, string>;
  const children: TsProcess[] = [];
  let jobSeq = 0;
  let boardSeq = 0;

  beforeAll(async () => {
    prefix = await useTestPrefix('board_procs');
    schema = await useTestSchema('board_procs');
    await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: MIGRATIONS_DIR });
    pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema, max: 4 });
    commands = createBoardCommands({ pool, verifier: createLlmVerifier({ host: undefined, model: 'm', timeoutMs: 1000 }), claimPollMs: 100, leaseTtlMs: TTL_MS });
    env = {
      REDIS_URL: TEST_REDIS_URL,
      DATABASE_URL: TEST_DATABASE_URL,
      BULLMQ_PREFIX: prefix.prefix,
      DB_SCHEMA: schema.schema,
      HTTP_PORT: '0',
      WORKER_CONCURRENCY: '4',
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '1000',
      BOARD_LEASE_TTL_MS: String(TTL_MS),
      BOARD_DISPATCH_SWEEP_MS: '250',
      BOARD_SWEEP_MS: '500',
      BOARD_STRANDED_AFTER_MS: '600000',
    };
  });

  const kill = async (c: TsProcess, signal: NodeJS.Signals = 'SIGKILL') => {
    if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
    c.proc.kill('SIGCONT');
    c.proc.kill(signal);
    await c.exited;
  };

  // A failed test must not leave its dispatchers running into the next one.
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => kill(c)));
  });

  afterAll(async () => {
    await Promise.all(children.map((c) => kill(c)));
    await pool?.end();
    await prefix?.cleanup();
    await schema?.cleanup();
  });

  const spawn = (extra: Record<string, string> = {}) => {
    const child = spawnTsProcess(SERVICE, { ...env, ...extra });
    children.push(child);
    return child;
  };

  const caller = () => ({ tenant: TENANT, jobId: `test-${process.pid}-${++jobSeq}`, actor: testActor('planner') });

  /** A fresh board whose cards are all ready at once, each for its own assignee. */
  const boardWith = async (cards: number) => {
    const boardId = `race-${++boardSeq}`;
    await commands.create(caller(), { boardId, title: 'race', goal: '', scope: { kind: 'run', ref: boardId }, owner: 'planner', policy: { allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 60 } });
    if (cards > 0) await addCards(boardId, cards);
    return boardId;
  };
  const addCards = async (boardId: string, n: number) => {
    const state = await commands.load({ tenant: TENANT, boardId });
    const from = state?.order.length ?? 0;
    await commands.addCards(caller(), {
      boardId,
      by: 'planner',
      cards: Array.from({ length: n }, (_, i) => ({ title: `card ${from + i + 1}`, description: '', lane: 'worker' as const, assignee: `agent-${from + i + 1}`, priority: 'normal' as const, dependsOn: [], evidenceRequirements: [] })),
    });
  };

  /** card id → the epochs of its dispatches, from the event stream. */
  const dispatches = async (boardId: string) => {
    const { rows } = await pool.query<{ card_id: string; epoch: string; attempt: number }>(
      `SELECT payload->>'cardId' AS card_id, payload->>'epoch' AS epoch, (payload->>'attempt')::int AS attempt FROM board_events WHERE tenant = $1 AND board_id = $2 AND type = 'card_dispatched' ORDER BY seq`,
      [TENANT, boardId],
    );
    const byCard = new Map<string, number[]>();
    for (const r of rows) byCard.set(r.card_id, [...(byCard.get(r.card_id) ?? []), Number(r.epoch)]);
    return byCard;
  };
  const allDispatched = async (boardId: string, n: number) => {
    const d = await dispatches(boardId);
    return d.size === n ? d : undefined;
  };
  const leaderLine = (c: TsProcess) => c.lines.find((l) => l.startsWith('leader '));

  it('two dispatchers started together: exactly one takes the lease, and it alone dispatches', async () => {
    // A long lease here: on a loaded machine a short one could change hands mid-test, and this test is about the start.
    const a = spawn({ BOARD_LEASE_TTL_MS: '8000' });
    const b = spawn({ BOARD_LEASE_TTL_MS: '8000' });
    await Promise.all([a.waitFor('ready', 60_000), b.waitFor('ready', 60_000)]);
    const boardId = await boardWith(20);
    const byCard = await eventually('every card dispatched', () => allDispatched(boardId, 20), 30_000);
    expect([...byCard.values()].every((epochs) => epochs.length === 1)).toBe(true);
    const epochs = new Set([...byCard.values()].flat());
    expect(epochs.size).toBe(1);
    const leaders = [a, b].filter(leaderLine);
    expect(leaders).toHaveLength(1);
    expect(leaderLine(leaders[0]!)).toBe(`leader ${[...epochs][0]}`);
    const lease = await readLease(pool);
    expect(lease.epoch).toBe([...epochs][0]);
  }, 120_000);

  it('the leader SIGKILLed: another takes over once its lease expires, within a TTL, and nothing is dispatched twice', async () => {
    const a = spawn();
    await a.waitFor('leader', 60_000);
    const b = spawn();
    await b.waitFor('ready', 60_000);
    const first = await readLease(pool);
    const boardId = await boardWith(5);
    await eventually('the first cards dispatched', () => allDispatched(boardId, 5), 30_000);

    const { rows } = await pool.query<{ now: Date }>('SELECT clock_timestamp() AS now');
    a.proc.kill('SIGKILL');
    await a.exited;
    const killedAt = rows[0]!.now.getTime();
    const dead = await readLease(pool);
    await addCards(boardId, 5);

    const line = await b.waitFor(`leader ${first.epoch + 1}`, 30_000);
    expect(line).toBe(`leader ${first.epoch + 1}`);
    const byCard = await eventually('every card dispatched', () => allDispatched(boardId, 10), 30_000);
    expect([...byCard.values()].map((e) => e.length)).toEqual(Array(10).fill(1));
    expect(new Set([...byCard.values()].flat())).toEqual(new Set([first.epoch, first.epoch + 1]));

    const taken = await readLease(pool);
    // Never before the dead leader's lease expired (no overlap). The lease had at most a TTL left at the kill
    // (renewals every TTL/3), and the follower wakes at its expiry: within a TTL, plus scheduling on a loaded
    // machine, which the bound leaves room for (npm run bench:board measures the figure).
    expect(taken.acquiredAt!.getTime()).toBeGreaterThanOrEqual(dead.expiresAt.getTime());
    const failoverMs = taken.acquiredAt!.getTime() - killedAt;
    console.log(`failover after SIGKILL: ${failoverMs} ms (lease TTL ${TTL_MS} ms)`);
    expect(failoverMs).toBeLessThanOrEqual(2 * TTL_MS);
  }, 120_000);

  it('a leader paused past its TTL wakes up and writes: the fence refuses it, and the card is dispatched once, by the new leader', async () => {
    const a = spawn({ PAUSE_BEFORE_FENCED_WRITE: 'once' });
    const aLeads = await a.waitFor('leader', 60_000);
    const staleEpoch = Number(aLeads.split(' ')[1]);
    const b = spawn();
    await b.waitFor('ready', 60_000);

    const boardId = await boardWith(1);
    await a.waitFor(`pausing ${staleEpoch}`, 30_000);
    // A is stopped with its decision to write made; B takes over once A's lease runs out, and dispatches the card.
    await b.waitFor(`leader ${staleEpoch + 1}`, 30_000);
    const byCard = await eventually('the card dispatched by the new leader', () => allDispatched(boardId, 1), 30_000);
    expect(byCard.get('c-1')).toEqual([staleEpoch + 1]);

    a.proc.kill('SIGCONT');
    await a.waitFor(`fence-rejected ${staleEpoch}`, 30_000);
    await a.waitFor(`lost ${staleEpoch}`, 10_000);
    expect((await dispatches(boardId)).get('c-1')).toEqual([staleEpoch + 1]);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM board_events WHERE tenant = $1 AND board_id = $2`, [TENANT, boardId]);
    // board_created, card_added, card_dispatched: nothing from the stale leader.
    expect(rows[0].n).toBe(3);
  }, 120_000);

  it(`a randomized run of ${CHAOS_ROUNDS} kill and pause rounds over three processes dispatches every card exactly once, each with its job`, async () => {
    const seed = Number(process.env.BOARD_CHAOS_SEED ?? Date.now() % 100_000);
    console.log(`chaos seed ${seed}, ${CHAOS_ROUNDS} rounds (rerun with BOARD_CHAOS_SEED=${seed} BOARD_CHAOS_ROUNDS=${CHAOS_ROUNDS})`);
    let s = seed;
    const random = () => {
      // mulberry32: a seeded, reproducible sequence.
      s = (s + 0x6d2b79f5) | 0;
      let t = Math.imul(s ^ (s >>> 15), 1 | s);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    let live = [spawn(), spawn(), spawn()];
    await Promise.all(live.map((c) => c.waitFor('ready', 90_000)));
    const boardId = await boardWith(0);
    let cards = 0;
    const rounds: string[] = [];
    for (let round = 1; round <= CHAOS_ROUNDS; round++) {
      const n = 1 + Math.floor(random() * 4);
      await addCards(boardId, n);
      cards += n;
      const lease = await readLease(pool);
      const leader = live.find((c) => c.lines.filter((l) => l.startsWith('leader ')).at(-1) === `leader ${lease.epoch}`);
      // Half the rounds hit the leader (when there is one): failovers are what the fence is for.
      const victim = leader && random() < 0.5 ? leader : live[Math.floor(random() * live.length)]!;
      const wasLeader = victim === leader;
      if (random() < 0.5) {
        rounds.push(`${round}: kill${wasLeader ? ' leader' : ''}`);
        await kill(victim);
        live = live.filter((c) => c !== victim);
        live.push(spawn());
      } else {
        // Pause for 0.25 to 2 TTLs: sometimes the lease survives it, sometimes it is taken over meanwhile.
        const pauseMs = Math.round(TTL_MS * (0.25 + random() * 1.75));
        rounds.push(`${round}: pause${wasLeader ? ' leader' : ''} ${pauseMs} ms`);
        victim.proc.kill('SIGSTOP');
        await new Promise((r) => setTimeout(r, pauseMs));
        victim.proc.kill('SIGCONT');
      }
    }
    console.log(`rounds: ${rounds.join('; ')}`);
    const byCard = await eventually('every card dispatched', () => allDispatched(boardId, cards), 60_000);
    const twice = [...byCard].filter(([, epochs]) => epochs.length !== 1);
    expect(twice).toEqual([]);

    // Each dispatched attempt has exactly its one job on its assignee's queue.
    await eventually(
      'every dispatch relayed',
      async () => {
        const { rows } = await pool.query(`SELECT count(*)::int AS n FROM board_dispatches WHERE tenant = $1 AND board_id = $2 AND state = 'queued'`, [TENANT, boardId]);
        return rows[0].n === cards ? true : undefined;
      },
      30_000,
    );
    const connection = { url: TEST_REDIS_URL };
    for (let k = 1; k <= cards; k++) {
      const queue = new Queue(workQueueName(TENANT, `agent-${k}`), { connection, prefix: prefix.prefix });
      try {
        const jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed']);
        // Earlier tests' boards used the same agent names: count this board's jobs.
        expect(jobs.map((j) => j.id).filter((id) => id?.startsWith(`${boardId}.`))).toEqual([`${boardId}.c-${k}.1`]);
      } finally {
        await queue.close();
      }
    }
  }, Math.max(240_000, CHAOS_ROUNDS * 12_000));
});
