import type { Redis } from 'ioredis';

/**
 * The leases a process freed lately, to free again after its Redis
 * connection comes back (docs/architecture.md, "Redis through Sentinel").
 *
 * A lease here is a member of a sorted set scored by when it runs out: a
 * worker's tenant slot (tenant-slots.ts), a gateway's in-flight slot. In a
 * switch that leaves the old primary running (SENTINEL FAILOVER, a managed
 * switch), the old primary goes on taking writes from the clients that have
 * not yet heard of the promotion, and drops them when it becomes a replica.
 * A lease taken before the promotion was copied to the new primary; its
 * release, written to the old primary in that moment, was not. The new
 * primary then counts the lease until it runs out (30 s), and a tenant whose
 * every slot was held that way waits the whole time. Sent again once the
 * connection is back, the release reaches the new primary.
 *
 * A lease runs out by itself within one lease period, so only the releases of
 * the last `keepMs` are kept.
 */
export class RecentReleases<T> {
  /** Member -> when it was freed and what freeing it again needs; in the order freed, oldest first. */
  private readonly freed = new Map<string, { at: number; detail: T }>();

  constructor(private readonly keepMs: number) {}

  /** Notes that `member` was freed now. */
  add(member: string, detail: T): void {
    this.freed.delete(member);
    this.freed.set(member, { at: Date.now(), detail });
    this.forgetOld();
  }

  /** The releases of the last `keepMs`, oldest first. */
  list(): { member: string; at: number; detail: T }[] {
    this.forgetOld();
    return [...this.freed].map(([member, { at, detail }]) => ({ member, at, detail }));
  }

  private forgetOld(): void {
    const cutoff = Date.now() - this.keepMs;
    for (const [member, { at }] of this.freed) {
      if (at > cutoff) break;
      this.freed.delete(member);
    }
  }
}

/**
 * Calls `again` each time the connection is ready after it was ready before:
 * a reconnect, after a Redis restart, a network cut or a failover (ioredis
 * then asks the sentinels for the primary anew).
 */
export function onReconnect(redis: Redis, again: () => void): void {
  let seenReady = redis.status === 'ready';
  redis.on('ready', () => {
    if (seenReady) again();
    seenReady = true;
  });
}
