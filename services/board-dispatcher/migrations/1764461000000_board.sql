-- Up Migration
-- One append-only event stream per board: a board is (tenant, board id), so a
-- board id names a board only within the caller's tenant. The primary key
-- makes seq unique per board: two writers appending at the same expected
-- version collide on it (optimistic concurrency).
CREATE TABLE board_events (
  tenant text NOT NULL,
  board_id text NOT NULL,
  seq integer NOT NULL CHECK (seq > 0),
  type text NOT NULL,
  payload jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, board_id, seq)
);

-- Where each board's stream ends, and its latest snapshot. A write locks this
-- row, so writers of one board queue instead of colliding.
CREATE TABLE board_heads (
  tenant text NOT NULL,
  board_id text NOT NULL,
  version integer NOT NULL CHECK (version > 0),
  snapshot_version integer NOT NULL DEFAULT 0 CHECK (snapshot_version >= 0 AND snapshot_version <= version),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, board_id)
);

-- The fold of a board's events up to version; a read applies the events after it.
CREATE TABLE board_snapshots (
  tenant text NOT NULL,
  board_id text NOT NULL,
  version integer NOT NULL CHECK (version > 0),
  state jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, board_id)
);

-- One row per card, written from the events in the transaction that appends
-- them: the dispatcher finds ready cards and diagnostics find stale ones here
-- without loading every board.
CREATE TABLE board_cards (
  tenant text NOT NULL,
  board_id text NOT NULL,
  card_id text NOT NULL,
  status text NOT NULL,
  assignee text,
  status_since timestamptz NOT NULL,
  PRIMARY KEY (tenant, board_id, card_id)
);
CREATE INDEX board_cards_dispatchable ON board_cards (tenant, board_id) WHERE status IN ('ready', 'changes_requested') AND assignee IS NOT NULL;

-- The dispatch outbox: one row per dispatched attempt, inserted in the
-- transaction of its card_dispatched event. The relay turns a pending row into
-- a job on the assignee's queue (job id = the row's job_id = board.card.attempt)
-- and marks it queued; a claim marks it claimed, a revoke revoked, and the
-- relay then removes the job and marks the row done. So a job exists only for
-- a row (no job without its event), and every pending row gets its job (no
-- dispatched card without its job).
CREATE TABLE board_dispatches (
  tenant text NOT NULL,
  board_id text NOT NULL,
  card_id text NOT NULL,
  attempt integer NOT NULL CHECK (attempt > 0),
  assignee text NOT NULL,
  job_id text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'queued', 'claimed', 'revoked', 'done')),
  epoch bigint NOT NULL,
  dispatched_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, board_id, card_id, attempt)
);
CREATE INDEX board_dispatches_open ON board_dispatches (state, updated_at) WHERE state <> 'done';
CREATE INDEX board_dispatches_claimable ON board_dispatches (tenant, assignee, dispatched_at) WHERE state IN ('pending', 'queued');

-- The lease of a running card: extended by heartbeats, which are not events
-- (they change no card), ended with the claim.
CREATE TABLE board_claims (
  tenant text NOT NULL,
  board_id text NOT NULL,
  card_id text NOT NULL,
  attempt integer NOT NULL,
  claim_token text NOT NULL,
  worker text NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (tenant, board_id, card_id)
);
CREATE INDEX board_claims_expiry ON board_claims (expires_at);

-- The dispatcher lease: one row; the holder dispatches, and every dispatcher
-- write checks (holder, epoch, expires_at) under a share lock in its own
-- transaction, so a paused ex-leader's writes are refused.
CREATE TABLE board_dispatcher_lease (
  name text PRIMARY KEY,
  holder text,
  epoch bigint NOT NULL DEFAULT 0,
  acquired_at timestamptz,
  expires_at timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO board_dispatcher_lease (name) VALUES ('dispatcher');

-- Who asked for work last: a card waiting for an assignee that has not polled
-- recently is stranded.
CREATE TABLE board_consumers (
  tenant text NOT NULL,
  assignee text NOT NULL,
  last_poll_at timestamptz NOT NULL,
  PRIMARY KEY (tenant, assignee)
);

-- Stored, deduplicated diagnostics: one row per (board, kind, subject).
CREATE TABLE board_diagnostics (
  tenant text NOT NULL,
  board_id text NOT NULL,
  kind text NOT NULL,
  subject text NOT NULL,
  severity text NOT NULL,
  message text NOT NULL,
  suggested_action text NOT NULL,
  details jsonb NOT NULL DEFAULT '{}',
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  count integer NOT NULL DEFAULT 1,
  resolved_at timestamptz,
  PRIMARY KEY (tenant, board_id, kind, subject)
);
CREATE INDEX board_diagnostics_open ON board_diagnostics (tenant, board_id) WHERE resolved_at IS NULL;

-- BullMQ runs a job at least once: a write job's result is recorded here in
-- the transaction of its events, and a re-run returns it instead of writing again.
CREATE TABLE board_processed_jobs (
  tenant text NOT NULL,
  job_id text NOT NULL,
  operation text NOT NULL,
  board_id text NOT NULL,
  result jsonb NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, job_id)
);
CREATE INDEX board_processed_jobs_processed_at ON board_processed_jobs (processed_at);

-- Down Migration
DROP TABLE board_processed_jobs;
DROP TABLE board_diagnostics;
DROP TABLE board_consumers;
DROP TABLE board_dispatcher_lease;
DROP TABLE board_claims;
DROP TABLE board_dispatches;
DROP TABLE board_cards;
DROP TABLE board_snapshots;
DROP TABLE board_heads;
DROP TABLE board_events;
