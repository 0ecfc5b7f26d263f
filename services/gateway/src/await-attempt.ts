import { setTimeout as sleep } from 'node:timers/promises';
import { DependencyError, type QueueName } from '@vouch/contracts';
import type { JobOutcome, QueueHub, Queryable } from '@vouch/platform';
import { readIdempotencyKey } from './idempotency.js';

/** First and longest pause between looks at an attempt whose job is not in Redis (not added yet, or a ping already removed). */
const FIRST_PAUSE_MS = 5;
const MAX_PAUSE_MS = 200;

/** The attempt of another request with the same Idempotency-Key, and the job it runs as. */
export interface KeyedAttempt {
  tenant: string;
  key: string;
  attempt: string;
  queue: QueueName;
  jobId: string;
}

/** How an attempt ended for a request that waited on it: its job's outcome, or the answer its request recorded. */
export type AttemptOutcome = JobOutcome | { kind: 'recorded'; status: number; body: unknown };

/**
 * Waits up to timeoutMs for the answer of an attempt another request runs,
 * without adding its job again. The job's result is not enough to wait on:
 * the request that runs the attempt records its answer in idempotency_keys
 * and then removes the job from Redis (a ping's job is removed the moment it
 * completes), so a waiter that looks after that finds no job, and one that
 * added it again would run the operation twice. So each look reads the job
 * first, for an attempt whose own request is gone (it got a 504) and left
 * the outcome in Redis, then the key, where every delivered answer is
 * recorded before its job leaves. A job in Redis announces its end; one not
 * there is polled with a growing pause. Throws a DependencyError when the
 * attempt failed in a way worth retrying and its key was released: the caller
 * retries with the same key and it runs again.
 */
export async function awaitAttempt(hub: QueueHub, db: Queryable, at: KeyedAttempt, timeoutMs: number): Promise<AttemptOutcome> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    const job = await hub.readJob(at.queue, at.jobId);
    if (job?.state === 'completed') return { kind: 'completed', value: job.job.returnvalue };
    if (job?.state === 'failed') return { kind: 'failed', failedReason: job.job.failedReason };
    const record = await readIdempotencyKey(db, at.tenant, at.key);
    if (record?.attempt !== at.attempt || record.state === 'retry') {
      throw new DependencyError(`the earlier request with Idempotency-Key ${at.key} failed with an error worth retrying: retry with the same key and it runs again`);
    }
    if (record.state === 'done') return { kind: 'recorded', status: record.status, body: record.body };
    const left = deadline - Date.now();
    if (left <= 0) return { kind: 'timeout' };
    if (job) await hub.waitFor(at.queue, at.jobId, left);
    else await sleep(Math.min(pause, left));
  }
}
