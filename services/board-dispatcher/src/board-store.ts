import type { Diagnostic, DiagnosticKind } from '@vouch/contracts';
import { defineEventStream, withTransaction, type Pool, type ProcessedJobRecord, type Queryable, type StreamHead } from '@vouch/platform';
import { cardOf, parseBoardEvent, type BoardEvent } from './domain/board-events.js';
import type { ClaimLease } from './domain/board-commands.js';
import type { DiagnosticFinding } from './domain/diagnose-board.js';
import { dispatchEffects, dispatchJobId, mayEnableDispatch } from './domain/dispatch-effects.js';
import { applyEvents, type BoardState } from './domain/replay-board.js';
import { upcastSnapshot } from './domain/upcast-snapshot.js';

/**
 * Postgres I/O of the board, and nothing else: the event stream (its head,
 * snapshots and processed-job records, through the platform's event-stream
 * kit), the per-card projection, the dispatch outbox, claim leases,
 * consumers and diagnostics. Decisions are made by the pure domain; callers
 * run writes inside one transaction.
 */

/** A board is one board id within one tenant. */
export interface BoardKey {
  tenant: string;
  boardId: string;
}

/** The dispatcher lease a write must still hold: checked under a share lock in the write's own transaction. */
export interface Fence {
  holder: string;
  epoch: number;
  /**
   * Postgres ends the transaction's session if it sits idle this long. A
   * process stopped (SIGSTOP, a long GC) inside a fenced transaction holds the
   * lease row's share lock and would keep every follower from taking over;
   * half a lease TTL bounds that.
   */
  idleInTransactionMs?: number;
}

/** A dispatcher write under a lease it no longer holds (expired, or taken over at a later epoch): refused, nothing written. */
export class FenceRejected extends Error {
  constructor(readonly fence: Fence) {
    super(`dispatcher ${fence.holder} no longer holds the lease at epoch ${fence.epoch}: its write is refused`);
    this.name = 'FenceRejected';
  }
}

/**
 * The snapshot is rewritten every SNAPSHOT_EVERY events: a read applies at
 * most that many events after it (a few milliseconds), and a write pays the
 * snapshot's size once per that many events instead of every time. It is
 * written after the write that made it due has committed, outside the head
 * lock (saveSnapshot): written inside, a 1,000-card board's snapshot held
 * every other writer of the board, the dispatcher among them, behind it.
 */
export const SNAPSHOT_EVERY = 200;

/** The board's event stream: its events, head, snapshots and processed-job records, through the platform's event-stream kit. */
export const boardStream = defineEventStream<BoardKey, BoardEvent, BoardState>({
  name: 'board',
  tables: { events: 'board_events', heads: 'board_heads', snapshots: 'board_snapshots', processedJobs: 'board_processed_jobs' },
  idColumn: 'board_id',
  idOf: (key) => key.boardId,
  parseEvent: parseBoardEvent,
  // applyEvents returns frozen states, so the kit has nothing to freeze.
  fold: applyEvents,
  snapshotEvery: SNAPSHOT_EVERY,
  // board_snapshots has no format column: the upcaster tells old snapshots by their shape.
  snapshots: { upcast: (stored) => upcastSnapshot(stored as BoardState) },
});

/** The lease row the dispatcher holds. */
export const LEASE_NAME = 'dispatcher';

/**
 * Channels the store notifies on commit: a board whose cards changed, an
 * assignee with new work. Channels are per database, so their names carry
 * the schema: services (and test files) in other schemas hear nothing.
 */
export const CHANGED_PREFIX = 'bc_';
export const DISPATCHED_PREFIX = 'bd_';
export const channelName = (prefix: string, schema: string) => `${prefix}${schema}`;

/** Where the board's stream ends, and the version of its snapshot when the head was read (0: none); a newer one may have landed since. */
export type BoardHead = StreamHead;

