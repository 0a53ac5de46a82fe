-- 0001_init: the first schema of gatewaykit's SQLite store: API keys and
-- their quotas, stored responses, video tasks and their content.

-- keys holds API keys by the SHA-256 of their secret (hex), never the
-- secret. Quota amounts are those of auth.Quota; rate_requests and
-- rate_period_ns are NULL when the key has no rate limit of its own.
CREATE TABLE keys (
	id             TEXT    NOT NULL PRIMARY KEY,
	secret_hash    TEXT    NOT NULL UNIQUE,
	owner          TEXT    NOT NULL,
	unlimited      INTEGER NOT NULL,
	remaining      INTEGER NOT NULL CHECK (remaining >= 0),
	reserved       INTEGER NOT NULL CHECK (reserved >= 0),
	used           INTEGER NOT NULL CHECK (used >= 0),
	expires_at     TEXT,
	disabled       INTEGER NOT NULL,
	rate_requests  INTEGER,
	rate_period_ns INTEGER,
	allowed_models TEXT    NOT NULL -- a JSON array
) STRICT;

-- responses holds stored responses as JSON, by owner and id.
CREATE TABLE responses (
	owner      TEXT    NOT NULL,
	id         TEXT    NOT NULL,
	data       BLOB    NOT NULL,
	updated_at INTEGER NOT NULL, -- Unix nanoseconds of the last Put
	PRIMARY KEY (owner, id)
) STRICT, WITHOUT ROWID;

-- tasks holds video tasks: the whole task as JSON in data, and the
-- columns that queries select and order by, derived from it at every
-- write. Times are Unix nanoseconds.
CREATE TABLE tasks (
	id               TEXT    NOT NULL PRIMARY KEY,
	owner            TEXT    NOT NULL,
	status           TEXT    NOT NULL,
	created_at       INTEGER NOT NULL,
	lease_expires_at INTEGER NOT NULL, -- 0 when there is no lease
	charge_key       TEXT,             -- the key reserved for the task, if any
	charge_amount    INTEGER NOT NULL,
	data             BLOB    NOT NULL
) STRICT;
CREATE INDEX tasks_by_owner ON tasks (owner, created_at, id);
CREATE INDEX tasks_by_status ON tasks (status, created_at, id);

-- contents holds the videos and thumbnails of completed tasks.
CREATE TABLE contents (
	task_id      TEXT    NOT NULL,
	variant      TEXT    NOT NULL,
	content_type TEXT    NOT NULL,
	mod_time     INTEGER NOT NULL, -- Unix seconds
	data         BLOB    NOT NULL,
	PRIMARY KEY (task_id, variant)
) STRICT, WITHOUT ROWID;
