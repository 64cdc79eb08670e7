--
-- hashagg_batches: many batches, wrong group estimates, every strategy
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

-- tiny batches: 20000 rows arrive in 157 batches
SET gpuagg.batch_rows = 128;
SELECT gpuagg_check('SELECT k_int4, count(*), sum(v_int8), min(v_float8) FROM agg_data GROUP BY k_int4');
SELECT gpuagg_check('SELECT id, k_text, count(*), sum(v_int4) FROM agg_data GROUP BY id, k_text');
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT k_int4, count(*) FROM agg_data GROUP BY k_int4;

-- the planner believes in 1 group, there are 20000: the device's table
-- must grow and redo work, never lose or double a row
CREATE TEMP TABLE misestimated AS SELECT id % 1 AS k, id FROM agg_data;
ANALYZE misestimated;
UPDATE misestimated SET k = id;
SELECT gpuagg_check('SELECT k, count(*), sum(id) FROM misestimated GROUP BY k');
SELECT count(*), sum(n), sum(s) FROM (SELECT k, count(*) AS n, sum(id) AS s FROM misestimated GROUP BY k) g;
RESET gpuagg.batch_rows;
SELECT gpuagg_check('SELECT k, count(*), sum(id) FROM misestimated GROUP BY k');

-- every strategy gives the same answers
SET gpuagg.strategy = shared;
SELECT gpuagg_check('SELECT k_int2, count(*), sum(v_int4), avg(v_float8), min(v_int8), max(v_ts) FROM agg_data GROUP BY k_int2');
SELECT gpuagg_check('SELECT id, count(*), sum(v_int4) FROM agg_data GROUP BY id');
SET gpuagg.strategy = global;
SELECT gpuagg_check('SELECT k_int2, count(*), sum(v_int4), avg(v_float8), min(v_int8), max(v_ts) FROM agg_data GROUP BY k_int2');
SELECT gpuagg_check('SELECT id, count(*), sum(v_int4) FROM agg_data GROUP BY id');
SET gpuagg.strategy = perfect;
SELECT gpuagg_check('SELECT k_int2, count(*), sum(v_int4), avg(v_float8), min(v_int8), max(v_ts) FROM agg_data GROUP BY k_int2');
SELECT gpuagg_check('SELECT id, count(*), sum(v_int4) FROM agg_data GROUP BY id');
SELECT gpuagg_check('SELECT k_int2, k_text, count(*), sum(v_int8), max(v_float8) FROM agg_data GROUP BY k_int2, k_text');
SELECT gpuagg_check('SELECT count(*), sum(v_int4), min(v_float8) FROM agg_data');
SET gpuagg.strategy = partitioned;
SELECT gpuagg_check('SELECT k_int2, count(*), sum(v_int4), avg(v_float8), min(v_int8), max(v_ts) FROM agg_data GROUP BY k_int2');
SELECT gpuagg_check('SELECT id, count(*), sum(v_int4) FROM agg_data GROUP BY id');
SELECT gpuagg_check('SELECT k_int2, k_text, count(*), sum(v_int8), max(v_float8) FROM agg_data GROUP BY k_int2, k_text');
SELECT gpuagg_check('SELECT count(*), sum(v_int4), min(v_float8) FROM agg_data');
SET gpuagg.batch_rows = 1000;
SET gpuagg.strategy = auto;
SELECT gpuagg_check('SELECT id % 3000, count(*), sum(v_int4) FROM agg_data GROUP BY 1');
SET gpuagg.strategy = shared;
SELECT gpuagg_check('SELECT id % 3000, count(*), sum(v_int4) FROM agg_data GROUP BY 1');
-- perfect takes its key range from the first batch: later ones escape it
SET gpuagg.strategy = perfect;
SELECT gpuagg_check('SELECT id % 3000, count(*), sum(v_int4) FROM agg_data GROUP BY 1');
SELECT gpuagg_check('SELECT id, count(*), sum(v_int4) FROM agg_data GROUP BY id');
SET gpuagg.strategy = partitioned;
SELECT gpuagg_check('SELECT id % 3000, count(*), sum(v_int4) FROM agg_data GROUP BY 1');
RESET gpuagg.strategy;
RESET gpuagg.batch_rows;

-- a wider input: 200000 rows, 50000 groups, several keys
CREATE TEMP TABLE wide AS
SELECT i % 50000 AS a, (i % 7)::int2 AS b, 'w' || (i % 3) AS c, i::int8 * 3 AS v, ((i % 10) * 0.5)::float8 AS f
FROM generate_series(1, 200000) i;
ANALYZE wide;
SELECT gpuagg_check('SELECT a, count(*), sum(v), max(f) FROM wide GROUP BY a');
SELECT gpuagg_check('SELECT a % 1000, b, c, count(*), sum(v), sum(f), avg(v) FROM wide GROUP BY 1, 2, 3');
