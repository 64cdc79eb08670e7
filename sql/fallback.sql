--
-- fallback: what GpuHashAgg cannot do keeps the native plan, silently; a
-- device failure finishes the query on the CPU or fails it clearly
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

-- each of these is planned natively even when forced
SELECT gpuagg_used('SELECT k_int2, count(DISTINCT (v_int4, v_int2)) FROM agg_data GROUP BY k_int2') AS distinct_row,
       gpuagg_used('SELECT k_int2, string_agg(k_text, '','' ORDER BY id) FROM agg_data GROUP BY k_int2') AS ordered_agg,
       gpuagg_used('SELECT k_int2, percentile_cont(0.5) WITHIN GROUP (ORDER BY v_float8) FROM agg_data GROUP BY k_int2') AS ordered_set,
       gpuagg_used('SELECT k_int2, count(DISTINCT v_int4) FROM agg_data GROUP BY ROLLUP (k_int2)') AS grouping_sets_distinct,
       gpuagg_used('SELECT k_int2, stddev(DISTINCT v_float8) FROM agg_data GROUP BY k_int2') AS stddev,
       gpuagg_used('SELECT k_int2, sum(v_int4::numeric / 3) FROM agg_data GROUP BY k_int2') AS numeric_quotient,
       gpuagg_used('SELECT ARRAY[k_int4], count(*) FROM agg_data GROUP BY 1') AS array_key,
       gpuagg_used('SELECT to_jsonb(k_int4), count(*) FROM agg_data GROUP BY 1') AS jsonb_key;
SELECT gpuagg_used('SELECT (random() * 3)::int, count(*) FROM agg_data GROUP BY 1') AS volatile_key,
       gpuagg_used('SELECT k_int2, sum((random() * 3)::int) FROM agg_data GROUP BY 1') AS volatile_arg,
       gpuagg_used('SELECT k_int2, generate_series(1, 2), count(*) FROM agg_data GROUP BY k_int2') AS srf,
       gpuagg_used('SELECT k_int2, json_agg(id) FROM agg_data GROUP BY k_int2') AS json_agg,
       gpuagg_used('SELECT k_int2, sum(v_int4) FROM agg_data GROUP BY k_int2') AS supported;
-- the native plan still answers
SELECT k_int2, count(DISTINCT v_int4) FROM agg_data GROUP BY k_int2 ORDER BY 1;

-- why not: at DEBUG1 the reason names the aggregate as PostgreSQL names a
-- function (with the types it is called with), the key or the type, and
-- the change that qualifies where there is one
SET client_min_messages = debug1;
SELECT gpuagg_used('SELECT k_int2, string_agg(k_text, '','') FROM agg_data GROUP BY k_int2') AS string_agg;
SELECT gpuagg_used('SELECT k_int2, array_agg(id) FROM agg_data GROUP BY k_int2') AS array_agg;
SELECT gpuagg_used('SELECT k_int2, sum(v_int4::numeric / 3) FROM agg_data GROUP BY k_int2') AS numeric_quotient;
SELECT gpuagg_used('SELECT k_int2, sum((v_int4::numeric / 3)::numeric(20,6)) FROM agg_data GROUP BY k_int2') AS numeric_quotient_cast;
SELECT gpuagg_used('SELECT k_int2, max(v_int4::numeric(10,0) * v_int4 * v_int4) FROM agg_data GROUP BY k_int2') AS numeric_digits;
SELECT gpuagg_used('SELECT k_int2, sum(v_int4::money) FROM agg_data GROUP BY k_int2') AS money_sum;
SELECT gpuagg_used('SELECT k_int2, stddev(DISTINCT v_float8) FROM agg_data GROUP BY k_int2') AS stddev_distinct;
SELECT gpuagg_used('SELECT k_int2, percentile_cont(0.5) WITHIN GROUP (ORDER BY v_float8) FROM agg_data GROUP BY k_int2') AS ordered_set;
SELECT gpuagg_used('SELECT to_jsonb(k_int4), count(*) FROM agg_data GROUP BY 1') AS jsonb_key;
SELECT gpuagg_used('SELECT (random() * 3)::int, count(*) FROM agg_data GROUP BY 1') AS volatile_key;
SELECT gpuagg_used('SELECT k_int2, generate_series(1, 2), count(*) FROM agg_data GROUP BY k_int2') AS srf;
RESET client_min_messages;

-- a column functionally dependent on a primary key becomes a key: one of a
-- type that cannot be a key keeps the native plan
CREATE TEMP TABLE pk (id int PRIMARY KEY, name text, doc jsonb);
INSERT INTO pk SELECT i, 'n' || i, jsonb_build_object('i', i) FROM generate_series(1, 10) i;
SELECT gpuagg_used('SELECT id, name, count(*) FROM pk GROUP BY id') AS text_dependent,
       gpuagg_used('SELECT id, doc, count(*) FROM pk GROUP BY id') AS jsonb_dependent;

-- gpuagg.enabled and gpuagg.enable_hashagg switch it off
SET gpuagg.enabled = off;
SELECT gpuagg_used('SELECT k_int2, sum(v_int4) FROM agg_data GROUP BY k_int2');
RESET gpuagg.enabled;
SET gpuagg.enable_hashagg = off;
SELECT gpuagg_used('SELECT k_int2, sum(v_int4) FROM agg_data GROUP BY k_int2');
RESET gpuagg.enable_hashagg;

-- a device failure in the middle of the input: the query is finished on the
-- CPU with a NOTICE and the same answer
SET gpuagg.batch_rows = 1000;
SET gpuagg.debug_fail_at_batch = 3;
SELECT k_int2, count(*), sum(v_int4), sum(v_int8) FROM agg_data GROUP BY k_int2 ORDER BY k_int2;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT k_int2, count(*) FROM agg_data GROUP BY k_int2;
-- with something volatile in the query it cannot be re-run: a clear error
SELECT k_int2, count(*), sum(v_int4) FROM agg_data WHERE random() >= 0 GROUP BY k_int2;
RESET gpuagg.debug_fail_at_batch;
RESET gpuagg.batch_rows;
SELECT k_int2, count(*) FROM agg_data WHERE random() >= 0 GROUP BY k_int2 ORDER BY k_int2;
