import { Queue, QueueEvents, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { DependencyError, SERVICE_QUEUES, isQueueName, type JobEnvelope, type OperationDef, type QueueName } from '@vouch/contracts';
import { EventStreamCursor, MISSED_EVENTS_CHECK_MS, QUEUE_STREAMS, closeQueueEvents, lastEventId } from './event-stream.js';
import { stashBlobs } from './job-blobs.js';
import { consumerRedisOptions, type RedisTarget } from './redis.js';
import { liveWorkerCount } from './worker-presence.js';

/**
 * The retry policy of every queued operation that names none, whoever adds
 * its job (the gateway, or a service calling another): three attempts, with
 * exponential backoff from a second.
 */
export const DEFAULT_RETRY: NonNullable<OperationDef['retry']> = { attempts: 3, backoffMs: 1_000 };

/**
 * How long a finished job stays in Redis when nobody collects it. An rpc
 * result is removed as soon as it is delivered (DESIGN.md: Redis holds work in
 * flight, not answers); this keeps an undelivered one (the caller got a 504
 * and polls) for an hour. Job-mode results are read by polling, so they stay
 * a day. Failures stay a week for the dashboard, at most 10,000 per queue.
 */
const RPC_RESULT_TTL_S = 3_600;
const JOB_RESULT_TTL_S = 86_400;
const FAILED_TTL_S = 7 * 86_400;
const FAILED_KEEP = 10_000;

/** The queue an operation's job goes to. */
export function queueFor(op: OperationDef, input: Record<string, unknown>): QueueName {
  if ('queue' in op.owner) return op.owner.queue;
  if ('queueFromInput' in op.owner) {
    const name = String(input[op.owner.queueFromInput]);
    if (isQueueName(name)) return name;
  }
  throw new Error(`${op.name} is not a queue operation`);
}

/** The states a job ends in; its result or failure is written in the same script that moves it there. */
const FINISHED = new Set(['completed', 'failed']);

/** A job and its state, read so that they agree: never "completed" without its result. */
export interface JobSnapshot {
  job: Job<JobEnvelope>;
  state: string;
}

/** How waiting for a job ended. */
export type JobOutcome =
  | { kind: 'completed'; value: unknown }
  | { kind: 'failed'; failedReason: string }
  | { kind: 'timeout' };

/** How long after the producer reconnects each missed-events check also looks for jobs lost with the old primary. */
const LOST_CHECK_MS = 10_000;

interface Waiter {
  settle(outcome: JobOutcome): void;
  /** Set once the waiter's own add was answered: from then on, its job missing from Redis means it was lost. */
  added?: boolean;
  lost?(): void;
}

/**
 * The one way vouch runs an operation over a queue: add its job under the
 * operation's retry policy (DEFAULT_RETRY unless it names one) and await its
 * outcome. One producer Queue per service queue (sharing a fail-fast
 * connection) and one QueueEvents per queue that delivers job outcomes to
 * whoever waits for them. The gateway runs every queued operation through
 * one; a service that calls another's operation does so through
 * `createOperationCaller`, which runs on one too.
 *
 * Listen before you add (DESIGN.md): a QueueEvents starts reading its stream
 * after a known entry id (the stream's last id when it was created), so every
 * event of a job added after that is delivered, however slowly its blocking
 * read gets going; an rpc registers its waiter before it adds the job, so the
 * outcome cannot slip by. That is one Redis round trip per rpc besides the
 * add, where add-then-waitUntilFinished needs an extra "already finished?"
 * check.
 *
 * Streams are trimmed to a few dozen entries (EVENT_STREAM_MAX_LEN), so a
 * listener that falls further behind (a stalled process) finds entries gone
 * unread. Every MISSED_EVENTS_CHECK_MS, while anyone waits on a queue, the hub
 * asks whether that may have happened since it last asked
 * (EventStreamCursor.missedSince); if so it reads the waiters' jobs, which
 * keep their results until delivered. An ephemeral job (a ping)
 * is removed as it completes, so a missed ping is answered as a timeout.
 */
export class QueueHub {
  private readonly queues = new Map<QueueName, Queue<JobEnvelope>>();
  private readonly listening = new Map<QueueName, Promise<QueueEvents>>();
  /** How far each queue's listener has read, once it listens. */
  private readonly cursors = new Map<QueueName, EventStreamCursor>();
  /** Per queue, how far its listener had read at the last check for missed entries. */
  private readonly missedMarks = new Map<QueueName, string>();
  private readonly missedCheck: NodeJS.Timeout;
  private checkingMissed = false;
  /**
   * Until when each check also looks for lost jobs: for LOST_CHECK_MS after
   * the producer reconnects (a restart, a failover), since jobs added before
   * may be gone with the old primary, and a demoted primary may take adds for
   * a moment after the reconnect.
   */
  private lostCheckUntil = 0;
  private readonly waiters = new Map<string, Set<Waiter>>();
  /** Until when a queue was last seen with a live worker: a ping need not ask again within a second. */
  private readonly workerSeenUntil = new Map<QueueName, number>();

  private readonly opened: readonly QueueName[];

  /**
   * `producer`: the fail-fast connection every add and read goes through.
   * `name`: the process, named in its listeners' Redis client names.
   * `queues`: the queues opened at once (every service queue by default);
   * any other is opened on first use.
   */
  constructor(private readonly opts: { producer: Redis; redisUrl: RedisTarget; prefix: string; name: string; queues?: readonly QueueName[] }) {
    this.opened = opts.queues ?? SERVICE_QUEUES;
    let seenReady = opts.producer.status === 'ready';
    opts.producer.on('ready', () => {
      if (seenReady) this.lostCheckUntil = Date.now() + LOST_CHECK_MS;
      seenReady = true;
    });
    for (const name of this.opened) this.queue(name);
    this.missedCheck = setInterval(() => void this.settleMissed(), MISSED_EVENTS_CHECK_MS);
    this.missedCheck.unref();
  }

  queue(name: QueueName): Queue<JobEnvelope> {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue<JobEnvelope>(name, { connection: this.opts.producer, prefix: this.opts.prefix, streams: QUEUE_STREAMS });
      queue.on('error', () => {}); // the failed add reports the outage; the connection reconnects by itself
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** The queues opened at once (the dashboard and the queue metrics show them). */
  all(): Queue<JobEnvelope>[] {
    return this.opened.map((name) => this.queue(name));
  }

  /**
   * Starts listening on every queue opened at once, so the first rpc after a
   * start pays nothing extra. Best effort: a queue whose Redis is unreachable
   * now starts listening on first use instead.
   */
  async listenAll(): Promise<void> {
    await Promise.all(this.opened.map((name) => this.events(name).catch(() => undefined)));
  }

  /** QueueEvents for a queue, reading from a known point of its stream. */
  private events(name: QueueName): Promise<QueueEvents> {
    let ready = this.listening.get(name);
    if (!ready) {
      ready = this.startListening(name);
      ready.catch(() => this.listening.delete(name));
      this.listening.set(name, ready);
    }
    return ready;
  }

  private async startListening(name: QueueName): Promise<QueueEvents> {
    this.assertConnected(name);
    const streamKey = `${this.opts.prefix}:${name}:events`;
    let startId: string;
    try {
      startId = await lastEventId(this.opts.producer, streamKey);
    } catch (err) {
      throw unreachable(name, err);
    }
    const qe = new QueueEvents(name, {
      connection: consumerRedisOptions(this.opts.redisUrl, `${this.opts.name}:events:${name}`),
      prefix: this.opts.prefix,
      lastEventId: startId,
    });
    qe.on('error', () => {}); // reconnects by itself and resumes after the last entry it read
    this.cursors.set(name, new EventStreamCursor(qe, this.opts.producer, streamKey, startId));
    qe.on('completed', ({ jobId, returnvalue }) => this.settle(name, jobId, { kind: 'completed', value: returnvalue }));
    qe.on('failed', ({ jobId, failedReason }) => this.settle(name, jobId, { kind: 'failed', failedReason }));
    await qe.waitUntilReady();
    return qe;
  }

  /**
   * Starts checking a queue for missed entries from where its listener is
   * now, unless a waiter already has it checked from further back: a job
   * added after this has every entry after this point.
   */
  private markMissedFrom(queue: QueueName): void {
    const cursor = this.cursors.get(queue);
    if (cursor && !this.missedMarks.has(queue)) this.missedMarks.set(queue, cursor.lastId);
  }

  /**
   * Settles the waiters whose outcome a listener may have missed: on a queue
   * whose stream was trimmed past what its listener read, each waited-for job
   * that has finished (one pipelined read for all) is read and settled.
   */
  private async settleMissed(): Promise<void> {
    if (this.waiters.size === 0) this.missedMarks.clear();
    if (this.checkingMissed || this.waiters.size === 0 || this.opts.producer.status !== 'ready') return;
    this.checkingMissed = true;
    try {
      if (Date.now() < this.lostCheckUntil) await this.settleLost();
      const waited = new Map<QueueName, string[]>();
      for (const key of this.waiters.keys()) {
        const [queue, jobId] = key.split('\0') as [QueueName, string];
        waited.set(queue, [...(waited.get(queue) ?? []), jobId]);
      }
      for (const [queue, jobIds] of waited) {
        const cursor = this.cursors.get(queue);
        if (!cursor) continue;
        const { missed, next } = await cursor.missedSince(this.missedMarks.get(queue) ?? '0-0');
        this.missedMarks.set(queue, next);
        if (!missed) continue;
        const pipeline = this.opts.producer.pipeline();
        for (const id of jobIds) pipeline.hget(`${this.opts.prefix}:${queue}:${id}`, 'finishedOn');
        const finishedOn = (await pipeline.exec()) ?? [];
        for (const [k, id] of jobIds.entries()) {
          if (!finishedOn[k]?.[1]) continue;
          const snapshot = await this.readJob(queue, id);
          if (snapshot?.state === 'completed') this.settle(queue, id, { kind: 'completed', value: snapshot.job.returnvalue });
          else if (snapshot?.state === 'failed') this.settle(queue, id, { kind: 'failed', failedReason: snapshot.job.failedReason });
        }
      }
    } catch {
      // Redis away: the waits run on to their timeouts, or the next check finds the jobs.
    } finally {
      this.checkingMissed = false;
    }
  }

  /**
   * After the producer reconnected: a job whose add was answered and that
   * Redis no longer holds was lost with the server it was added to (a primary
   * that died before replicating it, or one demoted in a failover after it
   * took the add). Its waiters end now, and their run answers a retryable
   * DependencyError, instead of waiting out their timeouts for an outcome that
   * cannot come.
   */
  private async settleLost(): Promise<void> {
    try {
      const added = [...this.waiters].filter(([, set]) => [...set].some((w) => w.added));
      if (added.length === 0) return;
      const pipeline = this.opts.producer.pipeline();
      for (const [key] of added) {
        const [queue, jobId] = key.split('\0') as [QueueName, string];
        pipeline.exists(`${this.opts.prefix}:${queue}:${jobId}`);
      }
      const exists = (await pipeline.exec()) ?? [];
      for (const [k, [, set]] of added.entries()) {
        const [err, n] = exists[k] ?? [];
        if (err || n !== 0) continue;
        for (const w of set) if (w.added) w.lost?.();
      }
    } catch {
      // Redis away again: it reconnects, and the checks go on.
    }
  }

  private settle(queue: QueueName, jobId: string, outcome: JobOutcome): void {
    const key = `${queue}\0${jobId}`;
    const set = this.waiters.get(key);
    if (!set) return;
    this.waiters.delete(key);
    for (const waiter of set) waiter.settle(outcome);
  }

  /**
   * Throws a DependencyError at once unless the shared producer connection is
   * up. BullMQ would otherwise wait for the connection, and the caller's
   * request would hang instead of getting a 503 (docs/architecture.md, "Fail fast at the edge").
   */
  private assertConnected(queue: QueueName): void {
    if (this.opts.producer.status !== 'ready') throw unreachable(queue);
  }

  /** Adds an operation's job. Fails at once with a DependencyError while Redis is down. */
  async enqueue(op: OperationDef, queue: QueueName, envelope: JobEnvelope, jobId: string): Promise<Job<JobEnvelope>> {
    const retry = op.retry ?? DEFAULT_RETRY;
    this.assertConnected(queue);
    try {
      // Large input strings go beside the job, not through BullMQ's scripts (job-blobs.ts).
      const data = await stashBlobs(this.opts.producer, { prefix: this.opts.prefix, queue, jobId }, envelope);
      return await this.queue(queue).add(op.name, data, {
        jobId,
        attempts: retry.attempts,
        ...(retry.backoffMs > 0 ? { backoff: { type: 'exponential', delay: retry.backoffMs } } : {}),
        removeOnComplete: op.ephemeral ? true : { age: op.mode === 'rpc' ? RPC_RESULT_TTL_S : JOB_RESULT_TTL_S },
        removeOnFail: op.ephemeral ? true : { age: FAILED_TTL_S, count: FAILED_KEEP },
      });
    } catch (err) {
      throw unreachable(queue, err);
    }
  }

  /**
   * Adds a job and waits up to timeoutMs for its outcome, listening before
   * the add. `mayExist`: the id is derived from an Idempotency-Key, so the job
   * may have been added (and finished) by an earlier request; it is looked up
   * once after the add. An ephemeral operation is refused at once when no
   * worker is connected to its queue, and its job is removed when nobody
   * waits for it any more.
   */
  async run(op: OperationDef, queue: QueueName, envelope: JobEnvelope, jobId: string, opts: { timeoutMs: number; mayExist: boolean }): Promise<JobOutcome> {
    this.assertConnected(queue);
    if (op.ephemeral && !(await this.hasLiveWorker(queue))) {
      throw new DependencyError(`no ${queue} worker is connected: the service is not running; start it, then retry`);
    }
    await this.events(queue);
    this.markMissedFrom(queue);
    const key = `${queue}\0${jobId}`;
    let timer: NodeJS.Timeout | undefined;
    let waiter: Waiter | undefined;
    const outcome = new Promise<JobOutcome | { kind: 'lost' }>((resolve) => {
      waiter = { settle: resolve, lost: () => resolve({ kind: 'lost' }) };
      timer = setTimeout(() => resolve({ kind: 'timeout' }), opts.timeoutMs);
    });
    const set = this.waiters.get(key) ?? new Set<Waiter>();
    set.add(waiter!);
    this.waiters.set(key, set);
    try {
      await this.enqueue(op, queue, envelope, jobId);
      waiter!.added = true;
      if (opts.mayExist) {
        const existing = await this.readJob(queue, jobId);
        if (existing?.state === 'completed') waiter!.settle({ kind: 'completed', value: existing.job.returnvalue });
        else if (existing?.state === 'failed') waiter!.settle({ kind: 'failed', failedReason: existing.job.failedReason });
      }
      const result = await outcome;
      if (result.kind === 'lost') throw new DependencyError(`the ${queue} job was lost in a Redis failover before it finished: retry (with the same Idempotency-Key, if one was sent)`);
      if (result.kind === 'timeout' && op.ephemeral) void this.queue(queue).remove(jobId).catch(() => {});
      return result;
    } finally {
      clearTimeout(timer);
      set.delete(waiter!);
      if (set.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
    }
  }

  /**
   * Runs an operation's job again under the id of a run that finished and
   * whose outcome was read: a waiting claim tries again under its request's
   * job id, so a request retried with its Idempotency-Key finds the try that
   * claimed. The finished run is removed first (BullMQ ignores an add whose
   * id exists). The outcome is read from the job itself, events only wake the
   * wait: an event of the previous run may still be on its way, and must not
   * pass for this run's.
   */
  async rerun(op: OperationDef, queue: QueueName, envelope: JobEnvelope, jobId: string, timeoutMs: number): Promise<JobOutcome> {
    this.assertConnected(queue);
    try {
      await this.queue(queue).remove(jobId);
    } catch (err) {
      throw unreachable(queue, err);
    }
    await this.enqueue(op, queue, envelope, jobId);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.waitFor(queue, jobId, Math.max(0, deadline - Date.now()));
      const run = await this.readJob(queue, jobId);
      if (run?.state === 'completed') return { kind: 'completed', value: run.job.returnvalue };
      if (run?.state === 'failed') return { kind: 'failed', failedReason: run.job.failedReason };
      if (!run || Date.now() >= deadline) return { kind: 'timeout' };
    }
  }

  /** Waits up to timeoutMs for an already added job to finish; resolves at once if it has. */
  async waitFor(queue: QueueName, jobId: string, timeoutMs: number): Promise<void> {
    await this.events(queue);
    this.markMissedFrom(queue);
    const key = `${queue}\0${jobId}`;
    let timer: NodeJS.Timeout | undefined;
    let waiter: Waiter | undefined;
    const finished = new Promise<void>((resolve) => {
      waiter = { settle: () => resolve() };
      timer = setTimeout(resolve, timeoutMs);
    });
    const set = this.waiters.get(key) ?? new Set<Waiter>();
    set.add(waiter!);
    this.waiters.set(key, set);
    try {
      const now = await this.readJob(queue, jobId);
      if (!now || FINISHED.has(now.state)) return;
      await finished;
    } finally {
      clearTimeout(timer);
      set.delete(waiter!);
      if (set.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
    }
  }

  /**
   * A job and its state from reads that agree. BullMQ moves a job to its
   * final state and writes its result in one script, so a state read first
   * and the fields read after it can only be newer: when the state says
   * finished the fields hold the outcome. When the fields show a job that
   * finished after the state was read, read again.
   */
  async readJob(queue: QueueName, id: string): Promise<JobSnapshot | undefined> {
    this.assertConnected(queue);
    try {
      let snapshot: JobSnapshot | undefined;
      // A job retried from the dashboard leaves its finished state; a few reads settle any race.
      for (let tries = 0; tries < 5; tries++) {
        const state = await this.queue(queue).getJobState(id);
        const job = await this.queue(queue).getJob(id);
        if (!job) return undefined;
        snapshot = { job, state };
        if (FINISHED.has(state) || !job.finishedOn) break;
      }
      return snapshot;
    } catch (err) {
      throw unreachable(queue, err);
    }
  }

  /** Forgets a finished job whose outcome was delivered, so its result does not sit in Redis. */
  forget(queue: QueueName, id: string): void {
    void this.queue(queue).remove(id).catch(() => {});
  }

  /**
   * Whether a worker consumes the queue. A yes is remembered for a second (a
   * worker that died meanwhile costs one ping a 504); a no is asked again
   * every time, so a worker that just started is found at once.
   */
  private async hasLiveWorker(queue: QueueName): Promise<boolean> {
    if ((this.workerSeenUntil.get(queue) ?? 0) > Date.now()) return true;
    const live = (await this.workerCount(queue)) > 0;
    if (live) this.workerSeenUntil.set(queue, Date.now() + 1_000);
    return live;
  }

  /** Workers consuming a queue: those whose heartbeat is fresh. */
  async workerCount(queue: QueueName): Promise<number> {
    this.assertConnected(queue);
    try {
      return await liveWorkerCount(this.opts.producer, this.opts.prefix, queue);
    } catch (err) {
      throw unreachable(queue, err);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.missedCheck);
    for (const waiters of this.waiters.values()) for (const w of waiters) w.settle({ kind: 'timeout' });
    for (const [, ready] of this.listening) await ready.then(closeQueueEvents).catch(() => {});
    for (const q of this.queues.values()) await q.close().catch(() => {});
  }
}

function unreachable(queue: QueueName, cause?: unknown): DependencyError {
  return new DependencyError(`the ${queue} queue is unavailable (Redis unreachable): retry in a few seconds`, cause);
}
