--
-- hashagg_distinct: count/sum/avg(DISTINCT x), de-duplicated on the device
-- by a second aggregation over the keys and x
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

EXPLAIN (COSTS OFF) SELECT k_int2, count(DISTINCT v_int4) FROM agg_data GROUP BY k_int2;
SELECT k_int2, count(DISTINCT v_int4), sum(DISTINCT v_int4), avg(DISTINCT v_int4), count(v_int4)
FROM agg_data GROUP BY k_int2 ORDER BY k_int2;
SELECT gpuagg_check('SELECT k_int2, count(DISTINCT v_int4), sum(DISTINCT v_int4), avg(DISTINCT v_int2), count(*), sum(v_int4) FROM agg_data GROUP BY k_int2');
-- every key type as the DISTINCT argument, with and without other keys
SELECT gpuagg_check('SELECT count(DISTINCT k_text), count(DISTINCT k_varchar), count(DISTINCT k_bool), count(DISTINCT k_date), count(DISTINCT k_ts), count(DISTINCT k_float8), count(DISTINCT k_int8) FROM agg_data');
SELECT gpuagg_check('SELECT k_text, count(DISTINCT k_int4), sum(DISTINCT k_int8), avg(DISTINCT k_int8), count(DISTINCT v_date) FROM agg_data GROUP BY k_text');
-- floats: NaN and -0 are one value each; sums exact here (multiples of 1/8)
SELECT gpuagg_check('SELECT k_int2, count(DISTINCT k_float8), sum(DISTINCT v_float8), avg(DISTINCT v_float4), sum(DISTINCT v_float4) FROM agg_data GROUP BY k_int2');
SELECT count(DISTINCT v) FROM (VALUES ('NaN'::float8), ('NaN'), (0), ('-0'), (NULL)) t(v);
-- FILTER, HAVING, several DISTINCT arguments, empty input, all-NULL argument
SELECT gpuagg_check('SELECT k_int2, count(DISTINCT v_int4) FILTER (WHERE v_int4 > 0), count(DISTINCT k_text), sum(DISTINCT v_int2) FROM agg_data GROUP BY k_int2 HAVING count(DISTINCT k_text) > 30');
SELECT count(DISTINCT v_int4), sum(DISTINCT v_int4), avg(DISTINCT v_int4) FROM agg_empty;
SELECT k_int4, count(DISTINCT v_int4) FROM agg_empty GROUP BY k_int4;
SELECT gpuagg_check('SELECT k_int2, count(DISTINCT NULLIF(v_int4, v_int4)), sum(DISTINCT NULLIF(v_int4, v_int4)) FROM agg_data GROUP BY k_int2');
-- min and max do not care about DISTINCT
SELECT gpuagg_check('SELECT k_int2, min(DISTINCT v_int4), max(DISTINCT v_date) FROM agg_data GROUP BY k_int2');
-- sum(DISTINCT int8) is exact beyond 2^63
SELECT sum(DISTINCT v), avg(DISTINCT v) FROM (VALUES (9223372036854775807::int8), (9223372036854775807), (9223372036854775806)) t(v);
-- through parallel workers and in small batches
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 300;
SELECT gpuagg_check('SELECT k_int2, k_bool, count(DISTINCT v_int4), sum(DISTINCT v_int2), count(DISTINCT k_text), count(*) FROM agg_data GROUP BY k_int2, k_bool');
RESET gpuagg.batch_rows;
RESET max_parallel_workers_per_gather;
-- a device failure: every aggregation starts again on the CPU
SET gpuagg.batch_rows = 1000;
SET gpuagg.debug_fail_at_batch = 2;
SELECT k_int2, count(DISTINCT v_int4), count(*) FROM agg_data GROUP BY k_int2 ORDER BY k_int2;
RESET gpuagg.debug_fail_at_batch;
RESET gpuagg.batch_rows;
-- DISTINCT over an argument that cannot be a key stays native
SELECT gpuagg_used('SELECT k_int2, count(DISTINCT ARRAY[v_int4]) FROM agg_data GROUP BY k_int2') AS array_distinct,
       gpuagg_used('SELECT k_int2, sum(DISTINCT v_int4::numeric / 7) FROM agg_data GROUP BY k_int2') AS numeric_distinct_sum,
       gpuagg_used('SELECT k_int2, string_agg(DISTINCT k_text, '','') FROM agg_data GROUP BY k_int2') AS string_agg_distinct;
-- DISTINCT with FILTER over a key that has spellings (bpchar, numeric)
CREATE TEMP TABLE spelt (id int, k char(4), n numeric(6, 2));
INSERT INTO spelt VALUES (1, 'a', 1.5), (2, 'b', 1.50), (3, 'a', 2), (4, 'a ', 1.5);
SELECT gpuagg_check('SELECT k, count(DISTINCT k) FILTER (WHERE id > 1), count(DISTINCT n) FILTER (WHERE id < 4) FROM spelt GROUP BY k');
SELECT k, count(DISTINCT k) FILTER (WHERE id > 1), count(DISTINCT n) FROM spelt GROUP BY k ORDER BY k;
