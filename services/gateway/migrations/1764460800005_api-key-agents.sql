-- Up Migration
-- Actors are keys: the agent a key acts as (who claimed, submitted, reviewed
-- or recorded something is this name, never one in a request body). NULL for
-- a key made without --agent, which acts as `key-<id>` (agentOfKey in
-- @vouch/contracts); keys made before this migration keep acting as that.
-- Several keys may carry one agent (a rotated key, replicas of one worker).
ALTER TABLE api_keys ADD COLUMN agent text;

-- Down Migration
ALTER TABLE api_keys DROP COLUMN agent;
