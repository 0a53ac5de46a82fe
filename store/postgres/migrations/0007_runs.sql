-- 0007: the background responses of package responses (its RunStore)
-- and the event logs of the streamed ones.

-- Each run as JSON in data, with the columns that claims (FOR UPDATE
-- SKIP LOCKED) and prunes select on. lease_ns matters while a worker
-- holds the run; ended_ns once done.
CREATE TABLE gk_runs (
	id         text    PRIMARY KEY,
	owner      text    NOT NULL,
	status     text    NOT NULL,
	done       boolean NOT NULL,
	created_ns bigint  NOT NULL,
	lease_ns   bigint  NOT NULL,
	ended_ns   bigint  NOT NULL,
	data       bytea   NOT NULL
);
CREATE INDEX gk_runs_open ON gk_runs (status, created_ns, id) WHERE NOT done;
CREATE INDEX gk_runs_ended ON gk_runs (ended_ns) WHERE done;

-- The newest events of each streamed run, by sequence number.
CREATE TABLE gk_run_events (
	run_id text   NOT NULL REFERENCES gk_runs (id) ON DELETE CASCADE,
	seq    bigint NOT NULL,
	type   text   NOT NULL,
	data   bytea  NOT NULL,
	PRIMARY KEY (run_id, seq)
);
