-- 0008: the usage ledger keeps the parts of each request's tokens that
-- providers price apart (auth.SettleParams): the input tokens read from
-- and written to the provider's prompt cache, and the output tokens spent
-- reasoning. Rows recorded before this migration have 0 in each.

ALTER TABLE gk_usage
	ADD COLUMN cached_tokens      bigint NOT NULL DEFAULT 0,
	ADD COLUMN cache_write_tokens bigint NOT NULL DEFAULT 0,
	ADD COLUMN reasoning_tokens   bigint NOT NULL DEFAULT 0;

-- gk_settle as in 0003, with the three parts of each settlement's usage
-- row (p_cached, p_cache_write, p_reasoning, aligned with p_model).
DROP FUNCTION gk_settle(text, text, bigint[], bigint[], text[], bigint[], bigint[], double precision[], timestamptz[]);
CREATE FUNCTION gk_settle(p_key text, p_instance text, p_reserved bigint[], p_used bigint[],
	p_model text[], p_input bigint[], p_output bigint[], p_cost double precision[], p_at timestamptz[],
	p_cached bigint[], p_cache_write bigint[], p_reasoning bigint[])
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
		-- Sums of costs saturate at the largest double rather than fail
		-- (a double's addition raises an error on overflow).
		v_cost := LEAST(v_cost::numeric + GREATEST(p_cost[i], 0)::numeric, 1.7976931348623157e308)::double precision;
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
	INSERT INTO gk_usage (key_id, model, at, input_tokens, output_tokens, cost_usd,
		cached_tokens, cache_write_tokens, reasoning_tokens)
	SELECT p_key, u.m, u.a, GREATEST(u.i, 0), GREATEST(u.o, 0), GREATEST(u.c, 0),
		GREATEST(COALESCE(u.cr, 0), 0), GREATEST(COALESCE(u.cw, 0), 0), GREATEST(COALESCE(u.r, 0), 0)
	FROM unnest(p_model, p_at, p_input, p_output, p_cost, p_cached, p_cache_write, p_reasoning) AS u(m, a, i, o, c, cr, cw, r)
	WHERE u.m <> '';
END $$;
