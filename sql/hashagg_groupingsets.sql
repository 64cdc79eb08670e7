--
-- hashagg_groupingsets: GROUPING SETS, ROLLUP and CUBE in one pass, one
-- device aggregation per set; keys a set leaves out are NULL, GROUPING()
-- tells them from NULL keys
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

-- EXPLAIN's "Grouping Sets" of a query in the JSON format, and EXPLAIN
-- ANALYZE without the (actual ...) parts, which differ between versions
CREATE FUNCTION pg_temp.gs_json_sets(query text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || query INTO plan;
    RETURN jsonb_build_object('Custom Plan Provider', plan -> 0 -> 'Plan' -> 'Custom Plan Provider',
                              'Grouping Sets', plan -> 0 -> 'Plan' -> 'Grouping Sets');
END
$$;
CREATE FUNCTION pg_temp.gs_analyze(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        RETURN NEXT regexp_replace(line, ' \(actual .*\)$', '');
    END LOOP;
END
$$;

-- the sets, largest first, as PostgreSQL's MixedAggregate shows them
EXPLAIN (COSTS OFF) SELECT k_int2, k_bool, count(*) FROM agg_data GROUP BY ROLLUP (k_int2, k_bool);
EXPLAIN (COSTS OFF) SELECT k_int2, k_bool, k_text, count(*) FROM agg_data GROUP BY CUBE (k_int2, k_bool, k_text);
EXPLAIN (COSTS OFF) SELECT k_int2, k_text, count(*) FROM agg_data GROUP BY GROUPING SETS ((k_int2), (k_text), (), ());
EXPLAIN (COSTS OFF, VERBOSE)
SELECT k_int4 % 3, k_text, sum(v_int4), GROUPING(k_int4 % 3, k_text) FROM agg_data
GROUP BY ROLLUP (k_int4 % 3, k_text) HAVING GROUPING(k_text) = 1 OR count(*) > 150;
SELECT jsonb_pretty(pg_temp.gs_json_sets('SELECT k_int2, k_bool, count(*) FROM agg_data GROUP BY GROUPING SETS ((k_int2, k_bool), (k_bool), ())'));

-- ROLLUP of one, two and three keys; CUBE
SELECT k_int2, count(*), sum(v_int4), GROUPING(k_int2) FROM agg_data GROUP BY ROLLUP (k_int2) ORDER BY 4, 1;
SELECT gpuagg_check('SELECT k_int2, count(*), sum(v_int4) FROM agg_data GROUP BY ROLLUP (k_int2)');
SELECT gpuagg_check('SELECT k_int2, k_bool, count(*), sum(v_int4), avg(v_int2) FROM agg_data GROUP BY ROLLUP (k_int2, k_bool)');
SELECT gpuagg_check('SELECT k_int2, k_bool, k_date, count(*), min(v_int4), max(v_ts) FROM agg_data GROUP BY ROLLUP (k_int2, k_bool, k_date)');
SELECT gpuagg_check('SELECT k_int2, k_bool, k_text, count(*), sum(v_int8) FROM agg_data GROUP BY CUBE (k_int2, k_bool, k_text)');
SELECT gpuagg_check('SELECT k_int2, k_bool, k_varchar, k_date, count(v_int4) FROM agg_data GROUP BY CUBE (k_int2, k_bool, k_varchar, k_date)');

-- explicit sets with (), duplicate sets, GROUP BY DISTINCT, sets that are all ()
SELECT gpuagg_check('SELECT k_int2, k_text, count(*) FROM agg_data GROUP BY GROUPING SETS ((k_int2), (k_text), ())');
SELECT gpuagg_check('SELECT k_int2, count(*), sum(v_int4) FROM agg_data GROUP BY GROUPING SETS ((k_int2), (k_int2), (), ())');
SELECT k_int2, count(*), GROUPING(k_int2) FROM agg_data GROUP BY GROUPING SETS ((k_int2), (k_int2), (), ()) ORDER BY 3, 1, 2;
SELECT gpuagg_check('SELECT k_int2, k_bool, count(*) FROM agg_data GROUP BY ROLLUP (k_int2, k_bool), ROLLUP (k_int2)');
SELECT gpuagg_check('SELECT k_int2, k_bool, count(*) FROM agg_data GROUP BY DISTINCT ROLLUP (k_int2, k_bool), ROLLUP (k_int2)');
SELECT gpuagg_check('SELECT count(*), sum(v_int4) FROM agg_data GROUP BY GROUPING SETS ((), ())');
SELECT gpuagg_check('SELECT count(*), sum(v_int4) FROM agg_data GROUP BY ()');
-- plain columns with ROLLUP and CUBE: cross products
SELECT gpuagg_check('SELECT k_int2, k_bool, k_date, count(*) FROM agg_data GROUP BY k_int2, ROLLUP (k_bool, k_date)');
SELECT gpuagg_check('SELECT k_int2, k_bool, k_text, count(*), GROUPING(k_int2, k_bool, k_text) FROM agg_data GROUP BY k_int2, CUBE (k_bool), GROUPING SETS ((k_text), ())');
SELECT gpuagg_check('SELECT k_int2, k_bool, count(*) FROM agg_data GROUP BY k_int2, ROLLUP (k_int2, k_bool)');
-- sets over expressions
SELECT gpuagg_check('SELECT k_int4 % 3, upper(k_text), k_int4 / 50 > 0, count(*), sum(v_int2) FROM agg_data GROUP BY GROUPING SETS ((k_int4 % 3, upper(k_text)), (k_int4 / 50 > 0), ())');
SELECT gpuagg_check('SELECT k_int4 % 3 + 1, count(*) FROM agg_data GROUP BY ROLLUP (k_int4 % 3)');

-- GROUPING(): the bitmask of the keys each set leaves out
SELECT gpuagg_check('SELECT k_int2, k_bool, GROUPING(k_int2), GROUPING(k_bool), GROUPING(k_int2, k_bool), GROUPING(k_bool, k_int2, k_bool), count(*) FROM agg_data GROUP BY CUBE (k_int2, k_bool)');
SELECT k_bool, GROUPING(k_bool) AS g, count(*) FROM agg_data GROUP BY ROLLUP (k_bool) ORDER BY g, k_bool;
SELECT gpuagg_check('SELECT CASE WHEN GROUPING(k_text) = 1 THEN ''all'' ELSE coalesce(k_text, ''none'') END, count(*) FROM agg_data GROUP BY ROLLUP (k_text)');
-- in a plain GROUP BY it is 0
SELECT gpuagg_check('SELECT k_int2, GROUPING(k_int2), count(*) FROM agg_data GROUP BY k_int2');
-- HAVING applies to every row, also with GROUPING() and NULL tests on keys
SELECT gpuagg_check('SELECT k_int2, k_bool, count(*) FROM agg_data GROUP BY CUBE (k_int2, k_bool) HAVING GROUPING(k_bool) = 1');
SELECT gpuagg_check('SELECT k_int2, k_bool, count(*) FROM agg_data GROUP BY ROLLUP (k_int2, k_bool) HAVING count(*) > 2000 OR k_bool IS NULL');
SELECT k_int2, sum(v_int4) FROM agg_data GROUP BY ROLLUP (k_int2) HAVING sum(v_int4) > 8000 ORDER BY 1;
-- ORDER BY and LIMIT above, window functions above
SELECT k_int2, k_bool, count(*) FROM agg_data GROUP BY ROLLUP (k_int2, k_bool) ORDER BY k_int2 NULLS FIRST, k_bool NULLS FIRST, 3 LIMIT 6;
SELECT gpuagg_check('SELECT k_int2, GROUPING(k_int2), count(*), rank() OVER (PARTITION BY GROUPING(k_int2) ORDER BY count(*), k_int2) FROM agg_data GROUP BY ROLLUP (k_int2)');
-- GROUPING() of the outer query in a subquery
SELECT gpuagg_check('SELECT k_int2, (SELECT GROUPING(k_int2) * 10), count(*) FROM agg_data GROUP BY ROLLUP (k_int2)');

-- NULL keys in the data versus keys left out: both show NULL, GROUPING() differs
CREATE TEMP TABLE gs_nulls (a int, b text, v int);
INSERT INTO gs_nulls VALUES (1, 'x', 1), (1, NULL, 2), (NULL, 'x', 4), (NULL, NULL, 8), (NULL, NULL, 16);
SELECT a, b, GROUPING(a, b) AS g, count(*), sum(v) FROM gs_nulls GROUP BY CUBE (a, b) ORDER BY g, a, b, sum(v);
SELECT gpuagg_check('SELECT a, b, GROUPING(a, b), count(*), sum(v) FROM gs_nulls GROUP BY CUBE (a, b)');
SELECT gpuagg_check('SELECT k_int2, k_bool, k_text, count(*) FROM agg_data GROUP BY GROUPING SETS ((k_int2, k_bool), (k_text))');

-- empty input: only the () sets give a row
SELECT k_int2, count(*), sum(v_int4), GROUPING(k_int2) FROM agg_empty GROUP BY ROLLUP (k_int2);
SELECT count(*), max(v_int4) FROM agg_empty GROUP BY GROUPING SETS ((), (k_int2), ());
SELECT k_int2, count(*) FROM agg_empty GROUP BY CUBE (k_int2, k_bool) HAVING count(*) > 0;
SELECT gpuagg_check('SELECT k_int2, k_bool, count(*), sum(v_int8), avg(v_float8) FROM agg_empty GROUP BY CUBE (k_int2, k_bool)');

-- every aggregate kind
SELECT gpuagg_check('SELECT k_int2, k_bool, count(*), count(v_int4), sum(v_int2), sum(v_int4), sum(v_int8), sum(v_float4), sum(v_float8), avg(v_int4), avg(v_int8), avg(v_float8) FROM agg_data GROUP BY ROLLUP (k_int2, k_bool)');
SELECT gpuagg_check('SELECT k_int2, k_bool, min(v_int4), max(v_int8), min(v_float8), max(v_date), min(v_ts), bool_and(v_int4 > 0), bool_or(v_int4 > 400), every(v_int2 > -100) FROM agg_data GROUP BY CUBE (k_int2, k_bool)');
SELECT gpuagg_check('SELECT k_int2, variance(v_int4), var_pop(v_int2), stddev(v_int8), stddev_pop(v_int4), var_samp(k_int4::numeric(10, 2)) FROM agg_data GROUP BY ROLLUP (k_int2)');
SELECT gpuagg_check('SELECT k_int2, k_bool, count(*) FILTER (WHERE v_int4 > 0), sum(v_int4) FILTER (WHERE k_text IS NULL), avg(v_int2) FILTER (WHERE v_int2 < 0) FROM agg_data GROUP BY GROUPING SETS ((k_int2), (k_bool), ())');
-- a grouping with no aggregate at all
SELECT gpuagg_check('SELECT k_int2, k_bool FROM agg_data GROUP BY ROLLUP (k_int2, k_bool)');

-- text, varchar, numeric, date and timestamp keys
CREATE TEMP TABLE gs_money (region text, code varchar(4), price numeric(10, 2), day date);
INSERT INTO gs_money
SELECT 'r' || (i % 4), 'c' || (i % 3), ((i % 7) * 1.25)::numeric(10, 2), DATE '2024-03-01' + (i % 5)
FROM generate_series(1, 500) i;
SELECT region, code, sum(price), avg(price), count(*) FROM gs_money GROUP BY ROLLUP (region, code) ORDER BY 1, 2;
SELECT gpuagg_check('SELECT region, code, price, sum(price), min(price), max(price), count(*) FROM gs_money GROUP BY CUBE (region, code, price)');
SELECT gpuagg_check('SELECT day, region, count(*), sum(price) FROM gs_money GROUP BY GROUPING SETS ((day), (day, region), ())');

-- a column functionally dependent on a key in every set becomes a key of every set
CREATE TEMP TABLE gs_pk (id int PRIMARY KEY, name text, grp int);
INSERT INTO gs_pk SELECT i, 'n' || i, i % 3 FROM generate_series(1, 12) i;
SELECT gpuagg_check('SELECT id, name, grp, count(*) FROM gs_pk GROUP BY id, ROLLUP (grp)');

-- rescans (a correlated subquery), generic plans, a scrollable cursor
SELECT gpuagg_check('SELECT x, (SELECT count(*) FROM (SELECT k_int2, count(*) FROM agg_data WHERE k_int4 < x GROUP BY ROLLUP (k_int2)) s) FROM generate_series(10, 30, 10) x');
PREPARE gs_stmt(int) AS
SELECT k_int2, k_bool, count(*), GROUPING(k_int2, k_bool) FROM agg_data WHERE k_int4 < $1
GROUP BY ROLLUP (k_int2, k_bool) ORDER BY 4, 1, 2 LIMIT 4;
SET plan_cache_mode = force_generic_plan;
EXECUTE gs_stmt(50);
EXECUTE gs_stmt(5);
RESET plan_cache_mode;
DEALLOCATE gs_stmt;
-- backward across the sets' groups (their order is the device's: compare)
SELECT gpuagg_cursor_round_trip('SELECT k_int2, k_bool, count(*) FROM agg_data GROUP BY ROLLUP (k_int2, k_bool)', 19);

-- parallel workers feeding the node, small batches
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 300;
EXPLAIN (COSTS OFF) SELECT k_int2, k_text, count(*) FROM agg_data GROUP BY ROLLUP (k_int2, k_text);
SELECT gpuagg_check('SELECT k_int2, k_text, count(*), sum(v_int4), GROUPING(k_int2, k_text) FROM agg_data GROUP BY ROLLUP (k_int2, k_text)');
SET max_parallel_workers_per_gather = 0;
SELECT gpuagg_check('SELECT k_int2, k_bool, count(*), sum(v_int8) FROM agg_data GROUP BY CUBE (k_int2, k_bool)');
SELECT pg_temp.gs_analyze('SELECT k_int2, count(*) FROM agg_data GROUP BY ROLLUP (k_int2)');
-- a device failure: every set's aggregation starts again on the CPU
SET gpuagg.debug_fail_at_batch = 3;
SELECT k_bool, count(*), sum(v_int4) FROM agg_data GROUP BY ROLLUP (k_bool) ORDER BY 1, 2;
RESET gpuagg.debug_fail_at_batch;
RESET gpuagg.batch_rows;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- what keeps the native plan: more than 16 sets, DISTINCT aggregates,
-- one expression under two grouping columns
SELECT gpuagg_used('SELECT count(*) FROM agg_data GROUP BY CUBE (k_int2, k_bool, k_text, k_date, k_varchar)') AS cube_of_five,
       gpuagg_used('SELECT k_int2, count(*) FROM agg_data GROUP BY CUBE (k_int2, k_bool, k_text, k_date)') AS cube_of_four,
       gpuagg_used('SELECT k_int2, count(DISTINCT v_int4) FROM agg_data GROUP BY ROLLUP (k_int2)') AS distinct_agg,
       gpuagg_used('SELECT k_int2 AS x, k_int2 AS y, count(*) FROM agg_data GROUP BY ROLLUP (1, 2)') AS same_expression;
-- a constant key: before 18 only where every set has it (18 runs both)
SELECT gpuagg_check('SELECT 1 AS one, k_int2, count(*) FROM agg_data GROUP BY 1, ROLLUP (k_int2)');
SELECT 1 AS one, k_int2, count(*) FROM agg_data GROUP BY ROLLUP (1, k_int2) ORDER BY 1, 2, 3;
