/**
 * The board-dispatcher's figures, each beside a raw Postgres baseline
 * measured in the same run:
 *
 * 1. Event appends per second through the board commands (lock the head,
 *    decide, append the event, update the projection, record the job; one
 *    transaction each), by 16 concurrent writers:
 *      - all on one board (contended: they queue on its head row);
 *      - spread over 1,000 boards.
 *    Baseline: 16 writers doing single-row INSERTs of the same event payload
 *    into a plain table (autocommit).
 * 2. Replay of a 100,000-event board (1,000 cards, each dispatched, claimed,
 *    failed and reprioritised 25 times): from a snapshot 199 events behind
 *    the head (the most a read applies once the writes after a snapshot
 *    falls due have stored it) and from the whole stream.
 *    Baseline: SELECT of the same 100,000 payload rows, and of the snapshot row.
 * 3. Dispatch latency, ready → dispatched (the events' own timestamps), with
 *    the real dispatcher (lease, notifications, fenced writes):
 *      - burst: 1,000 cards made ready at once (5 batches of 200);
 *      - trickle: 200 cards made ready one at a time while 1,000 ready cards
 *        wait for an assignee at capacity.
 *    Baseline: latency of a single-row INSERT (autocommit).
 * 4. Failover: real board-dispatcher processes; the leader is SIGKILLed and
 *    the time from the kill to the next lease acquisition is measured
 *    (Postgres clock), against the lease TTL.
 *
 *   npm run bench:board
 *   BENCH_SECONDS=5 BENCH_FAILOVERS=3 BENCH_TTL_MS=2000 npm run bench:board
 *   BENCH_PARTS=replay,dispatch npm run bench:board
 *
 * Needs the local Postgres and Redis (DATABASE_URL, REDIS_URL); works in a
 * schema and a BullMQ prefix of its own, dropped at the end.
 */
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Registry } from 'prom-client';
import { createLogger, createPool, runMigrations, type Pool } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL, spawnTsProcess, useTestPrefix, useTestSchema, type TsProcess } from '@vouch/testing';
import { createConsumerRedis, closeRedis } from '@vouch/platform';
import { createBoardCommands, type BoardCommands } from '../services/board-dispatcher/src/board-handlers.js';
import { BoardNotifications } from '../services/board-dispatcher/src/board-notifications.js';
import { MIGRATIONS_DIR } from '../services/board-dispatcher/src/board-dispatcher-service.js';
import { SNAPSHOT_EVERY, loadBoard, readEvents, saveSnapshot } from '../services/board-dispatcher/src/board-store.js';
import { readLease } from '../services/board-dispatcher/src/dispatcher-lease.js';
import { Dispatcher } from '../services/board-dispatcher/src/dispatcher.js';
import { BoardBatch, applyEvents, replayBoard } from '../services/board-dispatcher/src/domain/replay-board.js';
import type { BoardEvent } from '../services/board-dispatcher/src/domain/board-events.js';
import { createLlmVerifier } from '../services/board-dispatcher/src/llm-verifier.js';
import { createBoardMetrics } from '../services/board-dispatcher/src/metrics.js';
import { WorkQueues } from '../services/board-dispatcher/src/work-queues.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const FAILOVERS = Number(process.env.BENCH_FAILOVERS ?? 3);
const TTL_MS = Number(process.env.BENCH_TTL_MS ?? 2000);
const WRITERS = 16;
/** Which parts to run (all by default): appends, replay, dispatch, failover. */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'appends,replay,dispatch,failover').split(','));
const TENANT = 'bench';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const fmt = (n: number, digits = 1) => n.toFixed(digits);
let jobSeq = 0;
/** A command as the gateway sends it: the acting agent is the key's (actors are keys). */
const caller = (agent = 'bench') => ({ tenant: TENANT, jobId: `bench-${++jobSeq}`, actor: { agent, keyId: `bench-${agent}` } });
const policy = { allowSelfVerify: false, maxInFlightPerAssignee: 1, maxFailures: 3, claimTtlSeconds: 60 };

