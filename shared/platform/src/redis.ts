import type { RedisOptions as BullRedisOptions } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';

/** ioredis options from a redis:// or rediss:// URL. */
export function redisOptionsFromUrl(rawUrl: string): RedisOptions {
  const u = new URL(rawUrl);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  return {
    host: u.hostname,
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    db: Number.isFinite(db) ? db : 0,
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** Reconnect quickly at first, then every 2 s at most, forever. */
function reconnectDelay(attempt: number): number {
  return Math.min(50 * 2 ** attempt, 2_000);
}

/**
 * Options for consumers (BullMQ Worker, QueueEvents): commands wait across a
 * reconnect instead of failing, as BullMQ requires (`maxRetriesPerRequest: null`).
 */
export function consumerRedisOptions(rawUrl: string, name?: string): RedisOptions & BullRedisOptions {
  return { ...redisOptionsFromUrl(rawUrl), maxRetriesPerRequest: null, retryStrategy: reconnectDelay, ...(name ? { connectionName: name } : {}) };
}

/**
 * A connection for producers at the edge (the gateway's Queues): while Redis is
 * down a command fails at once instead of queueing in memory, so the caller
 * gets a 503 rather than a hung request; the client keeps reconnecting.
 */
export function createProducerRedis(rawUrl: string, name?: string): Redis {
  return new Redis({
    ...redisOptionsFromUrl(rawUrl),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: reconnectDelay,
    // Commands issued in the same tick (concurrent requests' adds) go out in one write.
    enableAutoPipelining: true,
    ...(name ? { connectionName: name } : {}),
  });
}

/** A consumer-style connection (waits across reconnects). */
export function createConsumerRedis(rawUrl: string, name?: string): Redis {
  return new Redis(consumerRedisOptions(rawUrl, name));
}

/** Whether Redis answers PING within the timeout. */
export async function pingRedis(redis: Redis, timeoutMs = 1_000): Promise<boolean> {
  try {
    const answer = await withTimeout(redis.ping(), timeoutMs);
    return answer === 'PONG';
  } catch {
    return false;
  }
}

/** Quit politely; disconnect if the server does not answer. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  try {
    await withTimeout(redis.quit(), 1_000);
  } catch {
    redis.disconnect();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
