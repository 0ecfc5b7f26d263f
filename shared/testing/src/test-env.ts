import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

/** Redis that integration tests use: `REDIS_URL`, else the local server. */
export const TEST_REDIS_URL: string = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Postgres that integration tests use: `DATABASE_URL`, else the local `test` database. */
export const TEST_DATABASE_URL: string = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

// Postgres truncates identifiers at 63 bytes; 50 leaves room for suffixes a
// service may add (e.g. `<schema>_outbox`) and keeps BullMQ keys short.
const MAX_NAME_LENGTH = 50;
let sequence = 0;

/**
 * A name no other call, test file or concurrent run will produce: lowercase,
 * `[a-z0-9_]`, starting with `t_`, at most 50 characters. It is valid as a
 * BullMQ prefix and, unquoted, as a Postgres schema name.
 *
 * @param label - what the name is for (e.g. the test file); reduced to `[a-z0-9_]`.
 */
/**
 * The test Postgres URL at another port of this host (a closed port, a
 * silent server, a proxy), with a password, so that a test can check that
 * no message prints it.
 */
export function testPostgresUrlAt(port: number): string {
  const u = new URL(TEST_DATABASE_URL);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  u.username = 'vouch';
  u.password = 's3cret-pw';
  return u.toString();
}

export function uniqueName(label: string): string {
  sequence += 1;
  // pid + per-process sequence separate parallel test files; the random part
  // separates runs that reuse a pid (containers often start at pid 1).
  const suffix = `${process.pid.toString(36)}${sequence.toString(36)}_${randomBytes(4).toString('hex')}`;
  const room = MAX_NAME_LENGTH - 't_'.length - '_'.length - suffix.length;
  const cleanLabel = label
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, Math.max(room, 0))
    .replace(/_$/, '');
  return cleanLabel ? `t_${cleanLabel}_${suffix}` : `t_${suffix}`;
}

/** A BullMQ prefix owned by one test file. */
export interface TestPrefix {
  /** Pass as BullMQ's `prefix`; every key lives under `${prefix}:`. */
  readonly prefix: string;
  /** Deletes every Redis key under `${prefix}:` and closes the connection; safe to call twice. */
  cleanup(): Promise<void>;
}

/**
 * Reserves a fresh BullMQ prefix on the test Redis. Fails at once, naming the
 * URL, when Redis does not answer, so a missing server reads as such rather
 * than as a hung test.
 */
export async function useTestPrefix(label: string): Promise<TestPrefix> {
  const prefix = uniqueName(label);
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    throw new Error(`Redis is not reachable at ${TEST_REDIS_URL} (set REDIS_URL or start the local server): ${String(error)}`, { cause: error });
  }
  let done: Promise<void> | undefined;
  return {
    prefix,
    cleanup() {
      done ??= (async () => {
        try {
          await deleteKeysUnder(redis, `${prefix}:`);
        } finally {
          await redis.quit().catch(() => redis.disconnect());
        }
      })();
      return done;
    },
  };
}

async function deleteKeysUnder(redis: Redis, keyPrefix: string): Promise<void> {
  // SCAN, not KEYS: KEYS blocks a shared server for its whole keyspace.
  const pattern = `${keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    // UNLINK frees memory off the main thread; big BullMQ hashes stay cheap.
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

/** A Postgres schema name owned by one test file. */
export interface TestSchema {
  /** A lowercase identifier; the service's migrations create the schema. */
  readonly schema: string;
  /** Drops the schema and everything in it; safe to call twice. */
  cleanup(): Promise<void>;
}

/**
 * Reserves a fresh Postgres schema name. Nothing is created (the service under
 * test runs its own migrations into it); cleanup drops it with CASCADE. Fails
 * at once, naming the URL, when Postgres does not answer.
 */
export async function useTestSchema(label: string): Promise<TestSchema> {
  const schema = uniqueName(label);
  await withClient(async (client) => {
    await client.query('SELECT 1');
  });
  let done: Promise<void> | undefined;
  return {
    schema,
    cleanup() {
      done ??= withClient(async (client) => {
        await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`);
      });
      return done;
    },
  };
}

async function withClient(fn: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw new Error(`Postgres is not reachable at ${TEST_DATABASE_URL} (set DATABASE_URL or start the local server): ${String(error)}`, { cause: error });
  }
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
