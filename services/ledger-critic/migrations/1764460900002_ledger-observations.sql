-- Up Migration
-- What the critic read from each evidence item when it was recorded (its
-- words, failure markers and index keys; observation-features.ts), one row
-- per item, written in the transaction that appends the item's event. Kept
-- out of the events, the snapshot and the state reads return: stored there it
-- made the snapshot, every cold read and every snapshot write three times
-- larger. A review reads `keys` of the evidence it saw and `reading` of only
-- the candidates it judges. The rows are derived data: a missing row (an item
-- recorded before this table) or one of an older features_version is rebuilt
-- from the item's summary, to the same value.
CREATE TABLE ledger_observations (
  tenant text NOT NULL,
  run_id text NOT NULL,
  -- The evidence item's seq within its ledger.
  seq integer NOT NULL CHECK (seq > 0),
  features_version integer NOT NULL,
  keys jsonb NOT NULL,
  reading jsonb NOT NULL,
  PRIMARY KEY (tenant, run_id, seq)
);

-- Which format wrote a snapshot (upcast-snapshot.ts): every snapshot until
-- now is format 1, read through the upcaster; the service writes format 2.
ALTER TABLE ledger_snapshots ADD COLUMN format integer NOT NULL DEFAULT 1;

-- Down Migration
ALTER TABLE ledger_snapshots DROP COLUMN format;
DROP TABLE ledger_observations;
