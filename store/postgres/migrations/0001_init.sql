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

-- gk_settle is KeyStore.Settle, for one or more settlements of one key
-- (those of a group commit: see groupcommit.go), applied in the order
-- given under one lock of the key's row, with one row of results each, as
-- if each had run alone: it releases p_reserved[i] from the instance's
-- own reservation first, then from the other fresh ones, then from the
-- stale ones (a task resumed by another replica), and consumes p_used[i].
CREATE FUNCTION gk_settle(p_key text, p_instance text, p_reserved bigint[], p_used bigint[])
RETURNS TABLE (o_found boolean, o_covered boolean, o_unlimited boolean,
	o_remaining bigint, o_reserved bigint, o_used bigint)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
	n           int := COALESCE(array_length(p_used, 1), 0);
	v_unlimited boolean;
	v_remaining bigint;
	v_used      bigint;
	v_inst      text[];
	v_amt       bigint[];
	v_orig      bigint[];
	v_fresh     boolean[];
	v_rows      int;
	v_fresh_sum numeric := 0;
	v_left      bigint;
	v_take      bigint;
	i           int;
	j           int;
BEGIN
	SELECT k.unlimited, k.remaining, k.used INTO v_unlimited, v_remaining, v_used
	FROM gk_keys k WHERE k.id = p_key FOR UPDATE;
	IF NOT FOUND THEN
		RETURN QUERY SELECT false, false, false, 0::bigint, 0::bigint, 0::bigint FROM generate_series(1, n);
		RETURN;
	END IF;
	SELECT array_agg(r.instance ORDER BY o.own DESC, o.fresh DESC, r.amount DESC),
		array_agg(r.amount ORDER BY o.own DESC, o.fresh DESC, r.amount DESC),
		array_agg(o.fresh ORDER BY o.own DESC, o.fresh DESC, r.amount DESC)
	INTO v_inst, v_amt, v_fresh
	FROM gk_reservations r
	LEFT JOIN gk_instances i ON i.id = r.instance
	CROSS JOIN LATERAL (SELECT r.instance = p_instance AS own,
		COALESCE(i.expires_at > clock_timestamp(), false) AS fresh) o
	WHERE r.key_id = p_key;
	v_orig := v_amt;
	v_rows := COALESCE(array_length(v_amt, 1), 0);
	FOR j IN 1 .. v_rows LOOP
		IF v_fresh[j] THEN
			v_fresh_sum := v_fresh_sum + v_amt[j];
		END IF;
	END LOOP;
	FOR i IN 1 .. n LOOP
		v_left := p_reserved[i];
		j := 1;
		WHILE v_left > 0 AND j <= v_rows LOOP
			v_take := LEAST(v_left, v_amt[j]);
			v_amt[j] := v_amt[j] - v_take;
			v_left := v_left - v_take;
			IF v_fresh[j] THEN
				v_fresh_sum := v_fresh_sum - v_take;
			END IF;
			j := j + 1;
		END LOOP;
		v_used := LEAST(v_used::numeric + p_used[i], 9223372036854775807)::bigint;
		o_found := true;
		o_unlimited := v_unlimited;
		o_used := v_used;
		IF v_unlimited THEN
			v_remaining := 0;
			o_covered := true;
		ELSIF p_used[i] > v_remaining THEN
			v_remaining := 0;
			o_covered := false;
		ELSE
			v_remaining := v_remaining - p_used[i];
			o_covered := true;
		END IF;
		o_remaining := v_remaining;
		o_reserved := CASE WHEN v_unlimited THEN 0 ELSE LEAST(v_fresh_sum, 9223372036854775807)::bigint END;
		RETURN NEXT;
	END LOOP;
	FOR j IN 1 .. v_rows LOOP
		IF v_amt[j] = 0 THEN
			DELETE FROM gk_reservations r WHERE r.key_id = p_key AND r.instance = v_inst[j];
		ELSIF v_amt[j] <> v_orig[j] THEN
			UPDATE gk_reservations r SET amount = v_amt[j] WHERE r.key_id = p_key AND r.instance = v_inst[j];
		END IF;
	END LOOP;
	UPDATE gk_keys k SET remaining = v_remaining, used = v_used WHERE k.id = p_key;
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
