import type { Redis } from 'ioredis';
import { RecentReleases, onReconnect } from './lease-releases.js';
import { PRESENCE_TTL_MS, presenceKey } from './worker-presence.js';

/**
 * Per-tenant in-flight limits on a queue (docs/architecture.md, "One
 * tenant's backlog"). A queue is one FIFO list shared by every tenant, so a
 * tenant that adds a hundred slow jobs would hold every worker slot until
 * they were done. Before a worker runs a job it takes one of the job's
 * tenant's slots on that queue; a tenant holding its limit has the job moved
 * aside (delayed) and parked, and the worker goes on to the next job in the
 * list, which is often another tenant's. When a slot is freed, the tenant's
 * oldest parked job is promoted back to the list.
 *
 * A slot is a lease in Redis, not a counter: a sorted set per (queue, tenant)
 * of job ids scored by when their lease runs out, renewed while the job runs
 * and removed when it ends. A worker that dies holding one blocks nobody for
 * longer than the lease. The count is across every worker of the queue, and
 * the limit grows with them: each live worker (its heartbeat,
 * worker-presence.ts) adds its per-worker share.
 */

/** The first wait of a job moved aside; it doubles with each further deferral of the job. */
export const TENANT_DEFER_BASE_MS = 250;
/**
 * The longest a parked job waits before it looks again on its own. A freed
 * slot promotes a parked job at once; this wait only bounds how long one
 * waits when no promotion comes (its tenant's slot was freed by a lease
 * expiring, or the promotion raced the park). Long, so a large backlog of
 * one tenant costs few deferrals a second.
 */
export const TENANT_DEFER_MAX_MS = 5_000;

/** The slots one worker gives a tenant by default: half of them (0.5 for one slot; the limit is never below one). */
export function defaultTenantShare(concurrency: number): number {
  return concurrency / 2;
}

/**
 * How long a job moved aside for the `deferrals`-th time waits before it
 * looks again on its own, with ±20% jitter so parked jobs do not come back
 * together. `random` is in [0, 1).
 */
export function deferDelayMs(deferrals: number, random: number): number {
  const base = Math.min(TENANT_DEFER_MAX_MS, TENANT_DEFER_BASE_MS * 2 ** Math.min(Math.max(0, deferrals), 16));
  return Math.round(base * (0.8 + 0.4 * random));
}

// KEYS: leases, parked, presence. ARGV: now, leaseMs, jobId, share, presence cut-off, park score, park ttl.
// The limit is floor(live workers x share), at least 1. A job that already
// holds a lease (run again after its worker died) keeps it.
const TAKE = `
local leases, parked, presence = KEYS[1], KEYS[2], KEYS[3]
local now = tonumber(ARGV[1])
local leaseMs = tonumber(ARGV[2])
local jobId = ARGV[3]
redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
if not redis.call('ZSCORE', leases, jobId) then
  local workers = redis.call('ZCOUNT', presence, ARGV[5], '+inf')
  if workers < 1 then workers = 1 end
  local limit = math.floor(workers * tonumber(ARGV[4]))
  if limit < 1 then limit = 1 end
  if redis.call('ZCARD', leases) >= limit then
    redis.call('ZADD', parked, 'NX', ARGV[6], jobId)
    redis.call('PEXPIRE', parked, ARGV[7])
    return 0
  end
end
redis.call('ZADD', leases, now + leaseMs, jobId)
redis.call('PEXPIRE', leases, leaseMs)
redis.call('ZREM', parked, jobId)
return 1
`;

// KEYS: leases, parked, the queue's delayed set. ARGV: jobId, and for a
// release sent again after a reconnect the latest expiry of the lease it freed.
// Frees the lease and answers the oldest parked job still delayed (to promote), or false.
// A release sent again frees only a lease that runs out by that expiry: one
// taken or renewed since (the job run again) is not the one it freed; and
// when it frees nothing it promotes nothing.
const RELEASE = `
if ARGV[2] then
  local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
  if not expiry or tonumber(expiry) > tonumber(ARGV[2]) then return false end
end
redis.call('ZREM', KEYS[1], ARGV[1])
for _ = 1, 8 do
  local next = redis.call('ZPOPMIN', KEYS[2])
  if #next == 0 then return false end
  if redis.call('ZSCORE', KEYS[3], next[1]) then return next[1] end
end
return false
`;

