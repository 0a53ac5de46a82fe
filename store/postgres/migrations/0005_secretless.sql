-- 0005: keys without a secret, found by their id only (an embedder's own
-- identity names them: auth.Identities), whose secret_hash is NULL. The
-- UNIQUE constraint still holds among the secrets (NULLs are distinct).

ALTER TABLE gk_keys ALTER COLUMN secret_hash DROP NOT NULL;
