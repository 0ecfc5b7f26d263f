-- Up Migration
-- 'retry': the key's attempt met a Redis outage after its job may have been
-- added (the add was sent, the answer lost: a primary killed mid-command).
-- The next request with the key takes the same attempt over at once, so its
-- job id is the one that may already be queued or done, and a service that
-- records processed job ids runs the write once; a fresh attempt would run it
-- a second time.
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_state_check;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_state_check CHECK (state IN ('pending', 'done', 'retry'));

-- Down Migration
DELETE FROM idempotency_keys WHERE state = 'retry';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_state_check;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_state_check CHECK (state IN ('pending', 'done'));
