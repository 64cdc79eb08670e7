--
-- hashagg_parallel: parallel workers pack batches (GpuAggPack under a
-- Gather) and one GpuHashAgg aggregates them
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;

EXPLAIN (COSTS OFF)
SELECT k_text, count(*), sum(v_int4) FROM agg_data GROUP BY k_text;
-- unforced, a plain aggregate that PostgreSQL can run in parallel is left to
-- it (says why at DEBUG1); forced, or with DISTINCT, it is considered
SET gpuagg.force = off;
SET client_min_messages = debug1;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v_int4) FROM agg_data;
RESET client_min_messages;
SET gpuagg.force = on;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v_int4) FROM agg_data;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT k_int2, sum(v_int8) FROM agg_data GROUP BY k_int2;

-- small messages: every worker sends many, with text ids mapped by the leader
SET gpuagg.batch_rows = 512;
SELECT gpuagg_check('SELECT k_text, count(*), sum(v_int4), avg(v_float8) FROM agg_data GROUP BY k_text');
SELECT gpuagg_check('SELECT k_varchar, k_text, k_int2, count(*), max(v_int8) FROM agg_data GROUP BY k_varchar, k_text, k_int2');
-- (-0 and 0 are one group whose first row is up to the workers: k_float8 + 0)
SELECT gpuagg_check('SELECT k_float8 + 0, k_bool, count(*), sum(v_float4), min(v_date), max(v_ts) FROM agg_data GROUP BY k_float8 + 0, k_bool');
SELECT gpuagg_check('SELECT id, k_text, sum(v_int4) FROM agg_data GROUP BY id, k_text');
SELECT gpuagg_check('SELECT count(*), count(v_int4), sum(v_int8), avg(v_int2), min(k_date) FROM agg_data');
SELECT gpuagg_check('SELECT k_int2, count(*) FILTER (WHERE v_int4 > 0), sum(v_int4) FILTER (WHERE k_bool) FROM agg_data GROUP BY k_int2 HAVING count(*) > 100');
SELECT gpuagg_check('SELECT k_int4 % 10, count(*), sum(v_int4) FROM agg_data WHERE id % 3 = 0 GROUP BY 1');
SELECT k_text, count(*), sum(v_int4) FROM agg_data GROUP BY k_text ORDER BY k_text LIMIT 5;
-- the leader only aggregates; workers do all the packing
SET parallel_leader_participation = off;
SELECT gpuagg_check('SELECT k_text, k_int2, count(*), sum(v_int8) FROM agg_data GROUP BY k_text, k_int2');
RESET parallel_leader_participation;
-- no worker available: the leader packs alone
SET max_parallel_workers = 0;
SELECT gpuagg_check('SELECT k_text, count(*), sum(v_int4) FROM agg_data GROUP BY k_text');
RESET max_parallel_workers;
-- EXPLAIN ANALYZE counts how the workers' batches reached the leader
CREATE FUNCTION par_exchange(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    plan json;
    pack json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || query
        INTO plan;
    pack := plan->0->'Plan'->'Plans'->0->'Plans'->0;
    RETURN format('%s: launched %s, batches from workers %s, slots %s',
                  pack->>'Custom Plan Provider',
                  plan->0->'Plan'->'Plans'->0->>'Workers Launched',
                  CASE WHEN (pack->>'Batches in Shared Memory')::int +
                            (pack->>'Batches through Queue')::int > 0
                       THEN 'some' ELSE 'none' END,
                  CASE WHEN (pack->>'Exchange Slots')::int > 0 THEN 'some' ELSE 'none' END);
END
$$;
SET gpuagg.explain_device_details = on;
SET parallel_leader_participation = off;	-- so that the workers pack it all
SELECT par_exchange('SELECT k_text, count(*) FROM agg_data GROUP BY k_text');
RESET parallel_leader_participation;
SET gpuagg.explain_device_details = off;
DROP FUNCTION par_exchange(text);
-- messages whose new text keys do not fit a shared slot go through the queue
CREATE TABLE par_long_keys AS
SELECT repeat(md5(i::text), 32) AS k, i % 7 AS v FROM generate_series(1, 3000) i;
SELECT gpuagg_check('SELECT k, count(*), sum(v) FROM par_long_keys GROUP BY k');
SELECT gpuagg_check('SELECT v, count(DISTINCT k) FROM par_long_keys GROUP BY v');
DROP TABLE par_long_keys;
RESET gpuagg.batch_rows;

-- rescans: a correlated subquery runs the parallel plan once per outer row
SELECT gpuagg_check('SELECT d, (SELECT sum(v_int4) FROM agg_data a WHERE a.k_int4 = d) FROM generate_series(1, 3) d');

-- a device failure in the middle: workers run again, the CPU finishes
SET gpuagg.batch_rows = 1000;
SET gpuagg.debug_fail_at_batch = 3;
SELECT k_int2, count(*), sum(v_int4) FROM agg_data GROUP BY k_int2 ORDER BY k_int2;
RESET gpuagg.debug_fail_at_batch;
RESET gpuagg.batch_rows;

-- the marker cannot be called
SELECT gpuagg_batch();
