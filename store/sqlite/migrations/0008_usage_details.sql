-- 0008_usage_details: the usage ledger keeps the parts of each
-- request's tokens that providers price apart (auth.SettleParams): the
-- input tokens read from and written to the provider's prompt cache, and
-- the output tokens spent reasoning. Rows recorded before this migration
-- have 0 in each.
ALTER TABLE usage ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