interface SlotCommands {
  vouchTakeTenantSlot(leases: string, parked: string, presence: string, now: number, leaseMs: number, jobId: string, share: number, presenceSince: number, parkScore: number, parkTtlMs: number): Promise<number>;
  vouchReleaseTenantSlot(leases: string, parked: string, delayed: string, jobId: string, latestExpiry?: number): Promise<string | null>;
}

export interface TenantSlotsOptions {
  redis: Redis;
  prefix: string;
  queue: string;
  /** The slots one worker gives each tenant (may be fractional: 0.5 is one slot per two workers). */
  share: number;
  /** How long a slot outlives its worker's last renewal; renewed every third of it. */
  leaseMs: number;
  /** The queue's BullMQ delayed set (`worker.keys.delayed`), where parked jobs wait. */
  delayedKey: string;
  /** Brings a parked job back to the list when a release sent again after a reconnect freed a slot of its tenant. */
  promote(jobId: string): void;
}

/** A queue's tenant slots, as one worker takes and frees them. */
export interface TenantSlots {
  /** Takes a slot of `tenant` for the job; false (and the job parked, oldest `since` first) when the tenant holds its limit. */
  take(tenant: string, jobId: string, since: number): Promise<boolean>;
  /** Frees the job's slot; answers the tenant's oldest parked job still delayed, to be promoted, if any. */
  release(tenant: string, jobId: string): Promise<string | undefined>;
  /** Stops renewing leases (those still held expire). */
  stop(): void;
}

export function createTenantSlots(opts: TenantSlotsOptions): TenantSlots {
  const redis = opts.redis as Redis & SlotCommands;
  redis.defineCommand('vouchTakeTenantSlot', { numberOfKeys: 3, lua: TAKE });
  redis.defineCommand('vouchReleaseTenantSlot', { numberOfKeys: 3, lua: RELEASE });
  const base = `${opts.prefix}:${opts.queue}`;
  const leasesKey = (tenant: string) => `${base}:vouch-tenant-slots:${tenant}`;
  const parkedKey = (tenant: string) => `${base}:vouch-tenant-parked:${tenant}`;
  const presence = presenceKey(opts.prefix, opts.queue);
  // Parked ids outlive the longest a parked job waits, so a promotion finds them.
  const parkTtlMs = 4 * TENANT_DEFER_MAX_MS;
  /** Job id -> tenant of the slots this worker holds, renewed together. */
  const held = new Map<string, string>();
  /** Job id -> tenant of the slots this worker freed within a lease, freed again after a reconnect (lease-releases.ts). */
  const freed = new RecentReleases<string>(opts.leaseMs);
  onReconnect(redis, () => {
    for (const { member: jobId, at, detail: tenant } of freed.list()) {
      // A lease this worker took or renewed before it freed it ran out by then at the latest.
      redis
        .vouchReleaseTenantSlot(leasesKey(tenant), parkedKey(tenant), opts.delayedKey, jobId, at + opts.leaseMs)
        .then((next) => next && opts.promote(next))
        .catch(() => undefined); // Redis away again: the next reconnect sends it again
    }
  });

  const renew = () => {
    if (held.size === 0) return;
    const until = Date.now() + opts.leaseMs;
    const batch = redis.pipeline();
    // XX: a lease that expired (a stall past the lease) is not brought back; its job finishes uncounted.
    for (const [jobId, tenant] of held) batch.zadd(leasesKey(tenant), 'XX', until, jobId).pexpire(leasesKey(tenant), opts.leaseMs);
    void batch.exec().catch(() => undefined);
  };
  const timer = setInterval(renew, Math.max(100, Math.floor(opts.leaseMs / 3)));
  timer.unref();

  return {
    async take(tenant, jobId, since) {
      const now = Date.now();
      const taken = await redis.vouchTakeTenantSlot(leasesKey(tenant), parkedKey(tenant), presence, now, opts.leaseMs, jobId, opts.share, now - PRESENCE_TTL_MS, since, parkTtlMs);
      if (taken === 1) held.set(jobId, tenant);
      return taken === 1;
    },
    async release(tenant, jobId) {
      held.delete(jobId);
      freed.add(jobId, tenant);
      const next = await redis.vouchReleaseTenantSlot(leasesKey(tenant), parkedKey(tenant), opts.delayedKey, jobId);
      return next ?? undefined;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
