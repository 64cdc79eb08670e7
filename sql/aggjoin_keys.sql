--
-- aggjoin_keys: an aggjoin GpuHashAgg whose joins have several keys
-- (up to 32 equalities a join: the device hashes them together and
-- compares the keys themselves), keys of any exact or dictionary type, the
-- outer keys of one join from different sides of a chain (TPC-H Q5's
-- c_nationkey = s_nationkey), NULL in any key, tuples that share some of
-- their values, every join type, and what stays on other plans
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

-- mk_fact: the probe side; a NULL in each key column now and then, the
-- values of (a, b) repeat with different c
CREATE TABLE mk_fact AS
SELECT id,
       CASE WHEN id % 37 = 0 THEN NULL ELSE id % 6 END AS a,
       CASE WHEN id % 41 = 0 THEN NULL ELSE (id / 6) % 5 END::int8 AS b,
       CASE WHEN id % 43 = 0 THEN NULL ELSE 'c' || (id % 4) END AS c,
       DATE '2024-01-01' + id % 3 AS d,
       id % 9 AS g,
       CASE WHEN id % 13 = 0 THEN NULL ELSE id END AS v,
       (id % 7) AS nation
FROM generate_series(1, 6000) id;
-- mk_dim: unique on (a, b, c) but not on any part of it; (a, b) pairs that
-- share a value ((1, 2), (1, 3), (2, 1)), a NULL in each part, negative a
CREATE TABLE mk_dim AS
SELECT a, b::int8 AS b, 'c' || c AS c, a * 100 + b * 10 + c AS w, (a + b + c) % 7 AS nation
FROM generate_series(-1, 5) a, generate_series(0, 4) b, generate_series(0, 3) c
WHERE (a + b + c) % 5 <> 0
UNION ALL SELECT NULL, 1, 'c1', -1, 1
UNION ALL SELECT 1, NULL, 'c1', -2, 1
UNION ALL SELECT 1, 1, NULL, -3, 1;
-- mk_multi: duplicate keys (many to many) and one heavy key
CREATE TABLE mk_multi AS
SELECT i % 6 AS a, ((i / 6) % 5)::int8 AS b, i AS w FROM generate_series(1, 300) i
UNION ALL SELECT 1, 2, i FROM generate_series(1, 400) i;
-- mk_nation: keyed by (nation, a): a second level keyed by two sides
CREATE TABLE mk_nation AS
SELECT n AS nation, a, 'nation' || n || '/' || a AS name
FROM generate_series(0, 5) n, generate_series(0, 5) a WHERE (n + a) % 4 <> 3;
CREATE TABLE mk_empty AS SELECT * FROM mk_dim WHERE false;
ANALYZE mk_fact, mk_dim, mk_multi, mk_nation, mk_empty;

-- the plan: the aggregation joins on all three keys itself
EXPLAIN (COSTS OFF)
SELECT mk_fact.g, count(*), sum(mk_dim.w) FROM mk_fact
JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c
GROUP BY mk_fact.g;

-- INNER on two, three keys; int4 = int8 across the sides; a text key
SELECT aggjoin_check('SELECT mk_fact.g, count(*), sum(mk_dim.w), sum(mk_fact.v) FROM mk_fact JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b GROUP BY mk_fact.g');
SELECT aggjoin_check('SELECT mk_fact.g, count(*), sum(mk_dim.w), sum(mk_fact.v) FROM mk_fact JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c GROUP BY mk_fact.g');
SELECT aggjoin_check('SELECT mk_dim.c, count(*), min(mk_dim.w), max(mk_fact.id) FROM mk_fact JOIN mk_dim ON mk_fact.c = mk_dim.c AND mk_fact.a = mk_dim.a GROUP BY mk_dim.c');
-- four keys, one an expression of the probe side
SELECT aggjoin_check('SELECT count(*), sum(mk_dim.w) FROM mk_fact JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c AND mk_fact.nation % 3 = mk_dim.nation % 3');
-- many to many, one heavy key
SELECT aggjoin_check('SELECT mk_fact.g, count(*), sum(mk_multi.w) FROM mk_fact JOIN mk_multi ON mk_fact.a = mk_multi.a AND mk_fact.b = mk_multi.b GROUP BY mk_fact.g');

