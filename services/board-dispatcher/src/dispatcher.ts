import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger, Pool, Queryable } from '@vouch/platform';
import { BoardCache } from './board-cache.js';
import type { BoardNotifications } from './board-notifications.js';
import { BoardSweep } from './board-sweep.js';
import { FenceRejected, boardsWithDispatchableCards, boardsWithOpenCards, expiredClaims, saveSnapshotAfterCommit, withFencedTransaction, type BoardKey, type Fence } from './board-store.js';
import { DispatchPass } from './dispatch-pass.js';
import { readLease, releaseLease, renewLease, tryAcquireLease, type LeaseTerm } from './dispatcher-lease.js';
import type { BoardState } from './domain/replay-board.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { BoardMetrics } from './metrics.js';
import { OutboxRelay } from './outbox-relay.js';
import type { WorkQueues } from './work-queues.js';

/**
 * The dispatcher. Every replica runs one; only the holder of the dispatcher
 * lease acts. Followers wait for the lease to expire (reading its expiry
 * from Postgres) and try to take it. The leader renews it every third of its
 * TTL and, between renewals:
 *
 * - dispatches the boards it is told changed (Postgres notifications), and
 *   every board with dispatchable cards once per dispatch sweep;
 * - relays the dispatch outbox to the assignees' work queues;
 * - ends claims that stopped heartbeating, checks queued jobs still exist,
 *   and evaluates diagnostics, once per sweep.
 *
 * Each of those is a part with a narrow interface: the lease keeper
 * (lease-keeper.ts), the dispatch pass (dispatch-pass.ts), the outbox relay
 * (outbox-relay.ts) and the sweep (board-sweep.ts). This class wires them to
 * the pool, the work queues and the metrics, and runs the loop.
 *
 * Every board write it makes runs in a transaction that first checks, once,
 * under a share lock on the lease row held to COMMIT, that it still holds
 * the lease at its epoch (board-store.ts withFencedTransaction): a leader
 * paused past its TTL that wakes up and writes is refused, however sure it
 * is that it still leads.
 */

export interface DispatcherOptions {
  pool: Pool;
  queues: WorkQueues;
  logger: Logger;
  metrics: BoardMetrics;
  notifications?: BoardNotifications;
  cache?: BoardCache;
  holder?: string;
  leaseTtlMs: number;
  dispatchSweepMs: number;
  sweepMs: number;
  consumerTtlMs: number;
  strandedAfterMs: number;
  diagnosticQuietMs: number;
  now?: () => Date;
  /** Test hooks: called with the fence just before a board write is attempted, and when one is refused. */
  hooks?: { beforeFencedWrite?(fence: Fence, key: BoardKey): Promise<void> | void; onFenceRejected?(fence: Fence): void; onLeader?(term: LeaseTerm): void; onLostLease?(term: LeaseTerm): void };
}

export function defaultHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

export class Dispatcher {
  private readonly lease: LeaseKeeper;
  private readonly pass: DispatchPass;
  private readonly relay: OutboxRelay;
  private readonly sweep: BoardSweep;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private unlisten: (() => void) | undefined;
  private nextSweep = 0;
  /** Snapshots being written, at most one per board. */
  private readonly snapshotting = new Map<string, Promise<void>>();

  constructor(private readonly opts: DispatcherOptions) {
    const { pool, queues, logger, metrics, hooks } = opts;
    const cache = opts.cache ?? new BoardCache();
    this.lease = new LeaseKeeper({
      holder: opts.holder ?? defaultHolder(),
      ttlMs: opts.leaseTtlMs,
      lease: {
        tryAcquire: (holder, ttlMs, lockTimeoutMs) => tryAcquireLease(pool, holder, ttlMs, lockTimeoutMs),
        renew: (term, ttlMs) => renewLease(pool, term, ttlMs),
        release: (term) => releaseLease(pool, term),
        read: () => readLease(pool),
      },
      logger,
      metrics,
      onLeader: (term) => {
        this.pass.reset();
        this.nextSweep = 0;
        hooks?.onLeader?.(term);
      },
      onLost: (term) => {
        this.pass.reset();
        hooks?.onLostLease?.(term);
      },
    });
    const fence = () => this.lease.fence();
    const fencedWrite = async <T>(f: Fence, key: BoardKey, write: (tx: Queryable) => Promise<T>): Promise<T> => {
      await hooks?.beforeFencedWrite?.(f, key);
      return withFencedTransaction(pool, f, write);
    };
    const at = () => (opts.now ? opts.now() : new Date()).toISOString();
    const snapshot = (key: BoardKey, state: BoardState) => this.snapshot(key, state);
    this.pass = new DispatchPass({
      fence,
      fencedWrite,
      dispatchableBoards: (limit) => boardsWithDispatchableCards(pool, limit),
      cache,
      snapshot,
      at,
      metrics,
      dispatchSweepMs: opts.dispatchSweepMs,
    });
    this.relay = new OutboxRelay({
      relayBatch: () => queues.relay(pool),
      releaseQueues: (o) => queues.release(o),
      stopped: () => this.stopped,
      logger,
    });
    this.sweep = new BoardSweep({
      fence,
      leading: () => this.lease.isLeader && !this.stopped,
      fencedWrite,
      fencedTransaction: (f, write) => withFencedTransaction(pool, f, write),
      expiredClaims: () => expiredClaims(pool),
      openBoards: (limit) => boardsWithOpenCards(pool, limit),
      reconcile: () => queues.reconcile(pool),
      relay: this.relay,
      cache,
      snapshot,
      at,
      logger,
      consumerTtlMs: opts.consumerTtlMs,
      strandedAfterMs: opts.strandedAfterMs,
      diagnosticQuietMs: opts.diagnosticQuietMs,
    });
  }

