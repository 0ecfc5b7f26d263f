import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, useTestSchema, type TestSchema } from '@vouch/testing';
import { classifyFailure } from '../src/failure-kind.js';
import { createPool, withTransaction } from '../src/postgres.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Postgres may end a session while the transaction holding it waits between two
// statements. node-postgres then emits 'error' on a client the pool no longer
// watches: unheard, that crashes the process (and fails this file with an
// unhandled error), which is what the board-dispatcher's fence timeout did
// under load before withTransaction listened.
describe('withTransaction when Postgres ends the session between statements', () => {
  let schema: TestSchema;
  let pool: pg.Pool;
  let admin: pg.Pool;

  beforeAll(async () => {
    schema = await useTestSchema('pg_tx');
    pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema, max: 2 });
    admin = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
    await admin.query(`CREATE SCHEMA "${schema.schema}"`);
    await pool.query('CREATE TABLE notes (body text)');
  });
  afterAll(async () => {
    await pool?.end();
    await admin?.end();
    await schema?.cleanup();
  });

  const endedBy = {
    'an idle-in-transaction timeout': async (tx: pg.PoolClient) => {
      await tx.query('SET LOCAL idle_in_transaction_session_timeout = 100');
      await sleep(600);
    },
    'pg_terminate_backend (an operator, a restart)': async (tx: pg.PoolClient) => {
      const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await sleep(300);
    },
  };

  for (const [how, end] of Object.entries(endedBy)) {
    it(`fails the transaction as an outage, saying why, when it is ended by ${how}; nothing is written and the pool goes on`, async () => {
      const failed = await withTransaction(pool, async (tx) => {
        await tx.query(`INSERT INTO notes (body) VALUES ('lost')`);
        await end(tx);
        await tx.query(`INSERT INTO notes (body) VALUES ('also lost')`);
      }).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(failed).toBeInstanceOf(Error);
      expect(failed!.message).toMatch(/^Postgres ended the session during the transaction: terminating connection/);
      expect(classifyFailure(failed)).toBe('outage');
      // The dead client left the pool: the next transactions get live ones.
      for (let i = 0; i < 3; i++) await withTransaction(pool, (tx) => tx.query(`INSERT INTO notes (body) VALUES ('kept')`));
      const { rows } = await pool.query<{ body: string }>('SELECT body FROM notes');
      expect(rows.map((r) => r.body)).not.toContain('lost');
      await pool.query('DELETE FROM notes');
    });
  }
});
