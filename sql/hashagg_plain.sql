--
-- hashagg_plain: aggregates without GROUP BY
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

EXPLAIN (COSTS OFF) SELECT count(*), sum(v_int4) FROM agg_data;
SELECT count(*), count(v_int4), sum(v_int4), sum(v_int8), avg(v_int4), min(v_date), max(v_ts),
       sum(v_float8), avg(v_float4)
FROM agg_data;
SELECT gpuagg_check('SELECT count(*), count(v_int4), sum(v_int4), sum(v_int8), avg(v_int8), min(v_date), max(v_ts), sum(v_float8), avg(v_float4) FROM agg_data');

-- one row even when there are no rows: count 0, the rest NULL
SELECT count(*), count(v_int4), sum(v_int4), avg(v_int8), min(v_float8), max(k_date) FROM agg_empty;
SELECT count(*), sum(v_int4) FROM agg_data WHERE id < 0;
SELECT gpuagg_check('SELECT count(*), sum(v_int4), avg(v_int8), min(v_float8) FROM agg_empty');
-- grouped aggregation over no rows returns no rows
SELECT k_int4, count(*) FROM agg_empty GROUP BY k_int4;
SELECT gpuagg_check('SELECT k_int4, count(*) FROM agg_empty GROUP BY k_int4');

-- count(*) alone, and count of a column of a type the device cannot hold
SELECT count(*) FROM agg_data;
SELECT count(ARRAY[id]), count(k_text || 'x'), count(NULLIF(k_int4, 1)::numeric) FROM agg_data;
SELECT gpuagg_check('SELECT count(ARRAY[id]), count(NULLIF(k_int4, 1)::numeric) FROM agg_data');