  get holder(): string {
    return this.lease.holder;
  }

  get isLeader(): boolean {
    return this.lease.isLeader;
  }

  get epoch(): number | undefined {
    return this.lease.epoch;
  }

  start(): void {
    this.opts.metrics.leaseTtl.set(this.opts.leaseTtlMs / 1000);
    this.opts.metrics.leader.set(0);
    this.unlisten = this.opts.notifications?.onBoardChanged((tenant, boardId) => {
      if (!this.lease.isLeader) return;
      this.pass.markChanged({ tenant, boardId });
      this.wake?.();
    });
    this.loop = this.run();
  }

  /** Stops the loop and hands the lease back, so a follower takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    this.wake?.();
    await this.loop;
    await this.sweep.idle();
    await this.relay.idle();
    await Promise.all(this.snapshotting.values());
    await this.lease.release();
  }

  /** Dispatches what one board can dispatch now, in one fenced transaction; returns how many cards. */
  dispatchBoard(key: BoardKey): Promise<number> {
    return this.pass.board(key);
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!this.lease.isLeader) await this.follow();
        else await this.lead();
      } catch (err) {
        this.opts.logger.warn({ err }, 'dispatcher step failed; retrying');
        await this.sleep(Math.min(1_000, this.opts.leaseTtlMs / 4));
      }
    }
  }

  /** Not leading: take the lease if it has expired, else sleep until it does. */
  private async follow(): Promise<void> {
    if (await this.lease.acquire()) return;
    if (!this.relay.running) await this.relay.releaseQueues(false);
    await this.sleep(await this.lease.waitBeforeRetry());
  }

  private async lead(): Promise<void> {
    if (!(await this.lease.keep())) return;
    await this.work();
    const t = performance.now();
    const until = Math.min(this.lease.renewDueAt, this.pass.sweepDueAt, this.nextSweep) - t;
    if (!this.pass.hasChanged) await this.sleep(until);
  }

  /** One round of leader work; a refused fence ends the leadership without throwing. */
  private async work(): Promise<void> {
    try {
      const t = performance.now();
      const dispatched = await this.pass.run(t);
      if (dispatched > 0) this.relay.kick();
      if (t >= this.nextSweep) {
        this.nextSweep = t + this.opts.sweepMs;
        this.sweep.start((err) => {
          if (!this.fenced(err)) this.opts.logger.warn({ err }, 'dispatcher sweep failed; the next one retries');
        });
      }
    } catch (err) {
      if (!this.fenced(err)) throw err;
    }
  }

  /** A write refused by the lease fence ends the leadership; true when `err` was that. */
  private fenced(err: unknown): boolean {
    if (!(err instanceof FenceRejected)) return false;
    this.opts.metrics.fenceRejections.inc();
    this.opts.logger.warn({ epoch: err.fence.epoch }, 'a dispatcher write was refused by the lease fence: this replica no longer leads');
    this.opts.hooks?.onFenceRejected?.(err.fence);
    this.lease.fenced(err.fence.epoch);
    return true;
  }

  /**
   * Writes a due snapshot beside the loop, after the commit: the next
   * dispatch pass does not wait for it. One at a time per board; a write
   * made meanwhile finds the snapshot still due and writes a newer one.
   */
  private snapshot(key: BoardKey, state: BoardState): void {
    const id = JSON.stringify([key.tenant, key.boardId]);
    if (this.snapshotting.has(id)) return;
    const writing = saveSnapshotAfterCommit(this.opts.pool, key, state, this.opts.logger).finally(() => this.snapshotting.delete(id));
    this.snapshotting.set(id, writing);
  }
}
