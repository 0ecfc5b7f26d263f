import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { redactUrl } from './config.js';
import { classifyFailure } from './failure-kind.js';
import { POOLER_HINT, StartupError, connectAtStart, explainPostgresFailure } from './startup.js';
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
  /**
   * `url` is a pooler in transaction mode (PgBouncer pool_mode=transaction):
   * each transaction may run on another server connection, shared with other
   * services and schemas, and PgBouncer refuses the `options` and
   * `statement_timeout` start-up parameters (or, told to ignore them, drops
   * them). The schema and the statement timeout are then set with SET LOCAL
   * at the start of every transaction, and a pool.query outside one runs in
   * a transaction of its own (two more round trips). Default false: they are
   * set once per connection, at connect.
   */
  transactionPooling?: boolean;
}

/**
 * What a pool in transaction-pooling mode sends instead of BEGIN: the
 * transaction with the pool's schema and statement timeout, in one round
 * trip (a simple query of several statements).
 */
const BEGIN_WITH_SETTINGS = new WeakMap<pg.Pool, string>();

/**
 * A pool whose connections resolve unqualified names in the service's own
 * schema: each service writes only its schema (docs/architecture.md, "Data").
 * Behind a pooler in transaction mode (`transactionPooling`), each
 * transaction sets it (docs/architecture.md, "Postgres behind a pooler").
 */
export function createPool(opts: PoolOptions): pg.Pool {
  assertIdentifier(opts.schema);
  const statementTimeout = opts.statementTimeoutMs ?? 0;
  const perTransaction = opts.transactionPooling === true;
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    ...(perTransaction ? {} : { options: `-c search_path=${opts.schema}` }),
    connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_PG_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    ...(statementTimeout > 0 ? { ...(perTransaction ? {} : { statement_timeout: statementTimeout }), query_timeout: statementTimeout + 5_000 } : {}),
    ...(opts.applicationName ? { application_name: opts.applicationName } : {}),
  });
  // An idle client that loses its server emits 'error' on the pool; without a
  // listener that would crash the process. The next query reconnects.
  pool.on('error', () => {});
  if (perTransaction) {
    const settings = [`SET LOCAL search_path TO ${pg.escapeIdentifier(opts.schema)}`, ...(statementTimeout > 0 ? [`SET LOCAL statement_timeout = ${statementTimeout}`] : [])];
    BEGIN_WITH_SETTINGS.set(pool, ['BEGIN', ...settings].join('; '));
    pool.query = queryInOwnTransaction(pool);
  }
  return pool;
}

/**
 * pool.query for a pool behind a transaction-mode pooler: the statement runs
 * in a transaction of its own that sets the schema first. A per-query
 * query_timeout (pingPostgres) bounds BEGIN and COMMIT too. Promise forms
 * only: nothing here passes a callback.
 */
function queryInOwnTransaction(pool: pg.Pool): pg.Pool['query'] {
  const run = (...args: unknown[]) => {
    if (args.some((a) => typeof a === 'function')) throw new TypeError('pool.query with a callback is not supported behind a transaction pooler: use the promise form');
    const first = args[0] as { query_timeout?: unknown } | undefined;
    const queryTimeoutMs = typeof first === 'object' && first !== null && typeof first.query_timeout === 'number' ? first.query_timeout : undefined;
    return inTransaction(pool, (client) => (client.query as (...a: unknown[]) => Promise<unknown>)(...args), queryTimeoutMs);
  };
  return run as unknown as pg.Pool['query'];
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
 *
 * Behind a transaction pooler (createPool's `transactionPooling`), BEGIN also
 * sets the pool's schema and statement timeout for the transaction.
 */
export function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, fn);
}

