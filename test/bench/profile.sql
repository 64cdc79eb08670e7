-- test/bench/profile.sql - where GpuHashAgg's time goes on the group-by table (schema
-- groupby, made by test/bench/run.sh with KEEP_CLUSTER=1): the scan floor of native
-- parallel plans, gpuagg with its direct heap scan on and off, fewer workers, and
-- EXPLAIN ANALYZE.  Run by test/host/gpu-host-verify.sh profile.
\timing on
SET search_path = groupby, public;
SET gpuagg.device = gpu;
\echo ==== scan floor and q1, q4 native parallel
SET gpuagg.enabled = off;
SELECT count(*) FROM x;
SELECT sum(v1) FROM x;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
SELECT * FROM (SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4) s OFFSET 1000000000;
RESET gpuagg.enabled;
SET gpuagg.force = on;
\echo ==== q1 gpuagg, direct scan (x3)
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
\echo ==== q1 gpuagg, direct scan off (x2)
SET gpuagg.direct_scan = off;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
RESET gpuagg.direct_scan;
\echo ==== q1 gpuagg, direct scan, leader only receives (x2)
SET parallel_leader_participation = off;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
RESET parallel_leader_participation;
\echo ==== q1 gpuagg, direct scan, 8 workers
SET max_parallel_workers_per_gather = 8;
SELECT * FROM (SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1) s OFFSET 1000000000;
RESET max_parallel_workers_per_gather;
\echo ==== q4 gpuagg (int key), direct on (x2), off
SELECT * FROM (SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4) s OFFSET 1000000000;
SELECT * FROM (SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4) s OFFSET 1000000000;
SET gpuagg.direct_scan = off;
SELECT * FROM (SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4) s OFFSET 1000000000;
RESET gpuagg.direct_scan;
\echo ==== q2, q5, q7 gpuagg direct
SELECT * FROM (SELECT id1, id2, sum(v1) AS v1 FROM x GROUP BY id1, id2) s OFFSET 1000000000;
SELECT * FROM (SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6) s OFFSET 1000000000;
\echo ==== EXPLAIN ANALYZE q1, q5, q3 (direct scan)
EXPLAIN (ANALYZE, VERBOSE) SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1;
EXPLAIN (ANALYZE, VERBOSE) SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6;
EXPLAIN (ANALYZE, VERBOSE) SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM x GROUP BY id3;
