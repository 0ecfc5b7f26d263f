import { LRUCache } from 'lru-cache';
import type { Queryable } from '@vouch/platform';
import { loadBodies } from './artifact-store.js';
import { indexLines, type BodyLines } from './domain/body-lines.js';

/** A stored body and, built on first need, its line index. */
export interface CachedBody {
  body: Buffer;
  lines(): BodyLines;
}

/**
 * Bodies are immutable (content-addressed), so a process may keep recent ones
 * in memory. The key is (tenant, hash): one tenant's cached body never answers
 * another tenant's read, even for identical bytes.
 */
export class BodyCache {
  private readonly lru: LRUCache<string, { body: Buffer; lines?: BodyLines }>;

  constructor(maxBytes: number) {
    this.lru = new LRUCache({
      maxSize: Math.max(maxBytes, 1),
      // 4 bytes a line for the index, built lazily; counted up front so the bound holds once it exists.
      sizeCalculation: (v) => Math.max(1, v.body.length + Math.ceil(v.body.length / 16)),
    });
    this.enabled = maxBytes > 0;
  }

  private readonly enabled: boolean;

  private wrap(entry: { body: Buffer; lines?: BodyLines }): CachedBody {
    return {
      body: entry.body,
      lines: () => {
        entry.lines ??= indexLines(entry.body);
        return entry.lines;
      },
    };
  }

  /** Bodies by hash for one tenant: from memory, the rest from Postgres in one query. */
  async get(db: Queryable, tenant: string, hashes: readonly string[]): Promise<Map<string, CachedBody>> {
    const out = new Map<string, CachedBody>();
    const missing: string[] = [];
    for (const h of new Set(hashes)) {
      const hit = this.enabled ? this.lru.get(`${tenant}\u0000${h}`) : undefined;
      if (hit) out.set(h, this.wrap(hit));
      else missing.push(h);
    }
    if (missing.length) {
      const loaded = await loadBodies(db, tenant, missing);
      for (const [h, body] of loaded) {
        const entry = { body };
        if (this.enabled) this.lru.set(`${tenant}\u0000${h}`, entry);
        out.set(h, this.wrap(entry));
      }
    }
    return out;
  }

  /** Remembers a body just stored. */
  put(tenant: string, hash: string, body: Buffer): void {
    if (this.enabled) this.lru.set(`${tenant}\u0000${hash}`, { body });
  }
}
