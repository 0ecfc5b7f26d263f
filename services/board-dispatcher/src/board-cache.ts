import { LRUCache } from 'lru-cache';
import type { Queryable } from '@vouch/platform';
import { applyEvents, type BoardState } from './domain/replay-board.js';
import { loadSnapshot, readEvents, type BoardHead, type BoardKey } from './board-store.js';

/**
 * Recent committed board states of this process, so a write or a dispatch
 * pass reads only the events after the version it holds (usually none). It
 * holds only committed, frozen states: callers remember a state after the
 * COMMIT that wrote it. Another replica's writes are picked up because every
 * use compares the cached version with the board's head.
 */
export class BoardCache {
  private readonly lru: LRUCache<string, BoardState>;

  /** 500 boards: at the 1,000-card cap a board is about 1 MB of state, most are far smaller. */
  constructor(max = 500) {
    this.lru = new LRUCache<string, BoardState>({ max });
  }

  private static id(key: BoardKey): string {
    return JSON.stringify([key.tenant, key.boardId]);
  }

  get(key: BoardKey): BoardState | undefined {
    return this.lru.get(BoardCache.id(key));
  }

  remember(key: BoardKey, state: BoardState): void {
    if (!Object.isFrozen(state)) throw new Error(`board ${key.boardId}: only a frozen state may be cached`);
    const id = BoardCache.id(key);
    const prior = this.lru.peek(id);
    if (prior && prior.version > state.version) return;
    this.lru.set(id, state);
  }
}

/**
 * The board's committed state at `head`: the cached state when it is at the
 * head, else the cached state (or the snapshot, when the cache is behind it)
 * plus the events after it.
 */
export async function loadCommitted(db: Queryable, key: BoardKey, head: BoardHead | undefined, cached: BoardState | undefined): Promise<BoardState | undefined> {
  if (!head) return undefined;
  if (cached && cached.version === head.version) return cached;
  const fromCache = cached !== undefined && cached.version < head.version && cached.version >= head.snapshotVersion;
  const base = fromCache ? cached : head.snapshotVersion > 0 ? await loadSnapshot(db, key) : undefined;
  const state = applyEvents(base, await readEvents(db, key, base?.version ?? 0));
  if (!state || state.version < head.version) throw new Error(`board ${key.boardId}: its head is at version ${head.version}, but its events end at ${state?.version ?? 0}`);
  return state;
}
