--
-- hashagg_float_stats: variance and stddev of float4 and float8, corr,
-- covar_pop, covar_samp and the regr_* family.  The device sums deviations
-- from a per-group shift (finalize/moments.c) where PostgreSQL runs the
-- Youngs-Cramer updates, so results may differ in the last bits, as
-- PostgreSQL's own parallel plans do: compared with a relative tolerance,
-- and NULL, NaN, Infinity and errors exactly.
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

-- Runs a query returning (k, vals float8[]) forced onto GpuHashAgg and
-- natively; says whether every value matches within a relative tolerance
-- (NULL = NULL, NaN = NaN, infinities equal), and whether the forced plan
-- used GpuHashAgg.
CREATE FUNCTION float_check(query text, tolerance float8 DEFAULT 1e-12) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    on_device boolean := false;
    nvalues int;
    bad text;
BEGIN
    PERFORM set_config('gpuagg.enabled', 'on', true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        on_device := on_device OR line LIKE '%Custom Scan (GpuHashAgg)%';
    END LOOP;
    EXECUTE 'CREATE TEMP TABLE float_check_gpu AS ' || query;
    PERFORM set_config('gpuagg.enabled', 'off', true);
    EXECUTE 'CREATE TEMP TABLE float_check_native AS ' || query;
    WITH g AS (SELECT coalesce(t.k, -1000000) AS k, u.v, u.i
                 FROM float_check_gpu t, unnest(t.vals) WITH ORDINALITY u(v, i)),
         n AS (SELECT coalesce(t.k, -1000000) AS k, u.v, u.i
                 FROM float_check_native t, unnest(t.vals) WITH ORDINALITY u(v, i))
    SELECT count(*),
           string_agg(format('k=%s #%s: gpuagg %s native %s', coalesce(g.k, n.k),
                             coalesce(g.i, n.i), g.v, n.v), '; ')
             FILTER (WHERE g.i IS NULL OR n.i IS NULL OR
                     NOT (g.v IS NOT DISTINCT FROM n.v OR
                          abs(g.v - n.v) <= tolerance * greatest(abs(g.v), abs(n.v))))
      INTO nvalues, bad
      FROM g FULL JOIN n ON g.k = n.k AND g.i = n.i;
    PERFORM set_config('gpuagg.enabled', 'on', true);
    DROP TABLE float_check_gpu;
    DROP TABLE float_check_native;
    IF NOT on_device THEN
        RETURN 'NOT ON GpuHashAgg';
    ELSIF bad IS NULL THEN
        RETURN 'same within ' || tolerance || ', ' || nvalues || ' values';
    END IF;
    RETURN 'DIFFERENT: ' || left(bad, 600);
END
$$;

CREATE TEMP TABLE fs (k int, x float8, y float8, f float4, g float4);
-- k = 0: no non-NULL value; 1: one row; 2: two rows; 3: equal rows;
-- 4: NaN; 5: +Infinity; 6: -Infinity and +Infinity; 7: -0 and 0;
-- 8: x or y NULL on some rows (pairs skip them); 10..19: many rows
INSERT INTO fs VALUES
    (0, NULL, NULL, NULL, NULL),
    (1, 1.5, -2.5, 1.5, -2.5),
    (2, 1, 3, 1, 3), (2, 4, -5, 4, -5),
    (3, 7, 7, 7, 7), (3, 7, 7, 7, 7), (3, 7, 7, 7, 7),
    (4, 1, 2, 1, 2), (4, 'NaN', 3, 'NaN', 3), (4, 5, 'NaN', 5, 'NaN'),
    (5, 1, 2, 1, 2), (5, 'Infinity', 3, 'Infinity', 3), (5, 2, 4, 2, 4),
    (6, '-Infinity', 1, '-Infinity', 1), (6, 'Infinity', 2, 'Infinity', 2),
    (7, '-0', '-0', '-0', '-0'), (7, 0, '-0', 0, '-0'),
    (8, 1, NULL, 1, NULL), (8, NULL, 2, NULL, 2), (8, 3, 4, 3, 4), (8, 5, 9, 5, 9), (8, 6, 1, 6, 1);
INSERT INTO fs
SELECT 10 + i % 10,
       CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919 % 100003) / 7.0 - 5000 END,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 104729 % 99991) / 3.0 + i % 7 END,
       (i % 1000) / 8.0,
       (i * 31 % 777) / 4.0
FROM generate_series(1, 20000) i;
ANALYZE fs;

