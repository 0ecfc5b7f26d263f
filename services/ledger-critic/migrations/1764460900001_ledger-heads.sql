-- Up Migration
-- The head of each ledger: its version (the last seq), its status, and the
-- version of its latest snapshot. A write locks this row (so writers of one
-- ledger queue instead of colliding) and moves it in the transaction that
-- appends its events; the events' primary key stays the guarantee. It lets a
-- write cost the same however large the ledger is: the full snapshot is no
-- longer rewritten by every write, only every SNAPSHOT_EVERY events and when
-- the ledger closes (ledger-store.ts), so ledger_snapshots now holds the fold
-- of the events up to its own version, and a read applies the events after it.
CREATE TABLE ledger_heads (
  tenant text NOT NULL,
  run_id text NOT NULL,
  version integer NOT NULL CHECK (version > 0),
  status text NOT NULL,
  -- 0: no snapshot yet, a read replays the stream from its start.
  snapshot_version integer NOT NULL DEFAULT 0 CHECK (snapshot_version >= 0 AND snapshot_version <= version),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, run_id)
);

-- Until now every write rewrote the snapshot, so each one is at its ledger's head.
INSERT INTO ledger_heads (tenant, run_id, version, status, snapshot_version, updated_at)
SELECT tenant, run_id, version, state->>'status', version, updated_at FROM ledger_snapshots;

-- Down Migration
-- The previous schema reads the snapshot as the whole ledger: with a snapshot
-- behind its head, rolling back would hide the events after it from every read.
DO $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM ledger_heads h LEFT JOIN ledger_snapshots s USING (tenant, run_id) WHERE s.version IS DISTINCT FROM h.version
  ) THEN
    RAISE EXCEPTION 'ledger_heads: some ledgers have events after their latest snapshot; the previous schema would not read them. Write a snapshot at the head of each (ledger-store.ts saveSnapshot) before rolling back.';
  END IF;
END $$;
DROP TABLE ledger_heads;
