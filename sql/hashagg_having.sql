--
-- hashagg_having: HAVING, FILTER, ORDER BY / LIMIT above, expressions
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

EXPLAIN (COSTS OFF)
SELECT k_int4, sum(v_int4) FROM agg_data GROUP BY k_int4 HAVING count(*) > 199 AND max(v_int2) > 90
ORDER BY 2 DESC LIMIT 3;
SELECT k_int4, sum(v_int4) FROM agg_data GROUP BY k_int4 HAVING count(*) > 199 AND max(v_int2) > 90
ORDER BY 2 DESC LIMIT 3;
SELECT gpuagg_check('SELECT k_int4, sum(v_int4) FROM agg_data GROUP BY k_int4 HAVING avg(v_int2) > 0 AND k_int4 % 2 = 0');
-- HAVING on an aggregate that is not in the output
SELECT gpuagg_check('SELECT k_text FROM agg_data GROUP BY k_text HAVING min(v_int8) < 1000000000');

-- FILTER
SELECT k_int2, count(*) FILTER (WHERE v_int4 > 0) AS pos, count(v_int4) FILTER (WHERE k_bool),
       sum(v_int4) FILTER (WHERE v_int4 < 0) AS neg_sum, avg(v_float8) FILTER (WHERE id % 2 = 0),
       max(v_date) FILTER (WHERE false) AS never
FROM agg_data GROUP BY k_int2 ORDER BY k_int2;
SELECT gpuagg_check('SELECT k_int2, count(*) FILTER (WHERE v_int4 > 0), sum(v_int4) FILTER (WHERE v_int4 < 0), sum(v_int4), min(v_int4) FILTER (WHERE k_bool IS NULL) FROM agg_data GROUP BY k_int2');

-- expressions in keys, in arguments and around aggregates
SELECT k_int4 / 10 AS decile, max(v_int2) - min(v_int2) AS spread, sum(v_int4 * 2 + 1),
       sum(v_int4)::float8 / count(*) AS mean, round(avg(v_int4), 2)
FROM agg_data GROUP BY k_int4 / 10 ORDER BY decile;
SELECT gpuagg_check('SELECT k_int4 / 10, max(v_int2) - min(v_int2), sum(v_int4 * 2 + 1), sum(v_int4)::float8 / count(*), coalesce(sum(v_int4), 0) + 1 FROM agg_data GROUP BY k_int4 / 10');
SELECT gpuagg_check('SELECT k_int4 + k_int2, k_int4 + k_int2 > 50, count(*) FROM agg_data GROUP BY k_int4 + k_int2');
SELECT gpuagg_check('SELECT date_trunc(''day'', k_ts + id * interval ''1 minute''), count(*), max(v_ts) FROM agg_data GROUP BY 1');
-- a group key that is not in the output
SELECT gpuagg_check('SELECT sum(v_int4) FROM agg_data GROUP BY k_int4, k_text');
-- the same aggregate written twice is computed once and shown twice
SELECT k_int2, sum(v_int2), sum(v_int2) + 1, sum(v_int2) FROM agg_data GROUP BY k_int2 ORDER BY 1;
-- FILTER guards the argument: it is only computed for rows that pass
CREATE TEMP TABLE guarded (x int, i int);
INSERT INTO guarded VALUES (0, 2147483647), (2, 1), (NULL, 3);
SELECT sum(10 / x) FILTER (WHERE x <> 0), avg(i * 2) FILTER (WHERE i < 100), count(10 / x) FILTER (WHERE x > 0) FROM guarded;
SELECT gpuagg_check('SELECT x IS NULL, sum(10 / x) FILTER (WHERE x <> 0), max(i + 1) FILTER (WHERE i < 100) FROM guarded GROUP BY 1');