/** The board's head; undefined when there is no such board. `lock` queues writers of one board behind each other. */
export const readHead = boardStream.readHead;
/** The board's snapshot, upcast to today's state; undefined when none was written. */
export const loadSnapshot = boardStream.loadSnapshot;
/** The board's events after `afterVersion`, oldest first, each validated. */
export const readEvents = boardStream.readEvents;
/** The board: its latest snapshot plus the events after it; undefined when there is no such board in the tenant. */
export const loadBoard = boardStream.load;
/** Stores a committed state of the board as its snapshot unless a newer one is stored (racing writers: the later version wins). */
export const saveSnapshot = boardStream.saveSnapshot;
/** saveSnapshot for a writer whose write has committed: a failure is logged, not thrown. */
export const saveSnapshotAfterCommit = boardStream.saveSnapshotAfterCommit;
/** The board's committed state at a head just read, through a cached state (see EventStreamStore.loadCommitted). */
export const loadCommitted = boardStream.loadCommitted;

/**
 * Refuses the transaction unless `fence` still holds the dispatcher lease.
 * The share lock keeps the lease row from being taken over (or renewed)
 * until this transaction ends, so no other dispatcher can write in between:
 * checked once, first, it holds for every statement after it, whatever the
 * clock says meanwhile.
 */
export async function checkFence(tx: Queryable, fence: Fence): Promise<void> {
  if (fence.idleInTransactionMs) await tx.query(`SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1, Math.round(fence.idleInTransactionMs))}`);
  const { rowCount } = await tx.query(
    `SELECT 1 FROM board_dispatcher_lease WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR SHARE`,
    [LEASE_NAME, fence.holder, fence.epoch],
  );
  if (rowCount !== 1) throw new FenceRejected(fence);
}

/**
 * A dispatcher write: `write` runs in a transaction that first checks
 * `fence` (checkFence), before it takes any board lock, and the lease row
 * stays share-locked until COMMIT. That one check fences every statement of
 * the transaction: a deposed leader's write throws FenceRejected and
 * writes nothing.
 */
export function withFencedTransaction<T>(pool: Pool, fence: Fence, write: (tx: Queryable) => Promise<T>): Promise<T> {
  return withTransaction(pool, async (tx) => {
    await checkFence(tx, fence);
    return write(tx);
  });
}

/**
 * Appends events at `expectedVersion` (0 for a new board) through the kit,
 * and updates in the same transaction what the events mean for the card
 * projection, the dispatch outbox and the claim leases, with the job's
 * processed record. A dispatcher's append runs in withFencedTransaction,
 * which has checked its fence already.
 *
 * The events, the head, the projection and the job record are one statement
 * (data-modifying CTEs): a write holds its board's head lock for fewer round
 * trips, which is what bounds writers of one board.
 *
 * Says whether a snapshot is due: the caller writes `state` with
 * saveSnapshotAfterCommit once the transaction has committed.
 */
export async function appendEvents(
  tx: Queryable,
  key: BoardKey,
  expectedVersion: number,
  events: readonly BoardEvent[],
  state: BoardState,
  opts: { processedJob?: ProcessedJobRecord } = {},
): Promise<{ snapshotDue: boolean }> {
  if (events.length === 0) return { snapshotDue: false };
  const touched = [...new Set(events.map(cardOf).filter((id): id is string => id !== undefined))].map((id) => state.cards[id]!);
  const appended = await boardStream.append(tx, key, expectedVersion, events, state, {
    processedJob: opts.processedJob,
    alsoInStatement: (bind) => [
      `INSERT INTO board_cards (tenant, board_id, card_id, status, assignee, status_since)
       SELECT $1, $2, c.id, c.status, c.assignee, c.since
       FROM unnest(${bind(touched.map((c) => c.id))}::text[], ${bind(touched.map((c) => c.status))}::text[], ${bind(touched.map((c) => c.assignee))}::text[], ${bind(touched.map((c) => c.statusSince))}::timestamptz[]) AS c(id, status, assignee, since)
       ON CONFLICT (tenant, board_id, card_id) DO UPDATE SET status = EXCLUDED.status, assignee = EXCLUDED.assignee, status_since = EXCLUDED.status_since`,
    ],
  });
  if (mayEnableDispatch(events)) await tx.query(`SELECT pg_notify($1 || current_schema(), $2)`, [CHANGED_PREFIX, JSON.stringify([key.tenant, key.boardId])]);
  await applyDispatchEffects(tx, key, events, state);
  return appended;
}

