-- 0007_runs: the background responses of package responses (its
-- RunStore) and the event logs of the streamed ones.

-- runs holds each run as JSON in data, with the columns that claims and
-- prunes select on. done is 1 once the run's final response is recorded;
-- lease_expires_at (Unix ns) matters while a worker holds the run.
-- charge_key and charge_amount are the quota the run reserved, until it
-- is done (Open recomputes the keys' reservations from them).
CREATE TABLE runs (
	id               TEXT    PRIMARY KEY,
	owner            TEXT    NOT NULL,
	status           TEXT    NOT NULL,
	done             INTEGER NOT NULL,
	created_at       INTEGER NOT NULL,
	lease_expires_at INTEGER NOT NULL,
	ended_at         INTEGER NOT NULL,
	charge_key       TEXT,
	charge_amount    INTEGER NOT NULL,
	data             BLOB    NOT NULL
) STRICT;
CREATE INDEX runs_charged ON runs (charge_key) WHERE done = 0;
CREATE INDEX runs_open ON runs (done, status, created_at, id);
CREATE INDEX runs_ended ON runs (done, ended_at);

-- run_events holds the newest events of each streamed run, by sequence
-- number.
CREATE TABLE run_events (
	run_id TEXT    NOT NULL,
	seq    INTEGER NOT NULL,
	type   TEXT    NOT NULL,
	data   BLOB    NOT NULL,
	PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;
