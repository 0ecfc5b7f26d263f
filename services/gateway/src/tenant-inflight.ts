import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RecentReleases, onReconnect } from '@vouch/platform';

/**
 * A tenant's operations in flight, counted across every gateway replica, for
 * its concurrency budget (tenant-budgets.ts). A count is not a rate, so
 * rate-limiter-flexible (which counts per window) does not fit it; this is
 * the workers' tenant-slot design (shared/platform/src/tenant-slots.ts) at
 * the gateway: a sorted set per tenant of request ids scored by when their
 * lease runs out, renewed while the request runs and removed when it ends.
 * A gateway that dies holding slots blocks its tenants for at most one lease.
 */

/** How long a slot outlives its gateway's last renewal; renewed every third of it. */
export const INFLIGHT_LEASE_MS = 30_000;

// KEYS: the tenant's leases. ARGV: now, leaseMs, id, limit.
// Answers {1, held} when the slot was taken, {0, held} when the tenant holds its limit.
const TAKE = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[4]) then return {0, held} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, held + 1}
`;

interface InflightCommands {
  vouchTakeInflight(leases: string, now: number, leaseMs: number, id: string, limit: number): Promise<[number, number]>;
}

/** A slot taken: free it when the operation has ended, whatever the outcome. */
export interface InflightSlot {
  release(): Promise<void>;
}

export type TakeResult = { taken: true; slot: InflightSlot } | { taken: false; held: number };

export class TenantInflight {
  private readonly redis: Redis & InflightCommands;
  /** Lease id -> its Redis key, of the slots this gateway holds, renewed together. */
  private readonly held = new Map<string, string>();
  /** Lease id -> its Redis key, of the slots this gateway freed within a lease, freed again after a reconnect (lease-releases.ts in @vouch/platform). */
  private readonly freed: RecentReleases<string>;
  private readonly timer: NodeJS.Timeout;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly leaseMs = INFLIGHT_LEASE_MS,
    /** What is counted, in the key: the tenant's operations in flight, or another per-tenant count (its waiting claims). */
    private readonly name = 'vouch-tenant-inflight',
  ) {
    this.redis = redis as Redis & InflightCommands;
    this.redis.defineCommand('vouchTakeInflight', { numberOfKeys: 1, lua: TAKE });
    this.timer = setInterval(() => this.renew(), Math.max(100, Math.floor(leaseMs / 3)));
    this.timer.unref();
    this.freed = new RecentReleases(leaseMs);
    onReconnect(this.redis, () => this.freeAgain());
  }

  /** The Redis key of a tenant's leases, under the BullMQ prefix. */
  leasesKey(tenant: string): string {
    return `${this.prefix}:${this.name}:${tenant}`;
  }

  /** Takes one of the tenant's `limit` slots, or says how many it holds. */
  async take(tenant: string, limit: number): Promise<TakeResult> {
    const id = randomUUID();
    const key = this.leasesKey(tenant);
    const [taken, held] = await this.redis.vouchTakeInflight(key, Date.now(), this.leaseMs, id, limit);
    if (taken !== 1) return { taken: false, held };
    this.held.set(id, key);
    let released = false;
    return {
      taken: true,
      slot: {
        release: async () => {
          if (released) return;
          released = true;
          this.held.delete(id);
          this.freed.add(id, key);
          // A release that fails (Redis gone) leaves the lease to run out by itself.
          await this.redis.zrem(key, id).catch(() => undefined);
        },
      },
    };
  }

  private renew(): void {
    if (this.held.size === 0) return;
    const until = Date.now() + this.leaseMs;
    const batch = this.redis.pipeline();
    // XX: a lease that ran out (Redis was away longer than the lease) is not brought back.
    for (const [id, key] of this.held) batch.zadd(key, 'XX', until, id).pexpire(key, this.leaseMs);
    void batch.exec().catch(() => undefined);
  }

  /** Frees again the slots freed lately: a lease id is never taken twice, so freeing it again frees only a copy the release missed. */
  private freeAgain(): void {
    const released = this.freed.list();
    if (released.length === 0) return;
    const batch = this.redis.pipeline();
    for (const { member: id, detail: key } of released) batch.zrem(key, id);
    void batch.exec().catch(() => undefined); // Redis away again: the next reconnect sends them again
  }

  /** Stops renewing; the slots still held run out with their leases. */
  close(): void {
    clearInterval(this.timer);
  }
}
