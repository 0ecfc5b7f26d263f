-- Up Migration
-- Image bytes become tenant-scoped: stored once per (tenant, sha256), not
-- once for everyone. Deduplicating across tenants made registering bytes
-- another tenant had stored measurably cheaper, so a tenant could learn by
-- timing whether a known file existed anywhere in the gateway. Within a
-- tenant the gateway still stores equal bytes once, and does not send them to
-- Postgres again when they are there.
--
-- Read contract (the vision-router reads these tables, read-only; only the
-- gateway writes them):
--   media_blobs (tenant, sha256, mime_type, byte_size, width, height, bytes)
--     primary key (tenant, sha256). mime_type is sniffed from the bytes (one
--     of image/png, image/jpeg, image/webp, image/gif, image/avif,
--     image/tiff); width and height are one frame's. Every blob registered
--     since this migration decoded fully at registration under the gateway's
--     pixel and frame limits (MEDIA_MAX_PIXELS, MEDIA_MAX_FRAMES).
--   media_refs (tenant, surface, chat_key, alias_no, sha256, message_id,
--               reply_to_message_id, caption, registered_at)
--     one registration in a chat scope; alias img-N is alias_no = N, unique
--     per (tenant, surface, chat_key). Its bytes are the media_blobs row with
--     the same (tenant, sha256): always join on both columns.
CREATE TABLE media_tenant_blobs (
  tenant text NOT NULL,
  sha256 bytea NOT NULL,
  mime_type text NOT NULL,
  byte_size integer NOT NULL,
  width integer NOT NULL,
  height integer NOT NULL,
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, sha256)
);

-- One copy for each tenant that refers to the bytes. A blob no registration
-- refers to (a registration refused as a message conflict used to leave one)
-- belongs to no tenant and is dropped.
INSERT INTO media_tenant_blobs (tenant, sha256, mime_type, byte_size, width, height, bytes, created_at)
SELECT t.tenant, b.sha256, b.mime_type, b.byte_size, b.width, b.height, b.bytes, b.created_at
FROM (SELECT DISTINCT tenant, sha256 FROM media_refs) t
JOIN media_blobs b ON b.sha256 = t.sha256;

ALTER TABLE media_refs DROP CONSTRAINT media_refs_sha256_fkey;
DROP TABLE media_blobs;
ALTER TABLE media_tenant_blobs RENAME TO media_blobs;
ALTER TABLE media_blobs RENAME CONSTRAINT media_tenant_blobs_pkey TO media_blobs_pkey;
ALTER TABLE media_refs ADD CONSTRAINT media_refs_blob_fkey FOREIGN KEY (tenant, sha256) REFERENCES media_blobs (tenant, sha256);

-- Down Migration
-- Back to one copy of equal bytes for every tenant.
ALTER TABLE media_refs DROP CONSTRAINT media_refs_blob_fkey;
CREATE TABLE media_shared_blobs (
  sha256 bytea PRIMARY KEY,
  mime_type text NOT NULL,
  byte_size integer NOT NULL,
  width integer NOT NULL,
  height integer NOT NULL,
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO media_shared_blobs (sha256, mime_type, byte_size, width, height, bytes, created_at)
SELECT DISTINCT ON (sha256) sha256, mime_type, byte_size, width, height, bytes, created_at
FROM media_blobs ORDER BY sha256, created_at;
DROP TABLE media_blobs;
ALTER TABLE media_shared_blobs RENAME TO media_blobs;
ALTER TABLE media_blobs RENAME CONSTRAINT media_shared_blobs_pkey TO media_blobs_pkey;
ALTER TABLE media_refs ADD CONSTRAINT media_refs_sha256_fkey FOREIGN KEY (sha256) REFERENCES media_blobs (sha256);
