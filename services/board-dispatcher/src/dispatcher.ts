import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger, Pool } from '@vouch/platform';
import { BoardCache } from './board-cache.js';
import type { BoardNotifications } from './board-notifications.js';
import {
  FenceRejected,
  appendEvents,
  boardsWithDispatchableCards,
  boardsWithOpenCards,
  deleteClaim,
  expiredClaims,
  lastPolls,
  loadCommitted,
  lockExpiredClaim,
  openDiagnostics,
  readHead,
  recordDiagnostic,
  resolveDiagnostics,
  saveSnapshotAfterCommit,
  withFencedTransaction,
  type BoardKey,
  type ExpiredClaim,
  type Fence,
} from './board-store.js';
import { readLease, releaseLease, renewLease, tryAcquireLease, type LeaseTerm } from './dispatcher-lease.js';
import { expireClaim, planDispatch } from './domain/board-commands.js';
import { CONDITION_KINDS, evaluateConditions, ghostRunningFinding, resolvedOccurrences } from './domain/diagnose-board.js';
import type { BoardState } from './domain/replay-board.js';
import type { BoardMetrics } from './metrics.js';
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
  readonly holder: string;
  private term: LeaseTerm | undefined;
  /** performance.now() by which the lease must be renewed, and after which this replica assumes it lost it. */
  private renewAt = 0;
  private trustUntil = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private readonly dirty = new Map<string, BoardKey>();
  private readonly cache: BoardCache;
  private unlisten: (() => void) | undefined;
  private nextDispatchSweep = 0;
  private relaying: Promise<void> | undefined;
  private sweeping: Promise<void> | undefined;
  private relayAgain = false;
  /** Set by each sweep: the relay's loop then releases idle work queues (WorkQueues.release), never beside a relay pass. */
  private releaseDue = false;
  private nextSweep = 0;
  /** Snapshots being written, at most one per board. */
  private readonly snapshotting = new Map<string, Promise<void>>();

  constructor(private readonly opts: DispatcherOptions) {
    this.holder = opts.holder ?? defaultHolder();
    this.cache = opts.cache ?? new BoardCache();
  }

  get isLeader(): boolean {
    return this.term !== undefined;
  }

  get epoch(): number | undefined {
    return this.term?.epoch;
  }

  start(): void {
    this.opts.metrics.leaseTtl.set(this.opts.leaseTtlMs / 1000);
    this.opts.metrics.leader.set(0);
    this.unlisten = this.opts.notifications?.onBoardChanged((tenant, boardId) => {
      if (!this.term) return;
      this.dirty.set(JSON.stringify([tenant, boardId]), { tenant, boardId });
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
    await this.sweeping;
    await this.relaying;
    await Promise.all(this.snapshotting.values());
    if (this.term) await releaseLease(this.opts.pool, this.term).catch(() => {});
    this.lose();
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

  private lose(): void {
    const term = this.term;
    this.term = undefined;
    this.opts.metrics.leader.set(0);
    this.dirty.clear();
    if (term) this.opts.hooks?.onLostLease?.(term);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!this.term) await this.follow();
        else await this.lead();
      } catch (err) {
        this.opts.logger.warn({ err }, 'dispatcher step failed; retrying');
        await this.sleep(Math.min(1_000, this.opts.leaseTtlMs / 4));
      }
    }
  }

  /** Not leading: take the lease if it has expired, else sleep until it does. */
  private async follow(): Promise<void> {
    const ttl = this.opts.leaseTtlMs;
    const term = await tryAcquireLease(this.opts.pool, this.holder, ttl, Math.min(500, ttl / 4));
    if (term) {
      this.term = term;
      const t = performance.now();
      this.renewAt = t + ttl / 3;
      // Trust the lease locally for a little less than its TTL, measured from before the acquiring round trip ended.
      this.trustUntil = t + ttl * 0.9;
      this.nextDispatchSweep = 0;
      this.nextSweep = 0;
      this.opts.metrics.leader.set(1);
      this.opts.metrics.takeovers.inc();
      this.opts.logger.info({ holder: this.holder, epoch: term.epoch }, 'took the dispatcher lease');
      this.opts.hooks?.onLeader?.(term);
      return;
    }
    if (!this.relaying) await this.releaseQueues(false);
    const lease = await readLease(this.opts.pool);
    const left = lease.expiresAt.getTime() - lease.now.getTime();
    // Wake just after it expires; never sleep past a TTL (a holder may have given it back early).
    await this.sleep(Math.max(10, Math.min(left + 5, ttl)));
  }

  private async lead(): Promise<void> {
    const now = performance.now();
    if (now >= this.trustUntil) {
      this.opts.logger.warn({ epoch: this.term!.epoch }, 'the dispatcher lease may have expired while this replica was stalled: taking it again before any write');
      this.lose();
      return;
    }
    if (now >= this.renewAt) {
      const renewed = await renewLease(this.opts.pool, this.term!, this.opts.leaseTtlMs);
      if (!renewed) {
        this.opts.logger.warn({ epoch: this.term!.epoch }, 'lost the dispatcher lease');
        this.lose();
        return;
      }
      const t = performance.now();
      this.term = renewed;
      this.renewAt = t + this.opts.leaseTtlMs / 3;
      this.trustUntil = now + this.opts.leaseTtlMs * 0.9;
    }
    await this.work();
    const t = performance.now();
    const until = Math.min(this.renewAt, this.nextDispatchSweep, this.nextSweep) - t;
    if (this.dirty.size === 0) await this.sleep(until);
  }

  private fence(): Fence {
    return { holder: this.holder, epoch: this.term!.epoch, idleInTransactionMs: Math.max(250, this.opts.leaseTtlMs / 2) };
  }

  /** One round of leader work; a refused fence ends the leadership without throwing. */
  private async work(): Promise<void> {
    try {
      const t = performance.now();
      let dispatched = 0;
      // Boards a change was just announced for go first, and again between the
      // sweep's boards: a sweep over boards whose ready cards wait for a busy
      // assignee must not hold up a card that can go now.
      const drainChanged = async () => {
        while (this.dirty.size > 0) {
          const changed = [...this.dirty.values()];
          this.dirty.clear();
          for (const key of changed) dispatched += await this.dispatchBoard(key);
        }
      };
      await drainChanged();
      if (t >= this.nextDispatchSweep) {
        this.nextDispatchSweep = t + this.opts.dispatchSweepMs;
        for (const key of await boardsWithDispatchableCards(this.opts.pool, 1_000)) {
          await drainChanged();
          dispatched += await this.dispatchBoard(key);
        }
      }
      if (dispatched > 0) this.relay();
      if (t >= this.nextSweep) {
        this.nextSweep = t + this.opts.sweepMs;
        this.startSweep();
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
    if (this.term?.epoch === err.fence.epoch) this.lose();
    return true;
  }

  /**
   * The sweep (claim expiry, outbox, lost jobs, diagnostics over up to 200
   * boards) runs beside the dispatch loop, one at a time: it may take seconds
   * and must not hold up a dispatch.
   */
  private startSweep(): void {
    if (this.sweeping) return;
    this.sweeping = this.sweep()
      .catch((err: unknown) => {
        if (!this.fenced(err)) this.opts.logger.warn({ err }, 'dispatcher sweep failed; the next one retries');
      })
      .finally(() => {
        this.sweeping = undefined;
      });
  }

  private at(): string {
    return (this.opts.now ? this.opts.now() : new Date()).toISOString();
  }

  /** Dispatches what one board can dispatch now, in one fenced transaction; returns how many cards. */
  async dispatchBoard(key: BoardKey): Promise<number> {
    const fence = this.fence();
    await this.opts.hooks?.beforeFencedWrite?.(fence, key);
    const result = await withFencedTransaction(this.opts.pool, fence, async (tx) => {
      const head = await readHead(tx, key, { lock: true });
      const state = await loadCommitted(tx, key, head, this.cache.get(key));
      if (!state) return undefined;
      const plan = planDispatch(state, { epoch: fence.epoch, at: this.at() });
      if (plan.events.length === 0) return { state, plan, snapshotDue: false };
      const { snapshotDue } = await appendEvents(tx, key, state.version, plan.events, plan.state);
      return { state: plan.state, plan, snapshotDue };
    });
    if (!result) return 0;
    this.cache.remember(key, result.state);
    if (result.snapshotDue) this.snapshot(key, result.state);
    const at = Date.parse(result.plan.events[0]?.at ?? this.at());
    for (const d of result.plan.dispatched) this.opts.metrics.dispatchLatency.observe(Math.max(0, at - Date.parse(d.readySince)) / 1000);
    this.opts.metrics.dispatched.inc(result.plan.dispatched.length);
    return result.plan.dispatched.length;
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

  /**
   * Relays the outbox in its own loop, beside the dispatch loop: a burst of
   * a thousand jobs to Redis must not hold up the next dispatch. One relay
   * runs at a time; a kick while it runs makes it go round once more.
   */
  private relay(): void {
    if (this.relaying) {
      this.relayAgain = true;
      return;
    }
    this.relaying = (async () => {
      try {
        do {
          do {
            this.relayAgain = false;
            while ((await this.opts.queues.relay(this.opts.pool)) > 0) {
              // keep going until the outbox is settled
            }
          } while (this.relayAgain && !this.stopped);
          if (this.releaseDue && !this.stopped) {
            this.releaseDue = false;
            await this.releaseQueues(true);
          }
          // A kick that came during the release relays now, not at the next sweep.
        } while (this.relayAgain && !this.stopped);
      } catch (err) {
        // Redis down: the rows stay pending and the next sweep relays them.
        this.opts.logger.warn({ err }, 'relaying dispatches to the work queues failed; will retry');
      } finally {
        this.relaying = undefined;
      }
    })();
  }

  /**
   * Releases the work queues idle past their TTL: the leader, in its relay's
   * loop, obliterates the empty ones too; a follower (which relays nothing)
   * only drops its Queue objects.
   */
  private async releaseQueues(obliterate: boolean): Promise<void> {
    try {
      const obliterated = await this.opts.queues.release({ obliterate });
      if (obliterated > 0) this.opts.logger.debug({ obliterated }, 'obliterated idle, empty work queues');
    } catch (err) {
      this.opts.logger.warn({ err }, 'releasing idle work queues failed; the next sweep retries');
    }
  }

  /** Claims, the outbox, lost jobs and diagnostics. */
  private async sweep(): Promise<void> {
    for (const claim of await expiredClaims(this.opts.pool)) {
      if (!this.term || this.stopped) return;
      await this.expire(claim);
    }
    this.releaseDue = true;
    this.relay();
    try {
      const lost = await this.opts.queues.reconcile(this.opts.pool);
      if (lost > 0) {
        this.opts.logger.warn({ lost }, 'queued dispatch jobs were missing from Redis: queuing them again');
        this.relay();
      }
    } catch (err) {
      this.opts.logger.warn({ err }, 'checking the work queues failed; will retry');
    }
    if (this.term && !this.stopped) await this.diagnose();
  }

  private async expire(claim: ExpiredClaim): Promise<void> {
    const key = { tenant: claim.tenant, boardId: claim.boardId };
    const fence = this.fence();
    await this.opts.hooks?.beforeFencedWrite?.(fence, key);
    const result = await withFencedTransaction(this.opts.pool, fence, async (tx) => {
      const head = await readHead(tx, key, { lock: true });
      // A heartbeat may have extended it since it was listed.
      const still = await lockExpiredClaim(tx, key, claim.cardId, claim.claimToken);
      const state = await loadCommitted(tx, key, head, this.cache.get(key));
      if (!state) return undefined;
      if (!still) return { state, changed: false };
      const card = state.cards[claim.cardId];
      const decision = expireClaim(state, { cardId: claim.cardId, claimToken: claim.claimToken, at: this.at() });
      if (decision.events.length === 0) {
        // The board moved on (the card is no longer running under this token): the lease row is stale.
        await deleteClaim(tx, key, claim.cardId, claim.claimToken);
        return { state, changed: false };
      }
      const { snapshotDue } = await appendEvents(tx, key, state.version, decision.events, decision.state);
      if (card) await recordDiagnostic(tx, key, ghostRunningFinding(card, { by: claim.worker, attempt: claim.attempt, expiresAt: claim.expiresAt }), { bump: true });
      return { state: decision.state, changed: true, snapshotDue };
    });
    if (!result) return;
    this.cache.remember(key, result.state);
    if (result.changed && result.snapshotDue) this.snapshot(key, result.state);
  }

  /** Evaluates the diagnostics of boards with open work, in fenced transactions. */
  private async diagnose(): Promise<void> {
    const now = this.at();
    const pollsByTenant = new Map<string, Record<string, string>>();
    for (const key of await boardsWithOpenCards(this.opts.pool, 200)) {
      if (!this.term || this.stopped) return;
      const fence = this.fence();
      await withFencedTransaction(this.opts.pool, fence, async (tx) => {
        const state = await loadCommitted(tx, key, await readHead(tx, key), this.cache.get(key));
        if (!state) return;
        let polls = pollsByTenant.get(key.tenant);
        if (!polls) {
          polls = await lastPolls(tx, key.tenant);
          pollsByTenant.set(key.tenant, polls);
        }
        const found = evaluateConditions(state, { now, lastPollByAssignee: polls, consumerTtlMs: this.opts.consumerTtlMs, strandedAfterMs: this.opts.strandedAfterMs });
        for (const finding of found) await recordDiagnostic(tx, key, finding, { bump: false });
        const open = await openDiagnostics(tx, key);
        const holding = new Set(found.map((f) => `${f.kind} ${f.subject}`));
        const gone = open.filter((d) => CONDITION_KINDS.includes(d.kind) && !holding.has(`${d.kind} ${d.subject}`));
        await resolveDiagnostics(tx, key, [...gone, ...resolvedOccurrences(state, open, now, this.opts.diagnosticQuietMs)]);
      });
    }
  }
}
