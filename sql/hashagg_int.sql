--
-- hashagg_int: integer group keys and integer aggregates
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

EXPLAIN (COSTS OFF)
SELECT k_int4, count(*), sum(v_int4) FROM agg_data GROUP BY k_int4;

-- the values themselves, on a few groups (checked against native below)
SELECT k_int2, count(*), count(v_int4), sum(v_int2), sum(v_int4), sum(v_int8),
       min(v_int4), max(v_int4), min(v_int8), max(v_int8)
FROM agg_data GROUP BY k_int2 ORDER BY k_int2;

-- result types are PostgreSQL's: sum(int2/int4) bigint, sum(int8) numeric,
-- avg numeric, min/max the input type
SELECT pg_typeof(sum(v_int2)), pg_typeof(sum(v_int4)), pg_typeof(sum(v_int8)),
       pg_typeof(avg(v_int2)), pg_typeof(avg(v_int4)), pg_typeof(avg(v_int8)),
       pg_typeof(min(v_int2)), pg_typeof(max(v_int8)), pg_typeof(count(*))
FROM agg_data GROUP BY k_int2 LIMIT 1;

-- avg keeps numeric's display scale
SELECT k_int2, avg(v_int2), avg(v_int4), avg(v_int8)
FROM agg_data GROUP BY k_int2 ORDER BY k_int2;

-- every integer key type, against the native plan
SELECT gpuagg_check('SELECT k_int2, count(*), sum(v_int4), avg(v_int4), min(v_int2), max(v_int8) FROM agg_data GROUP BY k_int2');
SELECT gpuagg_check('SELECT k_int4, count(*), sum(v_int8), avg(v_int8), min(v_int4), max(v_int4) FROM agg_data GROUP BY k_int4');
SELECT gpuagg_check('SELECT k_int8, count(v_int4), sum(v_int2), avg(v_int2) FROM agg_data GROUP BY k_int8');
SELECT gpuagg_check('SELECT id, sum(v_int4), count(*) FROM agg_data GROUP BY id');

-- several keys
SELECT gpuagg_check('SELECT k_int2, k_int4, k_int8, count(*), sum(v_int4), max(v_int2) FROM agg_data GROUP BY k_int2, k_int4, k_int8');
SELECT gpuagg_check('SELECT k_int4 % 7, k_int2, sum(v_int8) FROM agg_data GROUP BY 1, 2');

-- sum(int8) is exact beyond 2^63 (accumulated in 128 bits)
SELECT k, sum(v), avg(v), sum(v) = 3 * 9223372036854775807::numeric AS exact
FROM (VALUES (1, 9223372036854775807::int8), (1, 9223372036854775807),
             (1, 9223372036854775807), (2, -9223372036854775808),
             (2, -9223372036854775808), (2, 1)) AS t(k, v)
GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k_int2, sum(v_int8), avg(v_int8) FROM agg_data WHERE id % 1000 IN (0, 1, 999) GROUP BY k_int2');

-- var_samp, variance, var_pop of integers: exact sums of squares on the device
SELECT k, var_samp(v), var_pop(v), variance(v)
FROM (VALUES (1, 5), (2, 3), (2, 3), (3, 1), (3, 2), (3, NULL), (4, NULL)) t(k, v)
GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k_int2, var_samp(v_int4), var_pop(v_int4), variance(v_int2), var_samp(v_int8), var_pop(v_int8) FROM agg_data GROUP BY k_int2');
SELECT var_samp(v), var_pop(v) FROM (VALUES (9223372036854775807::int8), (-9223372036854775808), (1)) t(v);
SELECT gpuagg_check('SELECT k_int4 % 3, var_samp(v_int2) FILTER (WHERE v_int2 > 0), var_pop(v_int8) FROM agg_data GROUP BY 1');
