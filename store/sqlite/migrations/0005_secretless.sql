-- 0005_secretless: keys without a secret, found by their id only (an
-- embedder's own identity names them: auth.Identities), whose
-- secret_hash is NULL. SQLite cannot drop a NOT NULL constraint, so the
-- table is rebuilt with the same columns, in the same order, and its rows
-- copied; UNIQUE still holds among the secrets (NULLs are distinct).
CREATE TABLE keys_0005 (
	id             TEXT    NOT NULL PRIMARY KEY,
	secret_hash    TEXT    UNIQUE, -- NULL: no secret
	owner          TEXT    NOT NULL,
	unlimited      INTEGER NOT NULL,
	remaining      INTEGER NOT NULL CHECK (remaining >= 0),
	reserved       INTEGER NOT NULL CHECK (reserved >= 0),
	used           INTEGER NOT NULL CHECK (used >= 0),
	expires_at     TEXT,
	disabled       INTEGER NOT NULL,
	rate_requests  INTEGER,
	rate_period_ns INTEGER,
	allowed_models TEXT    NOT NULL, -- a JSON array
	budget_usd     REAL    NOT NULL DEFAULT 0,
	cost_usd       REAL    NOT NULL DEFAULT 0,
	created_at     INTEGER NOT NULL DEFAULT 0,
	granted        INTEGER NOT NULL DEFAULT 0 CHECK (granted >= 0)
) STRICT;
INSERT INTO keys_0005 (id, secret_hash, owner, unlimited, remaining, reserved, used, expires_at, disabled,
	rate_requests, rate_period_ns, allowed_models, budget_usd, cost_usd, created_at, granted)
SELECT id, secret_hash, owner, unlimited, remaining, reserved, used, expires_at, disabled,
	rate_requests, rate_period_ns, allowed_models, budget_usd, cost_usd, created_at, granted
FROM keys;
DROP TABLE keys;
ALTER TABLE keys_0005 RENAME TO keys;
