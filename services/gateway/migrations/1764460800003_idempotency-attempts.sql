-- Up Migration
-- The attempt a key's current request runs as. A queued operation's job id is
-- derived from (tenant, operation, key, attempt): a request retried after a
-- gateway crash keeps the attempt and finds its job, while a retry after a 5xx
-- (the row was released) gets a new attempt and runs the operation again
-- instead of finding the old failed job.
ALTER TABLE idempotency_keys ADD COLUMN attempt text NOT NULL DEFAULT md5(random()::text);
ALTER TABLE idempotency_keys ALTER COLUMN attempt DROP DEFAULT;

-- Down Migration
ALTER TABLE idempotency_keys DROP COLUMN attempt;
