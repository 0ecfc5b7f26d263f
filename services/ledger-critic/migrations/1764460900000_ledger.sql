-- Up Migration
-- One append-only event stream per ledger: a ledger is (tenant, run id), so a
-- run id names a ledger only within the caller's tenant. The primary key makes
-- seq unique per ledger: two writers appending at the same expected version
-- collide on it, and the later one reloads and decides again (optimistic
-- concurrency). payload holds the whole event as the domain wrote it.
CREATE TABLE ledger_events (
  tenant text NOT NULL,
  run_id text NOT NULL,
  seq integer NOT NULL CHECK (seq > 0),
  type text NOT NULL,
  payload jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, run_id, seq)
);

-- The state reads see: the fold of the ledger's events up to version (the
-- last seq), written in the same transaction as those events.
CREATE TABLE ledger_snapshots (
  tenant text NOT NULL,
  run_id text NOT NULL,
  version integer NOT NULL CHECK (version > 0),
  state jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, run_id)
);

-- BullMQ runs a job at least once. A write job's result is recorded here in
-- the transaction that appends its events, so a re-run returns the recorded
-- result instead of appending the same batch again.
CREATE TABLE ledger_processed_jobs (
  tenant text NOT NULL,
  job_id text NOT NULL,
  operation text NOT NULL,
  run_id text NOT NULL,
  result jsonb NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, job_id)
);
CREATE INDEX ledger_processed_jobs_processed_at ON ledger_processed_jobs (processed_at);

-- Down Migration
DROP TABLE ledger_processed_jobs;
DROP TABLE ledger_snapshots;
DROP TABLE ledger_events;
