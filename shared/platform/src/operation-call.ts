import { randomUUID } from 'node:crypto';
import { Queue, type Job } from 'bullmq';
import {
  BadInputError,
  ConflictError,
  DependencyError,
  ERROR_CODES,
  ForbiddenError,
  NotFoundError,
  VouchError,
  decodeJobError,
  describeFieldIssues,
  fieldIssuesFromZod,
  type Actor,
  type ErrorBody,
  type JobEnvelope,
  type OperationDef,
  type QueueName,
} from '@vouch/contracts';
import type { z } from 'zod';
import { QUEUE_STREAMS, listenToQueue, waitUntilFinished, type EventStreamCursor } from './event-stream.js';
import { closeRedis, consumerRedisOptions, createProducerRedis } from './redis.js';

/**
 * Service to service: one service runs another's operation over the queues,
 * exactly as the gateway would (DESIGN.md: a service never reads another's
 * tables). The input is validated against the operation's schema before it
 * is sent, and the output when it comes back; the job's typed failure comes
 * back as the same typed error; an outage or a wait past the timeout is a
 * DependencyError, which a calling job retries with backoff.
 */
export interface OperationCaller {
  /** `actor`: the agent the call acts for, passed on from the calling job's own envelope; without it the callee may read but not act as an agent. */
  call<Op extends OperationDef>(op: Op, tenant: string, input: z.input<Op['input']>, opts?: { timeoutMs?: number; requestId?: string; actor?: Actor }): Promise<z.output<Op['output']>>;
  close(): Promise<void>;
}

/** The typed error a failed job's body stands for. */
export function errorFromJobBody(body: ErrorBody): VouchError {
  switch (body.code) {
    case ERROR_CODES.badInput:
      return new BadInputError(body.message, body.fields, body.details);
    case ERROR_CODES.notFound:
      return new NotFoundError(body.message, body.details);
    case ERROR_CODES.conflict:
      return new ConflictError(body.message, body.details);
    case ERROR_CODES.forbidden:
      return new ForbiddenError(body.message, { ...(body.fields ? { fields: body.fields } : {}), ...(body.details ? { details: body.details } : {}) });
    case ERROR_CODES.dependencyUnavailable:
      return new DependencyError(body.message);
    default:
      return new VouchError(body.code, body.message, { ...(body.fields ? { fields: body.fields } : {}), ...(body.details ? { details: body.details } : {}) });
  }
}

const DEFAULT_TIMEOUT_MS = 30_000;

export function createOperationCaller(opts: { redisUrl: string; prefix: string; name: string }): OperationCaller {
  // Fail fast while Redis is down: the calling job gets a DependencyError and retries with backoff.
  const producer = createProducerRedis(opts.redisUrl, `${opts.name}:calls`);
  producer.on('error', () => {});
  const queues = new Map<QueueName, Queue<JobEnvelope>>();
  const events = new Map<QueueName, Promise<EventStreamCursor>>();

  const queueOf = (name: QueueName) => {
    let queue = queues.get(name);
    if (!queue) {
      queue = new Queue<JobEnvelope>(name, { connection: producer, prefix: opts.prefix, streams: QUEUE_STREAMS });
      queue.on('error', () => {});
      queues.set(name, queue);
    }
    return queue;
  };
  /** The queue's events, listening before any job of ours is added, so no outcome is missed. */
  const eventsOf = (name: QueueName) => {
    let ready = events.get(name);
    if (!ready) {
      ready = listenToQueue(name, { redis: producer, connection: consumerRedisOptions(opts.redisUrl, `${opts.name}:calls:${name}`), prefix: opts.prefix }).then((cursor) => {
        cursor.events.setMaxListeners(10_000);
        return cursor;
      });
      ready.catch(() => events.delete(name));
      events.set(name, ready);
    }
    return ready;
  };

  return {
    async call(op, tenant, input, callOpts = {}) {
      if (!('queue' in op.owner)) throw new Error(`${op.name} is not served on a queue: call it in the process that owns it`);
      const queueName = op.owner.queue;
      const parsed = op.input.safeParse(input);
      if (!parsed.success) throw new BadInputError(`${op.name}: invalid input: ${describeFieldIssues(fieldIssuesFromZod(parsed.error.issues, 'input'))}`);
      const timeoutMs = callOpts.timeoutMs ?? op.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      let job: Job<JobEnvelope>;
      let listening: EventStreamCursor;
      try {
        listening = await eventsOf(queueName);
        if (producer.status !== 'ready') throw new Error('Redis is not connected');
        job = await queueOf(queueName).add(
          op.name,
          { tenant, input: parsed.data, ...(callOpts.actor ? { actor: callOpts.actor } : {}), ...(callOpts.requestId ? { requestId: callOpts.requestId } : {}) },
          {
            jobId: `s${randomUUID().replace(/-/g, '')}`,
            attempts: op.retry?.attempts ?? 3,
            ...(op.retry?.backoffMs ? { backoff: { type: 'exponential', delay: op.retry.backoffMs } } : { backoff: { type: 'exponential', delay: 500 } }),
            // Kept until it is delivered (removed below): the completed entry may be trimmed from the events stream before it is read.
            removeOnComplete: { age: 3_600 },
            removeOnFail: { age: 3_600 },
          },
        );
      } catch (err) {
        throw new DependencyError(`${op.name} could not be sent: the ${queueName} queue is unavailable (Redis unreachable)`, err);
      }
      let output: unknown;
      try {
        output = await waitUntilFinished(queueOf(queueName), job.id!, listening, timeoutMs);
        // Delivered: the result leaves Redis.
        void queueOf(queueName)
          .remove(job.id!)
          .catch(() => {});
      } catch (err) {
        const fresh = await queueOf(queueName)
          .getJob(job.id!)
          .catch(() => undefined);
        if (fresh && (await fresh.isFailed().catch(() => false))) throw errorFromJobBody(decodeJobError(fresh.failedReason));
        const failure = err instanceof Error ? err.message : String(err);
        if (/timed out|timeout/i.test(failure)) throw new DependencyError(`${op.name} did not answer within ${timeoutMs} ms: is ${queueName} running?`, err);
        // waitUntilFinished rejects with the job's failedReason when it failed.
        throw errorFromJobBody(decodeJobError(failure));
      }
      const checked = op.output.safeParse(output);
      if (!checked.success) throw new Error(`${op.name} answered outside its contract: ${describeFieldIssues(fieldIssuesFromZod(checked.error.issues, 'output'))}`);
      return checked.data as z.output<(typeof op)['output']>;
    },

    async close() {
      for (const [, ready] of events) await ready.then((cursor) => cursor.events.close()).catch(() => {});
      for (const queue of queues.values()) await queue.close().catch(() => {});
      await closeRedis(producer);
    },
  };
}
