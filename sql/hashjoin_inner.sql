--
-- hashjoin_inner: GpuHashJoin for inner joins: key types, cross-type keys,
-- several keys, NULL keys, duplicates and skew, extra conditions, empty
-- sides, prepared statements, rescans, a device failure
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;
-- about GpuHashJoin itself: an aggregation above does not take the join over
-- (aggjoin tests that)
SET gpuagg.enable_aggjoin = off;

-- the two sides: keys of many types, NULL keys, duplicates, one heavy key
CREATE TABLE jl AS
SELECT id,
       CASE WHEN id % 31 = 0 THEN NULL ELSE id % 500 END AS k4,
       (id % 500)::int2 AS k2,
       CASE WHEN id % 7 = 0 THEN 3 ELSE id % 700 END::int8 AS k8,
       'key' || (id % 300) AS kt,
       ('key' || (id % 300))::varchar(12) AS kv,
       ('key' || (id % 300))::char(8) AS kc,
       DATE '2024-01-01' + id % 60 AS kd,
       TIMESTAMP '2024-01-01' + (id % 48) * INTERVAL '30 minutes' AS kts,
       ((id % 40) / 4.0)::numeric(6,2) AS kn,
       CASE WHEN id % 97 = 0 THEN 'NaN'::float8 WHEN id % 10 = 0 THEN '-0'::float8
            ELSE (id % 10)::float8 END AS kf,
       id % 3 = 0 AS kb,
       id * 10 AS v
FROM generate_series(1, 6000) id;
CREATE TABLE jr AS
SELECT id,
       CASE WHEN id % 37 = 0 THEN NULL ELSE id % 650 END AS k4,
       (id % 650)::int8 AS k8,
       CASE WHEN id % 5 = 0 THEN 3 ELSE id END::int4 AS k8b,
       'key' || (id % 350) AS kt,
       ('key' || (id % 350))::varchar(12) AS kv,
       ('key' || (id % 350) || '   ')::char(8) AS kc,
       DATE '2024-01-15' + id % 60 AS kd,
       TIMESTAMP '2024-01-01' + (id % 96) * INTERVAL '15 minutes' AS kts,
       ((id % 80) / 8.0)::numeric(8,3) AS kn,
       CASE WHEN id % 89 = 0 THEN 'NaN'::float8 ELSE (id % 12)::float8 END AS kf,
       id % 2 = 0 AS kb,
       id % 17 AS w
FROM generate_series(1, 1500) id;
CREATE TABLE jempty AS SELECT * FROM jr WHERE false;
ANALYZE jl, jr, jempty;

-- the plan: GpuHashJoin with its keys; exact integer keys need no recheck
EXPLAIN (COSTS OFF) SELECT jl.id, jr.id FROM jl JOIN jr ON jl.k4 = jr.k4;
EXPLAIN (COSTS OFF, VERBOSE) SELECT jl.v, jr.w FROM jl JOIN jr ON jl.kt = jr.kt AND jl.k4 = jr.k4 AND jl.v > jr.w;

