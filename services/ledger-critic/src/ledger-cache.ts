import { LRUCache } from 'lru-cache';
import type { Queryable } from '@vouch/platform';
import type { LedgerEvent } from './domain/ledger-events.js';
import { LedgerStreamError, applyEvents, type LedgerState } from './domain/replay-ledger.js';
import { loadSnapshot, readEvents, type LedgerHead, type LedgerKey } from './ledger-store.js';

/**
 * Recent ledger states of this process, so that a worker that wrote or read
 * a ledger last time reads only the events after the version it holds
 * (usually none) instead of the snapshot and its tail.
 *
 * It only ever holds committed state: callers remember a state after the
 * COMMIT that wrote it (or after reading committed rows), never one a
 * transaction might still roll back. Another replica's writes are picked up
 * because every use checks the cached version against the ledger's head and
 * applies the events after it. Events are never changed or removed, so a
 * cached state is the fold of a prefix of the stream for as long as it is
 * kept.
 *
 * Cached states are shared by every caller, so they are frozen: code that
 * tried to change one in place (and so leave state in the cache that no
 * committed event produced) throws instead.
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
export class LedgerCache {
  private readonly lru: LRUCache<string, LedgerState>;
  readonly maxItems: number;
  readonly maxLedgers: number;

  constructor(limits: LedgerCacheLimits = {}) {
    this.maxItems = limits.maxItems ?? DEFAULT_MAX_ITEMS;
    this.maxLedgers = limits.maxLedgers ?? DEFAULT_MAX_LEDGERS;
    this.lru = new LRUCache<string, LedgerState>({ max: this.maxLedgers, maxSize: this.maxItems, sizeCalculation: weightOf });
  }

  private static id(key: LedgerKey): string {
    return JSON.stringify([key.tenant, key.runId]);
  }

  /** The cached state of a ledger, frozen; marks it recently used. */
  get(key: LedgerKey): LedgerState | undefined {
    return this.lru.get(LedgerCache.id(key));
  }

  /**
   * Keeps a committed, frozen state (see loadCommitted and freezeApplied). An
   * older version than the one held is ignored: two jobs of one ledger in
   * this process may finish out of order.
   */
  remember(key: LedgerKey, state: LedgerState): void {
    if (!Object.isFrozen(state)) throw new Error(`ledger ${key.runId}: only a frozen state may be cached`);
    const id = LedgerCache.id(key);
    const prior = this.lru.peek(id);
    if (prior && prior.version > state.version) return;
    // A ledger heavier than the whole cache is not kept; neither is its older state.
    if (weightOf(state) > this.maxItems) this.lru.delete(id);
    else this.lru.set(id, state);
  }

  forget(key: LedgerKey): void {
    this.lru.delete(LedgerCache.id(key));
  }

  /** Ledgers held, and their weight. */
  get size(): { ledgers: number; items: number } {
    return { ledgers: this.lru.size, items: this.lru.calculatedSize };
  }
}

/** Freezes a value and everything in it, stopping at what is frozen already. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
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

/**
 * The ledger's committed state at `head` (read, or locked by a writer, just
 * before): the cached state when it is at the head; else the cached state
 * plus the events after it, when it is no further behind than the latest
 * snapshot; else the snapshot plus the events after it. The result is frozen
 * and not yet remembered: a writer remembers what it commits, after COMMIT.
 */
export async function loadCommitted(db: Queryable, key: LedgerKey, head: LedgerHead | undefined, cached: LedgerState | undefined): Promise<LedgerState | undefined> {
  if (!head) return undefined;
  if (cached && cached.version === head.version) return cached;
  const fromCache = cached !== undefined && cached.version < head.version && cached.version >= head.snapshotVersion;
  const base = fromCache ? cached : head.snapshotVersion > 0 ? await loadSnapshot(db, key) : undefined;
  const tail = await readEvents(db, key, base?.version ?? 0);
  const state = applyEvents(base, tail);
  // Without a lock a writer may have moved the head on since it was read, never back.
  if (!state || state.version < head.version) throw new LedgerStreamError(`ledger ${key.runId}: its head is at version ${head.version}, but its events end at ${state?.version ?? 0}`);
  return fromCache ? freezeApplied(state, tail) : deepFreeze(state);
}
