import { createHash, randomUUID } from 'node:crypto';
import { Queue, QueueEvents, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { DependencyError, SERVICE_QUEUES, isQueueName, type JobEnvelope, type OperationDef, type QueueName } from '@vouch/contracts';
import { consumerRedisOptions } from '@vouch/platform';

/** Retry policy for queue operations that do not name their own. */
const DEFAULT_RETRY = { attempts: 3, backoffMs: 1_000 };

/** The queue an operation's job goes to. */
export function queueFor(op: OperationDef, input: Record<string, unknown>): QueueName {
  if ('queue' in op.owner) return op.owner.queue;
  if ('queueFromInput' in op.owner) {
    const name = String(input[op.owner.queueFromInput]);
    if (isQueueName(name)) return name;
  }
  throw new Error(`${op.name} is not a queue operation`);
}

/**
 * The BullMQ job id for a request. With an Idempotency-Key it is derived from
 * (tenant, operation, key), so a retried request finds the job the first one
 * added instead of adding a second (BullMQ ignores an add with an existing id).
 */
export function bullJobId(tenant: string, operation: string, idempotencyKey: string | undefined): string {
  if (!idempotencyKey) return `j${randomUUID().replace(/-/g, '')}`;
  return `k${createHash('sha256').update(`${tenant}\0${operation}\0${idempotencyKey}`).digest('hex').slice(0, 40)}`;
}

/** `<queue>.<bull id>`: the job id callers see. */
export function publicJobId(queue: QueueName, id: string): string {
  return `${queue}.${id}`;
}

export function parsePublicJobId(publicId: string): { queue: QueueName; id: string } | undefined {
  const dot = publicId.indexOf('.');
  const queue = publicId.slice(0, dot);
  return dot > 0 && isQueueName(queue) ? { queue, id: publicId.slice(dot + 1) } : undefined;
}

/**
 * The gateway's side of the queues: one producer Queue per service (sharing a
 * fail-fast connection) and, created on first use, one QueueEvents per queue
 * for waiting on rpc results.
 */
export class QueueHub {
  private readonly queues = new Map<QueueName, Queue<JobEnvelope>>();
  private readonly events = new Map<QueueName, Promise<QueueEvents>>();

  constructor(
    private readonly opts: { producer: Redis; redisUrl: string; prefix: string },
  ) {
    for (const name of SERVICE_QUEUES) {
      const queue = new Queue<JobEnvelope>(name, { connection: opts.producer, prefix: opts.prefix });
      queue.on('error', () => {}); // the failed add reports the outage; the connection reconnects by itself
      this.queues.set(name, queue);
    }
  }

  queue(name: QueueName): Queue<JobEnvelope> {
    return this.queues.get(name)!;
  }

  all(): Queue<JobEnvelope>[] {
    return [...this.queues.values()];
  }

  /** QueueEvents for a queue, ready to deliver completions. */
  queueEvents(name: QueueName): Promise<QueueEvents> {
    let ready = this.events.get(name);
    if (!ready) {
      const qe = new QueueEvents(name, { connection: consumerRedisOptions(this.opts.redisUrl, `gateway:events:${name}`), prefix: this.opts.prefix });
      qe.on('error', () => {}); // reconnects by itself; enqueue fails fast and reports the outage
      // Every rpc request waiting on a result adds a listener here; hundreds at once are normal.
      qe.setMaxListeners(10_000);
      ready = qe.waitUntilReady().then(() => qe);
      ready.catch(() => this.events.delete(name));
      this.events.set(name, ready);
    }
    return ready;
  }

  /**
   * Throws a DependencyError at once unless the shared producer connection is
   * up. BullMQ would otherwise wait for the connection, and the caller's
   * request would hang instead of getting a 503 (DESIGN.md, fail fast at the edge).
   */
  private assertConnected(queue: QueueName): void {
    if (this.opts.producer.status !== 'ready') {
      throw new DependencyError(`the ${queue} queue is unavailable (Redis unreachable): retry in a few seconds`);
    }
  }

  /** Adds an operation's job. Fails at once with a DependencyError while Redis is down. */
  async enqueue(op: OperationDef, queue: QueueName, envelope: JobEnvelope, jobId: string): Promise<Job<JobEnvelope>> {
    const retry = op.retry ?? DEFAULT_RETRY;
    this.assertConnected(queue);
    try {
      return await this.queue(queue).add(op.name, envelope, {
        jobId,
        attempts: retry.attempts,
        ...(retry.backoffMs > 0 ? { backoff: { type: 'exponential', delay: retry.backoffMs } } : {}),
        // Results stay readable through GET /v1/jobs/:id for a day; failures for a week, for the dashboard.
        removeOnComplete: op.mode === 'rpc' ? { age: 3_600, count: 10_000 } : { age: 86_400 },
        removeOnFail: { age: 7 * 86_400 },
      });
    } catch (err) {
      throw new DependencyError(`the ${queue} queue is unavailable (Redis unreachable): retry in a few seconds`, err);
    }
  }

  async getJob(queue: QueueName, id: string): Promise<Job<JobEnvelope> | undefined> {
    this.assertConnected(queue);
    try {
      return (await this.queue(queue).getJob(id)) ?? undefined;
    } catch (err) {
      throw new DependencyError('Redis is unreachable: retry in a few seconds', err);
    }
  }

  async close(): Promise<void> {
    for (const [, ready] of this.events) await ready.then((qe) => qe.close()).catch(() => {});
    for (const q of this.queues.values()) await q.close().catch(() => {});
  }
}
