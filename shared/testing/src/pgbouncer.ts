import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedPort } from './tcp-faults.js';
import { TEST_DATABASE_URL } from './test-env.js';

/** A PgBouncer of the test's own, in front of the test Postgres. */
export interface PgBouncer {
  port: number;
  /** A URL of TEST_DATABASE_URL's user through PgBouncer, to one of its databases (default: TEST_DATABASE_URL's). */
  url(database?: string): string;
  /** What PgBouncer logged so far (its warnings name refused start-up parameters). */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** pool_mode; default transaction. */
  poolMode?: 'session' | 'transaction' | 'statement';
  /** Databases over and above TEST_DATABASE_URL's and `postgres`, each an alias of a database of the test server with a pool size of its own. */
  databases?: Record<string, { dbname: string; poolSize?: number }>;
  /** ignore_startup_parameters: what PgBouncer accepts from a client and drops instead of refusing the connection. */
  ignoreStartupParameters?: readonly string[];
  /** default_pool_size: server connections per database; default 20, as PgBouncer's. */
  poolSize?: number;
}

const DATABASE_NAME = /^[A-Za-z0-9_]+$/;

/**
 * Starts Debian's pgbouncer (`apt-get install pgbouncer`) on a free loopback
 * port with a generated configuration, in front of TEST_DATABASE_URL's
 * server: auth_type any (it logs in as TEST_DATABASE_URL's user whatever
 * the client says), the databases TEST_DATABASE_URL names and `postgres`,
 * and those in `databases`. It runs in the foreground as a child of the
 * test, logging to its stderr; as root it drops to `nobody`, since PgBouncer
 * refuses to run as root. stop() ends it and removes its files.
 */
export async function startPgBouncer(opts: PgBouncerOptions = {}): Promise<PgBouncer> {
  const server = new URL(TEST_DATABASE_URL);
  const user = decodeURIComponent(server.username) || 'postgres';
  const password = decodeURIComponent(server.password);
  const testDb = server.pathname.slice(1) || 'postgres';
  if (/[\s'"\\]/.test(user + password)) throw new Error('startPgBouncer: the user and password of TEST_DATABASE_URL must hold no spaces, quotes or backslashes');
  const target = `host=${server.hostname === 'localhost' ? '127.0.0.1' : server.hostname} port=${server.port || '5432'} user=${user}${password ? ` password=${password}` : ''}`;
  const databases: Record<string, { dbname: string; poolSize?: number }> = { [testDb]: { dbname: testDb }, postgres: { dbname: 'postgres' }, ...opts.databases };
  for (const [name, db] of Object.entries(databases)) {
    if (!DATABASE_NAME.test(name) || !DATABASE_NAME.test(db.dbname)) throw new Error(`startPgBouncer: database names are letters, digits and _: ${name} = ${db.dbname}`);
  }
  const port = await closedPort();
  const dir = mkdtempSync(join(tmpdir(), 'vouch-pgbouncer-'));
  // Readable by `nobody`, whom PgBouncer runs as when the test is root.
  chmodSync(dir, 0o755);
  const config = join(dir, 'pgbouncer.ini');
  const ini = [
    '[databases]',
    ...Object.entries(databases).map(([name, db]) => `${name} = ${target} dbname=${db.dbname}${db.poolSize ? ` pool_size=${db.poolSize}` : ''}`),
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    // No Unix socket: several instances (parallel test files) would compete for one in /tmp.
    'unix_socket_dir =',
    'auth_type = any',
    `pool_mode = ${opts.poolMode ?? 'transaction'}`,
    `default_pool_size = ${opts.poolSize ?? 20}`,
    'max_client_conn = 500',
    // A client waiting for a server gives up after this, so a stuck pool fails a test instead of hanging it.
    'query_wait_timeout = 30',
    ...(opts.ignoreStartupParameters?.length ? [`ignore_startup_parameters = ${opts.ignoreStartupParameters.join(',')}`] : []),
    '',
  ].join('\n');
  writeFileSync(config, ini, { mode: 0o644 });

  let output = '';
  let child: ChildProcess;
  const asRoot = process.getuid?.() === 0;
  try {
    child = spawn('pgbouncer', [...(asRoot ? ['-u', 'nobody'] : []), config], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/usr/local/sbin` } });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  // 'error' without 'exit' when it never started (ENOENT).
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  const failedToSpawn = new Promise<never>((_, reject) =>
    child.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT'
          ? new Error("pgbouncer is not installed: 'apt-get install pgbouncer' (Debian's package; its service need not run, the test starts its own); .ci/run installs it when missing", { cause: err })
          : err,
      ),
    ),
  );

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await Promise.race([failedToSpawn, waitForListener(port, () => (child.exitCode !== null || child.signalCode !== null ? output : undefined))]);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    port,
    url(database = testDb) {
      const u = new URL(TEST_DATABASE_URL);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      u.pathname = `/${database}`;
      return u.toString();
    },
    log: () => output,
    stop,
  };
}

/** Resolves once 127.0.0.1:port accepts a connection; rejects with PgBouncer's output if it exits first, or after 15 s. */
async function waitForListener(port: number, exitedWith: () => string | undefined): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const gone = exitedWith();
    if (gone !== undefined) throw new Error(`pgbouncer exited before it listened: ${gone.slice(-2000)}`);
    if (await accepts(port)) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on 127.0.0.1:${port} within 15 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
