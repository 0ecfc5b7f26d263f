-- Up Migration
-- A key's own budgets (docs/architecture.md, "Costs and budgets"): the cost
-- units its tenant may spend per window, and its tenant's operations in flight
-- at once, when it calls with this key. NULL: the gateway's defaults
-- (TENANT_RATE_BUDGET, TENANT_CONCURRENCY_BUDGET). The counters themselves
-- live in Redis, shared by every gateway replica; only the limits are here.
ALTER TABLE api_keys
  ADD COLUMN rate_budget integer CONSTRAINT api_keys_rate_budget_positive CHECK (rate_budget > 0),
  ADD COLUMN concurrency_budget integer CONSTRAINT api_keys_concurrency_budget_positive CHECK (concurrency_budget > 0 AND concurrency_budget <= 100000);

-- Down Migration
ALTER TABLE api_keys DROP COLUMN rate_budget, DROP COLUMN concurrency_budget;