async function createBoard(commands: BoardCommands, boardId: string, cards: number) {
  await commands.create(caller(), { boardId, title: boardId, goal: '', scope: { kind: 'project', ref: boardId }, owner: 'bench', policy, visibility: 'admin' });
  for (let from = 0; from < cards; from += 200) {
    const n = Math.min(200, cards - from);
    await commands.addCards(caller(), {
      boardId,
      by: 'bench',
      cards: Array.from({ length: n }, (_, i) => ({ title: `card ${from + i + 1}`, description: '', lane: 'worker' as const, priority: 'normal' as const, dependsOn: [], evidenceRequirements: [] })),
    });
  }
}

/** Runs `writers` loops of `op` for `seconds`; returns operations per second. */
async function throughput(writers: number, seconds: number, op: (writer: number) => Promise<void>): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      while (performance.now() < until) {
        await op(w);
        done += 1;
      }
    }),
  );
  return done / seconds;
}

async function appends(pool: Pool, commands: BoardCommands) {
  console.log(`\n1. event appends per second, ${WRITERS} writers, ${SECONDS} s each`);
  await pool.query(`CREATE TABLE raw_events (id bigserial PRIMARY KEY, board_id text NOT NULL, payload jsonb NOT NULL)`);
  const payload = JSON.stringify({ type: 'card_updated', seq: 1, at: new Date().toISOString(), cardId: 'c-1', changes: { description: 'x'.repeat(40) }, by: 'writer-1', reason: null });
  const raw = await throughput(WRITERS, SECONDS, async (w) => {
    await pool.query(`INSERT INTO raw_events (board_id, payload) VALUES ($1, $2::jsonb)`, [`b-${w}`, payload]);
  });

  await createBoard(commands, 'contended', 16);
  const one = await throughput(WRITERS, SECONDS, async (w) => {
    await commands.updateCard(caller(`writer-${w}`), { boardId: 'contended', cardId: `c-${w + 1}`, by: `writer-${w}`, description: `rev ${jobSeq}` });
  });

  for (let b = 0; b < 1000; b++) await commands.create(caller(), { boardId: `spread-${b}`, title: 'spread', goal: '', scope: { kind: 'project', ref: 'spread' }, owner: 'bench', policy, visibility: 'admin' });
  await Promise.all(
    Array.from({ length: 10 }, async (_, k) => {
      for (let b = k; b < 1000; b += 10) {
        await commands.addCards(caller(), { boardId: `spread-${b}`, by: 'bench', cards: [{ title: 'one', description: '', lane: 'worker', priority: 'normal', dependsOn: [], evidenceRequirements: [] }] });
      }
    }),
  );
  const many = await throughput(WRITERS, SECONDS, async () => {
    const b = Math.floor(Math.random() * 1000);
    await commands.updateCard(caller('writer'), { boardId: `spread-${b}`, cardId: 'c-1', by: 'writer', description: `rev ${jobSeq}` });
  });
  console.log(`   raw INSERT (baseline)            ${fmt(raw, 0).padStart(7)} /s`);
  console.log(`   one board, contended             ${fmt(one, 0).padStart(7)} /s   ${fmt(one / raw, 2)}× raw`);
  console.log(`   1,000 boards                     ${fmt(many, 0).padStart(7)} /s   ${fmt(many / raw, 2)}× raw`);
  return { raw, one, many };
}

/** A 100,000-event board, generated as valid events and written in bulk. */
function bigBoard(): BoardEvent[] {
  const at = (k: number) => new Date(Date.parse('2025-03-01T00:00:00.000Z') + k).toISOString();
  let k = 0;
  const batch = new BoardBatch(undefined);
  batch.emit({ type: 'board_created', at: at(k++), boardId: 'replay', title: 'replay', goal: '', scope: { kind: 'project', ref: 'replay' }, owner: 'bench', policy, visibility: 'admin' });
  for (let c = 1; c <= 1000; c++) {
    batch.emit({
      type: 'card_added',
      at: at(k++),
      by: 'bench',
      reason: null,
      card: { id: `c-${c}`, key: null, title: `card ${c}`, description: 'a card of the replay benchmark', lane: 'worker', assignee: `agent-${c % 50}`, priority: 'normal', dependsOn: [], evidenceRequirements: [{ id: 'r1', text: 'the output' }], deadline: null, status: 'ready' },
    });
  }
  const priorities = ['urgent', 'high', 'normal', 'low'] as const;
  for (let round = 1; batch.events.length < 100_000; round++) {
    for (let c = 1; c <= 1000 && batch.events.length < 100_000; c++) {
      const cardId = `c-${c}`;
      const left = 100_000 - batch.events.length;
      if (left >= 4) {
        batch.emit({ type: 'card_dispatched', at: at(k++), cardId, from: 'ready', attempt: round, assignee: `agent-${c % 50}`, epoch: 1 });
        batch.emit({ type: 'card_claimed', at: at(k++), cardId, attempt: round, claimToken: `ct_${c}_${round}`, by: `agent-${c % 50}` });
        batch.emit({ type: 'card_failed', at: at(k++), cardId, attempt: round, trigger: 'worker_failed', to: 'ready', by: `agent-${c % 50}`, summary: 'timed out' });
      }
      batch.emit({ type: 'card_updated', at: at(k++), cardId, changes: { priority: priorities[(c + round) % 4]! }, by: 'bench', reason: null });
    }
  }
  return batch.events;
}

