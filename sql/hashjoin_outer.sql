--
-- hashjoin_outer: LEFT, RIGHT and FULL joins on GpuHashJoin: unmatched rows
-- null-extended, NULL keys kept, ON conditions versus WHERE filters
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

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
