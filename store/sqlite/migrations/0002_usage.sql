-- 0002_usage: budgets and costs in US dollars, creation times of keys,
-- and the usage ledger: one row per request settled with a model
-- (auth.SettleParams), written in the group commit of the keys' quotas.

-- budget_usd is auth.Quota.BudgetUSD (0: none), cost_usd the cost
-- recorded; created_at is in Unix nanoseconds (0 for the keys stored
-- before this migration).
ALTER TABLE keys ADD COLUMN budget_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE keys ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE keys ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;

-- usage holds one row per request: the key charged (kept after the key
-- is deleted), the model, when (Unix nanoseconds), its tokens and cost.
CREATE TABLE usage (
	key_id        TEXT    NOT NULL,
	model         TEXT    NOT NULL,
	at            INTEGER NOT NULL,
	input_tokens  INTEGER NOT NULL,
	output_tokens INTEGER NOT NULL,
	cost_usd      REAL    NOT NULL
) STRICT;
CREATE INDEX usage_by_time ON usage (at);
CREATE INDEX usage_by_key ON usage (key_id, at);
CREATE INDEX usage_by_model ON usage (model, at);