async function replay(pool: Pool) {
  console.log('\n2. replay of 100,000 events (1,000 cards)');
  const events = bigBoard();
  const key = { tenant: TENANT, boardId: 'replay' };
  for (let i = 0; i < events.length; i += 2000) {
    const chunk = events.slice(i, i + 2000);
    const params: unknown[] = [TENANT, 'replay'];
    const rows = chunk.map((e) => {
      params.push(e.seq, e.type, JSON.stringify(e));
      const n = params.length;
      return `($1, $2, $${n - 2}, $${n - 1}, $${n}::jsonb)`;
    });
    await pool.query(`INSERT INTO board_events (tenant, board_id, seq, type, payload) VALUES ${rows.join(', ')}`, params);
  }
  const snapshotAt = events.length - (SNAPSHOT_EVERY - 1);
  await pool.query(`INSERT INTO board_heads (tenant, board_id, version) VALUES ($1, $2, $3)`, [TENANT, 'replay', events.length]);
  await saveSnapshot(pool, key, replayBoard(events.slice(0, snapshotAt))!);
  await pool.query(`CREATE TABLE raw_replay AS SELECT payload FROM board_events WHERE tenant = $1 AND board_id = 'replay'`, [TENANT]);

  const reps = 5;
  const time = async (fn: () => Promise<unknown> | unknown) => {
    await fn();
    const xs: number[] = [];
    for (let r = 0; r < reps; r++) {
      const t = performance.now();
      await fn();
      xs.push(performance.now() - t);
    }
    return median(xs);
  };
  const fromSnapshot = await time(() => loadBoard(pool, key));
  const full = await time(async () => applyEvents(undefined, await readEvents(pool, key, 0)));
  const foldOnly = await time(() => replayBoard(events));
  const rawRows = await time(() => pool.query(`SELECT payload FROM raw_replay`));
  const rawSnapshot = await time(() => pool.query(`SELECT state FROM board_snapshots WHERE tenant = $1 AND board_id = 'replay'`, [TENANT]));
  const state = await loadBoard(pool, key);
  // (jsonb reorders keys, so compare values, not JSON text.)
  if (!isDeepStrictEqual(state, replayBoard(events))) throw new Error('replay from the snapshot differs from the full replay');
  const snapBytes = (await pool.query<{ n: number }>(`SELECT octet_length(state::text) AS n FROM board_snapshots WHERE tenant = $1 AND board_id = 'replay'`, [TENANT])).rows[0]!.n;
  console.log(`   from snapshot (+${SNAPSHOT_EVERY - 1} events)       ${fmt(fromSnapshot).padStart(7)} ms   (snapshot ${fmt(snapBytes / 1024, 0)} KiB; raw SELECT of it ${fmt(rawSnapshot)} ms)`);
  console.log(`   full stream (read, parse, fold)  ${fmt(full).padStart(7)} ms   (raw SELECT of the rows ${fmt(rawRows)} ms; the fold alone ${fmt(foldOnly)} ms)`);
  return { fromSnapshot, full, rawRows, rawSnapshot, foldOnly };
}

