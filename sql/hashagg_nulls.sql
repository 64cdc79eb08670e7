--
-- hashagg_nulls: NULL keys form one group; NULL inputs are skipped
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

SELECT k_int2, k_bool, count(*), count(v_int4), sum(v_int4)
FROM agg_data GROUP BY k_int2, k_bool ORDER BY k_int2, k_bool;

SELECT gpuagg_check('SELECT k_int2, k_bool, k_text, count(*), count(v_float8), sum(v_float8) FROM agg_data GROUP BY k_int2, k_bool, k_text');
SELECT gpuagg_check('SELECT k_text, count(v_int4), min(v_int4), max(v_int4), avg(v_int4) FROM agg_data GROUP BY k_text');

-- a group whose inputs are all NULL: count 0, everything else NULL
CREATE TEMP TABLE sparse (k int, i int, b bigint, f float8, r float4, d date, t timestamp);
INSERT INTO sparse VALUES (1, NULL, NULL, NULL, NULL, NULL, NULL),
                          (1, NULL, NULL, NULL, NULL, NULL, NULL),
                          (2, 5, 6, 7.5, 8.5, '2024-02-29', '2024-02-29 12:00'),
                          (NULL, 1, 2, 3, 4, '2000-01-01', '2000-01-01'),
                          (NULL, NULL, NULL, NULL, NULL, NULL, NULL);
SELECT k, count(*), count(i), sum(i), sum(b), avg(i), avg(b), sum(f), avg(f), sum(r),
       min(i), max(b), min(f), max(r), min(d), max(t)
FROM sparse GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k, count(*), count(i), sum(i), sum(b), avg(i), avg(b), sum(f), avg(f), sum(r), min(i), max(b), min(f), max(r), min(d), max(t) FROM sparse GROUP BY k');

-- NULL keys of every type, several keys NULL at once
SELECT gpuagg_check('SELECT NULLIF(k_int4, 5), NULLIF(k_int8, 0), NULLIF(k_float8, 0.5), NULLIF(k_date, DATE ''2024-01-02''), NULLIF(k_ts, TIMESTAMP ''2024-01-01 03:00''), count(*) FROM agg_data GROUP BY 1, 2, 3, 4, 5');