-- integer keys, same and mixed widths
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.k4 = jr.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.k2 = jr.k8', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.k8 = jr.k8b', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.k4 = jr.k8', 'GpuHashJoin');
-- text, varchar, bpchar (trailing blanks do not count), date, timestamp
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.kt = jr.kt', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.kv = jr.kv', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.kc = jr.kc', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.kd = jr.kd', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.kts = jr.kts', 'GpuHashJoin');
-- numeric (1.5 = 1.500), float8 (-0 = 0, NaN = NaN), bool, expressions
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.kn = jr.kn', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.kf = jr.kf', 'GpuHashJoin');
SELECT count(*) FROM jl JOIN jr ON jl.kf = jr.kf WHERE jl.kf = 0 OR jl.kf <> jl.kf;
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.kb = jr.kb AND jl.k4 = jr.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.k4 + 1 = jr.k4 - 1', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON lower(jl.kt) = jr.kt', 'GpuHashJoin');
-- several keys, and extra conditions evaluated on every matching pair
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.k4 = jr.k4 AND jl.kt = jr.kt', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id, jl.v, jr.w FROM jl JOIN jr ON jl.k4 = jr.k4 AND jl.v % 7 > jr.w % 5', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.k8 = jr.k8b AND (jl.id + jr.id) % 3 = 0', 'GpuHashJoin');
-- extreme integers are exact keys: the int8 minimum matches only itself
CREATE TEMP TABLE ext_a AS SELECT x FROM unnest(ARRAY[-9223372036854775808, -9223372036854775807, 9223372036854775807, 0, 1]::int8[]) x;
CREATE TEMP TABLE ext_b AS SELECT y FROM unnest(ARRAY[-9223372036854775807, -9223372036854775808, 9223372036854775807, -1]::int8[]) y;
SELECT gpuagg_check('SELECT x, y FROM ext_a JOIN ext_b ON x = y', 'GpuHashJoin');
SELECT gpuagg_check('SELECT x, y FROM ext_a FULL JOIN ext_b ON x = y', 'GpuHashJoin');
-- heavy skew: key 3 matches hundreds of rows on both sides
SELECT count(*), sum(jl.v), sum(jr.w) FROM jl JOIN jr ON jl.k8 = jr.k8b;
SELECT gpuagg_check('SELECT jl.k8, count(*), sum(jl.v + jr.w) FROM jl JOIN jr ON jl.k8 = jr.k8b GROUP BY jl.k8', 'GpuHashJoin');
-- NULL keys never match
SELECT count(*) FROM jl JOIN jr ON jl.k4 = jr.k4;
SELECT count(*) FROM jl JOIN jr ON jl.k4 = jr.k4 WHERE jl.k4 IS NULL OR jr.k4 IS NULL;
-- empty sides
SELECT gpuagg_check('SELECT jl.id, jempty.id FROM jl JOIN jempty ON jl.k4 = jempty.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id, jempty.id FROM jempty JOIN jl ON jl.k4 = jempty.k4', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jl.id FROM jl JOIN jr ON jl.k4 = jr.k4 WHERE jr.id < 0', 'GpuHashJoin');
-- three tables, and an aggregate above the joins
SELECT gpuagg_check('SELECT a.id, b.id, c.id FROM jl a JOIN jr b ON a.k4 = b.k4 JOIN jr c ON b.kt = c.kt WHERE a.id < 500', 'GpuHashJoin');
SELECT gpuagg_check('SELECT jr.kt, count(*), sum(jl.v), min(jr.w) FROM jl JOIN jr ON jl.k4 = jr.k4 GROUP BY jr.kt', 'GpuHashJoin');
EXPLAIN (COSTS OFF) SELECT jr.kt, count(*) FROM jl JOIN jr ON jl.k4 = jr.k4 GROUP BY jr.kt;

-- prepared statements: custom and generic plans
PREPARE jq(int) AS SELECT count(*), sum(jl.v) FROM jl JOIN jr ON jl.k4 = jr.k4 WHERE jr.w = $1;
SET plan_cache_mode = force_custom_plan;
EXECUTE jq(3);
SET plan_cache_mode = force_generic_plan;
EXECUTE jq(3);
EXECUTE jq(4);
RESET plan_cache_mode;
SET gpuagg.enabled = off;
EXECUTE jq(3);
EXECUTE jq(4);
RESET gpuagg.enabled;
DEALLOCATE jq;

-- rescans: the join inside a correlated subquery and under a LATERAL
SELECT gpuagg_check('SELECT s.x, (SELECT count(*) FROM jl JOIN jr ON jl.k4 = jr.k4 WHERE jr.w = s.x) FROM generate_series(0, 4) s(x)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT s.x, t.c FROM generate_series(0, 3) s(x), LATERAL (SELECT count(*) AS c FROM jl JOIN jr ON jl.k4 = jr.k4 AND jr.w = s.x) t', 'GpuHashJoin');
-- ... with the outer value in the join filter, the outer key or the inner key
SELECT gpuagg_check('SELECT s.x, (SELECT count(*) FROM jl JOIN jr ON jl.k4 = jr.k4 AND jl.v + s.x * 10000 > jr.w * 3000) FROM generate_series(0, 4) s(x)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT s.x, (SELECT count(*) FROM jl JOIN jr ON jl.k4 + s.x = jr.k4) FROM generate_series(0, 2) s(x)', 'GpuHashJoin');
SELECT gpuagg_check('SELECT s.x, (SELECT count(*) FROM jl RIGHT JOIN jr ON jl.k4 = jr.k4 - s.x AND jl.v > s.x * 20000) FROM generate_series(0, 2) s(x)', 'GpuHashJoin');

-- a device failure at the first probe finishes the join on the CPU
SET gpuagg.debug_fail_at_batch = 1;
SELECT count(*), sum(jl.v), sum(jr.w) FROM jl JOIN jr ON jl.k4 = jr.k4;
RESET gpuagg.debug_fail_at_batch;
SELECT count(*), sum(jl.v), sum(jr.w) FROM jl JOIN jr ON jl.k4 = jr.k4;

-- small probe batches: many batches, same answer
SET gpuagg.batch_rows = 100;
SELECT gpuagg_check('SELECT jl.id, jr.id FROM jl JOIN jr ON jl.k8 = jr.k8b', 'GpuHashJoin');
RESET gpuagg.batch_rows;

-- cases that keep the native join even when forced
SELECT gpuagg_used('SELECT jl.id FROM jl JOIN jr ON jl.k4 < jr.k4 AND jl.id < 10', 'GpuHashJoin') AS non_equi,
       gpuagg_used('SELECT jl.id FROM jl JOIN jr ON jl.k4 = jr.k4 FOR UPDATE OF jl', 'GpuHashJoin') AS row_lock,
       gpuagg_used('SELECT jl.id FROM jl JOIN jr ON jl.k4 = jr.k4', 'GpuHashJoin') AS supported;
SET gpuagg.enable_hashjoin = off;
SELECT gpuagg_used('SELECT jl.id FROM jl JOIN jr ON jl.k4 = jr.k4', 'GpuHashJoin') AS disabled;
RESET gpuagg.enable_hashjoin;

-- statement_timeout stops a join whose one key matches everything
CREATE TEMP TABLE wide AS SELECT 1 AS k, i AS v FROM generate_series(1, 30000) i;
SET statement_timeout = '200ms';
SELECT count(*) FROM wide a JOIN wide b ON a.k = b.k AND a.v + b.v < 0;
RESET statement_timeout;
SELECT count(*) FROM wide a JOIN wide b ON a.k = b.k AND a.v = b.v WHERE a.v <= 100;

-- EXPLAIN ANALYZE: what the join did (its own properties; the device lines
-- are hidden, and PostgreSQL's own lines differ between versions)
CREATE FUNCTION join_analyze(query text) RETURNS TABLE (property text, value text)
LANGUAGE sql AS $$
SELECT * FROM gpuagg_plan_properties(query, ARRAY['Custom Plan Provider', 'Join Type',
    'Hash Cond', 'Join Filter', 'Build Rows', 'Probe Batches', 'Probe Rows',
    'Candidates', 'Matched Rows'])
$$;
SELECT * FROM join_analyze('SELECT jl.id, jr.id FROM jl LEFT JOIN jr ON jl.kt = jr.kt AND jr.w > 8');
SELECT * FROM join_analyze('SELECT jl.id FROM jl JOIN jr ON jl.k8 = jr.k8b AND jl.id < jr.id');
