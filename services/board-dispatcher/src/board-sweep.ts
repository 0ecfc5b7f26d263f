import type { Logger, Queryable } from '@vouch/platform';
import type { BoardCache } from './board-cache.js';
import {
  appendEvents,
  deleteClaim,
  lastPolls,
  loadCommitted,
  lockExpiredClaim,
  openDiagnostics,
  readHead,
  recordDiagnostic,
  resolveDiagnostics,
  type BoardKey,
  type ExpiredClaim,
  type Fence,
} from './board-store.js';
import { expireClaim } from './domain/board-commands.js';
import { CONDITION_KINDS, evaluateConditions, ghostRunningFinding, resolvedOccurrences } from './domain/diagnose-board.js';
import type { BoardState } from './domain/replay-board.js';

/**
 * The leader's sweep, once per BOARD_SWEEP_MS: ends claims that stopped
 * heartbeating, has the relay release idle work queues, checks that queued
 * jobs still exist in Redis, and evaluates diagnostics over up to 200
 * boards, each board in a fenced transaction. It runs beside the dispatch
 * loop, one at a time: it may take seconds and must not hold up a dispatch.
 */

export interface BoardSweepDeps {
  /** The fence of the term this replica leads under. */
  fence(): Fence;
  /** True while this replica still leads and is not stopping: the sweep stops between boards once it is false. */
  leading(): boolean;
  /** A fenced write announced to the test hooks (beforeFencedWrite), as the dispatch pass's are. */
  fencedWrite<T>(fence: Fence, key: BoardKey, write: (tx: Queryable) => Promise<T>): Promise<T>;
  /** A fenced transaction without the announcement (the diagnostics of a board). */
  fencedTransaction<T>(fence: Fence, write: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Claims whose lease has run out (board-store.ts expiredClaims). */
  expiredClaims(): Promise<ExpiredClaim[]>;
  /** Boards with open work or open diagnostics (board-store.ts boardsWithOpenCards). */
  openBoards(limit: number): Promise<BoardKey[]>;
  /** Queues again the queued dispatches whose jobs Redis lost (WorkQueues.reconcile); how many. */
  reconcile(): Promise<number>;
  relay: { kick(): void; kickAndRelease(): void };
  cache: Pick<BoardCache, 'get' | 'remember'>;
  snapshot(key: BoardKey, state: BoardState): void;
  at(): string;
  logger: Pick<Logger, 'warn'>;
  consumerTtlMs: number;
  strandedAfterMs: number;
  diagnosticQuietMs: number;
}

const DIAGNOSED_BOARDS = 200;

export class BoardSweep {
  private sweeping: Promise<void> | undefined;

  constructor(private readonly deps: BoardSweepDeps) {}

  /** Starts a sweep unless one runs; `failed` hears what it threw (a FenceRejected among them). */
  start(failed: (err: unknown) => void): void {
    if (this.sweeping) return;
    this.sweeping = this.sweep()
      .catch(failed)
      .finally(() => {
        this.sweeping = undefined;
      });
  }

  /** Resolves when no sweep runs. */
  async idle(): Promise<void> {
    await this.sweeping;
  }

  private async sweep(): Promise<void> {
    for (const claim of await this.deps.expiredClaims()) {
      if (!this.deps.leading()) return;
      await this.expire(claim);
    }
    this.deps.relay.kickAndRelease();
    try {
      const lost = await this.deps.reconcile();
      if (lost > 0) {
        this.deps.logger.warn({ lost }, 'queued dispatch jobs were missing from Redis: queuing them again');
        this.deps.relay.kick();
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'checking the work queues failed; will retry');
    }
    if (this.deps.leading()) await this.diagnose();
  }

  /** Ends one expired claim (the card back to ready, a ghost_running diagnostic), unless a heartbeat extended it meanwhile. */
  private async expire(claim: ExpiredClaim): Promise<void> {
    const key = { tenant: claim.tenant, boardId: claim.boardId };
    const fence = this.deps.fence();
    const result = await this.deps.fencedWrite(fence, key, async (tx) => {
      const head = await readHead(tx, key, { lock: true });
      // A heartbeat may have extended it since it was listed.
      const still = await lockExpiredClaim(tx, key, claim.cardId, claim.claimToken);
      const state = await loadCommitted(tx, key, head, this.deps.cache.get(key));
      if (!state) return undefined;
      if (!still) return { state, changed: false };
      const card = state.cards[claim.cardId];
      const decision = expireClaim(state, { cardId: claim.cardId, claimToken: claim.claimToken, at: this.deps.at() });
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
    this.deps.cache.remember(key, result.state);
    if (result.changed && result.snapshotDue) this.deps.snapshot(key, result.state);
  }

  /** Evaluates the diagnostics of boards with open work, in fenced transactions. */
  private async diagnose(): Promise<void> {
    const now = this.deps.at();
    const pollsByTenant = new Map<string, Record<string, string>>();
    for (const key of await this.deps.openBoards(DIAGNOSED_BOARDS)) {
      if (!this.deps.leading()) return;
      await this.deps.fencedTransaction(this.deps.fence(), async (tx) => {
        const state = await loadCommitted(tx, key, await readHead(tx, key), this.deps.cache.get(key));
        if (!state) return;
        let polls = pollsByTenant.get(key.tenant);
        if (!polls) {
          polls = await lastPolls(tx, key.tenant);
          pollsByTenant.set(key.tenant, polls);
        }
        const found = evaluateConditions(state, { now, lastPollByAssignee: polls, consumerTtlMs: this.deps.consumerTtlMs, strandedAfterMs: this.deps.strandedAfterMs });
        for (const finding of found) await recordDiagnostic(tx, key, finding, { bump: false });
        const open = await openDiagnostics(tx, key);
        const holding = new Set(found.map((f) => `${f.kind} ${f.subject}`));
        const gone = open.filter((d) => CONDITION_KINDS.includes(d.kind) && !holding.has(`${d.kind} ${d.subject}`));
        await resolveDiagnostics(tx, key, [...gone, ...resolvedOccurrences(state, open, now, this.deps.diagnosticQuietMs)]);
      });
    }
  }
}
