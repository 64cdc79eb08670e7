--
-- hashjoin_outer: LEFT, RIGHT and FULL joins on GpuHashJoin: unmatched rows
-- null-extended, NULL keys kept, ON conditions versus WHERE filters
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;
-- about GpuHashJoin itself: an aggregation above does not take the join over
-- (aggjoin tests that)
SET gpuagg.enable_aggjoin = off;

EXPLAIN (COSTS OFF) SELECT jl.id, jr.id FROM jl LEFT JOIN jr ON jl.k4 = jr.k4;
EXPLAIN (COSTS OFF) SELECT jl.id, jr.id FROM jl FULL JOIN jr ON jl.k4 = jr.k4 AND jl.v > jr.w WHERE jr.w IS DISTINCT FROM 3;

-- LEFT: rows of jl without a match (and with a NULL key) appear once
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl LEFT JOIN jr ON jl.k4 = jr.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl LEFT JOIN jr ON jl.kt = jr.kt AND jr.w > 8', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl LEFT JOIN jr ON jl.k4 = jr.k4 WHERE jr.id IS NULL', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.w FROM jl LEFT JOIN jr ON jl.k8 = jr.k8b WHERE coalesce(jr.w, -1) < 4', 'GpuHashJoin');
SELECT count(*), count(jr.id) FROM jl LEFT JOIN jr ON jl.k4 = jr.k4;
-- RIGHT: the same from the other side
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl RIGHT JOIN jr ON jl.k4 = jr.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jr LEFT JOIN jl ON jl.kn = jr.kn AND jl.id % 2 = 0', 'GpuHashJoin');
-- FULL: both sides' unmatched rows, NULL keys on both sides
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl FULL JOIN jr ON jl.k4 = jr.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl FULL JOIN jr ON jl.k4 = jr.k4 AND jl.v > jr.w * 100', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl FULL JOIN jr ON jl.kt = jr.kt AND jl.k4 = jr.k4 WHERE jr.w IS DISTINCT FROM 3', 'GpuHashJoin');
SELECT count(*), count(jl.id), count(jr.id) FROM jl FULL JOIN jr ON jl.k4 = jr.k4;
-- empty sides
SELECT gpuagg_check('SELECT jl.id, jempty.id FROM jl LEFT JOIN jempty ON jl.k4 = jempty.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jempty.id FROM jempty LEFT JOIN jl ON jl.k4 = jempty.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jempty.id FROM jl FULL JOIN jempty ON jl.k4 = jempty.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jempty.id FROM jempty FULL JOIN jl ON jl.k4 = jempty.k4', 'GpuHashJoin');
-- an outer join under an aggregate, and chained outer joins
SELECT gpuagg_check('SELECT jr.w, count(*), count(jl.id), sum(jl.v) FROM jr LEFT JOIN jl ON jl.k4 = jr.k4 GROUP BY jr.w', 'GpuHashJoin');
SELECT gpuagg_check('SELECT a.id, b.id, c.id FROM jr a LEFT JOIN jl b ON a.k4 = b.k4 AND b.id < 300 LEFT JOIN jr c ON b.kt = c.kt AND c.w = 1', 'GpuHashJoin');
-- skew with an outer join: one key, many rows, a condition few pairs pass
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl LEFT JOIN jr ON jl.k8 = jr.k8b AND jl.id = jr.id * 2', 'GpuHashJoin');
-- a device failure in the middle of a FULL join
SET gpuagg.batch_rows = 1000;
SET gpuagg.debug_fail_at_batch = 3;
SELECT count(*), count(jl.id), count(jr.id), sum(jl.v), sum(jr.w) FROM jl FULL JOIN jr ON jl.k4 = jr.k4;
RESET gpuagg.debug_fail_at_batch;
RESET gpuagg.batch_rows;
SET gpuagg.enabled = off;
SELECT count(*), count(jl.id), count(jr.id), sum(jl.v), sum(jr.w) FROM jl FULL JOIN jr ON jl.k4 = jr.k4;
RESET gpuagg.enabled;

