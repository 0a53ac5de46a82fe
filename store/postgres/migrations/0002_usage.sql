-- 0002: budgets and costs in US dollars, creation times of keys, and the
-- usage ledger: one row per request settled with a model
-- (auth.SettleParams), inserted by gk_settle in the same statement (and
-- group commit) as the quota.

ALTER TABLE gk_keys
	ADD COLUMN budget_usd double precision NOT NULL DEFAULT 0 CHECK (budget_usd >= 0), -- 0: none
	ADD COLUMN cost_usd   double precision NOT NULL DEFAULT 0,
	ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();

-- The usage rows; key_id has no foreign key, so that a deleted key's
-- usage stays.
CREATE TABLE gk_usage (
	key_id        text NOT NULL,
	model         text NOT NULL,
	at            timestamptz NOT NULL,
	input_tokens  bigint NOT NULL,
	output_tokens bigint NOT NULL,
	cost_usd      double precision NOT NULL
);
CREATE INDEX gk_usage_at ON gk_usage (at);
CREATE INDEX gk_usage_key ON gk_usage (key_id, at);
CREATE INDEX gk_usage_model ON gk_usage (model, at);

-- gk_reserve as in 0001, and a key whose cost reached its budget in money
-- (limited or not) is refused.
CREATE OR REPLACE FUNCTION gk_reserve(p_key text, p_instance text, p_amount bigint) RETURNS text
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
	v_unlimited boolean;
	v_remaining bigint;
	v_budget    double precision;
	v_cost      double precision;
	v_reserved  numeric;
BEGIN
	-- An unlimited key records nothing: answer without taking the lock.
	SELECT k.unlimited, k.budget_usd, k.cost_usd INTO v_unlimited, v_budget, v_cost FROM gk_keys k WHERE k.id = p_key;
	IF NOT FOUND THEN
		RETURN 'not_found';
	END IF;
	IF v_budget > 0 AND v_cost >= v_budget THEN
		RETURN 'exceeded';
	END IF;
	IF v_unlimited THEN
		RETURN 'ok';
	END IF;
	SELECT k.unlimited, k.remaining, k.budget_usd, k.cost_usd INTO v_unlimited, v_remaining, v_budget, v_cost
	FROM gk_keys k WHERE k.id = p_key FOR UPDATE;
	IF NOT FOUND THEN
		RETURN 'not_found';
	END IF;
	IF v_budget > 0 AND v_cost >= v_budget THEN
		RETURN 'exceeded';
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

-- gk_settle as in 0001, and: it adds p_cost[i] to the key's cost, returns
-- the cost and the budget with each result, and inserts the usage row of
-- each settlement with a model (p_model[i] <> '') at p_at[i].
DROP FUNCTION gk_settle(text, text, bigint[], bigint[]);
CREATE FUNCTION gk_settle(p_key text, p_instance text, p_reserved bigint[], p_used bigint[],
	p_model text[], p_input bigint[], p_output bigint[], p_cost double precision[], p_at timestamptz[])
RETURNS TABLE (o_found boolean, o_covered boolean, o_unlimited boolean,
	o_remaining bigint, o_reserved bigint, o_used bigint, o_budget double precision, o_cost double precision)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
	n           int := COALESCE(array_length(p_used, 1), 0);
	v_unlimited boolean;
	v_remaining bigint;
	v_used      bigint;
	v_budget    double precision;
	v_cost      double precision;
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
	SELECT k.unlimited, k.remaining, k.used, k.budget_usd, k.cost_usd INTO v_unlimited, v_remaining, v_used, v_budget, v_cost
	FROM gk_keys k WHERE k.id = p_key FOR UPDATE;
	IF NOT FOUND THEN
		RETURN QUERY SELECT false, false, false, 0::bigint, 0::bigint, 0::bigint, 0::double precision, 0::double precision
			FROM generate_series(1, n);
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
		v_cost := v_cost + GREATEST(p_cost[i], 0);
		o_found := true;
		o_unlimited := v_unlimited;
		o_used := v_used;
		o_budget := v_budget;
		o_cost := v_cost;
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
	UPDATE gk_keys k SET remaining = v_remaining, used = v_used, cost_usd = v_cost WHERE k.id = p_key;
	INSERT INTO gk_usage (key_id, model, at, input_tokens, output_tokens, cost_usd)
	SELECT p_key, u.m, u.a, GREATEST(u.i, 0), GREATEST(u.o, 0), GREATEST(u.c, 0)
	FROM unnest(p_model, p_at, p_input, p_output, p_cost) AS u(m, a, i, o, c)
	WHERE u.m <> '';
END $$;
