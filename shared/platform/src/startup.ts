import pg from 'pg';
import { redactUrl } from './config.js';
import { classifyFailure } from './failure-kind.js';

/** The exit code of a process that cannot start because of its configuration (EX_CONFIG, as loadConfigOrExit uses). */
export const EXIT_CONFIG = 78;

/**
 * A process cannot start because what a config variable names is unreachable
 * or refuses it. The message is one line for an operator: the variable, its
 * value with the password hidden, what happened and what to check.
 */
export class StartupError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'StartupError';
    this.variable = variable;
  }
}

/** What to do when DATABASE_URL is a pooler in transaction mode that refuses or drops what a connection sets at start. */
export const POOLER_HINT =
  'a pooler in transaction mode (PgBouncer) refuses or drops the schema and timeout a connection sets at start: set DATABASE_DIRECT_URL to the Postgres server itself, and the services set them in each transaction';

/** Why a Postgres connection at start failed, in words an operator acts on. */
export function explainPostgresFailure(err: unknown, opts: { url: string; variable?: string; connectTimeoutMs: number }): StartupError {
  const variable = opts.variable ?? 'DATABASE_URL';
  const at = `Postgres at ${variable}=${redactUrl(opts.url)}`;
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  let line: string;
  if (code === 'ECONNREFUSED') line = `${at} refused the connection: check that Postgres is running and that ${variable} names its host and port`;
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') line = `the host of ${variable}=${redactUrl(opts.url)} is not known (${code}): check the host name in ${variable}`;
  else if (/timeout expired|connection timeout|timeout exceeded/i.test(message) || code === 'ETIMEDOUT')
    line = `${at} did not answer within ${opts.connectTimeoutMs} ms (PG_CONNECT_TIMEOUT_MS): check that ${variable} points at Postgres and not another service, and that no firewall drops the traffic`;
  else if (code.startsWith('28')) line = `${at} refused the login (${code}: ${message}): check the user and password in ${variable}`;
  else if (/unsupported startup parameter/i.test(message)) line = `${at} refused a start-up parameter (${message}): ${POOLER_HINT}`;
  else if (code === '3D000') line = `${at} has no such database (${message}): create it, or fix the database name in ${variable}`;
  else if (classifyFailure(err) === 'outage') line = `${at} is unavailable (${code || message}): check that Postgres is running and reachable from here`;
  else line = `${at} failed (${code ? `${code}: ` : ''}${message}): check that ${variable} names a Postgres 15 or later that this process may use`;
  return new StartupError(variable, line, err);
}

/**
 * A connected client for work at start (migrations), its connect bounded by
 * `connectTimeoutMs`: a server that accepts and never answers fails after it
 * instead of hanging the start silently. A failure is a StartupError naming
 * the variable.
 */
export async function connectAtStart(opts: { url: string; connectTimeoutMs: number; variable?: string; applicationName?: string }): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: opts.url, connectionTimeoutMillis: opts.connectTimeoutMs, ...(opts.applicationName ? { application_name: opts.applicationName } : {}) });
  // An error after connect (the server restarting mid-migration) fails the
  // query in flight; without a listener it would crash the process instead.
  client.on('error', () => {});
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.end().catch(() => {});
    throw explainPostgresFailure(err, opts);
  }
}

/**
 * Runs a process's start for its entry point. A StartupError prints its one
 * line (`<service>: cannot start: …`, then `; <hint>` when given) and exits
 * with EX_CONFIG (78), as a bad variable does; any other failure prints one
 * line and exits 1, with the stack only when it is not an outage (then it is
 * a bug worth the stack).
 */
export async function startOrExit<T>(service: string, start: () => Promise<T>, opts: { hint?: string } = {}): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (err instanceof StartupError) {
      console.error(`${service}: cannot start: ${err.message}${opts.hint ? `; ${opts.hint}` : ''}`);
      process.exit(EXIT_CONFIG);
    }
    const message = err instanceof Error ? err.message : String(err);
    if (classifyFailure(err) === 'outage') console.error(`${service}: cannot start: a dependency is unavailable (${message}): check DATABASE_URL and REDIS_URL`);
    else console.error(`${service}: failed to start: ${err instanceof Error && err.stack ? err.stack : message}`);
    process.exit(1);
  }
}
