/**
 * Authentication without a Postgres round trip per request, with revocation
 * still effective within a second on every gateway replica.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsumerRedis, createPool, createProducerRedis, type Pool } from '@vouch/platform';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '@vouch/testing';
import { ApiKeyCache, announceRevocation } from '../src/api-key-cache.js';
import { createApiKey, revokeApiKey } from '../src/api-keys.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

describe('the API key cache', () => {
  let replicaA: GatewayUnderTest;
  let replicaB: GatewayUnderTest;

  beforeAll(async () => {
    replicaA = await startGatewayUnderTest('key_cache');
    // A second replica of the same deployment: same database schema, same Redis prefix.
    replicaB = await startGatewayUnderTest('key_cache_b', { BULLMQ_PREFIX: replicaA.prefix, DB_SCHEMA: replicaA.schema });
  });
  afterAll(async () => {
    await replicaB?.stop();
    await replicaA?.stop();
  });

  it('asks Postgres once per key, not once per request', async () => {
    const pool: Pool = createPool({ url: TEST_DATABASE_URL, schema: replicaA.schema, max: 2 });
    const subscriber = createConsumerRedis(TEST_REDIS_URL);
    let lookups = 0;
    const counting = { query: ((...args: Parameters<Pool['query']>) => ((lookups += String(args[0]).includes('FROM api_keys') ? 1 : 0), pool.query(...args))) as Pool['query'] };
    const cache = new ApiKeyCache(counting, subscriber, replicaA.prefix);
    try {
      if (subscriber.status !== 'ready') await new Promise((r) => subscriber.once('ready', r));
      await cache.start();
      const { key } = await createApiKey(pool, { tenant: 'acme' });
      for (let i = 0; i < 50; i++) expect(await cache.authenticate(key)).toMatchObject({ tenant: 'acme' });
      expect(lookups).toBe(1);
      expect(await cache.authenticate('vk_unknown000000_' + 'x'.repeat(43))).toBeUndefined();
    } finally {
      await cache.close();
      subscriber.disconnect();
      await pool.end();
    }
  });

  it('stops accepting a revoked key on every replica within a second', async () => {
    const key = await replicaA.createKey('acme');
    const recent = (gw: GatewayUnderTest) => gw.fetch('/v1/media/recent?surface=api&chatKey=c', { key }).then((r) => r.status);
    // Both replicas have the key cached.
    expect([await recent(replicaA), await recent(replicaB), await recent(replicaA), await recent(replicaB)]).toEqual([200, 200, 200, 200]);
    const id = key.split('_')[1]!;
    const revoked = replicaA.keys('revoke', id);
    expect(revoked.status).toBe(0);
    const at = Date.now();
    await expect.poll(() => Promise.all([recent(replicaA), recent(replicaB)]), { timeout: 1_000, interval: 20 }).toEqual([401, 401]);
    expect(Date.now() - at).toBeLessThan(1_000);
  });

  it('does not cache a lookup that raced a revocation', async () => {
    const pool: Pool = createPool({ url: TEST_DATABASE_URL, schema: replicaA.schema, max: 2 });
    const subscriber = createConsumerRedis(TEST_REDIS_URL);
    const publisher = createProducerRedis(TEST_REDIS_URL);
    const { key, record } = await createApiKey(pool, { tenant: 'acme' });
    // The lookup reads the key as valid; the revocation lands while its answer is on the way.
    const held: Array<() => void> = [];
    const slow = {
      query: (async (...args: Parameters<Pool['query']>) => {
        const result = await pool.query(...args);
        if (String(args[0]).startsWith('SELECT')) await new Promise<void>((r) => held.push(r));
        return result;
      }) as Pool['query'],
    };
    const release = () => held.shift()?.();
    const cache = new ApiKeyCache(slow, subscriber, replicaA.prefix);
    try {
      if (subscriber.status !== 'ready') await new Promise((r) => subscriber.once('ready', r));
      await cache.start();
      const pending = cache.authenticate(key);
      await expect.poll(() => held.length).toBe(1);
      await revokeApiKey(pool, record.id);
      await announceRevocation(publisher, replicaA.prefix, record.id);
      await new Promise((r) => setTimeout(r, 100));
      release();
      expect(await pending).toMatchObject({ tenant: 'acme' });
      // Not served from the cache: the next lookup asks Postgres, which knows it is revoked.
      const next = cache.authenticate(key);
      await expect.poll(() => held.length).toBe(1);
      release();
      expect(await next).toBeUndefined();
    } finally {
      await cache.close();
      subscriber.disconnect();
      publisher.disconnect();
      await pool.end();
    }
  });
});
