import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Queue, QueueEvents, type Job } from 'bullmq';
import { QUEUES, decodeJobError, type JobEnvelope } from '@vouch/contracts';
import { eventually, testActor, uniqueName } from '@vouch/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../src/board-store.js';
import { replayBoard } from '../src/domain/replay-board.js';
import { workQueueName } from '../src/work-queues.js';
import { startBoardServiceUnderTest, type BoardServiceUnderTest } from './board-test-env.js';

/**
 * A Redis of this test's own (never the shared one on 6379), without
 * persistence, killed and started again mid-run: everything it held (queued
 * operation jobs, the work queues) is gone. Events live in Postgres, and the
 * outbox puts every dispatched attempt's job back.
 */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 20_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  return proc;
}

describe('Redis restarting mid-run', () => {
  let redis: ChildProcess;
  let port: number;
  let svc: BoardServiceUnderTest;
  let queue: Queue<JobEnvelope>;
  let events: QueueEvents;
  let url: string;
  let n = 0;

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    url = `redis://127.0.0.1:${port}`;
    svc = await startBoardServiceUnderTest('board_redis', { REDIS_URL: url }, { prefix: uniqueName('board_redis') });
    queue = new Queue<JobEnvelope>(QUEUES.boardDispatcher, { connection: { url, maxRetriesPerRequest: null }, prefix: svc.prefix });
    events = new QueueEvents(QUEUES.boardDispatcher, { connection: { url, maxRetriesPerRequest: null }, prefix: svc.prefix });
    // They reconnect by themselves; the outage shows as failed calls, which the test retries or expects.
    queue.on('error', () => {});
    events.on('error', () => {});
    await events.waitUntilReady();
  });
  afterAll(async () => {
    await events?.close().catch(() => {});
    await queue?.close().catch(() => {});
    await svc?.stop();
    redis?.kill('SIGKILL');
  });

  /** Runs an operation as the gateway would: a job with the tenant's envelope and the actor of `agent`'s key, waited for. */
  const run = async <T = unknown>(operation: string, input: unknown, agent = 'planner'): Promise<T> => {
    const job: Job<JobEnvelope> = await queue.add(operation, { tenant: 'acme', input, actor: testActor(agent) }, { jobId: `t-${++n}`, attempts: 3, backoff: { type: 'fixed', delay: 100 } });
    try {
      return (await job.waitUntilFinished(events, 20_000)) as T;
    } catch (err) {
      const fresh = await queue.getJob(job.id!);
      if (fresh && (await fresh.isFailed())) throw new Error(`${operation} failed: ${JSON.stringify(decodeJobError(fresh.failedReason))}`, { cause: err });
      throw err;
    }
  };

  const queuedJob = async (assignee: string, jobId: string) => {
    const q = new Queue(workQueueName('acme', assignee), { connection: { url }, prefix: svc.prefix });
    q.on('error', () => {});
    try {
      return (await q.getJob(jobId)) !== undefined;
    } finally {
      await q.close();
    }
  };

  it('loses no event: work dispatched before, during and after the outage is dispatched once, has its job, and completes', async () => {
    const boardId = 'outage';
    const card = (k: number) => ({ title: `task ${k}`, assignee: `a-${k}`, evidenceRequirements: [`the output of task ${k}`] });
    await run('board.create', { boardId, title: 'outage', scope: { kind: 'run', ref: 'r' }, owner: 'planner' });
    await run('board.addCards', { boardId, by: 'planner', cards: [1, 2, 3, 4, 5, 6].map(card) });
    await eventually('six jobs queued', async () => ((await Promise.all([1, 2, 3, 4, 5, 6].map((k) => queuedJob(`a-${k}`, `${boardId}.c-${k}.1`)))).every(Boolean) ? true : undefined));

    const work = async (k: number) => {
      const claim = await run<{ claimed: boolean; claimToken: string; card: { id: string } }>('board.claimCard', { waitSeconds: 10 }, `a-${k}`);
      expect(claim).toMatchObject({ claimed: true, card: { id: `c-${k}` } });
      await run('board.submitCard', { boardId, cardId: `c-${k}`, claimToken: claim.claimToken, summary: `did ${k}`, evidence: [{ kind: 'tool_result', summary: `the output of task ${k}: ok`, covers: ['r1'] }] }, `a-${k}`);
    };
    for (const k of [1, 2, 3]) await work(k);

    // Redis dies with everything in it; meanwhile the board keeps changing through Postgres.
    redis.kill('SIGKILL');
    await new Promise((r) => redis.once('exit', r));
    const caller = (j: string, agent = 'planner') => ({ tenant: 'acme', jobId: `outage-${j}`, actor: testActor(agent) });
    await svc.service.commands.addCards(caller('add'), {
      boardId,
      by: 'planner',
      cards: [7, 8, 9, 10].map((k) => ({ ...card(k), description: '', lane: 'worker' as const, priority: 'normal' as const, dependsOn: [] })),
    });
    await svc.service.commands.reviewCard(caller('review', 'verifier'), { boardId, cardId: 'c-1', decision: 'auto', missing: [], notes: '' });
    await eventually('the new cards dispatched while Redis is down', async () => {
      const state = await svc.service.commands.load({ tenant: 'acme', boardId });
      return [7, 8, 9, 10].every((k) => state!.cards[`c-${k}`]!.status === 'dispatched') ? true : undefined;
    });

    redis = await startRedis(port);
    // The outbox puts back the jobs Redis lost (c-4..c-6) and adds those dispatched during the outage (c-7..c-10).
    await eventually(
      'every dispatched attempt has its job again',
      async () => ((await Promise.all([4, 5, 6, 7, 8, 9, 10].map((k) => queuedJob(`a-${k}`, `${boardId}.c-${k}.1`)))).every(Boolean) ? true : undefined),
      30_000,
    );

    for (const k of [4, 5, 6, 7, 8, 9, 10]) await work(k);
    for (const k of [2, 3, 4, 5, 6, 7, 8, 9, 10]) await run('board.reviewCard', { boardId, cardId: `c-${k}`, decision: 'auto' }, 'verifier');

    const synthesis = await run<{ complete: boolean; unresolved: unknown[] }>('board.synthesize', { boardId });
    expect(synthesis).toMatchObject({ complete: true, unresolved: [] });
    const stream = await readEvents(svc.service.pool, { tenant: 'acme', boardId });
    const dispatched = stream.filter((e) => e.type === 'card_dispatched').map((e) => (e as { cardId: string }).cardId);
    expect(dispatched.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `c-${i + 1}`).sort());
    expect(stream.filter((e) => e.type === 'card_reviewed')).toHaveLength(10);
    expect(replayBoard(stream)).toStrictEqual(await svc.service.commands.load({ tenant: 'acme', boardId }));
  });
});
