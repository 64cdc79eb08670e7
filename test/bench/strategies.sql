-- test/bench/strategies.sql - GpuHashAgg's group-by strategies end to end on the
-- group-by table (schema groupby, made by test/bench/run.sh with KEEP_CLUSTER=1), with
-- the executor's batches: q5 (an int key, about N/100 groups) and q7 (a text key made a
-- dictionary id, N/100 groups) under auto, global and partitioned, at the default
-- gpuagg.batch_rows and at 8x that; EXPLAIN ANALYZE says which strategy auto took and
-- where the device time went.  Run by test/host/gpu-host-verify.sh strategies.
\timing on
SET search_path = groupby, public;
SET gpuagg.device = gpu;
SET gpuagg.force = on;
\echo ==== warm-up
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
\echo ==== q5 auto, global, partitioned (x2 each)
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
SET gpuagg.strategy = global;
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
SET gpuagg.strategy = partitioned;
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
RESET gpuagg.strategy;
\echo ==== q7 auto, global, partitioned (x2 each)
SELECT * FROM (SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3) s OFFSET 1000000000;
SELECT * FROM (SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3) s OFFSET 1000000000;
SET gpuagg.strategy = global;
SELECT * FROM (SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3) s OFFSET 1000000000;
SELECT * FROM (SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3) s OFFSET 1000000000;
SET gpuagg.strategy = partitioned;
SELECT * FROM (SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3) s OFFSET 1000000000;
SELECT * FROM (SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3) s OFFSET 1000000000;
RESET gpuagg.strategy;
\echo ==== q5 with batches of 8x the default rows: auto, global, partitioned
SELECT set_config('gpuagg.batch_rows', (current_setting('gpuagg.batch_rows')::int * 8)::text, false);
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
SET gpuagg.strategy = global;
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
SET gpuagg.strategy = partitioned;
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
RESET gpuagg.strategy;
RESET gpuagg.batch_rows;
\echo ==== EXPLAIN ANALYZE q5 and q7 under auto, q5 under global
SET gpuagg.explain_device_details = on;
EXPLAIN (ANALYZE) SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6;
EXPLAIN (ANALYZE) SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3;
SET gpuagg.strategy = global;
EXPLAIN (ANALYZE) SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6;
