-- 0001: every table of gatewaykit's PostgreSQL store. The runner (see
-- migrate.go) applies this in one transaction with search_path set to the
-- store's schema, so names are unqualified here.

-- The gateway processes sharing the database. Each one refreshes its row
-- (a heartbeat) while it runs; its quota reservations count only while
-- expires_at is in the future.
CREATE TABLE gk_instances (
	id         text PRIMARY KEY,
	expires_at timestamptz NOT NULL
);

-- API keys: the SHA-256 of the secret (never the secret), the key's
-- fields and its quota. rate_requests NULL means no rate limit of its own.
CREATE TABLE gk_keys (
	id             text PRIMARY KEY,
	secret_hash    text NOT NULL UNIQUE,
	owner          text NOT NULL,
	unlimited      boolean NOT NULL,
	remaining      bigint NOT NULL CHECK (remaining >= 0),
	used           bigint NOT NULL CHECK (used >= 0),
	expires_at     timestamptz,
	disabled       boolean NOT NULL DEFAULT false,
	rate_requests  integer,
	rate_period_ns bigint,
	allowed_models text[] NOT NULL DEFAULT '{}'
);

-- Quota reserved by requests in flight, per key and per gateway instance.
CREATE TABLE gk_reservations (
	key_id   text NOT NULL REFERENCES gk_keys (id) ON DELETE CASCADE,
	instance text NOT NULL,
	amount   bigint NOT NULL CHECK (amount >= 0),
	PRIMARY KEY (key_id, instance)
);

-- gk_reserve is KeyStore.Reserve: it locks the key's row, so that the
-- reservations of one key are serialised across every replica, then sums
-- the fresh reservations (each statement of a VOLATILE function sees what
-- was committed before it started, so the sum includes the reservation of
-- the transaction that held the lock before) and adds p_amount to the
-- instance's reservation when any of the budget is unreserved.
CREATE FUNCTION gk_reserve(p_key text, p_instance text, p_amount bigint) RETURNS text
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
	v_unlimited boolean;
	v_remaining bigint;
	v_reserved  numeric;
BEGIN
	-- An unlimited key records nothing: answer without taking the lock.
	SELECT k.unlimited INTO v_unlimited FROM gk_keys k WHERE k.id = p_key;
	IF NOT FOUND THEN
		RETURN 'not_found';
	END IF;
	IF v_unlimited THEN
		RETURN 'ok';
	END IF;
	SELECT k.unlimited, k.remaining INTO v_unlimited, v_remaining
	FROM gk_keys k WHERE k.id = p_key FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'not_found';
	END IF;
	IF v_unlimited THEN
		RETURN 'ok';
	END IF;
	SELECT COALESCE(sum(r.amount), 0) INTO v_reserved
	FROM gk_reservations r JOIN gk_instances i ON i.id = r.instance
	WHERE r.key_id = p_key AND i.expires_at > clock_timestamp();
	IF v_remaining <= v_reserved THEN
		RETURN 'exceeded';
	END IF;
	INSERT INTO gk_reservations AS r (key_id, instance, amount) VALUES (p_key, p_instance, p_amount)
	ON CONFLICT (key_id, instance)
	DO UPDATE SET amount = LEAST(r.amount::numeric + excluded.amount, 9223372036854775807)::bigint;
	RETURN 'ok';
END $$;

-- gk_settle is KeyStore.Settle: under the key's row lock it releases
-- p_reserved from the instance's own reservation first, then from the
-- others' (a task resumed by another replica), and consumes p_used.
CREATE FUNCTION gk_settle(p_key text, p_instance text, p_reserved bigint, p_used bigint,
	OUT o_found boolean, OUT o_covered boolean, OUT o_unlimited boolean,
	OUT o_remaining bigint, OUT o_reserved bigint, OUT o_used bigint)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
	v_left      bigint := p_reserved;
	v_take      bigint;
	v_remaining bigint;
	v_row       record;
