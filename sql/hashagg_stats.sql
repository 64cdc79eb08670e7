--
-- hashagg_stats: stddev, stddev_samp, stddev_pop, variance, var_samp,
-- var_pop of integers and bounded numerics, exact (the device sums x and
-- x * x, PostgreSQL's own final function finishes); sum and avg(DISTINCT)
-- of numerics; what stays native.  Floats, corr, covar_* and regr_* run
-- on the device too: hashagg_float_stats
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

CREATE TEMP TABLE stats (k int, i2 int2, i4 int4, i8 int8,
                         n0 numeric(5, 0), n2 numeric(10, 2), n6 numeric(12, 6),
                         nneg numeric(3, -2), n18 numeric(18, 4), nwide numeric(40, 10),
                         n50 numeric(50, 0));
-- k = 0: no non-NULL value; 1: one row; 2: two rows; 3: two equal rows;
-- 4..9: many rows, negative values, NULLs
INSERT INTO stats VALUES
    (0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (1, 7, -7, 9223372036854775807, 7, 7.25, -0.000001, 100, 12345678901234.5678,
     123456789012345678901234567890.0123456789, 12345678901234567890123456789012345678901234567890),
    (2, -3, 5, -9223372036854775808, -3, -1.50, 1.5, -200, -99999999999999.9999,
     -999999999999999999999999999999.9999999999, -99999999999999999999999999999999999999999999999999),
    (2, 4, 6, 9223372036854775807, 4, 2.75, 2.250001, 300, 99999999999999.9999,
     999999999999999999999999999999.9999999999, 99999999999999999999999999999999999999999999999999),
    (3, 2, 2, 2, 2, 2.00, 2, 200, 2, 2, 2),
    (3, 2, 2, 2, 2, 2.00, 2, 200, 2, 2, 2);
INSERT INTO stats
SELECT 4 + i % 6,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7 % 65535 - 32767)::int2 END,
       CASE WHEN i % 19 = 0 THEN NULL ELSE (i * 7919 % 200001) - 100000 END,
       CASE WHEN i % 23 = 0 THEN NULL
            WHEN i % 1000 = 1 THEN 9223372036854775807
            WHEN i % 1000 = 2 THEN -9223372036854775808
            ELSE (i::int8 * 1000003) * (CASE WHEN i % 2 = 0 THEN 1 ELSE -1 END) * 1099511 END,
       i % 1000 - 500,
       CASE WHEN i % 29 = 0 THEN NULL ELSE (i * 7919 % 1000000) / 100.0 - 5000 END,
       (i * 104729 % 1000000000) / 1000000.0 - 500,
       (i % 9 - 4) * 100,
       (i * 7919 % 100000000)::numeric * 10000 + (i % 10000) / 10000.0,
       ((i * 104729)::numeric * 1000000000000000000::numeric + (i % 9) / 7.0)::numeric(40, 10),
       (i::numeric * 1000000000000000000000000000000000000000000000) - 12345
FROM generate_series(1, 6000) i;
ANALYZE stats;

EXPLAIN (COSTS OFF)
SELECT k, stddev(i4), stddev_samp(i8), stddev_pop(n2), variance(n6), var_samp(i2), var_pop(nwide)
FROM stats GROUP BY k;

-- result types are PostgreSQL's: numeric for integer and numeric arguments
SELECT pg_typeof(stddev(i2)), pg_typeof(stddev_pop(i4)), pg_typeof(var_samp(i8)),
       pg_typeof(variance(n2)), pg_typeof(var_pop(n6)), pg_typeof(stddev_samp(nwide))
FROM stats;

-- groups of no value, one row, two rows, two equal rows: NULL for samples of
-- fewer than two values, 0 for a population of one
SELECT k, var_samp(i4), var_pop(i4), variance(i4), stddev(i4), stddev_samp(i4), stddev_pop(i4)
FROM stats WHERE k < 4 GROUP BY k ORDER BY k;
SELECT k, var_samp(n2), var_pop(n2), stddev_samp(n2), stddev_pop(n2),
       var_samp(n6), stddev_pop(n6), var_pop(nneg), stddev(nneg)
FROM stats WHERE k < 4 GROUP BY k ORDER BY k;
-- int8 extremes: squares beyond 2^126, sums beyond 2^63
SELECT k, var_samp(i8), var_pop(i8), stddev_samp(i8), stddev_pop(i8)
FROM stats WHERE k < 4 GROUP BY k ORDER BY k;
-- 18, 40 and 50 digits
SELECT k, var_samp(n18), stddev_pop(n18), var_pop(nwide), stddev_samp(nwide),
       var_samp(n50), stddev_pop(n50)
FROM stats WHERE k < 4 GROUP BY k ORDER BY k;
-- no rows at all: one row of NULLs
SELECT var_samp(i2), var_pop(i4), stddev(i8), stddev_pop(n2), variance(nwide)
FROM stats WHERE k < 0;

-- each aggregate over each argument type, against the native plan
SELECT gpuagg_check('SELECT k, stddev(i2), stddev_samp(i2), stddev_pop(i2), variance(i2), var_samp(i2), var_pop(i2) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, stddev(i4), stddev_samp(i4), stddev_pop(i4), variance(i4), var_samp(i4), var_pop(i4) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, stddev(i8), stddev_samp(i8), stddev_pop(i8), variance(i8), var_samp(i8), var_pop(i8) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, stddev(n0), stddev_samp(n0), stddev_pop(n0), variance(n0), var_samp(n0), var_pop(n0) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, stddev(n2), stddev_samp(n2), stddev_pop(n2), variance(n2), var_samp(n2), var_pop(n2) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, stddev(n6), stddev_samp(n6), stddev_pop(n6), variance(n6), var_samp(n6), var_pop(n6) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, stddev(nneg), stddev_samp(nneg), stddev_pop(nneg), variance(nneg), var_samp(nneg), var_pop(nneg) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, stddev(n18), stddev_samp(n18), stddev_pop(n18), variance(n18), var_samp(n18), var_pop(n18) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, stddev(nwide), stddev_samp(nwide), stddev_pop(nwide), variance(nwide), var_samp(nwide), var_pop(nwide) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, stddev(n50), stddev_samp(n50), stddev_pop(n50), variance(n50), var_samp(n50), var_pop(n50) FROM stats GROUP BY k');
-- no GROUP BY, and a key with many groups
SELECT gpuagg_check('SELECT stddev(i2), var_pop(i4), var_samp(i8), stddev_pop(n2), variance(n6), stddev(nwide) FROM stats');
SELECT gpuagg_check('SELECT i4 % 1000, var_samp(i8), stddev_pop(n2), stddev_samp(n6), var_pop(i2) FROM stats GROUP BY 1');
-- expressions of bounded numerics, casts, FILTER, beside sum and avg of the same argument
SELECT gpuagg_check('SELECT k, stddev(n2 * (1 - n6)), var_pop(i4::numeric(12, 0) + 0.5), variance(-n2), stddev_samp(i8::numeric), sum(n2), avg(n2), var_samp(n2) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, stddev(i4) FILTER (WHERE i4 > 0), var_pop(n2) FILTER (WHERE k % 2 = 0), var_samp(n6) FILTER (WHERE n2 < 0) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT k, var_samp(i4) FROM stats GROUP BY k HAVING stddev(n2) > 1');

-- NaN in a numeric(p, s) argument: NaN for the variance of a group holding it
CREATE TEMP TABLE stats_nan (k int, v numeric(10, 2));
INSERT INTO stats_nan VALUES (1, 1.50), (1, 'NaN'), (1, 2), (2, 3), (2, 4.25), (3, NULL),
    (4, 'NaN'), (5, 'NaN'), (5, 'NaN');
SELECT k, var_samp(v), var_pop(v), stddev_samp(v), stddev_pop(v), sum(v)
FROM stats_nan GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k, var_samp(v), var_pop(v), stddev_samp(v), stddev_pop(v), stddev(v), variance(v) FROM stats_nan GROUP BY k');

-- sum and avg of DISTINCT numerics: the host sums each distinct value once
SELECT k, sum(DISTINCT n2), avg(DISTINCT n2), count(DISTINCT n2), sum(DISTINCT n0), avg(DISTINCT nneg)
FROM stats WHERE k < 4 GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k, sum(DISTINCT n2), avg(DISTINCT n2), sum(DISTINCT n6), avg(DISTINCT nwide), sum(DISTINCT n50), count(DISTINCT n2) FROM stats GROUP BY k');
SELECT gpuagg_check('SELECT sum(DISTINCT n0), avg(DISTINCT n0), sum(n0), avg(DISTINCT i4::numeric(10, 0) * 0.5) FROM stats');
SELECT gpuagg_check('SELECT k, sum(DISTINCT v), avg(DISTINCT v), count(DISTINCT v) FROM stats_nan GROUP BY k');
SELECT gpuagg_check('SELECT k, sum(DISTINCT n2) FILTER (WHERE i4 > 0), avg(DISTINCT n6) FILTER (WHERE k = 5) FROM stats GROUP BY k');

-- floats and two-argument statistics use the device (hashagg_float_stats has
-- their tests) ...
SELECT gpuagg_used('SELECT k, stddev(i4::float8) FROM stats GROUP BY k') AS stddev_float8,
       gpuagg_used('SELECT k, variance(i2::float4) FROM stats GROUP BY k') AS variance_float4,
       gpuagg_used('SELECT k, var_pop(i4::float8), stddev_pop(i4::float8), var_samp(i4::float8), stddev_samp(i4::float8) FROM stats GROUP BY k') AS float8_all,
       gpuagg_used('SELECT k, corr(i4, i8) FROM stats GROUP BY k') AS corr,
       gpuagg_used('SELECT k, covar_pop(i4, i2), covar_samp(i4, i2) FROM stats GROUP BY k') AS covar,
       gpuagg_used('SELECT k, regr_slope(i4, i2), regr_intercept(i4, i2), regr_count(i4, i2), regr_r2(i4, i2) FROM stats GROUP BY k') AS regr;
-- ... numerics of unknown scale or more than 50 digits and variance of
-- DISTINCT values keep the native plan
SELECT gpuagg_used('SELECT k, stddev(n2 / 3) FROM stats GROUP BY k') AS unknown_scale,
       gpuagg_used('SELECT k, var_pop(n50 * 10) FROM stats GROUP BY k') AS digits_51,
       gpuagg_used('SELECT k, var_samp(DISTINCT i4) FROM stats GROUP BY k') AS distinct_variance,
       gpuagg_used('SELECT k, sum(DISTINCT n2 / 3) FROM stats GROUP BY k') AS distinct_unknown_scale;

-- many variances of one argument share their device operations
SELECT gpuagg_used('SELECT k, stddev(nwide), stddev_samp(nwide), stddev_pop(nwide), variance(nwide), var_samp(nwide), var_pop(nwide), stddev(n50), var_pop(n50), stddev(n18), var_pop(n18), stddev(i8), var_pop(i8) FROM stats GROUP BY k') AS shared_ops;

-- parallel workers send the squares like any column
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 512;
SELECT gpuagg_check('SELECT k, stddev(i4), var_pop(i8), var_samp(n2), stddev_pop(nwide), sum(DISTINCT n2), avg(DISTINCT n6) FROM stats GROUP BY k');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET gpuagg.batch_rows;
