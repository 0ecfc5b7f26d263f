import { withTransaction, type Pool } from '@vouch/platform';
import { LEASE_NAME } from './board-store.js';

/**
 * The dispatcher lease: one Postgres row (holder, epoch, expires_at), judged
 * by the database's clock so replicas' clocks never disagree about it. It is
 * taken only once expired, and every taking bumps the epoch, so a holder that
 * lost it (even to itself, after a pause) writes under a stale epoch and is
 * fenced off (board-store.ts checkFence).
 */

export interface LeaseTerm {
  holder: string;
  epoch: number;
  expiresAt: Date;
}

export interface LeaseRow {
  holder: string | null;
  epoch: number;
  acquiredAt: Date | null;
  expiresAt: Date;
  /** The database's clock when the row was read. */
  now: Date;
}

const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Takes the lease if it has expired. A dispatch transaction of the current
 * holder keeps the row share-locked; waiting at most lockTimeoutMs for it
 * keeps a follower's loop moving (it tries again at the next expiry).
 */
export async function tryAcquireLease(pool: Pool, holder: string, ttlMs: number, lockTimeoutMs = 500): Promise<LeaseTerm | undefined> {
  try {
    return await withTransaction(pool, async (tx) => {
      await tx.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`);
      const { rows } = await tx.query<{ epoch: string; expires_at: Date }>(
        `UPDATE board_dispatcher_lease SET holder = $2, epoch = epoch + 1, acquired_at = clock_timestamp(), expires_at = clock_timestamp() + make_interval(secs => $3)
         WHERE name = $1 AND expires_at <= clock_timestamp() RETURNING epoch, expires_at`,
        [LEASE_NAME, holder, ttlMs / 1000],
      );
      const row = rows[0];
      return row && { holder, epoch: Number(row.epoch), expiresAt: row.expires_at };
    });
  } catch (err) {
    if ((err as { code?: string }).code === LOCK_NOT_AVAILABLE) return undefined;
    throw err;
  }
}

/** Extends a lease still held; undefined when it was lost (expired or taken over): stop dispatching at once. */
export async function renewLease(pool: Pool, term: LeaseTerm, ttlMs: number): Promise<LeaseTerm | undefined> {
  const { rows } = await pool.query<{ expires_at: Date }>(
    `UPDATE board_dispatcher_lease SET expires_at = clock_timestamp() + make_interval(secs => $4)
     WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() RETURNING expires_at`,
    [LEASE_NAME, term.holder, term.epoch, ttlMs / 1000],
  );
  return rows[0] && { ...term, expiresAt: rows[0].expires_at };
}

/** Gives the lease up on a clean stop, so a follower takes over at once instead of after the TTL. */
export async function releaseLease(pool: Pool, term: LeaseTerm): Promise<void> {
  await pool.query(`UPDATE board_dispatcher_lease SET expires_at = clock_timestamp() WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()`, [
    LEASE_NAME,
    term.holder,
    term.epoch,
  ]);
}

export async function readLease(pool: Pick<Pool, 'query'>): Promise<LeaseRow> {
  const { rows } = await pool.query<{ holder: string | null; epoch: string; acquired_at: Date | null; expires_at: Date; now: Date }>(
    `SELECT holder, epoch, acquired_at, expires_at, clock_timestamp() AS now FROM board_dispatcher_lease WHERE name = $1`,
    [LEASE_NAME],
  );
  const row = rows[0];
  if (!row) return { holder: null, epoch: 0, acquiredAt: null, expiresAt: new Date(0), now: new Date() };
  return { holder: row.holder, epoch: Number(row.epoch), acquiredAt: row.acquired_at, expiresAt: row.expires_at, now: row.now };
}
