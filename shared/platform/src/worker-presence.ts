import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Which workers are consuming a queue, from heartbeats rather than CLIENT
 * LIST. BullMQ names a worker's blocking connection, but it drops and
 * re-opens that connection whenever a blocking read overruns its deadline
 * (a busy event loop, a slow Redis): for that moment CLIENT LIST shows no
 * worker, and "no worker is connected" would be a lie. A heartbeat survives
 * a reconnect.
 */

/** How often a worker refreshes its heartbeat. */
export const PRESENCE_INTERVAL_MS = 2_000;
/** A heartbeat older than this is a worker that stopped (three missed beats). */
export const PRESENCE_TTL_MS = 3 * PRESENCE_INTERVAL_MS;

/** The sorted set of a queue's worker heartbeats (member: worker id, score: last beat in ms). Lives under the BullMQ prefix. */
export function presenceKey(prefix: string, queue: string): string {
  return `${prefix}:${queue}:vouch-workers`;
}

export interface WorkerPresence {
  id: string;
  /** Removes this worker's heartbeat; it stops counting at once. */
  stop(): Promise<void>;
}

/** Starts beating for one worker on `queue`. Failures (Redis down) are retried at the next beat. */
export function startPresence(redis: Redis, prefix: string, queue: string): WorkerPresence {
  const id = randomUUID();
  const key = presenceKey(prefix, queue);
  const beat = () =>
    redis
      .multi()
      .zadd(key, Date.now(), id)
      // Forget workers that died without saying so, so the set stays small.
      .zremrangebyscore(key, '-inf', Date.now() - 10 * PRESENCE_TTL_MS)
      .pexpire(key, 10 * PRESENCE_TTL_MS)
      .exec()
      .catch(() => undefined);
  void beat();
  const timer = setInterval(beat, PRESENCE_INTERVAL_MS);
  timer.unref();
  return {
    id,
    async stop() {
      clearInterval(timer);
      await redis.zrem(key, id).catch(() => undefined);
    },
  };
}

/** Workers whose heartbeat is fresh. */
export async function liveWorkerCount(redis: Redis, prefix: string, queue: string, now = Date.now()): Promise<number> {
  return redis.zcount(presenceKey(prefix, queue), now - PRESENCE_TTL_MS, '+inf');
}