EXPLAIN (COSTS OFF)
SELECT k, stddev(x), var_pop(f), corr(y, x), regr_slope(y, x), regr_count(y, x)
FROM fs GROUP BY k;

-- result types are PostgreSQL's
SELECT pg_typeof(stddev(f)), pg_typeof(var_samp(x)), pg_typeof(corr(y, x)),
       pg_typeof(covar_pop(y, x)), pg_typeof(regr_count(y, x)), pg_typeof(regr_avgx(y, x))
FROM fs;

-- the small groups printed: NULL for too few values, 0 for one value's
-- population variance, NaN once a NaN or an infinity arrives
SELECT k, var_samp(x), var_pop(x), stddev_samp(x), stddev_pop(x), variance(f), stddev(f)
FROM fs WHERE k < 10 GROUP BY k ORDER BY k;
SELECT k, covar_pop(y, x), covar_samp(y, x), corr(y, x), regr_count(y, x),
       regr_avgx(y, x), regr_avgy(y, x), regr_sxx(y, x), regr_syy(y, x), regr_sxy(y, x)
FROM fs WHERE k < 10 GROUP BY k ORDER BY k;
SELECT k, regr_slope(y, x), regr_intercept(y, x), regr_r2(y, x)
FROM fs WHERE k < 10 GROUP BY k ORDER BY k;
SELECT float_check('SELECT k, ARRAY[var_samp(x), var_pop(x), stddev_samp(x), stddev_pop(x), variance(f), stddev(f), covar_pop(y, x), covar_samp(y, x), corr(y, x), regr_count(y, x), regr_avgx(y, x), regr_avgy(y, x), regr_sxx(y, x), regr_syy(y, x), regr_sxy(y, x), regr_slope(y, x), regr_intercept(y, x), regr_r2(y, x)] AS vals FROM fs WHERE k < 10 GROUP BY k');

-- every aggregate over many rows, against the native plan
SELECT float_check('SELECT k, ARRAY[var_samp(x), var_pop(x), stddev_samp(x), stddev_pop(x), variance(x), stddev(x)] AS vals FROM fs GROUP BY k');
SELECT float_check('SELECT k, ARRAY[var_samp(f), var_pop(f), stddev_samp(f), stddev_pop(f), variance(g), stddev(g)] AS vals FROM fs GROUP BY k');
SELECT float_check('SELECT k, ARRAY[covar_pop(y, x), covar_samp(y, x), corr(y, x), regr_avgx(y, x), regr_avgy(y, x), regr_sxx(y, x), regr_syy(y, x), regr_sxy(y, x), regr_slope(y, x), regr_intercept(y, x), regr_r2(y, x), regr_count(y, x)] AS vals FROM fs GROUP BY k');
-- arguments swapped, float4 and integer arguments cast to float8, the same column twice
SELECT float_check('SELECT k, ARRAY[corr(x, y), regr_slope(x, y), covar_samp(f, g), corr(k, x), regr_r2(x, x), covar_pop(x, x)] AS vals FROM fs GROUP BY k');
-- FILTER, and a plain aggregate over everything
SELECT float_check('SELECT k, ARRAY[stddev(x) FILTER (WHERE y > 100), corr(y, x) FILTER (WHERE f < 50), regr_count(y, x) FILTER (WHERE k % 2 = 0)] AS vals FROM fs GROUP BY k');
SELECT float_check('SELECT 0 AS k, ARRAY[stddev(x), var_pop(f), corr(y, x), regr_intercept(y, x)] AS vals FROM fs WHERE k >= 10');

