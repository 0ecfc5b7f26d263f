import { hostname } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DelayedError, Job, UnrecoverableError, Worker, type ConnectionOptions } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import {
  ActorSchema,
  ERROR_CODES,
  SYSTEM_JOBS,
  VouchError,
  encodeJobError,
  fieldIssuesFromZod,
  describeFieldIssues,
  type ErrorBody,
  type JobEnvelope,
  type OperationDef,
  type PingResult,
} from '@vouch/contracts';
import { classifyFailure, type FailureKind } from './failure-kind.js';
import { BlobMissing, dropBlobs, unstashBlobs } from './job-blobs.js';
import { assertHandlersComplete, type OperationHandler } from './handlers.js';
import type { Logger } from './logger.js';
import type { PlatformMetrics } from './metrics.js';
import { startPresence } from './worker-presence.js';
import { createTenantSlots, defaultTenantShare, deferDelayMs } from './tenant-slots.js';

export interface ServiceWorkerOptions {
  service: string;
  version: string;
  queue: string;
  /** The operations this worker must serve; each needs exactly one handler. */
  operations: readonly OperationDef[];
  handlers: readonly OperationHandler[];
  connection: ConnectionOptions;
  prefix: string;
  concurrency: number;
  logger: Logger;
  metrics: PlatformMetrics;
  /**
   * How long a job's lock lives without renewal. BullMQ renews at
   * lockDuration/2; a job whose process dies is re-run after this expires.
   * Long CPU or GPU work needs a value above its longest event-loop stall.
   */
  lockDuration?: number;
  /** Largest result, as JSON bytes, a job may return (RESULT_MAX_BYTES by default). */
  maxResultBytes?: number;
  /** How often this worker looks for jobs whose lock expired. */
  stalledInterval?: number;
  maxStalledCount?: number;
  /**
   * The most of this worker's slots one tenant's jobs may hold at once
   * (TENANT_CONCURRENCY); half the concurrency by default, and at least one
   * slot per tenant on the queue. Counted across the queue's workers: each
   * live worker adds its share to a tenant's limit (tenant-slots.ts).
   */
  tenantConcurrency?: number;
  /** How long a tenant slot outlives a worker that died holding it: lockDuration (or BullMQ's 30 s) by default. */
  tenantLeaseMs?: number;
}

/** A running worker and its ordered stop. */
export interface ServiceWorker {
  worker: Worker<JobEnvelope>;
  /** Stops taking jobs and waits up to graceMs for running ones, then forces the close. */
  close(graceMs: number): Promise<{ forced: boolean }>;
}

/**
 * Largest job result, as JSON. A result travels through Redis twice (the job
 * hash and the events stream) in a server that runs noeviction, so a large
 * read is paged by its operation (ledger.get pages its evidence) and a result
 * past this cap is refused as a bug rather than stored.
 */
export const RESULT_MAX_BYTES = 1024 * 1024;

/** Validation errors reported by the bootstrap before a handler runs. */
function badInput(op: OperationDef, issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): ErrorBody {
  const fields = fieldIssuesFromZod(issues, 'input');
  return { code: ERROR_CODES.badInput, message: `${op.name}: invalid input: ${describeFieldIssues(fields)}`, fields };
}

/** What a job's failure looks like to BullMQ and to the caller, and how it was logged. */
interface JobFailure {
  error: Error;
  retry: boolean;
  kind: FailureKind | 'typed';
}

/** The one message a caller gets for a failure inside a service: the details stay in that service's logs. */
export function internalErrorMessage(service: string, ids: { requestId?: string | undefined; jobId?: string | undefined }): string {
  return ids.requestId ? `internal error in ${service}: see the logs under request id ${ids.requestId}` : `internal error in ${service}: see the logs under job id ${ids.jobId ?? '(unknown)'}`;
}

/** The one message a caller gets for an outage of a service's dependency: no address, no driver text. */
export function dependencyErrorMessage(service: string): string {
  return `a dependency of ${service} is unavailable: retry in a few seconds`;
}

