-- test/bench/profile.sql - where GpuHashAgg's time goes on the group-by table (schema
-- groupby, made by test/bench/run.sh with KEEP_CLUSTER=1): the scan floor of native
-- parallel plans, gpuagg with and without the Gather leader scanning, with fewer
-- workers, and EXPLAIN ANALYZE of each.  Run by test/gpu-host-verify.sh profile.
\timing on
SET search_path = groupby, public;
SET gpuagg.force = on;
SET gpuagg.device = gpu;
\echo ==== scan floor: native parallel
SET gpuagg.enabled = off;
SELECT count(*) FROM x;
SELECT count(*) FROM x;
SELECT sum(v1) FROM x;
SELECT sum(v1), count(id1) FROM x;
RESET gpuagg.enabled;
\echo ==== q1 gpuagg, leader participates
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
EXPLAIN (ANALYZE, VERBOSE) SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1;
\echo ==== q1 gpuagg, leader only receives
SET parallel_leader_participation = off;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
EXPLAIN (ANALYZE, VERBOSE) SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1;
\echo ==== q4 (int key) gpuagg, leader only receives
SELECT * FROM (SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4) s OFFSET 1000000000;
\echo ==== q1 gpuagg, 4 and 8 workers, leader only receives
SET max_parallel_workers_per_gather = 4;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
SET max_parallel_workers_per_gather = 8;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
\echo ==== q1 gpuagg serial variant (no workers)
SET max_parallel_workers_per_gather = 0;
EXPLAIN (ANALYZE, VERBOSE) SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1;
RESET max_parallel_workers_per_gather;
\echo ==== q3 (1e6 text groups) and q5 (1e6 int groups)
EXPLAIN (ANALYZE, VERBOSE) SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM x GROUP BY id3;
SET parallel_leader_participation = off;
EXPLAIN (ANALYZE, VERBOSE) SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM x GROUP BY id3;
EXPLAIN (ANALYZE, VERBOSE) SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6;
