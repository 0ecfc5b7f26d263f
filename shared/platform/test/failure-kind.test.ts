import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, closedPort, startSilentServer, type SilentServer } from '@vouch/testing';
import { classifyFailure } from '../src/failure-kind.js';

/** The error a promise rejects with. */
async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

function urlAt(port: number): string {
  const u = new URL(TEST_DATABASE_URL);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

// Every error here is a real one, from the real Postgres, Redis port or socket.
describe('classifyFailure', () => {
  let pool: pg.Pool;
  let silent: SilentServer;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 });
    silent = await startSilentServer();
  });
  afterAll(async () => {
    await pool?.end();
    await silent?.close();
  });

  it('calls Postgres data, integrity and syntax errors permanent', async () => {
    expect(classifyFailure(await errorOf(pool.query('SELECT $1::int', ['x'])))).toBe('permanent'); // 22P02
    expect(classifyFailure(await errorOf(pool.query('SELECT 1/0')))).toBe('permanent'); // 22012
    expect(classifyFailure(await errorOf(pool.query("SELECT convert_from('\\x00'::bytea, 'UTF8')")))).toBe('permanent'); // 22021
    expect(classifyFailure(await errorOf(pool.query('SELEC 1')))).toBe('permanent'); // 42601
    expect(classifyFailure(await errorOf(pool.query('SELECT * FROM no_such_table_anywhere')))).toBe('permanent'); // 42P01
    const dup = await errorOf(pool.query('SELECT * FROM (VALUES (1), (1)) v(x) WHERE x = (SELECT x FROM (VALUES (1), (1)) w(x))')); // 21000
    expect(classifyFailure(dup)).toBe('permanent');
  });

  it('calls a unique violation permanent', async () => {
    const client = await pool.connect();
    try {
      await client.query('CREATE TEMP TABLE uniq (id int PRIMARY KEY)');
      await client.query('INSERT INTO uniq VALUES (1)');
      expect(classifyFailure(await errorOf(client.query('INSERT INTO uniq VALUES (1)')))).toBe('permanent'); // 23505
    } finally {
      client.release(true);
    }
  });

  it('calls a serialization failure contention', async () => {
    const a = await pool.connect();
    const b = await pool.connect();
    try {
      await a.query('CREATE TABLE IF NOT EXISTS public.t_failure_kind_skew (v int)');
      for (const c of [a, b]) {
        await c.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
        await c.query('SELECT count(*) FROM public.t_failure_kind_skew');
      }
      await a.query('INSERT INTO public.t_failure_kind_skew VALUES (1)');
      await b.query('INSERT INTO public.t_failure_kind_skew VALUES (2)');
      await a.query('COMMIT');
      const err = await errorOf(b.query('COMMIT'));
      expect((err as { code: string }).code).toBe('40001');
      expect(classifyFailure(err)).toBe('contention');
    } finally {
      await b.query('ROLLBACK').catch(() => {});
      await a.query('DROP TABLE IF EXISTS public.t_failure_kind_skew').catch(() => {});
      a.release(true);
      b.release(true);
    }
  });

  it('calls a terminated backend an outage', async () => {
    const victim = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await victim.connect();
    victim.on('error', () => {});
    const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const sleeping = errorOf(victim.query('SELECT pg_sleep(30)'));
    await pool.query('SELECT pg_terminate_backend($1)', [pid]);
    expect(classifyFailure(await sleeping)).toBe('outage'); // 57P01
    await victim.end().catch(() => {});
  });

  it('calls a refused, hung or ended Postgres connection an outage', async () => {
    const refused = new pg.Pool({ connectionString: urlAt(await closedPort()), connectionTimeoutMillis: 2_000 });
    expect(classifyFailure(await errorOf(refused.query('SELECT 1')))).toBe('outage');
    await refused.end();
    const hung = new pg.Pool({ connectionString: urlAt(silent.port), connectionTimeoutMillis: 200 });
    expect(classifyFailure(await errorOf(hung.query('SELECT 1')))).toBe('outage');
    await hung.end();
    const ended = new pg.Pool({ connectionString: TEST_DATABASE_URL });
    await ended.end();
    expect(classifyFailure(await errorOf(ended.query('SELECT 1')))).toBe('outage');
  });

  it('calls a Redis that refuses commands an outage', async () => {
    const redis = new Redis({ port: await closedPort(), host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    redis.on('error', () => {});
    expect(classifyFailure(await errorOf(redis.ping()))).toBe('outage');
    redis.disconnect();
  });

  it('calls a refused fetch an outage, though fetch throws a TypeError', async () => {
    const err = await errorOf(fetch(`http://127.0.0.1:${await closedPort()}/`));
    expect(err).toBeInstanceOf(TypeError);
    expect(classifyFailure(err)).toBe('outage');
  });

  it('calls programming errors permanent and anything else unknown', () => {
    let typeError: unknown;
    try {
      (undefined as unknown as { x: number }).x += 1;
    } catch (err) {
      typeError = err;
    }
    expect(classifyFailure(typeError)).toBe('permanent');
    expect(classifyFailure(new RangeError('Invalid array length'))).toBe('permanent');
    expect(classifyFailure(new Error('the model returned nonsense'))).toBe('unknown');
    expect(classifyFailure('a thrown string')).toBe('unknown');
    expect(classifyFailure(undefined)).toBe('unknown');
  });
});
