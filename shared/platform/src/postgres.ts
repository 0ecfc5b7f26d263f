import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { classifyFailure } from './failure-kind.js';
import { connectAtStart } from './startup.js';
import type { Logger } from './logger.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Something that runs queries: the pool, or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

function assertIdentifier(schema: string): void {
  if (!IDENTIFIER.test(schema)) throw new Error(`invalid Postgres schema name ${JSON.stringify(schema)}: use lowercase letters, digits and _`);
}

/** How long a connection may take to open (TCP, TLS, start-up and auth) unless the caller says otherwise. */
export const DEFAULT_PG_CONNECT_TIMEOUT_MS = 5_000;

export interface PoolOptions {
  url: string;
  schema: string;
  max?: number;
  applicationName?: string;
  /** Bound on opening a connection; a server that accepts and never answers fails after it. Default 5 s. */
  connectTimeoutMs?: number;
  /**
   * Server-side statement_timeout (0 or unset: none). A client-side read
   * timeout 5 s above it covers a server that stopped answering altogether;
   * pool.query then discards the connection instead of reusing it.
   */
  statementTimeoutMs?: number;
}

/**
 * A pool whose connections resolve unqualified names in the service's own
 * schema: each service writes only its schema (docs/architecture.md, "Data").
 */
export function createPool(opts: PoolOptions): pg.Pool {
  assertIdentifier(opts.schema);
  const statementTimeout = opts.statementTimeoutMs ?? 0;
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    options: `-c search_path=${opts.schema}`,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_PG_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    ...(statementTimeout > 0 ? { statement_timeout: statementTimeout, query_timeout: statementTimeout + 5_000 } : {}),
    ...(opts.applicationName ? { application_name: opts.applicationName } : {}),
  });
  // An idle client that loses its server emits 'error' on the pool; without a
  // listener that would crash the process. The next query reconnects.
  pool.on('error', () => {});
  return pool;
}

/**
 * Runs fn in a transaction: COMMIT on success, ROLLBACK on any error.
 *
 * While a client is checked out the pool does not listen for its errors, and
 * Postgres may end the session between two statements (an
 * idle_in_transaction_session_timeout, pg_terminate_backend, a restart):
 * node-postgres then emits 'error' on the client, which with no listener
 * would crash the process. The transaction listens for it instead; the next
 * statement fails (an outage, so a job retries), the error names why the
 * session ended, and the client is discarded, not handed to the next caller.
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost ??= err;
  };
  client.on('error', onError);
  const release = (err?: Error) => {
    client.removeListener('error', onError);
    client.release(err);
  };
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    release(lost);
    return result;
  } catch (err) {
    // A connection that failed mid-transaction is discarded, not handed to the next caller.
    const broken = lost !== undefined || classifyFailure(err) === 'outage';
    if (!broken) await client.query('ROLLBACK').catch(() => {});
    release(broken ? (lost ?? toError(err)) : undefined);
    if (lost && lost !== err) throw new Error(`Postgres ended the session during the transaction: ${lost.message}`, { cause: err });
    throw err;
  }
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** Whether Postgres answers within the pool's connection timeout and then `timeoutMs`, so a hung server never hangs a probe. */
export async function pingPostgres(pool: pg.Pool, timeoutMs = 2_000): Promise<boolean> {
  try {
    // node-postgres reads a per-query query_timeout; its types leave it out.
    await pool.query({ text: 'SELECT 1', query_timeout: timeoutMs } as pg.QueryConfig);
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
export async function runMigrations(opts: { databaseUrl: string; schema: string; dir: string; logger?: Logger; connectTimeoutMs?: number }): Promise<string[]> {
  assertIdentifier(opts.schema);
  const log = opts.logger;
  // Our own client, so the connect is bounded and its failure says which variable to fix (StartupError).
  const client = await connectAtStart({ url: opts.databaseUrl, connectTimeoutMs: opts.connectTimeoutMs ?? DEFAULT_PG_CONNECT_TIMEOUT_MS, applicationName: 'migrations' });
  try {
    return await migrateWith(client, opts, log);
  } finally {
    await client.end().catch(() => {});
  }
}

async function migrateWith(client: pg.Client, opts: { schema: string; dir: string }, log: Logger | undefined): Promise<string[]> {
  const applied = await runner({
    dbClient: client,
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
