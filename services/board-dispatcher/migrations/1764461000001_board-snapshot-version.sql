-- Up Migration
-- Snapshots are written after the write that made them due has committed,
-- outside the board's head lock, so the head no longer records the snapshot's
-- version: a read takes it from board_snapshots, the one place it is true.
ALTER TABLE board_heads DROP COLUMN snapshot_version;

-- Down Migration
ALTER TABLE board_heads ADD COLUMN snapshot_version integer NOT NULL DEFAULT 0 CHECK (snapshot_version >= 0 AND snapshot_version <= version);
UPDATE board_heads h SET snapshot_version = s.version FROM board_snapshots s WHERE s.tenant = h.tenant AND s.board_id = h.board_id AND s.version <= h.version;
