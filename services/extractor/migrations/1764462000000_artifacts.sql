-- Up Migration
-- Bodies, content-addressed by sha256 within a tenant: identical bodies are
-- stored once per tenant and never shared across tenants (so neither storage
-- nor timing says anything about another tenant's files). EXTERNAL storage:
-- uncompressed TOAST, so reads of large bodies and of byte ranges skip
-- decompression (grep reads whole bodies; anchors read ranges).
CREATE TABLE artifact_bodies (
  tenant text NOT NULL,
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  body bytea NOT NULL,
  byte_size integer NOT NULL,
  char_count integer NOT NULL,
  line_count integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, sha256)
);
ALTER TABLE artifact_bodies ALTER COLUMN body SET STORAGE EXTERNAL;

-- The head of each path: its current revision, the whole-file hash known for
-- it (null when only partial reads without a file hash were recorded), and
-- whether the caller reported the file gone. Reads of one path lock this row.
CREATE TABLE artifact_paths (
  tenant text NOT NULL,
  workspace text NOT NULL,
  path text NOT NULL,
  revision integer NOT NULL CHECK (revision > 0),
  source_hash text,
  gone boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, workspace, path)
);

-- One row per distinct read. The id is derived from the read itself
-- (artifact-identity.ts), so a repeated read or a re-run job lands on it.
CREATE TABLE artifacts (
  tenant text NOT NULL,
  artifact_id text NOT NULL,
  workspace text NOT NULL,
  path text NOT NULL,
  revision integer NOT NULL CHECK (revision > 0),
  hash text NOT NULL,
  range jsonb,
  fidelity text NOT NULL CHECK (fidelity IN ('full', 'partial', 'capped')),
  availability text NOT NULL CHECK (availability IN ('available', 'superseded', 'unavailable')),
  byte_size integer NOT NULL,
  char_count integer NOT NULL,
  line_count integer NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, artifact_id),
  FOREIGN KEY (tenant, hash) REFERENCES artifact_bodies (tenant, sha256)
);
CREATE INDEX artifacts_current ON artifacts (tenant, workspace, path) WHERE availability = 'available';
CREATE INDEX artifacts_by_path ON artifacts (tenant, workspace, path, revision);

-- Justified rereads: a read that found the path's content changed. The old
-- evidence was superseded; the fresh read carries no stale-read penalty.
CREATE TABLE artifact_rereads (
  tenant text NOT NULL,
  workspace text NOT NULL,
  path text NOT NULL,
  from_revision integer NOT NULL,
  to_revision integer NOT NULL,
  from_hash text,
  to_hash text,
  reason text NOT NULL,
  artifact_id text NOT NULL,
  superseded integer NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, workspace, path, to_revision)
);

-- Derived extracts (branch extraction), one per job: a re-run returns the
-- recorded result instead of extracting again.
CREATE TABLE extracts (
  tenant text NOT NULL,
  extract_id text NOT NULL,
  source_artifact_id text NOT NULL,
  source_hash text NOT NULL,
  extractor_kind text NOT NULL CHECK (extractor_kind IN ('deterministic', 'llm')),
  complete boolean NOT NULL,
  result jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, extract_id),
  FOREIGN KEY (tenant, source_artifact_id) REFERENCES artifacts (tenant, artifact_id)
);

-- Materialization decisions: an edge from the source artifact to what was
-- delivered (its full body, a branch extract, or a request to reread), with
-- the sizes and the reason. The telemetry that retiring any legacy
-- presentation path is judged on.
CREATE TABLE materialization_edges (
  tenant text NOT NULL,
  edge_id text NOT NULL,
  source_artifact_id text NOT NULL,
  decision text NOT NULL CHECK (decision IN ('full_body', 'branch_extract', 'over_budget', 'reread_required')),
  reason text NOT NULL,
  body_chars integer NOT NULL,
  budget_chars integer,
  delivered_chars integer NOT NULL,
  extract_id text,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, edge_id),
  FOREIGN KEY (tenant, source_artifact_id) REFERENCES artifacts (tenant, artifact_id)
);
CREATE INDEX materialization_edges_source ON materialization_edges (tenant, source_artifact_id);

-- Down Migration
DROP TABLE materialization_edges;
DROP TABLE extracts;
DROP TABLE artifact_rereads;
DROP TABLE artifacts;
DROP TABLE artifact_paths;
DROP TABLE artifact_bodies;
