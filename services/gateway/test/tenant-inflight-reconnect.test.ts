/**
 * An in-flight slot freed while the gateway's connection served a primary
 * that was then demoted (a managed switch: SENTINEL FAILOVER) is freed again
 * once the connection is back, so the tenant's concurrency budget is not
 * held by the new primary's copy of the lease until it runs out.
 *
 * One real Redis plays both primaries: the lease is put back as the new
 * primary's copy would have it, then the connection is cut and reconnects.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, eventually, useTestPrefix, type TestPrefix } from '@vouch/testing';
import { TenantInflight } from '../src/tenant-inflight.js';

const LEASE_MS = 60_000;

describe('in-flight slots across a reconnect', () => {
  let prefix: TestPrefix;
  let redis: Redis;
  let inflight: TenantInflight;

  beforeAll(async () => {
    prefix = await useTestPrefix('inflight_reconnect');
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
    inflight = new TenantInflight(redis, prefix.prefix, LEASE_MS);
  });

  afterAll(async () => {
    inflight?.close();
    redis?.disconnect();
    await prefix?.cleanup();
  });

  it('frees again after a reconnect a lease the new primary still holds', async () => {
    const key = inflight.leasesKey('acme');
    const first = await inflight.take('acme', 1);
    if (!first.taken) throw new Error('the first slot of an idle tenant was refused');
    const copied = await redis.zrange(key, '0', '-1', 'WITHSCORES');
    await first.slot.release();
    // The release reached only the old primary; the new one has the copy from before.
    await redis.zadd(key, Number(copied[1]), copied[0]!);
    expect(await inflight.take('acme', 1)).toEqual({ taken: false, held: 1 });

    // The failover: the connection drops and ioredis reconnects (to the new primary).
    redis.disconnect(true);

    await eventually('the copied lease to be freed', async () => ((await redis.zcard(key)) === 0 ? true : undefined), 10_000, 50);
    const next = await inflight.take('acme', 1);
    expect(next.taken).toBe(true);
    if (next.taken) await next.slot.release();
  });
});
