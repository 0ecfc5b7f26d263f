/**
 * A tenant slot freed while the worker's connection served a primary that
 * was then demoted (a managed switch: SENTINEL FAILOVER) is freed again once
 * the connection is back: the new primary holds the copy of the lease taken
 * before the promotion, and without the second release it would count it
 * until the lease ran out, holding the tenant's jobs back that long.
 *
 * One real Redis plays both primaries: the lease is put back as the new
 * primary's copy would have it, then the connection is cut and reconnects.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, eventually, useTestPrefix, type TestPrefix } from '@vouch/testing';
import { createTenantSlots, type TenantSlots } from '../src/tenant-slots.js';

const LEASE_MS = 60_000;
const QUEUE = 'slots-reconnect';

describe('tenant slots across a reconnect', () => {
  let prefix: TestPrefix;
  let redis: Redis;
  let slots: TenantSlots;
  const promoted: string[] = [];
  const leasesKey = (tenant: string) => `${prefix.prefix}:${QUEUE}:vouch-tenant-slots:${tenant}`;
  const delayedKey = () => `${prefix.prefix}:${QUEUE}:delayed`;

  beforeAll(async () => {
    prefix = await useTestPrefix('slots_reconnect');
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
    slots = createTenantSlots({ redis, prefix: prefix.prefix, queue: QUEUE, share: 1, leaseMs: LEASE_MS, delayedKey: delayedKey(), promote: (jobId) => promoted.push(jobId) });
  });

  afterAll(async () => {
    slots?.stop();
    redis?.disconnect();
    await prefix?.cleanup();
  });

  it('frees again after a reconnect a lease the new primary still holds, promotes the parked job, and leaves a lease taken since alone', async () => {
    const ghosts = 'tenant-ghost';
    const retaken = 'tenant-retaken';
    // Job r ran and ended, then ran again (its worker died, say), its lease taken anew after the release.
    expect(await slots.take(retaken, 'r', Date.now())).toBe(true);
    await slots.release(retaken, 'r');
    const retakenExpiry = Date.now() + LEASE_MS + 1_000;
    await redis.zadd(leasesKey(retaken), retakenExpiry, 'r');

    // Job g took the tenant's one slot and ended; its release reached only the old primary.
    expect(await slots.take(ghosts, 'g', Date.now())).toBe(true);
    const [, copiedExpiry] = await redis.zrange(leasesKey(ghosts), '0', '-1', 'WITHSCORES');
    await slots.release(ghosts, 'g');
    await redis.zadd(leasesKey(ghosts), Number(copiedExpiry), 'g');
    // So the tenant's next job is parked, as on the new primary.
    expect(await slots.take(ghosts, 'p', Date.now())).toBe(false);
    await redis.zadd(delayedKey(), Date.now() + LEASE_MS, 'p');

    // The failover: the connection drops and ioredis reconnects (to the new primary).
    redis.disconnect(true);

    await eventually('the copied lease to be freed', async () => ((await redis.zscore(leasesKey(ghosts), 'g')) === null ? true : undefined), 10_000, 50);
    await eventually('the parked job to be promoted', () => (promoted.includes('p') ? true : undefined), 10_000, 50);
    // Sent in the order freed: r's second release ran before g's.
    expect(Number(await redis.zscore(leasesKey(retaken), 'r'))).toBe(retakenExpiry);
    expect(await slots.take(ghosts, 'p', Date.now())).toBe(true);
  });
});