-- values far from zero with a small spread (a naive sum of squares loses
-- every digit; PostgreSQL's own Youngs-Cramer updates lose some at 3e12):
-- against the exact numeric results over the same values, which are exact
-- in float8 and in numeric
CREATE TEMP TABLE fs_offset AS
SELECT i % 5 AS k, (1e9 + (i % 97) / 8.0)::float8 AS x, (-3e12 + (i % 89) * 0.5)::float8 AS y
FROM generate_series(1, 30000) i;
CREATE TEMP TABLE fs_offset_exact AS
SELECT k, var_samp(x::numeric)::float8 AS var_x, var_pop(y::numeric)::float8 AS var_y,
       stddev_pop(y::numeric)::float8 AS sd_y
FROM fs_offset GROUP BY k;
-- (n sum(x y) - sum(x) sum(y)) / n^2: exact in numeric up to the division
CREATE TEMP TABLE fs_offset_covar AS
SELECT k, ((count(*) * sum(x::numeric * y::numeric) - sum(x::numeric) * sum(y::numeric))
           / (count(*)::numeric * count(*)))::float8 AS covar
FROM fs_offset GROUP BY k;
SELECT gpuagg_used('SELECT k, var_samp(x), var_pop(y), stddev_pop(y), covar_pop(y, x) FROM fs_offset GROUP BY k') AS on_gpuagg;
SELECT k, abs(g.var_x - e.var_x) / e.var_x < 1e-14 AS var_x,
       abs(g.var_y - e.var_y) / e.var_y < 1e-14 AS var_y,
       abs(g.sd_y - e.sd_y) / e.sd_y < 1e-14 AS sd_y,
       abs(g.covar - c.covar) / abs(c.covar) < 1e-13 AS covar_y_x,
       round(g.var_y::numeric, 9) AS var_pop_y
FROM (SELECT k, var_samp(x) AS var_x, var_pop(y) AS var_y, stddev_pop(y) AS sd_y,
             covar_pop(y, x) AS covar
      FROM fs_offset GROUP BY k) g
JOIN fs_offset_exact e USING (k) JOIN fs_offset_covar c USING (k)
ORDER BY k;

-- PostgreSQL's overflow error when finite values overflow the sums
CREATE TEMP TABLE fs_huge AS
SELECT i % 2 AS k, (CASE WHEN i % 3 = 0 THEN -1 ELSE 1 END) * 1e200::float8 * i AS x
FROM generate_series(1, 10) i;
SELECT k, stddev(x) FROM fs_huge GROUP BY k;
SELECT k, covar_pop(x, x) FROM fs_huge GROUP BY k;
SET gpuagg.enabled = off;
SELECT k, stddev(x) FROM fs_huge GROUP BY k;
RESET gpuagg.enabled;
-- ... but NaN when an input is infinite (PostgreSQL too, when the infinity
-- comes before the overflow: its first row here)
CREATE TEMP TABLE fs_huge_inf (k int, x float8);
INSERT INTO fs_huge_inf VALUES (0, 'Infinity'), (1, '-Infinity');
INSERT INTO fs_huge_inf SELECT * FROM fs_huge;
SELECT gpuagg_check('SELECT k, stddev(x), covar_pop(x, x), regr_avgx(x, x), regr_count(x, x) FROM fs_huge_inf GROUP BY k');

-- the error comes long before the sum of squared deviations M2 overflows:
-- float8_accum() squares N (x - mean) at each step, so PostgreSQL raises it
-- in every order once n M2 > DBL_MAX (here M2 = 1e307, n M2 = 1e310), as
-- gpuagg does; a hundredth of the spread raises nothing
CREATE TEMP TABLE fs_spread AS
SELECT 1 AS k, CASE WHEN i % 2 = 0 THEN 1e152 ELSE -1e152 END::float8 AS x,
       CASE WHEN i % 2 = 0 THEN 1e150 ELSE -1e150 END::float8 AS small, i::float8 AS y
FROM generate_series(1, 1000) i;
SELECT gpuagg_outcome('SELECT k, var_pop(x) FROM fs_spread GROUP BY k');
SELECT gpuagg_outcome('SELECT k, stddev_samp(x) FROM fs_spread GROUP BY k');
SELECT gpuagg_outcome('SELECT k, covar_pop(y, x) FROM fs_spread GROUP BY k');
SELECT gpuagg_outcome('SELECT k, regr_slope(x, y) FROM fs_spread GROUP BY k');
SELECT gpuagg_outcome('SELECT k, round((var_pop(small) / 1e300)::numeric, 9), round(corr(y, small)::numeric, 9) FROM fs_spread GROUP BY k');
-- two values: the step squares their difference, in either order
SELECT gpuagg_outcome('SELECT k, var_samp(x) FROM (VALUES (1, 0::float8), (1, 1.35e154)) s(k, x) GROUP BY k');
SELECT gpuagg_outcome('SELECT k, var_samp(x) FROM (VALUES (1, 1.35e154::float8), (1, 0)) s(k, x) GROUP BY k');
SELECT gpuagg_outcome('SELECT k, var_samp(x) FROM (VALUES (1, 1.3e154::float8), (1, 0)) s(k, x) GROUP BY k');
-- regr_*: an infinite y spares Syy and Sxy, not Sxx
SELECT gpuagg_outcome('SELECT k, regr_sxx(y, x) FROM (VALUES (1, ''Infinity''::float8, 0::float8), (1, 1, 1e200), (1, 2, -1e200)) s(k, y, x) GROUP BY k');
SELECT gpuagg_outcome('SELECT k, regr_syy(y, x) FROM (VALUES (1, ''Infinity''::float8, 0::float8), (1, 1, 1), (1, 2, 2)) s(k, y, x) GROUP BY k');

-- a covariance near zero: every digit PostgreSQL gets right (against the
-- exact sum over the same float8 values in numeric)
SET extra_float_digits = 3;
WITH p AS (SELECT k, x::text::numeric AS xe, y::text::numeric AS ye
             FROM fs WHERE k = 12 AND x IS NOT NULL AND y IS NOT NULL),
     m AS (SELECT avg(xe) AS ax, avg(ye) AS ay FROM p),
     exact AS (SELECT sum((xe - ax) * (ye - ay)) AS sxy FROM p, m)
SELECT round(sxy, 6) AS exact_sxy,
       abs(sxy - (SELECT regr_sxy(y, x) FROM fs WHERE k = 12 GROUP BY k)::numeric) / abs(sxy) < 1e-13 AS gpuagg_close
FROM exact;
SELECT gpuagg_used('SELECT regr_sxy(y, x) FROM fs WHERE k = 12 GROUP BY k') AS on_gpuagg;
RESET extra_float_digits;

-- grouping sets, and parallel workers packing the batches
SELECT float_check('SELECT coalesce(k, -1) * 10 + coalesce(k % 3, -1) AS k, ARRAY[stddev(x), corr(y, x), regr_count(y, x)] AS vals FROM fs GROUP BY ROLLUP (k, k % 3)');
-- (workers cannot read temporary tables)
CREATE TABLE fs_parallel AS SELECT * FROM fs;
ANALYZE fs_parallel;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT gpuagg_used('SELECT k, stddev(x), corr(y, x) FROM fs_parallel GROUP BY k', 'GpuAggPack') AS parallel_pack;
SELECT float_check('SELECT k, ARRAY[var_pop(x), stddev(f), covar_samp(y, x), regr_r2(y, x), regr_count(y, x)] AS vals FROM fs_parallel GROUP BY k');
DROP TABLE fs_parallel;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- a float8 aggregate over an integer or float4 column (corr(int, int), sum(i::float8)):
-- the child outputs the column itself, the batch builder converts it, and the
-- direct scan reads the table (exact conversions; int8's rounds like the cast)
CREATE TEMP TABLE fs_conv AS
SELECT i % 7 AS k, (i % 301 - 150)::int2 AS s, CASE WHEN i % 11 = 0 THEN NULL ELSE i % 1003 END AS n,
       (i::int8 * 1000000007 * (CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END)) AS b,
       ((i % 97) / 4.0)::float4 AS r
FROM generate_series(1, 5000) i;
-- (the plan without its device lines, which depend on the machine)
CREATE FUNCTION pg_temp.fs_plan(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || query LOOP
        IF line NOT LIKE '%Device: %' AND line NOT LIKE '%Strategy: %' THEN
            RETURN NEXT line;
        END IF;
    END LOOP;
END
$$;
SET gpuagg.explain_device_details = on;
SELECT pg_temp.fs_plan('SELECT k, corr(n, s), sum(s::float8), max(b::float8), avg(r::float8), stddev(n::float8) FROM fs_conv GROUP BY k');
RESET gpuagg.explain_device_details;
SELECT gpuagg_check('SELECT k, sum(s::float8), sum(n::float8), min(b::float8), max(b::float8), avg(r::float8), sum(r::float8) FILTER (WHERE n > 500), count(n::float8) FROM fs_conv GROUP BY k');
SELECT float_check('SELECT k, ARRAY[corr(n, s), regr_slope(b, n), covar_pop(r, s), stddev(n::float8), var_pop(b::float8), avg(b::float8)] AS vals FROM fs_conv GROUP BY k');
-- (DISTINCT keeps the conversion in the child: its values are keys)
SELECT gpuagg_check('SELECT k, sum(DISTINCT s::float8), count(DISTINCT n::float8) FROM fs_conv GROUP BY k');

-- what keeps the native plan: DISTINCT, ORDER BY inside the aggregate,
-- two-argument aggregates over other types than float8
SELECT gpuagg_used('SELECT k, stddev(DISTINCT x) FROM fs GROUP BY k') AS distinct_stddev,
       gpuagg_used('SELECT k, corr(DISTINCT y, x) FROM fs GROUP BY k') AS distinct_corr,
       gpuagg_used('SELECT k, string_agg(x::text, '','') FROM fs GROUP BY k') AS string_agg;
