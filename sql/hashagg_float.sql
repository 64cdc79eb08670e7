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

-- avg keeps float8_accum()'s sum of squared deviations, whose updates
-- square N (x - mean): PostgreSQL raises the overflow error once that
-- passes sqrt(DBL_MAX), about 1.34e154; gpuagg raises it from the count and
-- the range (finalize/moments.c), in either order of the rows
SELECT gpuagg_outcome('SELECT g, avg(x) FROM (VALUES (1, 1e200::float8), (1, -1e200::float8)) s(g, x) GROUP BY g');
SELECT gpuagg_outcome('SELECT g, avg(x) FROM (VALUES (1, -1e200::float8), (1, 1e200::float8)) s(g, x) GROUP BY g');
SELECT gpuagg_outcome('SELECT g, avg(x) FROM (VALUES (1, 0::float8), (1, 1.35e154::float8)) s(g, x) GROUP BY g');
SELECT gpuagg_outcome('SELECT g, avg(x) FROM (VALUES (1, 1.35e154::float8), (1, 0::float8)) s(g, x) GROUP BY g');
SELECT gpuagg_outcome('SELECT g, avg(x) FROM (SELECT 1 AS g, CASE WHEN i % 2 = 0 THEN 1e152 ELSE -1e152 END::float8 AS x FROM generate_series(1, 1000) i) s GROUP BY g');
-- near the limit without overflowing: a spread just below it, a sum just
-- below DBL_MAX, many rows of a small spread
SELECT g, avg(x) FROM (VALUES (1, 0::float8), (1, 1.3e154::float8)) s(g, x) GROUP BY g;
SELECT gpuagg_outcome('SELECT g, avg(x) FROM (VALUES (1, 0::float8), (1, 1.3e154::float8)) s(g, x) GROUP BY g');
SELECT gpuagg_outcome('SELECT g, avg(x) FROM (VALUES (1, 8e307::float8), (1, 8e307::float8)) s(g, x) GROUP BY g');
SELECT gpuagg_outcome('SELECT g, avg(x) FROM (SELECT 1 AS g, CASE WHEN i % 2 = 0 THEN 1e150 ELSE -1e150 END::float8 AS x FROM generate_series(1, 1000) i) s GROUP BY g');
-- an infinity or a NaN raises nothing when it comes first (PostgreSQL's
-- outcome depends on the order: it raises when the infinity comes last)
SELECT gpuagg_outcome('SELECT g, avg(x) FROM (VALUES (1, ''Infinity''::float8), (1, 1e200), (1, -1e200)) s(g, x) GROUP BY g');
SELECT gpuagg_outcome('SELECT g, avg(x) FROM (VALUES (1, ''NaN''::float8), (1, 1e200), (1, -1e200)) s(g, x) GROUP BY g');
SELECT g, avg(x) FROM (VALUES (1, 1e200::float8), (1, -1e200), (1, 'Infinity')) s(g, x) GROUP BY g;
-- avg(DISTINCT x): PostgreSQL feeds the values in ascending order, so
-- -Infinity (first) spares the group and +Infinity (last) does not
SELECT gpuagg_outcome('SELECT g, avg(DISTINCT x) FROM (VALUES (1, 1e200::float8), (1, -1e200), (1, 1e200)) s(g, x) GROUP BY g');
SELECT gpuagg_outcome('SELECT g, avg(DISTINCT x) FROM (VALUES (1, ''Infinity''::float8), (1, 1e200), (1, -1e200)) s(g, x) GROUP BY g');
SELECT gpuagg_outcome('SELECT g, avg(DISTINCT x) FROM (VALUES (1, ''-Infinity''::float8), (1, 1e200), (1, -1e200)) s(g, x) GROUP BY g');
-- in that order the last value's N (x - mean) is the largest: a far value
-- below the others raises nothing, one above them does
SELECT gpuagg_outcome('SELECT g, avg(DISTINCT x) FROM (VALUES (1, -1.2e154::float8), (1, 0), (1, 1), (1, 2)) s(g, x) GROUP BY g');
SELECT gpuagg_outcome('SELECT g, avg(DISTINCT x) FROM (VALUES (1, 1.2e154::float8), (1, 0), (1, 1), (1, 2)) s(g, x) GROUP BY g');

-- a group of zeros shows its first row's zero, as a native hash aggregate
-- does; -0 inputs sum to -0 and average to 0
SELECT k, count(*), sum(v), avg(v), sum(v::float4)
FROM (VALUES (1, '-0'::float8, '-0'::float8), (2, 0, '-0'), (3, '-0', '-0')) AS t(i, k, v) GROUP BY k;
SELECT k, count(*) FROM (VALUES (1, 0::float8), (2, '-0'), (3, 5)) AS t(i, k) GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k, count(*), sum(v), avg(v) FROM (VALUES (1, ''-0''::float8, ''-0''::float8), (2, 0, ''-0''), (3, ''-0'', 0)) AS t(i, k, v) GROUP BY k');
SELECT gpuagg_check('SELECT k_float8, k_int4, count(*) FROM agg_data GROUP BY k_float8, k_int4');
