import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Queryable } from '@vouch/platform';
import { authenticateApiKey, type Caller } from './api-keys.js';

/**
 * How long a gateway trusts a key it has checked without asking Postgres
 * again. Revocations reach every replica at once over Redis pub/sub; this
 * bounds how stale a key can be when one is missed (Redis down at the moment
 * of the revocation). A replica whose subscription drops forgets every key.
 */
export const API_KEY_CACHE_TTL_MS = 10_000;

/** The pub/sub channel revocations travel on; under the BullMQ prefix, so deployments sharing a Redis do not hear each other. */
export function revocationChannel(prefix: string): string {
  return `${prefix}:api-keys:revoked`;
}

/** Tells every gateway on `prefix` to forget a revoked key at once. */
export async function announceRevocation(redis: Redis, prefix: string, keyId: string): Promise<number> {
  return redis.publish(revocationChannel(prefix), keyId);
}

/**
 * Tells every gateway on `prefix` to forget a key whose record changed (its
 * budgets), so that its next request reads the key again. It travels on the
 * revocations' channel: to a gateway both mean "forget this key now".
 */
export async function announceKeyChange(redis: Redis, prefix: string, keyId: string): Promise<number> {
  return announceRevocation(redis, prefix, keyId);
}

interface Entry {
  /** The whole caller: tenant, scopes and the agent the key acts as, so a cached key acts as the same agent as a fresh lookup. */
  caller: Caller;
  expiresAt: number;
}

/**
 * Authentication without a Postgres round trip on the hot path: a verified
 * key is remembered for API_KEY_CACHE_TTL_MS, keyed by the key's SHA-256 (the
 * clear key is never kept), and dropped the moment a revocation for its id
 * arrives on the channel. Only keys that exist are cached: an unknown key is
 * asked about every time, so a key created a moment ago works at once.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private listening = false;
  /** Bumped by every revocation, so a lookup that raced one is not cached. */
  private generation = 0;

  constructor(
    private readonly db: Queryable,
    private readonly subscriber: Redis,
    private readonly prefix: string,
    private readonly ttlMs = API_KEY_CACHE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Subscribes to revocations; until the subscription is up (and after it drops) nothing is served from the cache. */
  async start(): Promise<void> {
    const channel = revocationChannel(this.prefix);
    this.subscriber.on('message', (ch: string, keyId: string) => {
      if (ch === channel) this.forgetKeyId(keyId);
    });
    // A subscription that dropped may have missed revocations: forget everything, trust nothing until resubscribed.
    this.subscriber.on('close', () => {
      this.listening = false;
      this.generation += 1;
      this.entries.clear();
    });
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(channel).then(
        () => (this.listening = true),
        () => (this.listening = false),
      );
    });
    if (this.subscriber.status === 'ready') {
      await this.subscriber.subscribe(channel);
      this.listening = true;
    }
  }

  async authenticate(key: string): Promise<Caller | undefined> {
    const digest = createHash('sha256').update(key).digest('base64');
    const hit = this.entries.get(digest);
    if (hit && this.listening && hit.expiresAt > this.now()) return hit.caller;
    const generation = this.generation;
    const caller = await authenticateApiKey(this.db, key);
    if (caller && this.listening && generation === this.generation) {
      // Bounded: drop the oldest entry (Map keeps insertion order) past 10,000 keys.
      if (this.entries.size >= 10_000) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(digest, { caller, expiresAt: this.now() + this.ttlMs });
    } else this.entries.delete(digest);
    return caller;
  }

  private forgetKeyId(keyId: string): void {
    this.generation += 1;
    for (const [digest, entry] of this.entries) if (entry.caller.keyId === keyId) this.entries.delete(digest);
  }

  async close(): Promise<void> {
    this.listening = false;
    this.entries.clear();
  }
}
