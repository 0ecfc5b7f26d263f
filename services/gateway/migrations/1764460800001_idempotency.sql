-- Up Migration
-- One row per (tenant, Idempotency-Key): the request's fingerprint and, once
-- known, the response to replay. Rows older than the retention are swept.
CREATE TABLE idempotency_keys (
  tenant text NOT NULL,
  key text NOT NULL,
  operation text NOT NULL,
  request_hash text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'done')),
  status_code integer,
  response jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- Down Migration
DROP TABLE idempotency_keys;
