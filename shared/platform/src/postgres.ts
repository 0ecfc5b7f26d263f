import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import type { Logger } from './logger.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Something that runs queries: the pool, or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

function assertIdentifier(schema: string): void {
  if (!IDENTIFIER.test(schema)) throw new Error(`invalid Postgres schema name ${JSON.stringify(schema)}: use lowercase letters, digits and _`);
}

/**
 * A pool whose connections resolve unqualified names in the service's own
 * schema: each service writes only its schema (docs/architecture.md, "Data").
 */
export function createPool(opts: { url: string; schema: string; max?: number; applicationName?: string }): pg.Pool {
  assertIdentifier(opts.schema);
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    options: `-c search_path=${opts.schema}`,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    ...(opts.applicationName ? { application_name: opts.applicationName } : {}),
  });
  // An idle client that loses its server emits 'error' on the pool; without a
  // listener that would crash the process. The next query reconnects.
  pool.on('error', () => {});
  return pool;
}

/** Runs fn in a transaction: COMMIT on success, ROLLBACK on any error. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Whether Postgres answers within the pool's connection timeout. */
export async function pingPostgres(pool: pg.Pool): Promise<boolean> {
  try {
    await pool.query('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

const MIGRATIONS_TABLE = 'pgmigrations';

/** A per-schema advisory lock id, so services migrating their own schemas do not wait on each other. */
function migrationLockId(schema: string): number {
  return createHash('sha256').update(`vouch-migrate:${schema}`).digest().readUInt32BE(0);
}

/**
 * Applies the SQL migrations in `dir` to `schema`, creating it if needed.
 * node-pg-migrate holds an advisory lock while it runs (waiting, not failing,
 * when another replica holds it), so replicas starting together apply each
 * migration once.
 */
export async function runMigrations(opts: { databaseUrl: string; schema: string; dir: string; logger?: Logger }): Promise<string[]> {
  assertIdentifier(opts.schema);
  const log = opts.logger;
  const applied = await runner({
    databaseUrl: opts.databaseUrl,
    dir: opts.dir,
    migrationsTable: MIGRATIONS_TABLE,
    schema: opts.schema,
    migrationsSchema: opts.schema,
    createSchema: true,
    createMigrationsSchema: true,
    direction: 'up',
    checkOrder: true,
    lockValue: migrationLockId(opts.schema),
    advisoryLockMode: 'wait',
    logger: {
      debug: () => {},
      info: (msg: string) => log?.debug({ schema: opts.schema }, msg),
      warn: (msg: string) => log?.warn({ schema: opts.schema }, msg),
      error: (msg: string) => log?.error({ schema: opts.schema }, msg),
    },
  });
  const names = applied.map((m) => m.name);
  if (names.length) log?.info({ schema: opts.schema, migrations: names }, 'migrations applied');
  return names;
}

/** Migration names in `dir` that are not yet recorded as applied in `schema`. */
export async function pendingMigrations(db: Queryable, schema: string, dir: string): Promise<string[]> {
  assertIdentifier(schema);
  const files = (await readdir(dir)).filter((f) => /\.(sql|js|ts)$/.test(f)).map((f) => f.replace(/\.(sql|js|ts)$/, '')).sort();
  const exists = await db.query(`SELECT to_regclass($1) AS t`, [`${schema}.${MIGRATIONS_TABLE}`]);
  if (!exists.rows[0]?.t) return files;
  const done = await db.query<{ name: string }>(`SELECT name FROM "${schema}".${MIGRATIONS_TABLE}`);
  const applied = new Set(done.rows.map((r) => r.name));
  return files.filter((f) => !applied.has(f));
}
