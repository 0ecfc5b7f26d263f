import type { Logger } from '@vouch/platform';
import type { Fence } from './board-store.js';
import type { LeaseRow, LeaseTerm } from './dispatcher-lease.js';
import type { BoardMetrics } from './metrics.js';

/**
 * The dispatcher's hold on its lease (dispatcher-lease.ts): taking it once
 * it has expired, renewing it every third of its TTL, and giving it up. It
 * trusts a lease locally for a little less than its TTL, measured from
 * before the round trip that took or renewed it ended: past that (a stalled
 * process) it gives the lease up before any write, and takes it again. It
 * writes no board: what it hands out is the fence each write is checked at.
 */

/** The lease's statements, over the pool (dispatcher-lease.ts). */
export interface LeaseRows {
  tryAcquire(holder: string, ttlMs: number, lockTimeoutMs: number): Promise<LeaseTerm | undefined>;
  renew(term: LeaseTerm, ttlMs: number): Promise<LeaseTerm | undefined>;
  release(term: LeaseTerm): Promise<void>;
  read(): Promise<LeaseRow>;
}

export interface LeaseKeeperDeps {
  holder: string;
  ttlMs: number;
  lease: LeaseRows;
  logger: Pick<Logger, 'info' | 'warn'>;
  metrics: Pick<BoardMetrics, 'leader' | 'takeovers'>;
  /** Called when this replica takes the lease, and when it stops leading (lost, refused by the fence, or given back). */
  onLeader?(term: LeaseTerm): void;
  onLost?(term: LeaseTerm): void;
}

export class LeaseKeeper {
  private term: LeaseTerm | undefined;
  /** performance.now() by which the lease must be renewed, and after which this replica assumes it lost it. */
  private renewAt = 0;
  private trustUntil = 0;

  constructor(private readonly deps: LeaseKeeperDeps) {}

  get holder(): string {
    return this.deps.holder;
  }

  get isLeader(): boolean {
    return this.term !== undefined;
  }

  get epoch(): number | undefined {
    return this.term?.epoch;
  }

  /** performance.now() when the lease is next due for renewal. */
  get renewDueAt(): number {
    return this.renewAt;
  }

  /** The fence a write under the current term is checked at; only while leading. */
  fence(): Fence {
    return { holder: this.deps.holder, epoch: this.term!.epoch, idleInTransactionMs: Math.max(250, this.deps.ttlMs / 2) };
  }

  /** Not leading: takes the lease if it has expired; undefined when it has not (waitBeforeRetry says how long to wait). */
  async acquire(): Promise<LeaseTerm | undefined> {
    const ttl = this.deps.ttlMs;
    const term = await this.deps.lease.tryAcquire(this.deps.holder, ttl, Math.min(500, ttl / 4));
    if (term) {
      this.term = term;
      const t = performance.now();
      this.renewAt = t + ttl / 3;
      // Trust the lease locally for a little less than its TTL, measured from before the acquiring round trip ended.
      this.trustUntil = t + ttl * 0.9;
      this.deps.metrics.leader.set(1);
      this.deps.metrics.takeovers.inc();
      this.deps.logger.info({ holder: this.deps.holder, epoch: term.epoch }, 'took the dispatcher lease');
      this.deps.onLeader?.(term);
      return term;
    }
    return undefined;
  }

  /** How long a follower waits before trying again, reading the lease row: just past its expiry, never longer than a TTL (a holder may give it back early). */
  async waitBeforeRetry(): Promise<number> {
    const lease = await this.deps.lease.read();
    const left = lease.expiresAt.getTime() - lease.now.getTime();
    return Math.max(10, Math.min(left + 5, this.deps.ttlMs));
  }

  /**
   * Leading: renews the lease when due. False when this replica no longer
   * leads (it stalled past the time it trusts the lease, or the renewal
   * found it lost): it has stopped leading, and must write nothing more.
   */
  async keep(): Promise<boolean> {
    const term = this.term;
    if (!term) return false;
    const now = performance.now();
    if (now >= this.trustUntil) {
      this.deps.logger.warn({ epoch: term.epoch }, 'the dispatcher lease may have expired while this replica was stalled: taking it again before any write');
      this.lose();
      return false;
    }
    if (now >= this.renewAt) {
      const renewed = await this.deps.lease.renew(term, this.deps.ttlMs);
      if (!renewed) {
        this.deps.logger.warn({ epoch: term.epoch }, 'lost the dispatcher lease');
        this.lose();
        return false;
      }
      const t = performance.now();
      this.term = renewed;
      this.renewAt = t + this.deps.ttlMs / 3;
      this.trustUntil = now + this.deps.ttlMs * 0.9;
    }
    return true;
  }

  /** A write under `epoch` was refused by the fence: stop leading, if that is still the term held. */
  fenced(epoch: number): void {
    if (this.term?.epoch === epoch) this.lose();
  }

  /** Gives the lease back (a clean stop), so a follower takes over at once; stops leading either way. */
  async release(): Promise<void> {
    if (this.term) await this.deps.lease.release(this.term).catch(() => {});
    this.lose();
  }

  private lose(): void {
    const term = this.term;
    this.term = undefined;
    this.deps.metrics.leader.set(0);
    if (term) this.deps.onLost?.(term);
  }
}
