-- Up Migration
-- Paths are compared in Unicode NFC (shared/contracts artifact-path.ts): "café"
-- typed with a combining accent names the same file as "café". Rows recorded
-- before that was so may hold another spelling. This moves them to the NFC
-- spelling, the one every new read uses, so a file's earlier reads are found
-- under its name.
--
-- Where a workspace holds two spellings of one path, they were two heads for
-- one file. The head written last stays the head. The other spelling's reads
-- stay as evidence of what was read then, marked superseded: the file's
-- current evidence is the surviving head's. A reread record keeps its old
-- spelling only where the path's reread log already holds its revision (that
-- log is keyed by path and revision); nothing is deleted but the losing head.

CREATE TEMP TABLE nfc_spellings ON COMMIT DROP AS
SELECT tenant, workspace, path, normalize(path, NFC) AS nfc,
       row_number() OVER (
         PARTITION BY tenant, workspace, normalize(path, NFC)
         ORDER BY updated_at DESC, (path IS NFC NORMALIZED) DESC, path
       ) AS rank
FROM artifact_paths;

UPDATE artifacts a SET availability = 'superseded', changed_at = now()
FROM nfc_spellings s
WHERE s.rank > 1 AND a.tenant = s.tenant AND a.workspace = s.workspace AND a.path = s.path AND a.availability = 'available';

DELETE FROM artifact_paths p
USING nfc_spellings s
WHERE s.rank > 1 AND p.tenant = s.tenant AND p.workspace = s.workspace AND p.path = s.path;

UPDATE artifact_paths SET path = normalize(path, NFC) WHERE path IS NOT NFC NORMALIZED;

UPDATE artifacts SET path = normalize(path, NFC) WHERE path IS NOT NFC NORMALIZED;

UPDATE artifact_rereads r SET path = normalize(r.path, NFC)
FROM (
  SELECT DISTINCT ON (tenant, workspace, normalize(path, NFC), to_revision) tenant, workspace, path, to_revision
  FROM artifact_rereads
  WHERE path IS NOT NFC NORMALIZED
  ORDER BY tenant, workspace, normalize(path, NFC), to_revision, recorded_at DESC
) moving
WHERE r.tenant = moving.tenant AND r.workspace = moving.workspace AND r.path = moving.path AND r.to_revision = moving.to_revision
  AND NOT EXISTS (
    SELECT 1 FROM artifact_rereads o
    WHERE o.tenant = r.tenant AND o.workspace = r.workspace AND o.path = normalize(r.path, NFC) AND o.to_revision = r.to_revision
  );

-- Down Migration
-- Nothing to undo: the NFC spelling names the same files.