async function applyDispatchEffects(tx: Queryable, key: BoardKey, events: readonly BoardEvent[], state: BoardState): Promise<void> {
  const effects = dispatchEffects(events);
  // Dispatches come in batches (a dispatch pass over a board): one statement for all of them.
  const dispatched = events.filter((e) => e.type === 'card_dispatched');
  if (dispatched.length) {
    await tx.query(
      `INSERT INTO board_dispatches (tenant, board_id, card_id, attempt, assignee, job_id, state, epoch)
       SELECT $1, $2, d.card_id, d.attempt, d.assignee, d.job_id, 'pending', d.epoch FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::bigint[]) AS d(card_id, attempt, assignee, job_id, epoch)`,
      [
        key.tenant,
        key.boardId,
        dispatched.map((e) => e.cardId),
        dispatched.map((e) => e.attempt),
        dispatched.map((e) => e.assignee),
        dispatched.map((e) => dispatchJobId(key.boardId, e.cardId, e.attempt)),
        dispatched.map((e) => e.epoch),
      ],
    );
    const assignees = [...new Set(dispatched.map((e) => e.assignee))];
    await tx.query(`SELECT pg_notify($1 || current_schema(), json_build_array($2::text, a)::text) FROM unnest($3::text[]) AS a`, [DISPATCHED_PREFIX, key.tenant, assignees]);
  }
  for (const effect of effects) {
    switch (effect.kind) {
      case 'dispatch':
        break;
      case 'claim': {
        await tx.query(`UPDATE board_dispatches SET state = 'claimed', updated_at = now() WHERE tenant = $1 AND board_id = $2 AND card_id = $3 AND attempt = $4 AND state IN ('pending', 'queued')`, [
          key.tenant,
          key.boardId,
          effect.cardId,
          effect.attempt,
        ]);
        await tx.query(
          `INSERT INTO board_claims (tenant, board_id, card_id, attempt, claim_token, worker, expires_at) VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp() + make_interval(secs => $7))
           ON CONFLICT (tenant, board_id, card_id) DO UPDATE SET attempt = EXCLUDED.attempt, claim_token = EXCLUDED.claim_token, worker = EXCLUDED.worker, claimed_at = now(), expires_at = EXCLUDED.expires_at`,
          [key.tenant, key.boardId, effect.cardId, effect.attempt, effect.claimToken, effect.by, state.policy.claimTtlSeconds],
        );
        break;
      }
      case 'revoke':
        await tx.query(`UPDATE board_dispatches SET state = 'revoked', updated_at = now() WHERE tenant = $1 AND board_id = $2 AND card_id = $3 AND state IN ('pending', 'queued')`, [
          key.tenant,
          key.boardId,
          effect.cardId,
        ]);
        break;
      case 'release':
        await tx.query(`DELETE FROM board_claims WHERE tenant = $1 AND board_id = $2 AND card_id = $3`, [key.tenant, key.boardId, effect.cardId]);
        break;
    }
  }
}

// ---------------------------------------------------------------- claims and consumers

/** Extends a claim lease by `ttlSeconds` from now; the new expiry, or undefined when the token holds no lease. */
/** How a heartbeat's extension went: extended to a new expiry, refused because the lease had run out, or no lease under that token. */
export type ClaimExtension = { extendedTo: string } | { expiredAt: string } | undefined;

/**
 * Extends a claim's lease only while it holds: the expiry is compared with
 * the database's clock in the statement that extends it, so a lease that ran
 * out is never revived by a heartbeat that arrives before the sweep ends it
 * (the sweep compares with the same clock). A refused extension reads the
 * lease again only to say why.
 */
export async function extendClaim(db: Queryable, key: BoardKey, cardId: string, claimToken: string, ttlSeconds: number): Promise<ClaimExtension> {
  const { rows } = await db.query<{ expires_at: Date }>(
    `UPDATE board_claims SET expires_at = clock_timestamp() + make_interval(secs => $5)
     WHERE tenant = $1 AND board_id = $2 AND card_id = $3 AND claim_token = $4 AND expires_at > clock_timestamp() RETURNING expires_at`,
    [key.tenant, key.boardId, cardId, claimToken, ttlSeconds],
  );
  if (rows[0]) return { extendedTo: rows[0].expires_at.toISOString() };
  const lapsed = await db.query<{ expires_at: Date }>(`SELECT expires_at FROM board_claims WHERE tenant = $1 AND board_id = $2 AND card_id = $3 AND claim_token = $4`, [
    key.tenant,
    key.boardId,
    cardId,
    claimToken,
  ]);
  return lapsed.rows[0] ? { expiredAt: lapsed.rows[0].expires_at.toISOString() } : undefined;
}

