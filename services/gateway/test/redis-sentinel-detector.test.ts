/**
 * Each Redis connection through sentinels listens for +switch-master only
 * while it is open (redisOptions, `DetectorPerConnectionSentinelConnector`).
 * ioredis left the subscriptions of a connection whose primary died
 * listening; when the sentinels announced the promotion while the client was
 * asking them for the primary anew, ioredis gave the client up for good (the
 * Sentinel failover test's gateway answered 503 for ever after the kill).
 *
 * What is checked is the cause: once the primary is killed, the client's
 * subscriptions on the sentinels are gone before the sentinels promote the
 * replica, so nothing is left to act on the announcement mid-reconnect.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerRedisOptions } from '@vouch/platform';
import { eventually } from '@vouch/testing';
import { SENTINEL_GROUP, startSentinelSetup, type SentinelSetup } from './redis-sentinel.js';

describe("a connection's failover detector", () => {
  let sentinels: SentinelSetup;
  let client: Redis | undefined;

  beforeAll(async () => {
    sentinels = await startSentinelSetup();
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await sentinels?.stop();
  }, 30_000);

  /** Connections subscribed to a channel on each sentinel: only failover detectors subscribe there. */
  const subscribedOnSentinels = async () => {
    let subscribed = 0;
    for (const port of sentinels.sentinelPorts) {
      const s = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, retryStrategy: () => null });
      try {
        const list = (await s.call('CLIENT', 'LIST')) as string;
        subscribed += list.split('\n').filter((line) => / sub=[1-9]/.test(line)).length;
      } finally {
        s.disconnect();
      }
    }
    return subscribed;
  };

  it('closes with its connection when the primary dies, before the sentinels announce the promotion', async () => {
    const target = { url: `redis://127.0.0.1:${sentinels.primaryPort}`, sentinel: { sentinels: sentinels.sentinelPorts.map((port) => ({ host: '127.0.0.1', port })), name: SENTINEL_GROUP } };
    client = new Redis(consumerRedisOptions(target, 'detector-test'));
    client.on('error', () => {});
    await eventually('the client to be ready', () => (client!.status === 'ready' ? true : undefined), 10_000);
    await eventually('its detector to subscribe on every sentinel', async () => ((await subscribedOnSentinels()) === sentinels.sentinelPorts.length ? true : undefined), 10_000);

    sentinels.killPrimary();
    const seen = await eventually(
      'the subscriptions to go, or the sentinels to promote the replica',
      async () => {
        const subscribed = await subscribedOnSentinels();
        if (subscribed === 0) return { subscribed, promoted: false };
        if ((await sentinels.currentPrimaryPort()) !== sentinels.primaryPort) return { subscribed, promoted: true };
        return undefined;
      },
      30_000,
      20,
    );
    expect(seen).toEqual({ subscribed: 0, promoted: false });

    // And the client follows the promotion.
    await eventually('the client to reach the promoted replica', async () => ((await client!.config('GET', 'port'))[1] === String(sentinels.replicaPort) ? true : undefined), 30_000, 100);
  }, 60_000);
});
