-- Up Migration
-- API keys are random 256-bit secrets, so a fast hash is enough to store them
-- (unlike passwords, they cannot be guessed); the clear key is shown once.
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  name text,
  scopes text[] NOT NULL,
  key_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant);

-- Down Migration
DROP TABLE api_keys;
