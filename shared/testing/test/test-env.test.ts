import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName, useTestPrefix, useTestSchema } from '../src/index.js';

describe('uniqueName', () => {
  it('is a short lowercase identifier that starts with t_', () => {
    const name = uniqueName('Vision Router: media-store!');
    expect(name).toMatch(/^t_[a-z0-9_]+$/);
    expect(name.length).toBeLessThanOrEqual(50);
    expect(name).toContain('vision_router_media_store');
  });

  it('stays within 50 characters for a long label and differs per call', () => {
    const names = new Set(Array.from({ length: 200 }, () => uniqueName('x'.repeat(200))));
    expect(names.size).toBe(200);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(50);
  });

  it('copes with a label that has no usable characters', () => {
    expect(uniqueName('!!!')).toMatch(/^t_[a-z0-9]+_[0-9a-f]{8}$/);
  });
});

describe('useTestPrefix', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('deletes every key under the prefix and nothing else', async () => {
    const mine = await useTestPrefix('test-env');
    const other = await useTestPrefix('test-env-other');
    // More keys than one SCAN page, so the cursor loop is exercised.
    const pipeline = redis.pipeline();
    for (let i = 0; i < 2500; i++) pipeline.set(`${mine.prefix}:k${i}`, '1');
    pipeline.hset(`${mine.prefix}:queue:1`, 'data', '{}');
    pipeline.set(`${other.prefix}:keep`, '1');
    // Shares the prefix's first characters but not its `:` boundary.
    pipeline.set(`${mine.prefix}x:keep`, '1');
    await pipeline.exec();

    await mine.cleanup();
    await mine.cleanup();

    expect(await redis.exists(`${mine.prefix}:k0`, `${mine.prefix}:k2499`, `${mine.prefix}:queue:1`)).toBe(0);
    expect(await redis.get(`${other.prefix}:keep`)).toBe('1');
    expect(await redis.get(`${mine.prefix}x:keep`)).toBe('1');

    await redis.unlink(`${mine.prefix}x:keep`);
    await other.cleanup();
    expect(await redis.exists(`${other.prefix}:keep`)).toBe(0);
  });
});

describe('useTestSchema', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
  });

  async function schemaExists(schema: string): Promise<boolean> {
    const { rowCount } = await client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]);
    return rowCount === 1;
  }

  it('creates nothing, and cleanup drops the schema with its tables', async () => {
    const { schema, cleanup } = await useTestSchema('test-env');
    expect(await schemaExists(schema)).toBe(false);

    await client.query(`CREATE SCHEMA ${schema}`);
    await client.query(`CREATE TABLE ${schema}.events (id int PRIMARY KEY)`);
    await client.query(`INSERT INTO ${schema}.events VALUES (1)`);

    await cleanup();
    await cleanup();
    expect(await schemaExists(schema)).toBe(false);
  });

  it('cleanup succeeds when the schema was never created', async () => {
    const { cleanup } = await useTestSchema('never-created');
    await expect(cleanup()).resolves.toBeUndefined();
  });
});