/**
 * A claim's lease, locked for the rest of the transaction, with whether it
 * has run out by the database's clock: a command that uses the lease decides
 * on this in the transaction that writes its events, so neither a heartbeat
 * nor the sweep can change it in between. Undefined: no lease under that token.
 */
export async function lockClaimLease(tx: Queryable, key: BoardKey, cardId: string, claimToken: string): Promise<ClaimLease | undefined> {
  const { rows } = await tx.query<{ expires_at: Date; expired: boolean }>(
    `SELECT expires_at, expires_at <= clock_timestamp() AS expired FROM board_claims WHERE tenant = $1 AND board_id = $2 AND card_id = $3 AND claim_token = $4 FOR UPDATE`,
    [key.tenant, key.boardId, cardId, claimToken],
  );
  const row = rows[0];
  return row && { expiresAt: row.expires_at.toISOString(), expired: row.expired };
}

export async function claimExpiry(db: Queryable, key: BoardKey, cardId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ expires_at: Date }>(`SELECT expires_at FROM board_claims WHERE tenant = $1 AND board_id = $2 AND card_id = $3`, [key.tenant, key.boardId, cardId]);
  return rows[0]?.expires_at.toISOString();
}

export interface ExpiredClaim extends BoardKey {
  cardId: string;
  attempt: number;
  claimToken: string;
  worker: string;
  expiresAt: string;
}