async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, queryTimeoutMs?: number): Promise<T> {
  const control = (text: string): string | pg.QueryConfig => (queryTimeoutMs === undefined ? text : ({ text, query_timeout: queryTimeoutMs } as pg.QueryConfig));
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
    await client.query(control(BEGIN_WITH_SETTINGS.get(pool) ?? 'BEGIN'));
    const result = await fn(client);
    await client.query(control('COMMIT'));
    release(lost);
    return result;
  } catch (err) {
    // A connection that failed mid-transaction is discarded, not handed to the next caller.
    const broken = lost !== undefined || classifyFailure(err) === 'outage';
    if (!broken) await client.query(control('ROLLBACK')).catch(() => {});
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

/** Where a process's Postgres work goes, from DATABASE_URL and DATABASE_DIRECT_URL. */
export interface PostgresTargets {
  /** The service pools' URL: DATABASE_URL. */
  url: string;
  /** For work that needs a session of its own (migrations' advisory lock, LISTEN): DATABASE_DIRECT_URL, else DATABASE_URL. */
  directUrl: string;
  /** The variable that names directUrl, for the messages that say what to fix. */
  directVariable: 'DATABASE_URL' | 'DATABASE_DIRECT_URL';
  /** Whether DATABASE_URL is a transaction-mode pooler: DATABASE_DIRECT_URL is set (createPool's `transactionPooling`). */
  transactionPooling: boolean;
}

/**
 * DATABASE_DIRECT_URL set means DATABASE_URL is a pooler in transaction mode
 * (docs/architecture.md, "Postgres behind a pooler"): the pools set their
 * schema per transaction, and session work goes to the server directly.
 * Unset, everything goes to DATABASE_URL as before.
 */
export function postgresTargets(env: { DATABASE_URL: string; DATABASE_DIRECT_URL?: string | undefined }): PostgresTargets {
  const direct = env.DATABASE_DIRECT_URL;
  return direct
    ? { url: env.DATABASE_URL, directUrl: direct, directVariable: 'DATABASE_DIRECT_URL', transactionPooling: true }
    : { url: env.DATABASE_URL, directUrl: env.DATABASE_URL, directVariable: 'DATABASE_URL', transactionPooling: false };
}

/**
 * Refuses a start whose pool does not resolve names in `schema`: what a
 * pooler in transaction mode does to a schema set at connect when it is told
 * to ignore the `options` start-up parameter (PgBouncer's
 * ignore_startup_parameters) and DATABASE_DIRECT_URL is not set; without
 * this the service would read and write another schema, or fail every
 * statement with "relation does not exist". A pool that cannot connect (a
 * pooler that refuses the parameter) fails the start too, in one line
 * (StartupError).
 */
export async function assertPoolSchema(pool: Queryable, schema: string, at: { url: string; connectTimeoutMs: number }): Promise<void> {
  let current: string | null | undefined;
  try {
    current = (await pool.query<{ schema: string | null }>('SELECT current_schema() AS schema')).rows[0]?.schema;
  } catch (err) {
    throw explainPostgresFailure(err, { url: at.url, connectTimeoutMs: at.connectTimeoutMs });
  }
  if (current === schema) return;
  throw new StartupError(
    'DATABASE_URL',
    `Postgres at DATABASE_URL=${redactUrl(at.url)} resolves names in ${current ? `schema "${current}"` : 'no schema'}, not in "${schema}": ${POOLER_HINT}`,
  );
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
export async function runMigrations(opts: {
  /**
   * A direct connection (postgresTargets' directUrl), never a pooler in
   * transaction mode: node-pg-migrate holds a session's advisory lock and
   * sets the session's search_path, which such a pooler would leave on a
   * server connection that other clients then get.
   */
  databaseUrl: string;
  schema: string;
  dir: string;
  logger?: Logger;
  connectTimeoutMs?: number;
  /** The variable that names databaseUrl, for a failure at connect; default DATABASE_URL. */
  variable?: string;
}): Promise<string[]> {
  assertIdentifier(opts.schema);
  const log = opts.logger;
  // Our own client, so the connect is bounded and its failure says which variable to fix (StartupError).
  const client = await connectAtStart({
    url: opts.databaseUrl,
    connectTimeoutMs: opts.connectTimeoutMs ?? DEFAULT_PG_CONNECT_TIMEOUT_MS,
    applicationName: 'migrations',
    ...(opts.variable ? { variable: opts.variable } : {}),
  });
  try {
    return await migrateWith(client, opts, log);
  } finally {
    await client.end().catch(() => {});
  }
}

async function migrateWith(client: pg.Client, opts: { databaseUrl: string; schema: string; dir: string }, log: Logger | undefined): Promise<string[]> {
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
  if (names.length) log?.info({ schema: opts.schema, migrations: names, database: redactUrl(opts.databaseUrl) }, 'migrations applied');
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
