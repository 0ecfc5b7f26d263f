import type { Queryable } from '@vouch/platform';
import type { BoardCache } from './board-cache.js';
import { appendEvents, loadCommitted, readHead, type BoardKey, type Fence } from './board-store.js';
import { planDispatch } from './domain/board-commands.js';
import type { BoardState } from './domain/replay-board.js';
import type { BoardMetrics } from './metrics.js';

/**
 * A dispatch pass: the boards a change was announced for (Postgres
 * notifications) first, then, once per dispatch sweep, every board with
 * dispatchable cards, each dispatched in one fenced transaction. Boards
 * announced meanwhile go again between the sweep's boards: a sweep over
 * boards whose ready cards wait for a busy assignee must not hold up a card
 * that can go now.
 */

export interface DispatchPassDeps {
  /** The fence of the term this replica leads under. */
  fence(): Fence;
  /** Runs `write` in a transaction that checks `fence` once, first (board-store.ts withFencedTransaction). */
  fencedWrite<T>(fence: Fence, key: BoardKey, write: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Boards with cards waiting for dispatch (board-store.ts boardsWithDispatchableCards). */
  dispatchableBoards(limit: number): Promise<BoardKey[]>;
  cache: Pick<BoardCache, 'get' | 'remember'>;
  /** Writes a due snapshot after the commit, beside the loop. */
  snapshot(key: BoardKey, state: BoardState): void;
  /** The time the events are stamped with, ISO. */
  at(): string;
  metrics: Pick<BoardMetrics, 'dispatched' | 'dispatchLatency'>;
  dispatchSweepMs: number;
}

const SWEEP_BOARDS = 1_000;

export class DispatchPass {
  private readonly changed = new Map<string, BoardKey>();
  private nextSweep = 0;

  constructor(private readonly deps: DispatchPassDeps) {}

  /** Marks a board changed: the next pass dispatches it first. */
  markChanged(key: BoardKey): void {
    this.changed.set(JSON.stringify([key.tenant, key.boardId]), key);
  }

  get hasChanged(): boolean {
    return this.changed.size > 0;
  }

  /** performance.now() when the next dispatch sweep is due. */
  get sweepDueAt(): number {
    return this.nextSweep;
  }

  /** Forgets the announced boards and makes the next pass sweep (a new term, or none). */
  reset(): void {
    this.changed.clear();
    this.nextSweep = 0;
  }

  /** One pass at performance.now() `t`: how many cards it dispatched. Throws FenceRejected when the lease moved on. */
  async run(t: number): Promise<number> {
    let dispatched = 0;
    const drainChanged = async () => {
      while (this.changed.size > 0) {
        const changed = [...this.changed.values()];
        this.changed.clear();
        for (const key of changed) dispatched += await this.board(key);
      }
    };
    await drainChanged();
    if (t >= this.nextSweep) {
      this.nextSweep = t + this.deps.dispatchSweepMs;
      for (const key of await this.deps.dispatchableBoards(SWEEP_BOARDS)) {
        await drainChanged();
        dispatched += await this.board(key);
      }
    }
    return dispatched;
  }

  /** Dispatches what one board can dispatch now, in one fenced transaction; returns how many cards. */
  async board(key: BoardKey): Promise<number> {
    const fence = this.deps.fence();
    const result = await this.deps.fencedWrite(fence, key, async (tx) => {
      const head = await readHead(tx, key, { lock: true });
      const state = await loadCommitted(tx, key, head, this.deps.cache.get(key));
      if (!state) return undefined;
      const plan = planDispatch(state, { epoch: fence.epoch, at: this.deps.at() });
      if (plan.events.length === 0) return { state, plan, snapshotDue: false };
      const { snapshotDue } = await appendEvents(tx, key, state.version, plan.events, plan.state);
      return { state: plan.state, plan, snapshotDue };
    });
    if (!result) return 0;
    this.deps.cache.remember(key, result.state);
    if (result.snapshotDue) this.deps.snapshot(key, result.state);
    const at = Date.parse(result.plan.events[0]?.at ?? this.deps.at());
    for (const d of result.plan.dispatched) this.deps.metrics.dispatchLatency.observe(Math.max(0, at - Date.parse(d.readySince)) / 1000);
    this.deps.metrics.dispatched.inc(result.plan.dispatched.length);
    return result.plan.dispatched.length;
  }
}
