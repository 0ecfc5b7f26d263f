-- Up Migration
-- Every evidence packet answered, as answered. A packet belongs to the job
-- that built it: BullMQ runs a job at least once, and a re-run finds the
-- packet its first run stored (unique per tenant and job) instead of storing
-- a second one.
CREATE TABLE vision_packets (
  tenant text NOT NULL,
  packet_id text NOT NULL,
  job_id text NOT NULL,
  operation text NOT NULL,
  packet jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, packet_id),
  UNIQUE (tenant, job_id)
);

-- Evidence already gathered for an image's bytes and an evidence need, per
-- tenant: the same bytes with the same need are answered from here without
-- running a stage again. The tenant is part of the key, so a hit never
-- tells one tenant what another has sent. Only evidence whose stages all
-- resolved is kept (a timeout is not worth remembering).
CREATE TABLE vision_evidence_cache (
  tenant text NOT NULL,
  content_sha256 bytea NOT NULL,
  need_key text NOT NULL,
  packet_id text NOT NULL,
  evidence jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, content_sha256, need_key)
);

-- Down Migration
DROP TABLE vision_evidence_cache;
DROP TABLE vision_packets;
