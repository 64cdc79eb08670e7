--
-- hashagg_types: bool, date and timestamp keys, min/max of dates and
-- timestamps, domains
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

SELECT k_bool, count(*), min(v_date), max(v_date), min(v_ts), max(v_ts)
FROM agg_data GROUP BY k_bool ORDER BY k_bool;
SELECT gpuagg_check('SELECT k_bool, count(*), min(v_date), max(v_ts) FROM agg_data GROUP BY k_bool');
SELECT gpuagg_check('SELECT k_date, count(*), count(v_date), min(v_date), max(v_date) FROM agg_data GROUP BY k_date');
SELECT gpuagg_check('SELECT k_ts, k_date, min(v_ts), max(v_ts), sum(v_int2) FROM agg_data GROUP BY k_ts, k_date');
SELECT k_date, count(*) FROM agg_data GROUP BY k_date ORDER BY k_date LIMIT 3;
SELECT k_ts, max(v_ts) FROM agg_data GROUP BY k_ts ORDER BY k_ts LIMIT 3;

-- infinite dates and timestamps
SELECT k, min(d), max(d), min(t), max(t)
FROM (VALUES (1, 'infinity'::date, '-infinity'::timestamp), (1, '2000-01-01', '2000-01-01'),
             (2, '-infinity', 'infinity'), (2, '4713-01-01 BC', '294276-12-31 23:59:59')) AS v(k, d, t)
GROUP BY k ORDER BY k;

-- domains over supported types behave as their base types
CREATE DOMAIN small_count AS int4 CHECK (VALUE >= 0);
CREATE DOMAIN label AS text;
CREATE TEMP TABLE dom (k label, v small_count);
INSERT INTO dom SELECT 'k' || (i % 3), i FROM generate_series(1, 30) i;
SELECT k, sum(v), max(v), pg_typeof(max(v)) FROM dom GROUP BY k ORDER BY k;
SELECT gpuagg_check('SELECT k, sum(v), min(v), avg(v) FROM dom GROUP BY k');
