-- 0004_granted: the whole budget that each limited key was given
-- (auth.Key.Granted), which the usage no longer tells once a key has used
-- more than it (remaining stops at 0). 0 for unlimited keys. A key stored
-- before this migration is taken to have been granted what it has left
-- plus what it used.
ALTER TABLE keys ADD COLUMN granted INTEGER NOT NULL DEFAULT 0 CHECK (granted >= 0);
UPDATE keys SET granted = CASE WHEN used > 9223372036854775807 - remaining THEN 9223372036854775807 ELSE remaining + used END
	WHERE NOT unlimited;
