import { LRUCache } from 'lru-cache';
import type { StreamKey, StreamState } from './event-stream-store.js';

/**
 * Recent committed states of a stream's aggregates in this process, keyed by
 * aggregate and checked against the head version on every use (see
 * EventStreamStore.loadCommitted): a writer or reader that holds the state at
 * version v reads only the events after v (usually none) instead of the
 * snapshot and its tail. Another replica's writes are picked up because the
 * cached version is compared with the head each time; events are never
 * changed or removed, so a cached state is the fold of a prefix of the stream
 * for as long as it is kept.
 *
 * It only ever holds committed state: callers remember a state after the
 * COMMIT that wrote it (or after reading committed rows), never one a
 * transaction might still roll back. Cached states are shared by every
 * caller, so they must be frozen: code that tried to change one in place
 * (and so leave state in the cache that no committed event produced) throws
 * instead.
 */
export interface StreamStateCacheOptions<Key extends StreamKey, State> {
  /** The most aggregates held. */
  max: number;
  /** The most weight held in all, with `weightOf`; an aggregate heavier than this is not kept. */
  maxWeight?: number;
  /** An aggregate's weight (its size, roughly); 1 each without it. */
  weightOf?(state: State): number;
  /** Says which aggregate a key names, in messages. */
  describe(key: Key): string;
}

/** A bounded, least-recently-used map of aggregate to its latest known committed state. */
export class StreamStateCache<Key extends StreamKey, State extends StreamState> {
  private readonly lru: LRUCache<string, State>;
  private readonly weightOf: ((state: State) => number) | undefined;
  private readonly maxWeight: number | undefined;

  constructor(
    private readonly idOf: (key: Key) => string,
    private readonly opts: StreamStateCacheOptions<Key, State>,
  ) {
    this.weightOf = opts.weightOf;
    this.maxWeight = opts.weightOf ? opts.maxWeight : undefined;
    this.lru = this.weightOf && this.maxWeight !== undefined ? new LRUCache<string, State>({ max: opts.max, maxSize: this.maxWeight, sizeCalculation: this.weightOf }) : new LRUCache<string, State>({ max: opts.max });
  }

  private id(key: Key): string {
    return JSON.stringify([key.tenant, this.idOf(key)]);
  }

  /** The cached state, frozen; marks it recently used. */
  get(key: Key): State | undefined {
    return this.lru.get(this.id(key));
  }

  /**
   * Keeps a committed, frozen state. An older version than the one held is
   * ignored: two jobs of one aggregate in this process may finish out of order.
   */
  remember(key: Key, state: State): void {
    if (!Object.isFrozen(state)) throw new Error(`${this.opts.describe(key)}: only a frozen state may be cached`);
    const id = this.id(key);
    const prior = this.lru.peek(id);
    if (prior && prior.version > state.version) return;
    // An aggregate heavier than the whole cache is not kept; neither is its older state.
    if (this.weightOf && this.maxWeight !== undefined && this.weightOf(state) > this.maxWeight) this.lru.delete(id);
    else this.lru.set(id, state);
  }

  forget(key: Key): void {
    this.lru.delete(this.id(key));
  }

  /** Aggregates held, and their weight (their count without weightOf). */
  get held(): { count: number; weight: number } {
    return { count: this.lru.size, weight: this.weightOf && this.maxWeight !== undefined ? this.lru.calculatedSize : this.lru.size };
  }
}

/** Freezes a value and everything in it, stopping at what is frozen already. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
}