export async function expiredClaims(db: Queryable, limit = 100): Promise<ExpiredClaim[]> {
  const { rows } = await db.query<{ tenant: string; board_id: string; card_id: string; attempt: number; claim_token: string; worker: string; expires_at: Date }>(
    `SELECT tenant, board_id, card_id, attempt, claim_token, worker, expires_at FROM board_claims WHERE expires_at < clock_timestamp() ORDER BY expires_at LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ tenant: r.tenant, boardId: r.board_id, cardId: r.card_id, attempt: r.attempt, claimToken: r.claim_token, worker: r.worker, expiresAt: r.expires_at.toISOString() }));
}

/**
 * Locks an expired claim for the rest of the transaction; false when it is
 * gone or no longer expired (a heartbeat may have extended it since it was
 * listed).
 */
export async function lockExpiredClaim(tx: Queryable, key: BoardKey, cardId: string, claimToken: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `SELECT 1 FROM board_claims WHERE tenant = $1 AND board_id = $2 AND card_id = $3 AND claim_token = $4 AND expires_at < clock_timestamp() FOR UPDATE`,
    [key.tenant, key.boardId, cardId, claimToken],
  );
  return rowCount === 1;
}

/** Deletes a claim's lease row under its token (a stale one: the board moved on). */
export async function deleteClaim(tx: Queryable, key: BoardKey, cardId: string, claimToken: string): Promise<void> {
  await tx.query(`DELETE FROM board_claims WHERE tenant = $1 AND board_id = $2 AND card_id = $3 AND claim_token = $4`, [key.tenant, key.boardId, cardId, claimToken]);
}

/** Attempts dispatched to an assignee and not yet claimed, oldest first. */
export async function claimableDispatches(db: Queryable, tenant: string, assignee: string, boardId?: string, limit = 20): Promise<Array<{ boardId: string; cardId: string; attempt: number }>> {
  const { rows } = await db.query<{ board_id: string; card_id: string; attempt: number }>(
    `SELECT board_id, card_id, attempt FROM board_dispatches WHERE tenant = $1 AND assignee = $2 AND state IN ('pending', 'queued') AND ($3::text IS NULL OR board_id = $3)
     ORDER BY dispatched_at, board_id, card_id LIMIT $4`,
    [tenant, assignee, boardId ?? null, limit],
  );
  return rows.map((r) => ({ boardId: r.board_id, cardId: r.card_id, attempt: r.attempt }));
}

export async function touchConsumer(db: Queryable, tenant: string, assignee: string): Promise<void> {
  await db.query(
    `INSERT INTO board_consumers (tenant, assignee, last_poll_at) VALUES ($1, $2, clock_timestamp()) ON CONFLICT (tenant, assignee) DO UPDATE SET last_poll_at = EXCLUDED.last_poll_at`,
    [tenant, assignee],
  );
}

export async function lastPolls(db: Queryable, tenant: string): Promise<Record<string, string>> {
  const { rows } = await db.query<{ assignee: string; last_poll_at: Date }>(`SELECT assignee, last_poll_at FROM board_consumers WHERE tenant = $1`, [tenant]);
  return Object.fromEntries(rows.map((r) => [r.assignee, r.last_poll_at.toISOString()]));
}

// ---------------------------------------------------------------- dispatch outbox

export interface DispatchRow extends BoardKey {
  cardId: string;
  attempt: number;
  assignee: string;
  jobId: string;
  state: 'pending' | 'queued' | 'claimed' | 'revoked' | 'done';
}

type DispatchDbRow = { tenant: string; board_id: string; card_id: string; attempt: number; assignee: string; job_id: string; state: DispatchRow['state'] };
const toDispatch = (r: DispatchDbRow): DispatchRow => ({ tenant: r.tenant, boardId: r.board_id, cardId: r.card_id, attempt: r.attempt, assignee: r.assignee, jobId: r.job_id, state: r.state });

/**
 * Outbox rows the relay must act on (pending: add the job; claimed or
 * revoked: remove it), locked so that a claim committing meanwhile waits for
 * the relay's Redis call and never interleaves with it.
 */
export async function lockRelayWork(tx: Queryable, limit: number): Promise<DispatchRow[]> {
  const { rows } = await tx.query<DispatchDbRow>(
    `SELECT tenant, board_id, card_id, attempt, assignee, job_id, state FROM board_dispatches WHERE state IN ('pending', 'claimed', 'revoked') ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return rows.map(toDispatch);
}

/** Moves rows on from the state they were read in (a row that moved meanwhile is left alone). */
export async function markDispatches(tx: Queryable, moves: ReadonlyArray<{ row: DispatchRow; to: DispatchRow['state'] }>): Promise<void> {
  if (moves.length === 0) return;
  await tx.query(
    `UPDATE board_dispatches d SET state = m.to_state, updated_at = now()
     FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[]) AS m(tenant, board_id, card_id, attempt, from_state, to_state)
     WHERE d.tenant = m.tenant AND d.board_id = m.board_id AND d.card_id = m.card_id AND d.attempt = m.attempt AND d.state = m.from_state`,
    [
      moves.map((m) => m.row.tenant),
      moves.map((m) => m.row.boardId),
      moves.map((m) => m.row.cardId),
      moves.map((m) => m.row.attempt),
      moves.map((m) => m.row.state),
      moves.map((m) => m.to),
    ],
  );
}

/** Queued rows, oldest first after `after`, for the sweep that checks their jobs still exist in Redis. */
export async function queuedDispatches(db: Queryable, limit: number): Promise<DispatchRow[]> {
  const { rows } = await db.query<DispatchDbRow>(`SELECT tenant, board_id, card_id, attempt, assignee, job_id, state FROM board_dispatches WHERE state = 'queued' ORDER BY dispatched_at LIMIT $1`, [limit]);
  return rows.map(toDispatch);
}

export async function requeueDispatch(db: Queryable, row: DispatchRow): Promise<void> {
  await db.query(`UPDATE board_dispatches SET state = 'pending', updated_at = now() WHERE tenant = $1 AND board_id = $2 AND card_id = $3 AND attempt = $4 AND state = 'queued'`, [
    row.tenant,
    row.boardId,
    row.cardId,
    row.attempt,
  ]);
}

/** Boards with cards waiting for dispatch: the dispatcher's full sweep, beside the boards it is told about. */
export async function boardsWithDispatchableCards(db: Queryable, limit: number): Promise<BoardKey[]> {
  const { rows } = await db.query<{ tenant: string; board_id: string }>(
    `SELECT DISTINCT tenant, board_id FROM board_cards WHERE status IN ('ready', 'changes_requested') AND assignee IS NOT NULL LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ tenant: r.tenant, boardId: r.board_id }));
}

/** Boards with open work or open diagnostics, for the diagnostics sweep. */
export async function boardsWithOpenCards(db: Queryable, limit: number): Promise<BoardKey[]> {
  const { rows } = await db.query<{ tenant: string; board_id: string }>(
    `SELECT tenant, board_id FROM board_cards WHERE status NOT IN ('verified', 'cancelled')
     UNION SELECT tenant, board_id FROM board_diagnostics WHERE resolved_at IS NULL LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ tenant: r.tenant, boardId: r.board_id }));
}

