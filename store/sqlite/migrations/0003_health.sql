-- 0003_health: the row that a readiness check writes (DB.Ping) to learn
-- whether the file can be written again after a write failed.
CREATE TABLE health_probe (
	id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
	at INTEGER NOT NULL -- Unix nanoseconds
) STRICT;
