import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, useTestSchema } from '@vouch/testing';
import { createPool, pendingMigrations, runMigrations, withTransaction, type Pool } from '../src/postgres.js';

const DIR = fileURLToPath(new URL('./fixtures/migrations', import.meta.url));

describe('migrations and the pool', () => {
  let schema: Awaited<ReturnType<typeof useTestSchema>>;
  let pool: Pool;

  beforeAll(async () => {
    schema = await useTestSchema('migrate');
    pool = createPool({ url: TEST_DATABASE_URL, schema: schema.schema, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await schema?.cleanup();
  });

  it('lists every migration as pending before the schema exists', async () => {
    expect(await pendingMigrations(pool, schema.schema, DIR)).toEqual(['1700000000000_effects']);
  });

  it('applies each migration once when three replicas start together', async () => {
    const runs = await Promise.all([1, 2, 3].map(() => runMigrations({ databaseUrl: TEST_DATABASE_URL, schema: schema.schema, dir: DIR })));
    expect(runs.flat()).toEqual(['1700000000000_effects']);
    expect(await pendingMigrations(pool, schema.schema, DIR)).toEqual([]);
  });

  it('resolves unqualified names in the service schema and rolls back a failed transaction', async () => {
    await withTransaction(pool, (tx) => tx.query(`INSERT INTO effects (job_id, worker_pid) VALUES ('kept', 1)`));
    await expect(
      withTransaction(pool, async (tx) => {
        await tx.query(`INSERT INTO effects (job_id, worker_pid) VALUES ('dropped', 1)`);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const rows = await pool.query(`SELECT job_id FROM effects ORDER BY id`);
    expect(rows.rows).toEqual([{ job_id: 'kept' }]);
  });

  it('refuses a schema name that is not a plain identifier', () => {
    expect(() => createPool({ url: TEST_DATABASE_URL, schema: 'x; DROP TABLE y' })).toThrow('invalid Postgres schema name');
  });
});
