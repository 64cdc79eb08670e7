--
-- hashagg_float: float8 keys (-0, NaN), float4/float8 aggregates, overflow
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

EXPLAIN (COSTS OFF)
SELECT k_float8, sum(v_float8) FROM agg_data GROUP BY k_float8;

-- -0 groups with 0 and every NaN is one group, as in PostgreSQL
SELECT k_float8, count(*), sum(v_float8), avg(v_float4), min(v_float8), max(v_float8)
FROM agg_data GROUP BY k_float8 ORDER BY k_float8;

SELECT pg_typeof(sum(v_float4)), pg_typeof(avg(v_float4)), pg_typeof(sum(v_float8)),
       pg_typeof(avg(v_float8)), pg_typeof(min(v_float4)), pg_typeof(max(v_float8))
FROM agg_data;

SELECT gpuagg_check('SELECT k_float8, count(*), sum(v_float4), sum(v_float8), avg(v_float4), avg(v_float8), min(v_float4), max(v_float4) FROM agg_data GROUP BY k_float8');
SELECT gpuagg_check('SELECT k_int4, sum(v_float8), avg(v_float8), min(v_float8), max(v_float8) FROM agg_data GROUP BY k_int4');

-- NaN is larger than every number for min/max; infinities are kept
SELECT k, min(v), max(v), sum(v), count(v)
FROM (VALUES (1, 'NaN'::float8), (1, 1e300), (1, '-Infinity'),
             (2, 'Infinity'), (2, 5), (3, 'NaN'), (3, 'NaN'),
             (4, 'Infinity'), (4, '-Infinity')) AS t(k, v)
GROUP BY k ORDER BY k;
SELECT k, min(v), max(v), sum(v), avg(v)
FROM (VALUES (1, 'NaN'::float4), (1, 1.5), (2, '-Infinity'::float4), (2, 2)) AS t(k, v)
GROUP BY k ORDER BY k;

-- a sum that overflows raises PostgreSQL's error, on every plan
SELECT k, sum(v) FROM (VALUES (1, 1e308::float8), (1, 1e308)) AS t(k, v) GROUP BY k;
SELECT k, avg(v) FROM (VALUES (1, 1e308::float8), (1, 1e308)) AS t(k, v) GROUP BY k;
SELECT k, sum(v) FROM (VALUES (1, 3e38::float4), (1, 3e38::float4)) AS t(k, v) GROUP BY k;
SET gpuagg.enabled = off;
SELECT k, sum(v) FROM (VALUES (1, 1e308::float8), (1, 1e308)) AS t(k, v) GROUP BY k;
SELECT k, sum(v) FROM (VALUES (1, 3e38::float4), (1, 3e38::float4)) AS t(k, v) GROUP BY k;
RESET gpuagg.enabled;

-- a group of zeros shows its first row's zero, as a native hash aggregate
-- does; -0 inputs sum to -0 and average to 0
SELECT k, count(*), sum(v), avg(v), sum(v::float4)
FROM (VALUES (1, '-0'::float8, '-0'::float8), (2, 0, '-0'), (3, '-0', '-0')) AS t(i, k, v) GROUP BY k;
SELECT k, count(*) FROM (VALUES (1, 0::float8), (2, '-0'), (3, 5)) AS t(i, k) GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k, count(*), sum(v), avg(v) FROM (VALUES (1, ''-0''::float8, ''-0''::float8), (2, 0, ''-0''), (3, ''-0'', 0)) AS t(i, k, v) GROUP BY k');
SELECT gpuagg_check('SELECT k_float8, k_int4, count(*) FROM agg_data GROUP BY k_float8, k_int4');
