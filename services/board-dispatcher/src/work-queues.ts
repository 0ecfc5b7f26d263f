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
 */

/** The work queue of an assignee within a tenant. */
export function workQueueName(tenant: string, assignee: string): string {
  return `board-work.${tenant}.${assignee}`;
}

export class WorkQueues {
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly opts: { connection: Redis; prefix: string }) {}

  queue(tenant: string, assignee: string): Queue {
    const name = workQueueName(tenant, assignee);
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.opts.connection, prefix: this.opts.prefix, streams: QUEUE_STREAMS });
      queue.on('error', () => {}); // the failed call reports the outage; the connection reconnects by itself
      this.queues.set(name, queue);
    }
    return queue;
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
    for (const row of rows) pipeline.exists(this.queue(row.tenant, row.assignee).toKey(row.jobId));
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
    for (const queue of this.queues.values()) await queue.close().catch(() => {});
    this.queues.clear();
  }
}
