--
-- hashjoin_semi: SEMI (EXISTS, IN) and ANTI (NOT EXISTS) joins on
-- GpuHashJoin: each outer row at most once, NULL keys, extra conditions
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;
-- about GpuHashJoin itself: an aggregation above does not take the join over
-- (aggjoin tests that)
SET gpuagg.enable_aggjoin = off;

EXPLAIN (COSTS OFF) SELECT id FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.k4 = jl.k4);
EXPLAIN (COSTS OFF) SELECT id FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.kt = jl.kt AND jr.w > 3);

-- SEMI: a row with many matches appears once
SELECT gpuagg_check('SELECT id FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.k4 = jl.k4)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT id FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.k8b = jl.k8 AND jr.w > jl.id % 17)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT id, kt FROM jl WHERE kt IN (SELECT kt FROM jr WHERE w < 3)', 'GpuHashJoin');
SELECT count(*) FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.k8b = jl.k8);
-- ANTI: rows with no match, NULL keys included (NOT EXISTS keeps them)
SELECT gpuagg_check('SELECT id FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.k4 = jl.k4)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT id FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.kt = jl.kt AND jr.w > 15)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT id, k8 FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.k8 = jl.k8)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT id FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.kn = jl.kn AND jr.kd = jl.kd)', 'GpuHashJoin');
SELECT count(*), count(*) FILTER (WHERE k4 IS NULL) FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.k4 = jl.k4);
-- the anti join of a LEFT JOIN ... IS NULL
SELECT gpuagg_check('SELECT jl.id FROM jl LEFT JOIN jr ON jl.k4 = jr.k4 WHERE jr.k4 IS NULL', 'GpuHashJoin');
-- empty sides
SELECT gpuagg_check('SELECT id FROM jl WHERE EXISTS (SELECT FROM jempty WHERE jempty.k4 = jl.k4)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT id FROM jl WHERE NOT EXISTS (SELECT FROM jempty WHERE jempty.k4 = jl.k4)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT id FROM jempty WHERE NOT EXISTS (SELECT FROM jl WHERE jempty.k4 = jl.k4)', 'GpuHashJoin');
-- under an aggregate
SELECT gpuagg_check('SELECT kb, count(*), sum(v) FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.kt = jl.kt) GROUP BY kb', 'GpuHashJoin');
