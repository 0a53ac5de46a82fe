-- 0004: the whole budget that each limited key was given
-- (auth.Key.Granted), which the usage no longer tells once a key has used
-- more than it (remaining stops at 0). 0 for unlimited keys. A key stored
-- before this migration is taken to have been granted what it has left
-- plus what it used.

ALTER TABLE gk_keys ADD COLUMN granted bigint NOT NULL DEFAULT 0 CHECK (granted >= 0);
UPDATE gk_keys SET granted = LEAST(remaining::numeric + used, 9223372036854775807)::bigint WHERE NOT unlimited;