/**
 * Turns a handler failure into what BullMQ understands, at one place for every
 * service (DESIGN.md, typed job errors steer the state machine):
 *
 * - typed errors keep their code and message (they were written for the
 *   caller); bad input, not found and conflict are never retried;
 * - a dependency outage becomes a retryable DEPENDENCY_UNAVAILABLE (503 at the
 *   gateway). In an rpc operation it is not retried: the caller is waiting and
 *   is told to retry (Retry-After), so retrying here would only hold the
 *   answer for the backoff, and an attempt that succeeded after the gateway
 *   answered 503 would apply a write the caller was told failed;
 * - contention (serialization failure, deadlock) is retried in both modes;
 * - a permanent error (Postgres data, integrity or syntax error, a
 *   programming error) fails at once as INTERNAL;
 * - an unknown error is retried, because an unrecognised error is most often
 *   a dependency blip from a library we have not classified, and handlers are
 *   idempotent; once its attempts are spent the caller gets INTERNAL.
 *
 * Only typed messages reach the caller; everything else is logged in full and
 * answered with a generic message naming the request id.
 */
function toJobFailure(err: unknown, ctx: { service: string; op: OperationDef; jobId: string | undefined; requestId: string | undefined }): JobFailure {
  const rpc = ctx.op.mode === 'rpc';
  if (err instanceof UnrecoverableError) return { error: err, retry: false, kind: 'typed' };
  if (err instanceof VouchError) {
    const encoded = encodeJobError(err.toBody());
    const retry = err.retryable && !(rpc && err.code === ERROR_CODES.dependencyUnavailable);
    return { error: retry ? new Error(encoded) : new UnrecoverableError(encoded), retry, kind: 'typed' };
  }
  const kind = classifyFailure(err);
  if (kind === 'outage' || kind === 'contention') {
    const encoded = encodeJobError({ code: ERROR_CODES.dependencyUnavailable, message: dependencyErrorMessage(ctx.service) });
    const retry = !(rpc && kind === 'outage');
    return { error: retry ? new Error(encoded) : new UnrecoverableError(encoded), retry, kind };
  }
  const encoded = encodeJobError({ code: ERROR_CODES.internal, message: internalErrorMessage(ctx.service, ctx) });
  return kind === 'permanent' ? { error: new UnrecoverableError(encoded), retry: false, kind } : { error: new Error(encoded), retry: true, kind };
}

/**
 * The worker every service runs: one BullMQ Worker on the service's queue that
 * answers system.ping, validates each job's input against its operation, runs
 * the one handler, validates the output, and records metrics.
 */
