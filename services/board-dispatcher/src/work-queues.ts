import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { boardClaimableChannel, type BoardClaimable } from '@vouch/contracts';
import { QUEUE_STREAMS, withTransaction, type Pool } from '@vouch/platform';
import { lockRelayWork, markDispatches, queuedDispatches, requeueDispatch, type DispatchRow } from './board-store.js';

/**
 * The assignees' work queues and the outbox relay.
 *
 * Every dispatched attempt has a row in board_dispatches, written in the
 * transaction of its card_dispatched event. The relay turns a pending row
 * into a job on `board-work.<tenant>.<assignee>` whose id is the row's job
 * id (board.card.attempt), and marks the row queued; when the attempt is
 * claimed or revoked, it removes the job and marks the row done. The relay
 * holds each row locked (FOR UPDATE) across its Redis call, so a claim
 * committing meanwhile waits and never interleaves with it. Hence:
 *
 * - no job without its event: jobs are only added from rows, and rows only
 *   exist with their event;
 * - no dispatched card without its job: a pending row is relayed on the next
 *   pass (its add is idempotent: BullMQ ignores an add with an existing id),
 *   and the reconcile sweep sends a queued row whose job Redis lost (a
 *   restart without persistence) back to pending, so it is added again.
 *
 * Claims themselves are decided in Postgres (board-handlers.ts): the job is
 * the attempt's visible place in its assignee's queue (the queue dashboard
 * shows each agent's backlog), never a second source of truth.
 *
 * Once a pass has committed, it announces each assignee it queued work for
 * on Redis (boardClaimableChannel): the claims of that assignee waiting in a
 * gateway try again at once.
 *
 * Assignee names are unbounded, so per-assignee state is released once idle
 * (`release`): a Queue object unused for `idleMs` is closed and dropped, and
 * if its queue holds no job at all it is obliterated first, so its Redis keys
 * (meta, events stream, id counter, …) go too. The next job for that assignee
 * creates the queue again. Nothing is lost: a queue is only obliterated with
 * every count at zero, checked just before and with the relay (the only
 * writer) not running, and a job lost anyway (another replica's relay racing
 * it) is found by the reconcile sweep and added again.
 */

/** The work queue of an assignee within a tenant. */
export function workQueueName(tenant: string, assignee: string): string {
  return `board-work.${tenant}.${assignee}`;
}

/** A job in any of these states keeps its queue from being obliterated (the relay removes jobs on claim, so completed and failed stay empty). */
const LIVE_STATES = ['wait', 'prioritized', 'waiting-children', 'active', 'delayed'] as const;

/** Idle queues whose Redis counts are checked per release pass: a pass runs in the relay's loop and must not hold it up for long. */
const RELEASE_CHECKS_PER_PASS = 200;

export class WorkQueues {
  private readonly queues = new Map<string, { queue: Queue; usedAt: number }>();
  private readonly idleMs: number;

  constructor(private readonly opts: { connection: Redis; prefix: string; idleMs?: number }) {
    this.idleMs = opts.idleMs ?? 600_000;
  }

  /** How many assignees' Queue objects this process holds. */
  get size(): number {
    return this.queues.size;
  }

  queue(tenant: string, assignee: string): Queue {
    const name = workQueueName(tenant, assignee);
    let entry = this.queues.get(name);
    if (!entry) {
      const queue = new Queue(name, { connection: this.opts.connection, prefix: this.opts.prefix, streams: QUEUE_STREAMS });
      queue.on('error', () => {}); // the failed call reports the outage; the connection reconnects by itself
      entry = { queue, usedAt: 0 };
      this.queues.set(name, entry);
    }
    entry.usedAt = performance.now();
    return entry.queue;
  }

  /**
   * Closes and drops the Queue objects unused for `idleMs`; with
   * `obliterate`, an idle queue with no job left is first obliterated, so
   * its Redis keys go too. Returns how many queues were obliterated. Call it
   * only while no relay pass runs: the relay is the only writer to these
   * queues, so the zero counts read here still hold when obliterate runs.
   */
  async release({ obliterate }: { obliterate: boolean }): Promise<number> {
    const idleSince = performance.now() - this.idleMs;
    let checked = 0;
    let obliterated = 0;
    for (const [name, { queue, usedAt }] of [...this.queues.entries()]) {
      if (usedAt > idleSince) continue;
      if (obliterate) {
        if (checked++ >= RELEASE_CHECKS_PER_PASS) break;
        const counts = await queue.getJobCounts(...LIVE_STATES);
        if (Object.values(counts).every((n) => n === 0)) {
          // Never forced: BullMQ refuses while a job is active, and the queue stays as it was.
          const gone = await queue.obliterate().then(
            () => true,
            async () => {
              await queue.resume(); // obliterate pauses first
              return false;
            },
          );
          if (gone) obliterated += 1;
        }
      }
      this.queues.delete(name);
      await queue.close().catch(() => {});
    }
    return obliterated;
  }