-- LEFT: a NULL in any key, or no match, keeps the row with NULL columns
SELECT aggjoin_check('SELECT mk_fact.g, count(*), count(mk_dim.w), sum(mk_dim.w) FROM mk_fact LEFT JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c GROUP BY mk_fact.g');
SELECT aggjoin_check('SELECT mk_fact.a IS NULL OR mk_fact.b IS NULL OR mk_fact.c IS NULL AS null_key, count(*), count(mk_dim.w) FROM mk_fact LEFT JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c GROUP BY 1');
-- (an expression over the LEFT join's nullable side stays off the device)
SELECT aggjoin_check('SELECT mk_dim.w IS NULL AS unmatched, count(*) FROM mk_fact LEFT JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c GROUP BY 1');
-- SEMI (each key tuple once, however many build rows have it) and ANTI
SELECT aggjoin_check('SELECT mk_fact.g, count(*), sum(mk_fact.v) FROM mk_fact WHERE EXISTS (SELECT 1 FROM mk_multi WHERE mk_multi.a = mk_fact.a AND mk_multi.b = mk_fact.b) GROUP BY mk_fact.g');
SELECT aggjoin_check('SELECT mk_fact.g, count(*), sum(mk_fact.v) FROM mk_fact WHERE NOT EXISTS (SELECT 1 FROM mk_dim WHERE mk_dim.a = mk_fact.a AND mk_dim.b = mk_fact.b AND mk_dim.c = mk_fact.c) GROUP BY mk_fact.g');
-- RIGHT and FULL: the build rows without a match, NULL keys included
SELECT aggjoin_check('SELECT mk_dim.nation, count(*), count(mk_fact.id), sum(mk_dim.w) FROM mk_fact RIGHT JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c GROUP BY mk_dim.nation');
SELECT aggjoin_check('SELECT count(*), count(mk_fact.id), count(mk_dim.w), sum(mk_dim.w), sum(mk_fact.v) FROM mk_fact FULL JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c');
-- an empty build side
SELECT aggjoin_check('SELECT mk_fact.g, count(*), count(mk_empty.w) FROM mk_fact LEFT JOIN mk_empty ON mk_fact.a = mk_empty.a AND mk_fact.b = mk_empty.b GROUP BY mk_fact.g');
SELECT aggjoin_check('SELECT count(*) FROM mk_fact JOIN mk_empty ON mk_fact.a = mk_empty.a AND mk_fact.b = mk_empty.b');

-- a chain: the second join's keys come from two sides (the probe side and
-- the first join's build side), as TPC-H Q5's supplier join does
EXPLAIN (COSTS OFF)
SELECT mk_nation.name, count(*), sum(mk_fact.v) FROM mk_fact
JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c
JOIN mk_nation ON mk_nation.nation = mk_dim.nation AND mk_nation.a = mk_fact.a
GROUP BY mk_nation.name;
SELECT aggjoin_check('SELECT mk_nation.name, count(*), sum(mk_fact.v) FROM mk_fact JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c JOIN mk_nation ON mk_nation.nation = mk_dim.nation AND mk_nation.a = mk_fact.a GROUP BY mk_nation.name');
SELECT aggjoin_check('SELECT mk_fact.g, count(*), count(mk_nation.name) FROM mk_fact JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c LEFT JOIN mk_nation ON mk_nation.nation = mk_dim.nation AND mk_nation.a = mk_fact.a GROUP BY mk_fact.g');
-- a single-key join, then one on two keys, then a FULL one on two
SELECT aggjoin_check('SELECT count(*), count(mk_fact.id), count(mk_nation.name), sum(mk_multi.w) FROM mk_fact JOIN mk_multi ON mk_multi.w = mk_fact.id JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c FULL JOIN mk_nation ON mk_nation.nation = mk_dim.nation AND mk_nation.a = mk_fact.a');

-- a char(n) group key of a build side: padded to its length, so spelt one
-- way (TPC-H Q5's n_name); an unpadded bpchar's spellings keep other plans
ALTER TABLE mk_nation ADD COLUMN cname char(12);
UPDATE mk_nation SET cname = 'n' || nation;
ANALYZE mk_nation;
SELECT aggjoin_check('SELECT mk_nation.cname, count(*), sum(mk_fact.v) FROM mk_fact JOIN mk_nation ON mk_nation.nation = mk_fact.nation AND mk_nation.a = mk_fact.a GROUP BY mk_nation.cname');
SELECT aggjoin_check('SELECT mk_nation.cname::bpchar, count(*) FROM mk_fact JOIN mk_nation ON mk_nation.nation = mk_fact.nation AND mk_nation.a = mk_fact.a GROUP BY 1');
-- a numeric group key of a build side: a column of a declared scale stores
-- every value at that scale (TPC-H Q10's c_acctbal); one without a scale has
-- spellings and keeps other plans
ALTER TABLE mk_nation ADD COLUMN bal numeric(8,2), ADD COLUMN raw numeric;
UPDATE mk_nation SET bal = nation * 1.5, raw = CASE WHEN nation % 2 = 0 THEN 1.50 ELSE 1.5 END;
ANALYZE mk_nation;
SELECT aggjoin_check('SELECT mk_nation.bal, count(*), sum(mk_fact.v) FROM mk_fact JOIN mk_nation ON mk_nation.nation = mk_fact.nation AND mk_nation.a = mk_fact.a GROUP BY mk_nation.bal');
SELECT aggjoin_check('SELECT mk_nation.raw, count(*) FROM mk_fact JOIN mk_nation ON mk_nation.nation = mk_fact.nation AND mk_nation.a = mk_fact.a GROUP BY 1');
-- ... also beside a probe-side key with spellings (interval: '1 mon' =
-- '30 days'): each side numbers its child columns from 1, and each key's
-- first-row spelling is read from its own side's column
CREATE TABLE mk_sp AS
SELECT id % 7 AS nation, id % 6 AS a,
       CASE WHEN id % 3 = 0 THEN INTERVAL '1 mon' ELSE INTERVAL '30 days' END AS iv
FROM generate_series(1, 3000) id;
ANALYZE mk_sp;
SELECT aggjoin_check('SELECT mk_sp.iv, mk_nation.bal, count(*) FROM mk_sp JOIN mk_nation ON mk_nation.nation = mk_sp.nation AND mk_nation.a = mk_sp.a GROUP BY 1, 2');
SELECT mk_sp.iv, mk_nation.bal, count(*) FROM mk_sp JOIN mk_nation ON mk_nation.nation = mk_sp.nation AND mk_nation.a = mk_sp.a GROUP BY 1, 2 ORDER BY 2 LIMIT 3;
DROP TABLE mk_sp;

-- prepared, run as a generic plan
PREPARE mk_prep(int) AS
SELECT mk_fact.g, count(*), sum(mk_dim.w) FROM mk_fact
JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c
WHERE mk_fact.g < $1 GROUP BY mk_fact.g ORDER BY mk_fact.g;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE mk_prep(4);
EXECUTE mk_prep(4);
EXECUTE mk_prep(2);
RESET plan_cache_mode;
SET gpuagg.enabled = off;
EXECUTE mk_prep(4);
RESET gpuagg.enabled;
DEALLOCATE mk_prep;

-- parallel workers pack the probe side and the build sides (a text key
-- among several: each key's dictionary ids mapped to the leader's), small
-- batches; then a device failure in the middle, finished on the CPU
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 256;
EXPLAIN (COSTS OFF)
SELECT mk_fact.g, count(*), sum(mk_dim.w) FROM mk_fact
JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c
GROUP BY mk_fact.g;
SELECT aggjoin_check('SELECT mk_fact.g, count(*), sum(mk_dim.w), sum(mk_fact.v) FROM mk_fact JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c GROUP BY mk_fact.g');
SELECT aggjoin_check('SELECT mk_dim.c, count(*), count(mk_dim.w) FROM mk_fact LEFT JOIN mk_dim ON mk_fact.c = mk_dim.c AND mk_fact.b = mk_dim.b GROUP BY mk_dim.c');
SELECT aggjoin_check('SELECT mk_nation.name, count(*), sum(mk_fact.v) FROM mk_fact JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c JOIN mk_nation ON mk_nation.nation = mk_dim.nation AND mk_nation.a = mk_fact.a GROUP BY mk_nation.name');
SET gpuagg.debug_fail_at_batch = 3;
SELECT mk_fact.g, count(*), sum(mk_dim.w) FROM mk_fact
JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c
GROUP BY mk_fact.g ORDER BY mk_fact.g;
RESET gpuagg.debug_fail_at_batch;
SELECT mk_fact.g, count(*), sum(mk_dim.w) FROM mk_fact
JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c
GROUP BY mk_fact.g ORDER BY mk_fact.g;
RESET gpuagg.batch_rows;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- five keys (more than four: hashed together like two), LEFT and INNER
SELECT aggjoin_check('SELECT count(*), count(mk_dim.w) FROM mk_fact LEFT JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c AND mk_fact.nation = mk_dim.nation AND mk_fact.g = mk_dim.w % 7');
SELECT aggjoin_check('SELECT mk_fact.g, count(*), sum(mk_dim.w) FROM mk_fact JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.b = mk_dim.b AND mk_fact.c = mk_dim.c AND mk_fact.nation = mk_dim.nation AND mk_fact.g = mk_dim.w % 7 GROUP BY mk_fact.g');

-- what stays on other plans: a float key
SELECT aggjoin_check('SELECT count(*) FROM mk_fact JOIN mk_dim ON mk_fact.a = mk_dim.a AND mk_fact.v::float8 = mk_dim.w::float8');

DROP TABLE mk_fact, mk_dim, mk_multi, mk_nation, mk_empty;