export function startServiceWorker(opts: ServiceWorkerOptions): ServiceWorker {
  assertHandlersComplete(opts.service, opts.operations, opts.handlers);
  const byName = new Map(opts.handlers.map((h) => [h.operation.name, h]));
  const startedAt = Date.now();
  const host = hostname();
  const { metrics, logger } = opts;
  const maxResultBytes = opts.maxResultBytes ?? RESULT_MAX_BYTES;

  // Heartbeats tell the gateway a worker consumes this queue (worker-presence.ts);
  // the same connection holds this worker's tenant slots (tenant-slots.ts).
  const redis = new Redis({ ...(opts.connection as RedisOptions), maxRetriesPerRequest: null, lazyConnect: false });
  redis.on('error', () => {}); // reconnects by itself; a missed beat only ages the heartbeat, a slot command waits
  const presence = startPresence(redis, opts.prefix, opts.queue);

  /**
   * Takes a slot of the job's tenant, or moves the job aside: into the
   * delayed set, parked, without spending an attempt (BullMQ's moveToDelayed
   * with DelayedError), so the worker goes on to the next job in the list.
   * A failed take (the worker closing) runs the job: it was taken already.
   */
  const takeTenantSlot = async (job: Job<JobEnvelope>, jobId: string, tenant: string, token: string | undefined, jobLogger: Logger): Promise<boolean> => {
    let taken: boolean;
    try {
      taken = await slots.take(tenant, jobId, job.timestamp);
    } catch (err) {
      jobLogger.warn({ err }, 'could not take a tenant slot; running the job without one');
      return false;
    }
    if (taken) return true;
    // Each start of the job counts in attemptsStarted; those that ended in an attempt, a stall or this deferral did not run it.
    const deferrals = Math.max(0, job.attemptsStarted - job.attemptsMade - job.stalledCounter - 1);
    await job.moveToDelayed(Date.now() + deferDelayMs(deferrals, Math.random()), token);
    metrics.jobsDeferred.inc({ queue: opts.queue });
    throw new DelayedError();
  };

  /** Frees the job's slot, then wakes its tenant's oldest parked job (a wake-up only: a parked job also comes back on its own). */
  const releaseTenantSlot = async (tenant: string, jobId: string, jobLogger: Logger): Promise<void> => {
    try {
      const next = await slots.release(tenant, jobId);
      if (next) promoteParked(next);
    } catch (err) {
      // The lease runs out by itself.
      jobLogger.warn({ err }, 'could not free a tenant slot; it frees itself when its lease runs out');
    }
  };

  const processor = async (job: Job<JobEnvelope>, token?: string): Promise<unknown> => {
    if (job.name === SYSTEM_JOBS.ping) {
      const ping: PingResult = {
        service: opts.service,
        version: opts.version,
        uptimeSeconds: (Date.now() - startedAt) / 1000,
        concurrency: opts.concurrency,
        pid: process.pid,
        hostname: host,
        at: new Date().toISOString(),
      };
      return ping;
    }
    const handler = byName.get(job.name);
    if (!handler) {
      throw new UnrecoverableError(encodeJobError({ code: ERROR_CODES.badInput, message: `${opts.service} serves no operation named ${job.name}` }));
    }
    const op = handler.operation;
    const envelope = job.data;
    if (!envelope || typeof envelope.tenant !== 'string' || envelope.tenant === '') {
      throw new UnrecoverableError(encodeJobError({ code: ERROR_CODES.badInput, message: `${op.name}: job data has no tenant; jobs must be enqueued through the gateway` }));
    }
    const actor = envelope.actor === undefined ? undefined : ActorSchema.safeParse(envelope.actor);
    if (actor && !actor.success) {
      throw new UnrecoverableError(encodeJobError({ code: ERROR_CODES.badInput, message: `${op.name}: job data has a malformed actor; jobs must be enqueued through the gateway` }));
    }
    // BullMQ gives every job it hands a worker an id; a handler keys its idempotent writes on it.
    const jobId = job.id;
    if (jobId === undefined) throw new UnrecoverableError(encodeJobError({ code: ERROR_CODES.internal, message: `${op.name}: a job without an id reached ${opts.service}` }));
    const jobLogger = logger.child({ op: op.name, jobId, tenant: envelope.tenant, ...(actor?.data ? { agent: actor.data.agent } : {}), requestId: envelope.requestId, attempt: job.attemptsMade + 1 });
    // The slot first: a job moved aside is not validated for nothing (an 8 MB body takes tens of milliseconds of this loop).
    const slot = await takeTenantSlot(job, jobId, envelope.tenant, token, jobLogger);
    const blobs = { prefix: opts.prefix, queue: opts.queue, jobId };
    let ended = false;
    try {
      let input: unknown;
      try {
        input = await unstashBlobs(redis, blobs, envelope.input);
      } catch (err) {
        if (!(err instanceof BlobMissing)) throw err;
        throw new UnrecoverableError(encodeJobError({ code: ERROR_CODES.badInput, message: `${op.name}: ${err.message}` }));
      }
      const parsed = op.input.safeParse(input);
      if (!parsed.success) throw new UnrecoverableError(encodeJobError(badInput(op, parsed.error.issues)));
      // A turn of the loop between validating a large input and running it: each is a long stretch of its own.
      await nextTurn();
      if (job.attemptsMade === 0) {
        const waited = Math.max(0, Date.now() - job.timestamp) / 1000;
        metrics.jobWait.observe({ queue: opts.queue }, waited);
        metrics.tenantQueueWait.observe({ queue: opts.queue, tenant: metrics.tenantLabel(envelope.tenant) }, waited);
      }
      let output: unknown;
      try {
        output = await handler.handle(parsed.data, { tenant: envelope.tenant, actor: actor?.data, requestId: envelope.requestId, jobId, operation: op.name, logger: jobLogger });
      } catch (err) {
        const failure = toJobFailure(err, { service: opts.service, op, jobId, requestId: envelope.requestId });
        // The full error stays here, under the job and request id the caller's answer names.
        const level = failure.kind === 'permanent' || failure.kind === 'unknown' ? 'error' : 'warn';
        jobLogger[level]({ err, failure: failure.kind, retry: failure.retry }, 'handler failed');
        throw failure.error;
      }
      const checked = op.output.safeParse(output);
      if (!checked.success) {
        // A handler that breaks its own contract is a bug; retrying will not fix it.
        const issues = describeFieldIssues(fieldIssuesFromZod(checked.error.issues, 'output'));
        jobLogger.error({ issues }, `${op.name}: handler returned output that breaks the contract`);
        throw new UnrecoverableError(encodeJobError({ code: ERROR_CODES.internal, message: internalErrorMessage(opts.service, { requestId: envelope.requestId, jobId }) }));
      }
      const bytes = Buffer.byteLength(JSON.stringify(checked.data) ?? '');
      if (bytes > maxResultBytes) {
        const message = `${op.name}: its result is ${bytes} bytes, above the ${maxResultBytes}-byte cap on job results: ask for a smaller page`;
        jobLogger.error(message);
        throw new UnrecoverableError(encodeJobError({ code: ERROR_CODES.internal, message }));
      }
      ended = true;
      return checked.data;
    } catch (err) {
      // Its last attempt, or one that will not be retried: nothing will read the job's large input again.
      ended = err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      throw err;
    } finally {
      if (ended) await dropBlobs(redis, blobs, envelope.input).catch((err: unknown) => jobLogger.warn({ err }, 'could not delete the large input stored beside the job; it expires by itself'));
      // Freed before BullMQ moves the job on and fetches the next one, which may be this tenant's.
      if (slot) await releaseTenantSlot(envelope.tenant, jobId, jobLogger);
    }
  };

  const timed = async (job: Job<JobEnvelope>, token?: string): Promise<unknown> => {
    const stop = metrics.jobDuration.startTimer({ queue: opts.queue });
    let deferred = false;
    try {
      return await processor(job, token);
    } catch (err) {
      deferred = err instanceof DelayedError;
      throw err;
    } finally {
      // A job moved aside did not run: it is no attempt's duration.
      if (!deferred) stop();
    }
  };

  const worker = new Worker<JobEnvelope>(opts.queue, timed, {
    connection: opts.connection,
    prefix: opts.prefix,
    concurrency: opts.concurrency,
    ...(opts.lockDuration ? { lockDuration: opts.lockDuration } : {}),
    ...(opts.stalledInterval ? { stalledInterval: opts.stalledInterval } : {}),
    ...(opts.maxStalledCount !== undefined ? { maxStalledCount: opts.maxStalledCount } : {}),
    autorun: true,
  });
  worker.on('completed', () => metrics.jobsProcessed.inc({ queue: opts.queue, outcome: 'completed' }));
  worker.on('failed', () => metrics.jobsProcessed.inc({ queue: opts.queue, outcome: 'failed' }));
  // Without a listener an 'error' (Redis gone) would be an unhandled event and kill the process.
  worker.on('error', (err) => logger.error({ err }, 'worker error'));
  /** Brings a parked job back to the list. A bare Job names it without reading its data: a job's data may be an 8 MB body to fetch and parse for nothing. */
  const promoteParked = (jobId: string) => void new Job(worker, 'parked', undefined, {}, jobId).promote().catch(() => undefined); // gone or already back: nothing to wake
  // Made once the Worker exists (the processor reads it only when a job runs): jobs park in its delayed set and are promoted through it.
  const slots = createTenantSlots({
    redis,
    prefix: opts.prefix,
    queue: opts.queue,
    share: Math.min(opts.concurrency, opts.tenantConcurrency ?? defaultTenantShare(opts.concurrency)),
    // BullMQ's default lockDuration: a job whose worker died is run again after it; its slot frees about then too.
    leaseMs: opts.tenantLeaseMs ?? opts.lockDuration ?? 30_000,
    delayedKey: worker.toKey('delayed'),
    promote: promoteParked,
  });

  return {
    worker,
    async close(graceMs) {
      // First stop being counted as a consumer, so no new ping is sent here while we stop.
      await presence.stop();
      let timer: NodeJS.Timeout | undefined;
      const graceful = worker.close().then(() => 'closed' as const);
      const deadline = new Promise<'deadline'>((resolve) => {
        timer = setTimeout(() => resolve('deadline'), graceMs);
      });
      const outcome = await Promise.race([graceful, deadline]);
      clearTimeout(timer);
      // Running jobs have freed their slots (graceful), or leave them to their leases (forced).
      const stopSlots = () => {
        slots.stop();
        redis.disconnect();
      };
      if (outcome === 'deadline') {
        logger.warn({ graceMs }, 'running jobs did not finish within the grace period; forcing close (their locks expire and another worker re-runs them)');
        await worker.close(true);
        stopSlots();
        return { forced: true };
      }
      stopSlots();
      return { forced: false };
    },
  };
}