  async add(row: DispatchRow): Promise<void> {
    await this.queue(row.tenant, row.assignee).add(
      'board.card',
      { tenant: row.tenant, boardId: row.boardId, cardId: row.cardId, attempt: row.attempt },
      { jobId: row.jobId, removeOnComplete: true, removeOnFail: true },
    );
  }

  async remove(row: DispatchRow): Promise<void> {
    await this.queue(row.tenant, row.assignee).remove(row.jobId);
  }

  async exists(row: DispatchRow): Promise<boolean> {
    return (await this.queue(row.tenant, row.assignee).getJob(row.jobId)) !== undefined;
  }

  /**
   * One relay pass over up to `limit` rows; returns how many it settled. New
   * jobs go to Redis in one addBulk per queue, and the rows move in one
   * UPDATE. A Redis failure rolls the pass back (rows stay as they were) and
   * throws. The assignees that got work are announced after the commit, so a
   * claim woken by it finds its row settled, not locked by this pass.
   */
  async relay(pool: Pool, limit = 500): Promise<number> {
    const { settled, assignees } = await withTransaction(pool, async (tx) => {
      const rows = await lockRelayWork(tx, limit);
      const byQueue = new Map<string, DispatchRow[]>();
      for (const row of rows.filter((r) => r.state === 'pending')) {
        const name = workQueueName(row.tenant, row.assignee);
        byQueue.set(name, [...(byQueue.get(name) ?? []), row]);
      }
      for (const group of byQueue.values()) {
        await this.queue(group[0]!.tenant, group[0]!.assignee).addBulk(
          group.map((row) => ({
            name: 'board.card',
            data: { tenant: row.tenant, boardId: row.boardId, cardId: row.cardId, attempt: row.attempt },
            opts: { jobId: row.jobId, removeOnComplete: true, removeOnFail: true },
          })),
        );
      }
      for (const row of rows.filter((r) => r.state !== 'pending')) await this.remove(row);
      await markDispatches(tx, rows.map((row) => ({ row, to: row.state === 'pending' ? ('queued' as const) : ('done' as const) })));
      return { settled: rows.length, assignees: [...byQueue.values()].map((group): BoardClaimable => ({ tenant: group[0]!.tenant, assignee: group[0]!.assignee })) };
    });
    await this.announce(assignees);
    return settled;
  }

  /**
   * Tells the gateways there is work for these assignees, one pipelined
   * PUBLISH each. Best effort: the work is queued whatever happens here, and
   * a waiting claim that misses the message finds it at its next safety poll.
   */
  private async announce(assignees: BoardClaimable[]): Promise<void> {
    if (assignees.length === 0) return;
    const channel = boardClaimableChannel(this.opts.prefix);
    const pipeline = this.opts.connection.pipeline();
    for (const to of assignees) pipeline.publish(channel, JSON.stringify(to));
    await pipeline.exec().catch(() => undefined);
  }

  /**
   * Sends queued rows whose job is gone from Redis back to pending; returns
   * how many. One pipelined EXISTS per pass, however many rows are queued.
   */
  async reconcile(pool: Pool, limit = 1_000): Promise<number> {
    const rows = await queuedDispatches(pool, limit);
    if (rows.length === 0) return 0;
    const pipeline = this.opts.connection.pipeline();
    // The job's key as BullMQ spells it, without making a Queue object (which would keep its assignee in memory and write its meta).
    for (const row of rows) pipeline.exists(`${this.opts.prefix}:${workQueueName(row.tenant, row.assignee)}:${row.jobId}`);
    const answers = (await pipeline.exec()) ?? [];
    let lost = 0;
    for (const [k, row] of rows.entries()) {
      const [err, exists] = answers[k] ?? [new Error('no answer'), 0];
      if (err) throw err;
      if (exists) continue;
      await requeueDispatch(pool, row);
      lost += 1;
    }
    return lost;
  }

  async close(): Promise<void> {
    for (const { queue } of this.queues.values()) await queue.close().catch(() => {});
    this.queues.clear();
  }
}
