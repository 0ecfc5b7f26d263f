import type { RedisOptions as BullRedisOptions } from 'bullmq';
import { Redis, SentinelConnector, type RedisOptions, type SentinelConnectionOptions } from 'ioredis';
import { redactUrl } from './config.js';

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

/** Sentinels to ask for the primary of one master group (REDIS_SENTINELS, REDIS_SENTINEL_NAME). */
export interface RedisSentinels {
  sentinels: { host: string; port: number }[];
  /** The master group's name in the sentinels' configuration. */
  name: string;
  /** AUTH for the sentinels themselves (REDIS_SENTINEL_USERNAME, REDIS_SENTINEL_PASSWORD); the Redis nodes' come from the URL. */
  username?: string;
  password?: string;
}

/**
 * Where a process's Redis connections go: a redis:// URL, or the URL's
 * credentials, database and TLS with the primary found through sentinels
 * (the URL's host and port are then not used).
 */
export type RedisTarget = string | { url: string; sentinel?: RedisSentinels };

/** The RedisTarget a parsed configuration names (commonEnvSchema's REDIS_* variables). */
export function redisTarget(env: { REDIS_URL: string; REDIS_SENTINELS?: { host: string; port: number }[] | undefined; REDIS_SENTINEL_NAME?: string | undefined; REDIS_SENTINEL_USERNAME?: string | undefined; REDIS_SENTINEL_PASSWORD?: string | undefined }): RedisTarget {
  if (!env.REDIS_SENTINELS?.length) return env.REDIS_URL;
  return {
    url: env.REDIS_URL,
    sentinel: {
      sentinels: env.REDIS_SENTINELS,
      name: env.REDIS_SENTINEL_NAME ?? DEFAULT_SENTINEL_NAME,
      ...(env.REDIS_SENTINEL_USERNAME ? { username: env.REDIS_SENTINEL_USERNAME } : {}),
      ...(env.REDIS_SENTINEL_PASSWORD ? { password: env.REDIS_SENTINEL_PASSWORD } : {}),
    },
  };
}

/** The master group name when REDIS_SENTINEL_NAME is unset (the name in Redis's own sentinel.conf example). */
export const DEFAULT_SENTINEL_NAME = 'mymaster';

/** The target for a log line: the URL without its password, or the sentinels and the group. */
export function describeRedisTarget(target: RedisTarget): string {
  if (typeof target === 'string') return redactUrl(target);
  if (!target.sentinel) return redactUrl(target.url);
  return `master group ${target.sentinel.name} through sentinels ${target.sentinel.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}`;
}

/**
 * ioredis's SentinelConnector, with each connection's failover detector
 * closed when the connection closes. ioredis leaves the detector (its
 * +switch-master subscriptions) of a connection that closed under it, a
 * primary that died, listening; when the sentinels then announce the
 * promotion, the stale detector disconnects the connector, and if the client
 * is at that moment asking the sentinels for the primary, ioredis gives the
 * client up for good (status "end": it never reconnects). In the Sentinel
 * failover test that left the gateway's producer answering 503 for ever after
 * the primary was killed. The connection that follows subscribes a detector of
 * its own once it connects.
 */
class DetectorPerConnectionSentinelConnector extends SentinelConnector {
  /** ioredis hands a Connector the client's options: with `sentinels`, as here, they are a SentinelConnector's. */
  constructor(options: unknown) {
    super(options as SentinelConnectionOptions);
  }

  override connect(eventEmitter: Parameters<SentinelConnector['connect']>[0]): ReturnType<SentinelConnector['connect']> {
    return super.connect(eventEmitter).then((stream) => {
      // `failoverDetector` is ioredis's private field; `cleanup` unsubscribes it and makes it ignore what is still on its way.
      stream.once('close', () => (this as unknown as { failoverDetector: { cleanup(): void } | null }).failoverDetector?.cleanup());
      return stream;
    });
  }
}

/**
 * ioredis options for a target. Through sentinels: ioredis asks them for the
 * group's primary on every (re)connect, checks the node's ROLE once connected
 * (a node that is a replica by then is dropped and the sentinels asked again),
 * and with `failoverDetector` listens for +switch-master on the sentinels so a
 * failover that leaves the old primary running (a manual SENTINEL FAILOVER, a
 * managed switch) drops the connection at once instead of at the first READONLY.
 */
export function redisOptions(target: RedisTarget): RedisOptions {
  if (typeof target === 'string') return redisOptionsFromUrl(target);
  const fromUrl = redisOptionsFromUrl(target.url);
  if (!target.sentinel) return fromUrl;
  const { host: _host, port: _port, ...nodeOptions } = fromUrl;
  const s = target.sentinel;
  return {
    ...nodeOptions,
    sentinels: s.sentinels,
    name: s.name,
    role: 'master',
    ...(s.username ? { sentinelUsername: s.username } : {}),
    ...(s.password ? { sentinelPassword: s.password } : {}),
    // rediss:// covers the Redis nodes behind the sentinels too.
    ...(fromUrl.tls ? { enableTLSForSentinelMode: true } : {}),
    failoverDetector: true,
    Connector: DetectorPerConnectionSentinelConnector,
    // When every sentinel is unreachable: the same back-off as a lost connection, forever.
    sentinelRetryStrategy: reconnectDelay,
  };
}

/** Reconnect quickly at first, then every 2 s at most, forever. */
function reconnectDelay(attempt: number): number {
  return Math.min(50 * 2 ** attempt, 2_000);
}

/**
 * A node that answers READONLY was the primary and is a replica now (a
 * failover the client has not noticed): reconnect, which asks the sentinels
 * again. `resend`: the failed command is sent again on the new connection
 * (consumers, which wait across reconnects anyway; safe because a replica
 * refused it before writing anything); otherwise it fails, as every command
 * on a fail-fast producer does while Redis is away.
 */
function reconnectOnReadonly(resend: boolean): (err: Error) => boolean | 2 {
  return (err) => (err.message.startsWith('READONLY') ? (resend ? 2 : true) : false);
}

/**
 * Options for consumers (BullMQ Worker, QueueEvents): commands wait across a
 * reconnect instead of failing, as BullMQ requires (`maxRetriesPerRequest: null`).
 */
export function consumerRedisOptions(target: RedisTarget, name?: string): RedisOptions & BullRedisOptions {
  return { ...redisOptions(target), maxRetriesPerRequest: null, retryStrategy: reconnectDelay, reconnectOnError: reconnectOnReadonly(true), ...(name ? { connectionName: name } : {}) };
}

/**
 * A connection for producers at the edge (the gateway's Queues): while Redis is
 * down a command fails at once instead of queueing in memory, so the caller
 * gets a 503 rather than a hung request; the client keeps reconnecting.
 */
export function createProducerRedis(target: RedisTarget, name?: string): Redis {
  return new Redis({
    ...redisOptions(target),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: reconnectDelay,
    reconnectOnError: reconnectOnReadonly(false),
    // Commands issued in the same tick (concurrent requests' adds) go out in one write.
    enableAutoPipelining: true,
    ...(name ? { connectionName: name } : {}),
  });
}

/** A consumer-style connection (waits across reconnects). */
export function createConsumerRedis(target: RedisTarget, name?: string): Redis {
  return new Redis(consumerRedisOptions(target, name));
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
