import { StreamStateCache, deepFreeze } from '@vouch/platform';
import type { LedgerEvent } from './domain/ledger-events.js';
import type { LedgerState } from './domain/replay-ledger.js';
import type { LedgerKey } from './ledger-store.js';

export { deepFreeze };

/**
 * Recent ledger states of this process (the platform's StreamStateCache),
 * weighed by their evidence, so that a worker that wrote or read a ledger
 * last time reads only the events after the version it holds (usually none)
 * instead of the snapshot and its tail.
 */

/** A ledger's weight in the cache: its evidence items, which make up nearly all of its size (about 240 bytes of JSON each). */
function weightOf(state: LedgerState): number {
  return 1 + state.evidence.length;
}

/**
 * 50,000 evidence items: about 12 MB as JSON, a few tens of MB on the heap;
 * five ledgers at the 10,000-item cap, or hundreds of typical ones.
 */
const DEFAULT_MAX_ITEMS = 50_000;
/** Bounds the entries of many small ledgers, whose packets and claims the weight does not count. */
const DEFAULT_MAX_LEDGERS = 1_000;

export interface LedgerCacheLimits {
  /** The most evidence items (plus one per ledger) held in all. */
  maxItems?: number;
  maxLedgers?: number;
}

/** A bounded, least-recently-used map of (tenant, run id) to the ledger's latest known committed state. */
export class LedgerCache extends StreamStateCache<LedgerKey, LedgerState> {
  readonly maxItems: number;
  readonly maxLedgers: number;

  constructor(limits: LedgerCacheLimits = {}) {
    const maxItems = limits.maxItems ?? DEFAULT_MAX_ITEMS;
    const maxLedgers = limits.maxLedgers ?? DEFAULT_MAX_LEDGERS;
    super((key) => key.runId, { max: maxLedgers, maxWeight: maxItems, weightOf, describe: (key) => `ledger ${key.runId}` });
    this.maxItems = maxItems;
    this.maxLedgers = maxLedgers;
  }

  /** Ledgers held, and their weight. */
  get size(): { ledgers: number; items: number } {
    const { count, weight } = this.held;
    return { ledgers: count, items: weight };
  }
}

/**
 * Freezes the state that `events` produced from a frozen state (or from
 * none), without walking what it shares with that state: applyEvent builds a
 * new state object and new top-level arrays, and every other object in them
 * is either the prior state's (frozen) or one of the events' payloads. So
 * this costs the size of the events, not of the ledger.
 */
export function freezeApplied(state: LedgerState, events: readonly LedgerEvent[]): LedgerState {
  for (const event of events) deepFreeze(event);
  for (const field of Object.values(state)) if (field !== null && typeof field === 'object') Object.freeze(field);
  return Object.freeze(state);
}
