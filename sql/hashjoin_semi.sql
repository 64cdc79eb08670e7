--
-- hashjoin_semi: SEMI (EXISTS, IN) and ANTI (NOT EXISTS) joins on
-- GpuHashJoin: each outer row at most once, NULL keys, extra conditions
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

EXPLAIN (COSTS OFF) SELECT id FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.k4 = jl.k4);
EXPLAIN (COSTS OFF) SELECT id FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.kt = jl.kt AND jr.w > 3);

-- SEMI: a row with many matches appears once
SELECT gpujoin_check('SELECT id FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.k4 = jl.k4)');
SELECT gpujoin_check('SELECT id FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.k8b = jl.k8 AND jr.w > jl.id % 17)');
SELECT gpujoin_check('SELECT id, kt FROM jl WHERE kt IN (SELECT kt FROM jr WHERE w < 3)');
SELECT count(*) FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.k8b = jl.k8);
-- ANTI: rows with no match, NULL keys included (NOT EXISTS keeps them)
SELECT gpujoin_check('SELECT id FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.k4 = jl.k4)');
SELECT gpujoin_check('SELECT id FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.kt = jl.kt AND jr.w > 15)');
SELECT gpujoin_check('SELECT id, k8 FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.k8 = jl.k8)');
SELECT gpujoin_check('SELECT id FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.kn = jl.kn AND jr.kd = jl.kd)');
SELECT count(*), count(*) FILTER (WHERE k4 IS NULL) FROM jl WHERE NOT EXISTS (SELECT FROM jr WHERE jr.k4 = jl.k4);
-- the anti join of a LEFT JOIN ... IS NULL
SELECT gpujoin_check('SELECT jl.id FROM jl LEFT JOIN jr ON jl.k4 = jr.k4 WHERE jr.k4 IS NULL');
-- empty sides
SELECT gpujoin_check('SELECT id FROM jl WHERE EXISTS (SELECT FROM jempty WHERE jempty.k4 = jl.k4)');
SELECT gpujoin_check('SELECT id FROM jl WHERE NOT EXISTS (SELECT FROM jempty WHERE jempty.k4 = jl.k4)');
SELECT gpujoin_check('SELECT id FROM jempty WHERE NOT EXISTS (SELECT FROM jl WHERE jempty.k4 = jl.k4)');
-- under an aggregate
SELECT gpujoin_check('SELECT kb, count(*), sum(v) FROM jl WHERE EXISTS (SELECT FROM jr WHERE jr.kt = jl.kt) GROUP BY kb');