/** Cards by status over every board, for the metrics gauge. */
export async function cardCounts(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM board_cards GROUP BY status`);
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

// ---------------------------------------------------------------- diagnostics

/** Opens a diagnostic, or counts it again (reopening it if it had resolved). */
export async function recordDiagnostic(db: Queryable, key: BoardKey, finding: DiagnosticFinding, opts: { bump: boolean }): Promise<void> {
  await db.query(
    `INSERT INTO board_diagnostics (tenant, board_id, kind, subject, severity, message, suggested_action, details, first_seen, last_seen, count)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, clock_timestamp(), clock_timestamp(), 1)
     ON CONFLICT (tenant, board_id, kind, subject) DO UPDATE SET
       severity = EXCLUDED.severity, message = EXCLUDED.message, suggested_action = EXCLUDED.suggested_action, details = EXCLUDED.details,
       last_seen = EXCLUDED.last_seen,
       count = board_diagnostics.count + CASE WHEN $9 OR board_diagnostics.resolved_at IS NOT NULL THEN 1 ELSE 0 END,
       resolved_at = NULL`,
    [key.tenant, key.boardId, finding.kind, finding.subject, finding.severity, finding.message, finding.suggestedAction, JSON.stringify(finding.details), opts.bump],
  );
}

export async function openDiagnostics(db: Queryable, key: BoardKey): Promise<Array<{ kind: DiagnosticKind; subject: string; lastSeen: string }>> {
  const { rows } = await db.query<{ kind: DiagnosticKind; subject: string; last_seen: Date }>(
    `SELECT kind, subject, last_seen FROM board_diagnostics WHERE tenant = $1 AND board_id = $2 AND resolved_at IS NULL`,
    [key.tenant, key.boardId],
  );
  return rows.map((r) => ({ kind: r.kind, subject: r.subject, lastSeen: r.last_seen.toISOString() }));
}

export async function resolveDiagnostics(db: Queryable, key: BoardKey, which: ReadonlyArray<{ kind: DiagnosticKind; subject: string }>): Promise<void> {
  if (which.length === 0) return;
  await db.query(
    `UPDATE board_diagnostics d SET resolved_at = clock_timestamp() FROM unnest($3::text[], $4::text[]) AS w(kind, subject)
     WHERE d.tenant = $1 AND d.board_id = $2 AND d.kind = w.kind AND d.subject = w.subject AND d.resolved_at IS NULL`,
    [key.tenant, key.boardId, which.map((w) => w.kind), which.map((w) => w.subject)],
  );
}

export async function listDiagnostics(db: Queryable, key: BoardKey, includeResolved: boolean): Promise<Diagnostic[]> {
  const { rows } = await db.query<{
    kind: DiagnosticKind;
    subject: string;
    severity: Diagnostic['severity'];
    message: string;
    suggested_action: string;
    details: Record<string, unknown>;
    first_seen: Date;
    last_seen: Date;
    count: number;
    resolved_at: Date | null;
  }>(
    `SELECT kind, subject, severity, message, suggested_action, details, first_seen, last_seen, count, resolved_at FROM board_diagnostics
     WHERE tenant = $1 AND board_id = $2 AND ($3 OR resolved_at IS NULL)
     ORDER BY resolved_at IS NOT NULL, CASE severity WHEN 'error' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, last_seen DESC LIMIT 500`,
    [key.tenant, key.boardId, includeResolved],
  );
  return rows.map((r) => ({
    kind: r.kind,
    subject: r.subject,
    severity: r.severity,
    message: r.message,
    suggestedAction: r.suggested_action,
    details: r.details,
    firstSeen: r.first_seen.toISOString(),
    lastSeen: r.last_seen.toISOString(),
    count: r.count,
    resolvedAt: r.resolved_at ? r.resolved_at.toISOString() : null,
  }));
}

/** Open diagnostics by kind over every board, for the metrics gauge. */
export async function diagnosticCounts(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query<{ kind: string; n: string }>(`SELECT kind, count(*) AS n FROM board_diagnostics WHERE resolved_at IS NULL GROUP BY kind`);
  return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
}
