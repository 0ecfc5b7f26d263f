import { createHash, randomUUID } from 'node:crypto';
import type { Queryable } from '@vouch/platform';

/** How long a key is remembered. Stripe keeps keys 24 h; so do we. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;
/** A pending record older than this belongs to a request that died with its gateway; a retry may take it over. */
const PENDING_TAKEOVER_SECONDS = 60;

/** JSON with object keys sorted, so equal bodies hash equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The fingerprint of a request: its operation, validated input and the agent
 * its key acts as. With the agent in it, one agent's answer (a claim and its
 * token) is never replayed to another agent of the tenant that sends the same
 * Idempotency-Key and body: a body that leaves the agent out is the same for
 * every agent.
 */
export function requestHash(operation: string, input: unknown, agent?: string): string {
  const hash = createHash('sha256').update(operation).update('\0').update(canonicalJson(input));
  if (agent !== undefined) hash.update('\0').update(agent);
  return hash.digest('hex');
}

/**
 * What a key holds for this request. `attempt` names the run of the
 * operation the key belongs to now: `new` starts it (or takes over the
 * attempt of a request that died with its gateway), `pending` is another
 * request's attempt still in progress, whose answer a queued operation waits
 * for (await-attempt.ts).
 */
export type IdempotencyClaim =
  | { kind: 'new'; attempt: string }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'mismatch'; operation: string }
  | { kind: 'pending'; attempt: string };

/** Claims (tenant, key) for this request, or says what the key already holds. */
export async function claimIdempotencyKey(db: Queryable, tenant: string, key: string, operation: string, hash: string): Promise<IdempotencyClaim> {
  const inserted = await db.query<{ attempt: string }>(
    `INSERT INTO idempotency_keys (tenant, key, operation, request_hash, state, attempt) VALUES ($1, $2, $3, $4, 'pending', $6)
     ON CONFLICT (tenant, key) DO UPDATE SET created_at = now(), state = 'pending'
       WHERE idempotency_keys.request_hash = EXCLUDED.request_hash
         AND (idempotency_keys.state = 'retry'
           OR (idempotency_keys.state = 'pending' AND idempotency_keys.created_at < now() - make_interval(secs => $5)))
     RETURNING attempt`,
    [tenant, key, operation, hash, PENDING_TAKEOVER_SECONDS, randomUUID()],
  );
  if (inserted.rows[0]) return { kind: 'new', attempt: inserted.rows[0].attempt };
  const { rows } = await db.query(`SELECT operation, request_hash, state, status_code, response, attempt FROM idempotency_keys WHERE tenant = $1 AND key = $2`, [tenant, key]);
  const row = rows[0];
  if (!row) return claimIdempotencyKey(db, tenant, key, operation, hash); // swept between the two statements
  if (row.request_hash !== hash) return { kind: 'mismatch', operation: row.operation };
  if (row.state === 'done') return { kind: 'replay', status: row.status_code, body: row.response };
  return { kind: 'pending', attempt: row.attempt };
}

/**
 * Leaves the attempt for the next request with the key to take over at once
 * (state 'retry'), instead of releasing the key: the attempt met a Redis
 * outage after its job may have been added, so a retry must run under the
 * same job id, finding the job (or the service's record of it) rather than
 * running the operation again.
 */
export async function suspendIdempotencyKey(db: Queryable, tenant: string, key: string, attempt: string): Promise<void> {
  await db.query(`UPDATE idempotency_keys SET state = 'retry' WHERE tenant = $1 AND key = $2 AND attempt = $3 AND state = 'pending'`, [tenant, key, attempt]);
}

/**
 * What a key holds now, for a request waiting on another request's attempt:
 * undefined once the key was released (or swept); 'retry' once its attempt
 * was suspended for the next request to take over.
 */
export type IdempotencyRecord =
  | { state: 'pending' | 'retry'; attempt: string }
  | { state: 'done'; attempt: string; status: number; body: unknown };

export async function readIdempotencyKey(db: Queryable, tenant: string, key: string): Promise<IdempotencyRecord | undefined> {
  const { rows } = await db.query<{ state: 'pending' | 'done' | 'retry'; attempt: string; status_code: number | null; response: unknown }>(
    `SELECT state, attempt, status_code, response FROM idempotency_keys WHERE tenant = $1 AND key = $2`,
    [tenant, key],
  );
  const row = rows[0];
  if (!row) return undefined;
  return row.state === 'done' ? { state: 'done', attempt: row.attempt, status: row.status_code!, body: row.response } : { state: row.state, attempt: row.attempt };
}

/**
 * Records the response to replay for this key. Only for the attempt that
 * produced it: a request that waited on an attempt which was released meanwhile
 * must not write its answer over the next attempt's key.
 */
export async function completeIdempotencyKey(db: Queryable, tenant: string, key: string, attempt: string, status: number, body: unknown): Promise<void> {
  await db.query(`UPDATE idempotency_keys SET state = 'done', status_code = $4, response = $5 WHERE tenant = $1 AND key = $2 AND attempt = $3`, [tenant, key, attempt, status, JSON.stringify(body)]);
}

/**
 * Forgets a pending key whose request failed in a way worth retrying (5xx):
 * the next request with the key claims a new attempt and runs again. Only
 * this attempt's: a new attempt another request claimed since stays.
 */
export async function releaseIdempotencyKey(db: Queryable, tenant: string, key: string, attempt: string): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE tenant = $1 AND key = $2 AND attempt = $3 AND state = 'pending'`, [tenant, key, attempt]);
}

/** Deletes keys past the retention; returns how many. */
export async function sweepIdempotencyKeys(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`, [IDEMPOTENCY_RETENTION_HOURS]);
  return rowCount ?? 0;
}
