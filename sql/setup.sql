--
-- setup: the extension, the comparison helper and the shared test tables.
-- Runs first; later files use what it creates.
--
CREATE EXTENSION gpuagg;

-- Runs a query twice, with gpuagg forced and with gpuagg off, and compares
-- the two results as multisets of rows.  Says whether the forced plan really
-- used the node (GpuHashAgg, or the one named), so a test cannot pass by
-- silently staying native.
CREATE FUNCTION gpuagg_check(query text, node text DEFAULT 'GpuHashAgg') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    on_device boolean := false;
    accelerated text[];
    native text[];
    wrapped text := 'SELECT coalesce(array_agg(r::text ORDER BY r::text), ''{}'') FROM ('
                    || query || ') r';
BEGIN
    PERFORM set_config('gpuagg.enabled', 'on', true);
    PERFORM set_config('gpuagg.force', 'on', true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        on_device := on_device OR line LIKE '%Custom Scan (' || node || ')%';
    END LOOP;
    EXECUTE wrapped INTO accelerated;
    PERFORM set_config('gpuagg.enabled', 'off', true);
    EXECUTE wrapped INTO native;
    PERFORM set_config('gpuagg.enabled', 'on', true);
    IF NOT on_device THEN
        RETURN 'NOT ON ' || node;
    ELSIF accelerated = native THEN
        RETURN 'same, ' || cardinality(native) || ' rows';
    END IF;
    RETURN 'DIFFERENT: gpuagg ' || left(accelerated::text, 400)
        || ' native ' || left(native::text, 400);
END
$$;

-- Like gpuagg_check, for a query that may fail: runs it with gpuagg forced
-- and with gpuagg off, each to its end or to its error, and says whether
-- both raised the same error or both returned the same rows.
CREATE FUNCTION gpuagg_outcome(query text, node text DEFAULT 'GpuHashAgg') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    on_device boolean := false;
    outcome text[];
    wrapped text := 'SELECT coalesce(array_agg(r::text ORDER BY r::text), ''{}'')::text FROM ('
                    || query || ') r';
    i int;
BEGIN
    PERFORM set_config('gpuagg.force', 'on', true);
    FOR i IN 1..2 LOOP
        PERFORM set_config('gpuagg.enabled', CASE i WHEN 1 THEN 'on' ELSE 'off' END, true);
        IF i = 1 THEN
            FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
                on_device := on_device OR line LIKE '%Custom Scan (' || node || ')%';
            END LOOP;
        END IF;
        BEGIN
            EXECUTE wrapped INTO line;
            outcome[i] := cardinality(line::text[]) || ' rows ' || line;
        EXCEPTION WHEN OTHERS THEN
            outcome[i] := 'error: ' || SQLERRM;
        END;
    END LOOP;
    PERFORM set_config('gpuagg.enabled', 'on', true);
    IF NOT on_device THEN
        RETURN 'NOT ON ' || node;
    ELSIF outcome[1] = outcome[2] THEN
        RETURN CASE WHEN outcome[1] LIKE 'error: %' THEN 'same ' || outcome[1]
                    ELSE 'same, ' || split_part(outcome[1], ' ', 1) || ' rows' END;
    END IF;
    RETURN 'DIFFERENT: gpuagg ' || left(outcome[1], 400) || ' native ' || left(outcome[2], 400);
END
$$;

-- Whether a query's plan uses GpuHashAgg (or the node named) under the
-- current settings.
CREATE FUNCTION gpuagg_used(query text, node text DEFAULT 'GpuHashAgg') RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line LIKE '%Custom Scan (' || node || ')%' THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

-- Whether a query's plan is an aggjoin GpuHashAgg (the aggregation joins
-- its children on the device), and then gpuagg_check's verdict on it.
CREATE FUNCTION aggjoin_check(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    fed boolean := false;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        fed := fed OR line LIKE '%children on the device%';
    END LOOP;
    IF NOT fed THEN
        RETURN 'NOT AGGJOIN';
    END IF;
    RETURN gpuagg_check(query);
END
$$;

-- Runs a query in a scrollable cursor: all rows forward, then backward,
-- then the row at one position; says whether backward and absolute fetches
-- agree with the forward ones (group order is the device's, so compare
-- rather than print).
CREATE FUNCTION gpuagg_cursor_round_trip(query text, at_row int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    c refcursor := 'gpuagg_cursor';
    r record;
    forward text[] := '{}';
    backward text[] := '{}';
BEGIN
    OPEN c SCROLL FOR EXECUTE query;
    LOOP
        FETCH NEXT FROM c INTO r;
        EXIT WHEN NOT FOUND;
        forward := forward || r::text;
    END LOOP;
    LOOP
        FETCH PRIOR FROM c INTO r;
        EXIT WHEN NOT FOUND;
        backward := r::text || backward;
    END LOOP;
    FETCH ABSOLUTE at_row FROM c INTO r;
    IF r::text <> forward[at_row] THEN
        RETURN 'absolute fetch differs';
    END IF;
    CLOSE c;
    RETURN cardinality(forward) || ' rows, backward '
        || CASE WHEN forward = backward THEN 'matches' ELSE 'DIFFERS' END;
END
$$;

-- A query's plan under EXPLAIN ANALYZE (no costs, timings or summary), as JSON.
CREATE FUNCTION gpuagg_explain_json(query text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || query
        INTO plan;
    RETURN plan;
END
$$;

-- The named properties of a query's top plan node under EXPLAIN ANALYZE
-- (as gpuagg_explain_json), those it has, in the order named.
CREATE FUNCTION gpuagg_plan_properties(query text, properties text[])
RETURNS TABLE (property text, value text)
LANGUAGE sql AS $$
SELECT k, p->>k
FROM (SELECT gpuagg_explain_json(query)->0->'Plan' AS p) plan,
     unnest(properties) WITH ORDINALITY u(k, n)
WHERE p ? k ORDER BY n
$$;

-- 20000 rows of every supported type, deterministic, with NULLs.  Float
-- values are multiples of powers of two so that sums are exact in any
-- order (the GPU adds in a different order than the CPU).
CREATE TABLE agg_data AS
SELECT id,
       CASE WHEN id % 97 = 0 THEN NULL ELSE (id % 5)::int2 END AS k_int2,
       (id % 100)::int4 AS k_int4,
       ((id % 1000)::int8 * 10000000000) AS k_int8,
       CASE WHEN id % 11 = 0 THEN NULL ELSE id % 3 = 0 END AS k_bool,
       CASE WHEN id % 401 = 0 THEN 'NaN'::float8
            WHEN id % 8 = 4 AND id % 3 = 0 THEN '-0'::float8
            ELSE ((id % 8) - 4) / 4.0 END AS k_float8,
       DATE '2024-01-01' + (id % 30) AS k_date,
       TIMESTAMP '2024-01-01 00:00' + (id % 24) * INTERVAL '1 hour' AS k_ts,
       CASE WHEN id % 53 = 0 THEN NULL ELSE 'grp' || (id % 37) END AS k_text,
       ('v' || (id % 13))::varchar(10) AS k_varchar,
       ((id % 200) - 100)::int2 AS v_int2,
       CASE WHEN id % 13 = 0 THEN NULL ELSE (id * 7 % 1000) - 500 END AS v_int4,
       CASE WHEN id % 1000 = 0 THEN 9223372036854775807
            WHEN id % 1000 = 1 THEN -9223372036854775807
            ELSE id::int8 * 1000003 END AS v_int8,
       ((id % 16) * 0.25)::float4 AS v_float4,
       CASE WHEN id % 17 = 0 THEN NULL ELSE ((id % 64) * 0.125 - 4)::float8 END AS v_float8,
       DATE '2020-02-29' + (id * 37 % 2000) AS v_date,
       TIMESTAMP '2020-01-01' + (id * 7919 % 100000) * INTERVAL '1 minute' AS v_ts
FROM generate_series(1, 20000) AS id;
ANALYZE agg_data;

-- An empty table of the same shape.
CREATE TABLE agg_empty AS SELECT * FROM agg_data WHERE false;
ANALYZE agg_empty;
