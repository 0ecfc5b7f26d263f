import { Queue, QueueEvents, type Job } from 'bullmq';
import { decodeJobError, type Actor, type ErrorBody, type JobEnvelope, type QueueName } from '@vouch/contracts';
import { TEST_REDIS_URL } from './test-env.js';

/** A failed job's typed error, as the gateway would decode it. */
export class JobFailed extends Error {
  constructor(
    readonly body: ErrorBody,
    readonly job: Job,
  ) {
    super(`${body.code}: ${body.message}`);
  }
}

/**
 * Adds jobs to one service queue as the gateway does (an envelope with the
 * tenant and, where given, the actor a key would carry (testActor); three
 * attempts) and waits for them: a service's tests without a gateway in front.
 */
export class QueueJobs {
  readonly queue: Queue<JobEnvelope>;
  readonly events: QueueEvents;
  private n = 0;

  constructor(prefix: string, name: QueueName) {
    // The service's own Queue sets the queue's options (its events stream's bound); a Queue starting here would put back BullMQ's defaults.
    this.queue = new Queue<JobEnvelope>(name, { connection: { url: TEST_REDIS_URL }, prefix, skipMetasUpdate: true });
    this.events = new QueueEvents(name, { connection: { url: TEST_REDIS_URL }, prefix });
  }

  async ready(): Promise<void> {
    await this.events.waitUntilReady();
  }

  add(operation: string, tenant: string, input: unknown, opts: { jobId?: string; attempts?: number; actor?: Actor } = {}): Promise<Job<JobEnvelope>> {
    return this.queue.add(operation, { tenant, input, ...(opts.actor ? { actor: opts.actor } : {}) }, { jobId: opts.jobId ?? `t${process.pid}-${Date.now()}-${++this.n}`, attempts: opts.attempts ?? 3, backoff: { type: 'fixed', delay: 100 } });
  }

  /** Runs an operation and returns its result, or throws JobFailed with the typed error. */
  async run<T = unknown>(operation: string, tenant: string, input: unknown, opts: { jobId?: string; attempts?: number; actor?: Actor } = {}): Promise<T> {
    return this.wait<T>(await this.add(operation, tenant, input, opts));
  }

  async wait<T = unknown>(job: Job<JobEnvelope>, timeoutMs = 20_000): Promise<T> {
    try {
      const waiting = { done: false };
      const streamed = job.waitUntilFinished(this.events, timeoutMs);
      const polled = this.finishedOnPoll(job.id!, waiting);
      // The loser of the race settles later (or never); its rejection is no one's to handle.
      streamed.catch(() => {});
      polled.catch(() => {});
      try {
        return (await Promise.race([streamed, polled])) as T;
      } finally {
        waiting.done = true;
      }
    } catch {
      const fresh = (await this.queue.getJob(job.id!))!;
      if (await fresh.isFailed()) throw new JobFailed(decodeJobError(fresh.failedReason), fresh);
      throw new Error(`job ${job.id} (${job.name}) did not finish within ${timeoutMs} ms: ${await fresh.getState()}`);
    }
  }

  /**
   * The job's result read from the job every 250 ms: the services trim their
   * events streams to a few dozen entries, so under a burst of jobs this
   * listener may find the job's completed entry gone.
   */
  private async finishedOnPoll(id: string, waiting: { done: boolean }): Promise<unknown> {
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      if (waiting.done) return new Promise(() => {});
      const state = await this.queue.getJobState(id).catch(() => 'unknown');
      if (state === 'completed') return (await this.queue.getJob(id))?.returnvalue;
      if (state === 'failed') throw new Error('failed');
    }
  }

  async close(): Promise<void> {
    await this.events.close();
    await this.queue.close();
  }
}
