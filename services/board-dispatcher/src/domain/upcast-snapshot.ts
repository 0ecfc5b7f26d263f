import { deepFreeze, type BoardState } from './replay-board.js';

/**
 * A stored snapshot as the state that replaying its events gives today.
 * Snapshots written before boards had a visibility have none; their
 * board_created event reads as admin (board-events.ts), so they do too.
 */
export function upcastSnapshot(stored: BoardState): BoardState {
  const state = stored as Omit<BoardState, 'visibility'> & { visibility?: BoardState['visibility'] };
  return deepFreeze(state.visibility === undefined ? { ...state, visibility: 'admin' } : (state as BoardState));
}
