-- Up Migration
-- Image bytes, content-addressed: the same bytes are stored once whoever sends them.
CREATE TABLE media_blobs (
  sha256 bytea PRIMARY KEY,
  mime_type text NOT NULL,
  byte_size integer NOT NULL,
  width integer NOT NULL,
  height integer NOT NULL,
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A chat scope and the next alias number in it. Updating the row serialises
-- concurrent registrations in one scope, so aliases are dense and unique.
CREATE TABLE media_scopes (
  tenant text NOT NULL,
  surface text NOT NULL,
  chat_key text NOT NULL,
  next_alias integer NOT NULL DEFAULT 1,
  PRIMARY KEY (tenant, surface, chat_key)
);

-- One registration of an image in a scope: what callers see, by alias.
CREATE TABLE media_refs (
  id bigserial PRIMARY KEY,
  tenant text NOT NULL,
  surface text NOT NULL,
  chat_key text NOT NULL,
  alias_no integer NOT NULL,
  sha256 bytea NOT NULL REFERENCES media_blobs (sha256),
  message_id text,
  reply_to_message_id text,
  caption text,
  registered_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant, surface, chat_key, alias_no),
  FOREIGN KEY (tenant, surface, chat_key) REFERENCES media_scopes (tenant, surface, chat_key)
);
CREATE UNIQUE INDEX media_refs_message ON media_refs (tenant, surface, chat_key, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX media_refs_recent ON media_refs (tenant, surface, chat_key, alias_no DESC);

-- Down Migration
DROP TABLE media_refs;
DROP TABLE media_scopes;
DROP TABLE media_blobs;