async function dispatchLatency(pool: Pool, commands: BoardCommands, schema: string, prefix: string) {
  console.log('\n3. dispatch latency, ready → dispatched, with the real dispatcher');
  const logger = createLogger({ service: 'bench', level: 'silent' });
  const redis = createConsumerRedis(TEST_REDIS_URL, 'bench:work');
  const queues = new WorkQueues({ connection: redis, prefix });
  const notifications = new BoardNotifications({ url: TEST_DATABASE_URL, schema, logger });
  await notifications.start();
  const metrics = createBoardMetrics(new Registry(), { cards: async () => ({}), diagnostics: async () => ({}), leaderlessSeconds: async () => 0 });
  const dispatcher = new Dispatcher({ pool, queues, logger, metrics, notifications, leaseTtlMs: 10_000, dispatchSweepMs: 1_000, sweepMs: 60_000, consumerTtlMs: 60_000, strandedAfterMs: 3_600_000, diagnosticQuietMs: 3_600_000 });
  dispatcher.start();
  while (!dispatcher.isLeader) await new Promise((r) => setTimeout(r, 20));

  const latencies = async (boardId: string, cardIds?: Set<string>) => {
    const events = await readEvents(pool, { tenant: TENANT, boardId });
    const ready = new Map<string, number>();
    const out: number[] = [];
    for (const e of events) {
      if (e.type === 'card_added' && e.card.status === 'ready') ready.set(e.card.id, Date.parse(e.at));
      if (e.type === 'card_dispatched' && ready.has(e.cardId) && (!cardIds || cardIds.has(e.cardId))) out.push(Date.parse(e.at) - ready.get(e.cardId)!);
    }
    return out;
  };
  const waitDispatched = async (boardId: string, n: number) => {
    for (;;) {
      const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM board_events WHERE tenant = $1 AND board_id = $2 AND type = 'card_dispatched'`, [TENANT, boardId]);
      if (rows[0]!.n >= n) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  // Burst: 1,000 ready cards, each for its own assignee.
  await commands.create(caller(), { boardId: 'burst', title: 'burst', goal: '', scope: { kind: 'project', ref: 'burst' }, owner: 'bench', policy, visibility: 'admin' });
  for (let from = 0; from < 1000; from += 200) {
    await commands.addCards(caller(), {
      boardId: 'burst',
      by: 'bench',
      cards: Array.from({ length: 200 }, (_, i) => ({ title: `b${from + i}`, description: '', lane: 'worker' as const, assignee: `agent-${from + i}`, priority: 'normal' as const, dependsOn: [], evidenceRequirements: [] })),
    });
  }
  await waitDispatched('burst', 1000);
  const burst = await latencies('burst');

  // Trickle: a backlog of 1,000 ready cards for a busy assignee, and new cards one at a time.
  // Two boards of 501 cards for one assignee with room for one each: 1,000 cards stay ready.
  for (const boardId of ['backlog-1', 'backlog-2']) {
    await commands.create(caller(), { boardId, title: boardId, goal: '', scope: { kind: 'project', ref: boardId }, owner: 'bench', policy, visibility: 'admin' });
    for (let from = 0; from < 501; from += 167) {
      await commands.addCards(caller(), { boardId, by: 'bench', cards: Array.from({ length: 167 }, (_, i) => ({ title: `w${from + i}`, description: '', lane: 'worker' as const, assignee: 'busy', priority: 'normal' as const, dependsOn: [], evidenceRequirements: [] })) });
    }
    await waitDispatched(boardId, 1);
  }
  await commands.create(caller(), { boardId: 'trickle', title: 'trickle', goal: '', scope: { kind: 'project', ref: 'trickle' }, owner: 'bench', policy, visibility: 'admin' });
  for (let i = 0; i < 200; i++) {
    await commands.addCards(caller(), { boardId: 'trickle', by: 'bench', cards: [{ title: `t${i}`, description: '', lane: 'worker', assignee: `solo-${i}`, priority: 'normal', dependsOn: [], evidenceRequirements: [] }] });
    await new Promise((r) => setTimeout(r, 10));
  }
  await waitDispatched('trickle', 200);
  const trickle = await latencies('trickle');
  await dispatcher.stop();
  await notifications.stop();
  await queues.close();
  await closeRedis(redis);

  await pool.query(`CREATE TABLE IF NOT EXISTS raw_events (id bigserial PRIMARY KEY, board_id text NOT NULL, payload jsonb NOT NULL)`);
  const rawInsert: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t = performance.now();
    await pool.query(`INSERT INTO raw_events (board_id, payload) VALUES ('lat', '{}'::jsonb)`);
    rawInsert.push(performance.now() - t);
  }
  const row = (name: string, xs: number[]) => console.log(`   ${name.padEnd(34)} p50 ${fmt(quantile(xs, 0.5)).padStart(6)} ms   p99 ${fmt(quantile(xs, 0.99)).padStart(6)} ms   (${xs.length} cards)`);
  row('burst of 1,000 ready cards', burst);
  row('trickle, 1,000 ready waiting', trickle);
  console.log(`   raw single-row INSERT (baseline)   p50 ${fmt(quantile(rawInsert, 0.5)).padStart(6)} ms   p99 ${fmt(quantile(rawInsert, 0.99)).padStart(6)} ms`);
  return { burst, trickle, rawInsert };
}

async function failover(pool: Pool, schema: string, prefix: string) {
  console.log(`\n4. failover after SIGKILL of the leader, lease TTL ${TTL_MS} ms, ${FAILOVERS} times`);
  const script = fileURLToPath(new URL('../services/board-dispatcher/test/fixtures/board-dispatcher-process.ts', import.meta.url));
  const env = {
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_URL: TEST_DATABASE_URL,
    BULLMQ_PREFIX: prefix,
    DB_SCHEMA: schema,
    HTTP_PORT: '0',
    WORKER_CONCURRENCY: '2',
    LOG_LEVEL: 'error',
    BOARD_LEASE_TTL_MS: String(TTL_MS),
    BOARD_SWEEP_MS: '60000',
  };
  const children: TsProcess[] = [];
  const spawn = () => {
    const c = spawnTsProcess(script, env);
    children.push(c);
    return c;
  };
  const times: number[] = [];
  try {
    let live = [spawn(), spawn()];
    await Promise.all(live.map((c) => c.waitFor('ready', 120_000)));
    let skipped = 0;
    while (times.length < FAILOVERS) {
      const lease = await readLease(pool);
      const leader = live.find((c) => c.lines.includes(`leader ${lease.epoch}`));
      if (!leader || !lease.holder || lease.expiresAt <= lease.now) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const { rows } = await pool.query<{ now: Date }>('SELECT clock_timestamp() AS now');
      leader.proc.kill('SIGKILL');
      await leader.exited;
      const killedAt = rows[0]!.now.getTime();
      let next = await readLease(pool);
      while (next.epoch === lease.epoch) {
        await new Promise((r) => setTimeout(r, 20));
        next = await readLease(pool);
      }
      live = live.filter((c) => c !== leader);
      // The lease moved before the kill landed (a stalled leader gave it up): not a failover from a kill.
      if (next.acquiredAt!.getTime() < killedAt) skipped += 1;
      else times.push(next.acquiredAt!.getTime() - killedAt);
      const fresh = spawn();
      await fresh.waitFor('ready', 120_000);
      live.push(fresh);
    }
    if (skipped) console.log(`   (${skipped} kill(s) landed after the lease had already moved on; not counted)`);
  } finally {
    for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
  }
  console.log(`   kill → next lease: median ${fmt(median(times), 0)} ms, max ${fmt(Math.max(...times), 0)} ms  (${times.map((t) => fmt(t, 0)).join(', ')}; TTL ${TTL_MS} ms: ${fmt(Math.max(...times) / TTL_MS, 2)}× TTL at worst)`);
  return times;
}

async function main() {
  const schema = await useTestSchema('bench_board');
  const prefix = await useTestPrefix('bench_board');
  await runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: MIGRATIONS_DIR });
  const pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema, max: WRITERS + 4 });
  const commands = createBoardCommands({ pool, verifier: createLlmVerifier({ host: undefined, model: 'm', timeoutMs: 1000 }), claimPollMs: 100, leaseTtlMs: 10_000 });
  try {
    if (PARTS.has('appends')) await appends(pool, commands);
    if (PARTS.has('replay')) await replay(pool);
    if (PARTS.has('dispatch')) await dispatchLatency(pool, commands, schema.schema, prefix.prefix);
    if (PARTS.has('failover') && FAILOVERS > 0) await failover(pool, schema.schema, prefix.prefix);
  } finally {
    await pool.end();
    await prefix.cleanup();
    await schema.cleanup();
  }
}

await main();
