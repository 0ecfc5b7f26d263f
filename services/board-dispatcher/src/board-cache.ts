import { StreamStateCache } from '@vouch/platform';
import type { BoardState } from './domain/replay-board.js';
import type { BoardKey } from './board-store.js';

/**
 * Recent committed board states of this process (the platform's
 * StreamStateCache), so a write or a dispatch pass reads only the events
 * after the version it holds (usually none). It holds only committed, frozen
 * states: callers remember a state after the COMMIT that wrote it. Another
 * replica's writes are picked up because every use compares the cached
 * version with the board's head (boardStream.loadCommitted).
 */
export class BoardCache extends StreamStateCache<BoardKey, BoardState> {
  /** 500 boards: at the 1,000-card cap a board is about 1 MB of state, most are far smaller. */
  constructor(max = 500) {
    super((key) => key.boardId, { max, describe: (key) => `board ${key.boardId}` });
  }
}
