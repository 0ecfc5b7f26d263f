import { randomUUID } from 'node:crypto';
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
} from '@vouch/contracts';
import type { z } from 'zod';
import { QueueHub, type JobOutcome } from './queue-hub.js';
import { closeRedis, createProducerRedis, type RedisTarget } from './redis.js';

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

/** How long a new caller's first calls wait for its Redis connection to open (the gateway's start waits as long). */
const FIRST_CONNECT_MS = 3_000;

/**
 * A caller of other services' operations: a QueueHub of its own (the
 * gateway's mechanism: listen before you add, the missed-events check, the
 * one retry policy, DEFAULT_RETRY) on a fail-fast producer connection.
 */
export function createOperationCaller(opts: { redisUrl: RedisTarget; prefix: string; name: string }): OperationCaller {
  // Fail fast while Redis is down: the calling job gets a DependencyError and retries with backoff.
  const producer = createProducerRedis(opts.redisUrl, `${opts.name}:calls`);
  producer.on('error', () => {});
  // No queue is opened up front: only those this service calls, on first use.
  const hub = new QueueHub({ producer, redisUrl: opts.redisUrl, prefix: opts.prefix, name: `${opts.name}:calls`, queues: [] });
  // As the gateway does at its start: the connection gets a moment to open, so a first call made at once is not
  // refused as an outage; once Redis answered, or after the moment, a call while it is down fails at once.
  let opening: NodeJS.Timeout | undefined;
  const opened = new Promise<void>((resolve) => {
    opening = setTimeout(resolve, FIRST_CONNECT_MS);
    producer.once('ready', () => {
      clearTimeout(opening);
      resolve();
    });
  });

  return {
    async call(op, tenant, input, callOpts = {}) {
      if (!('queue' in op.owner)) throw new Error(`${op.name} is not served on a queue: call it in the process that owns it`);
      const queueName = op.owner.queue;
      const parsed = op.input.safeParse(input);
      if (!parsed.success) throw new BadInputError(`${op.name}: invalid input: ${describeFieldIssues(fieldIssuesFromZod(parsed.error.issues, 'input'))}`);
      const timeoutMs = callOpts.timeoutMs ?? op.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const envelope: JobEnvelope = { tenant, input: parsed.data, ...(callOpts.actor ? { actor: callOpts.actor } : {}), ...(callOpts.requestId ? { requestId: callOpts.requestId } : {}) };
      const jobId = `s${randomUUID().replace(/-/g, '')}`;
      await opened;
      let outcome: JobOutcome;
      try {
        outcome = await hub.run(op, queueName, envelope, jobId, { timeoutMs, mayExist: false });
      } catch (err) {
        if (err instanceof DependencyError) throw new DependencyError(`${op.name} could not be sent: ${err.message}`, err);
        throw err;
      }
      if (outcome.kind === 'timeout') throw new DependencyError(`${op.name} did not answer within ${timeoutMs} ms: is ${queueName} running?`);
      if (outcome.kind === 'failed') throw errorFromJobBody(decodeJobError(outcome.failedReason));
      // Delivered: the result leaves Redis.
      hub.forget(queueName, jobId);
      const checked = op.output.safeParse(outcome.value);
      if (!checked.success) throw new Error(`${op.name} answered outside its contract: ${describeFieldIssues(fieldIssuesFromZod(checked.error.issues, 'output'))}`);
      return checked.data as z.output<(typeof op)['output']>;
    },

    async close() {
      clearTimeout(opening);
      await hub.close();
      await closeRedis(producer);
    },
  };
}