BEGIN
	SELECT k.unlimited, k.remaining, k.used INTO o_unlimited, v_remaining, o_used
	FROM gk_keys k WHERE k.id = p_key FOR UPDATE;
	IF NOT FOUND THEN
		SELECT false, false, false, 0, 0, 0
		INTO o_found, o_covered, o_unlimited, o_remaining, o_reserved, o_used;
		RETURN;
	END IF;
	o_found := true;
	IF v_left > 0 THEN
		FOR v_row IN
			SELECT r.instance, r.amount FROM gk_reservations r
			LEFT JOIN gk_instances i ON i.id = r.instance
			WHERE r.key_id = p_key
			ORDER BY (r.instance = p_instance) DESC,
				COALESCE(i.expires_at > clock_timestamp(), false) DESC, r.amount DESC
		LOOP
			EXIT WHEN v_left <= 0;
			v_take := LEAST(v_left, v_row.amount);
			IF v_take = v_row.amount THEN
				DELETE FROM gk_reservations r WHERE r.key_id = p_key AND r.instance = v_row.instance;
			ELSE
				UPDATE gk_reservations r SET amount = r.amount - v_take
				WHERE r.key_id = p_key AND r.instance = v_row.instance;
			END IF;
			v_left := v_left - v_take;
		END LOOP;
	END IF;
	o_used := LEAST(o_used::numeric + p_used, 9223372036854775807)::bigint;
	IF o_unlimited THEN
		o_remaining := 0;
		o_covered := true;
	ELSIF p_used > v_remaining THEN
		o_remaining := 0;
		o_covered := false;
	ELSE
		o_remaining := v_remaining - p_used;
		o_covered := true;
	END IF;
	UPDATE gk_keys k SET remaining = o_remaining, used = o_used WHERE k.id = p_key;
	SELECT LEAST(COALESCE(sum(r.amount), 0), 9223372036854775807)::bigint INTO o_reserved
	FROM gk_reservations r JOIN gk_instances i ON i.id = r.instance
	WHERE r.key_id = p_key AND i.expires_at > clock_timestamp();
	IF o_unlimited THEN
		o_reserved := 0;
	END IF;
END $$;

-- Stored responses, as the JSON of responses.StoredResponse.
CREATE TABLE gk_responses (
	owner      text NOT NULL,
	id         text NOT NULL,
	data       bytea NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (owner, id)
);

-- Video tasks: the JSON of videos.Task in data, and beside it the columns
-- that claims and lists search (times in Unix nanoseconds, exact).
CREATE TABLE gk_tasks (
	id         text PRIMARY KEY,
	owner      text NOT NULL,
	status     text NOT NULL,
	created_ns bigint NOT NULL,
	lease_ns   bigint,
	data       bytea NOT NULL
);
CREATE INDEX gk_tasks_owner ON gk_tasks (owner, created_ns, id);
CREATE INDEX gk_tasks_queued ON gk_tasks (created_ns, id) WHERE status = 'queued';
CREATE INDEX gk_tasks_running ON gk_tasks (lease_ns) WHERE status = 'in_progress';

-- Video content, in chunks, so that replicas share nothing but the
-- database. A Put writes a new row (a new id) and its chunks; readers
-- read the chunks of the id they opened.
CREATE TABLE gk_contents (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	task_id      text NOT NULL,
	variant      text NOT NULL,
	content_type text NOT NULL,
	size         bigint NOT NULL,
	chunk_size   integer NOT NULL,
	mod_time     timestamptz NOT NULL,
	UNIQUE (task_id, variant)
);
CREATE TABLE gk_content_chunks (
	content_id bigint NOT NULL REFERENCES gk_contents (id) ON DELETE CASCADE,
	seq        integer NOT NULL,
	data       bytea NOT NULL,
	PRIMARY KEY (content_id, seq)
);