-- GpuHashAgg over GpuHashJoin (join input): the joined rows go into the
-- aggregation's batches without being projected, for every join type
EXPLAIN (COSTS OFF) SELECT jr.w, count(*), count(jl.id), sum(jl.v) FROM jr LEFT JOIN jl ON jl.k4 = jr.k4 GROUP BY jr.w;
SELECT gpuagg_check('SELECT jr.w, count(*), count(jl.id), sum(jl.v) FROM jr LEFT JOIN jl ON jl.k4 = jr.k4 GROUP BY jr.w');
SELECT gpuagg_check('SELECT jl.kb, count(*), count(jr.id), count(jr.kt), avg(jl.v) FROM jl FULL JOIN jr ON jl.k4 = jr.k4 AND jl.v > jr.w * 100 GROUP BY jl.kb');
SELECT gpuagg_check('SELECT jr.kt, count(*), sum(jl.v), min(jl.kn), max(jr.kd) FROM jl RIGHT JOIN jr ON jl.kt = jr.kt WHERE jl.id IS NULL OR jl.id < 3000 GROUP BY jr.kt');
SELECT gpuagg_check('SELECT jl.kc, count(*), sum(jl.v) FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.k8b = jl.k8) GROUP BY jl.kc');
SELECT gpuagg_check('SELECT jl.kb, count(*), sum(jl.v) FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.k4 = jl.k4) GROUP BY jl.kb');
SELECT gpuagg_check('SELECT jr.w, jl.kb, count(*), sum(jl.v), min(jr.kd) FROM jl JOIN jr ON jl.k8 = jr.k8b GROUP BY ROLLUP (jr.w, jl.kb)');
SELECT gpuagg_check('SELECT jr.w, count(DISTINCT jl.k4), variance(jl.v), stddev(jr.kn) FROM jl JOIN jr ON jl.kn = jr.kn GROUP BY jr.w');
SELECT gpuagg_check('SELECT count(*), sum(jl.v), sum(jr.w) FROM jl JOIN jr ON jl.k8 = jr.k8b AND jl.id % 3 = jr.id % 3');
-- rescans with new outer values (the join is read again each time)
SELECT gpuagg_check('SELECT s.x, (SELECT sum(jl.v) FROM jl JOIN jr ON jl.k4 = jr.k4 AND jl.v + s.x * 10000 > jr.w * 3000) FROM generate_series(0, 3) s(x)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT s.x, (SELECT sum(jr.w) FROM jl RIGHT JOIN jr ON jl.k4 = jr.k4 - s.x) FROM generate_series(0, 2) s(x)', 'GpuHashJoin');
-- device failures: at the aggregation's first batch (the join is read
-- again on the CPU), and at the join's first probe
SET gpuagg.batch_rows = 1000;
SET gpuagg.debug_fail_at_batch = 2;
SELECT jr.w, count(*), count(jl.id), sum(jl.v) FROM jr LEFT JOIN jl ON jl.k4 = jr.k4 GROUP BY jr.w ORDER BY jr.w;
RESET gpuagg.debug_fail_at_batch;
RESET gpuagg.batch_rows;
SET gpuagg.enabled = off;
SELECT jr.w, count(*), count(jl.id), sum(jl.v) FROM jr LEFT JOIN jl ON jl.k4 = jr.k4 GROUP BY jr.w ORDER BY jr.w;
RESET gpuagg.enabled;

-- past hash_mem (work_mem x hash_mem_multiplier): the build side's rows go
-- to partitions on disk by join key, then the probe side's, and the join
-- runs one partition after another; NULL keys and either side's unmatched
-- rows come out as above
SET work_mem = '64kB';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT jl.id, jr.id FROM jl FULL JOIN jr ON jl.k4 = jr.k4;
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.k4 = jr.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl LEFT JOIN jr ON jl.k4 = jr.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jr LEFT JOIN jl ON jl.kn = jr.kn AND jl.id % 2 = 0', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl FULL JOIN jr ON jl.k4 = jr.k4 AND jl.v > jr.w * 100', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl FULL JOIN jr ON jl.kt = jr.kt AND jl.k4 = jr.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id FROM jl WHERE EXISTS (SELECT 1 FROM jr WHERE jr.k4 = jl.k4)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id FROM jl WHERE NOT EXISTS (SELECT 1 FROM jr WHERE jr.kt = jl.kt AND jr.w = 16)', 'GpuHashJoin');
-- the joined rows of a partitioned join feeding an aggregation
SELECT gpuagg_check('SELECT jr.w, count(*), count(jl.id), sum(jl.v) FROM jr LEFT JOIN jl ON jl.k4 = jr.k4 GROUP BY jr.w');
-- rescans partition again
SELECT gpuagg_check('SELECT s.x, (SELECT sum(jr.w) FROM jl RIGHT JOIN jr ON jl.k4 = jr.k4 - s.x) FROM generate_series(0, 2) s(x)', 'GpuHashJoin');
-- a device failure in a partition's probe: the CPU device goes on from there
SET gpuagg.batch_rows = 1000;
SET gpuagg.debug_fail_at_batch = 2;
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl FULL JOIN jr ON jl.k4 = jr.k4', 'GpuHashJoin');
RESET gpuagg.debug_fail_at_batch;
RESET gpuagg.batch_rows;
RESET work_mem;
