--
-- aggjoin: GpuHashAgg over a join that the device computes itself
-- (the joined rows never reach the host): INNER and LEFT joins, NULL keys,
-- duplicates and skew on both sides, cross-type keys, empty sides, group
-- keys and aggregates from either side, parallel workers packing the probe
-- side, a device failure, rescans; and what stays on other plans
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

-- fact: probe side, NULL keys, one heavy key; dim: unique keys (the
-- primary-key side of a star join); multi: duplicate keys (many to many)
CREATE TABLE jf_fact AS
SELECT id,
       CASE WHEN id % 29 = 0 THEN NULL WHEN id % 5 = 0 THEN 7 ELSE id % 400 END AS k,
       (id % 400)::int2 AS k2,
       DATE '2024-01-01' + id % 90 AS d,
       id % 13 AS g,
       'grp' || (id % 6) AS gt,
       CASE WHEN id % 11 = 0 THEN NULL ELSE id * 3 END AS v,
       ((id % 100) / 8.0)::float8 AS f,
       ((id % 1000) / 100.0)::numeric(8,2) AS n,
       CASE WHEN id % 29 = 0 THEN 2000000000 ELSE id END AS big,
       CASE WHEN id % 31 = 0 THEN NULL WHEN id % 7 = 0 THEN 'NAME1' ELSE 'name' || (id % 20) END AS t,
       ('c' || (id % 40))::char(6) AS c
FROM generate_series(1, 12000) id;
CREATE TABLE jf_dim AS
SELECT id AS k, id::int8 AS k8, DATE '2024-01-15' + id AS d,
       'name' || (id % 17) AS name,
       CASE WHEN id % 9 = 0 THEN NULL ELSE id % 50 END AS w,
       (id / 7.0)::float8 AS x,
       (id / 3.0)::numeric(10,3) AS m,
       ('c' || (id % 50) || '  ')::char(8) AS c
FROM generate_series(1, 300) id;
CREATE TABLE jf_multi AS
SELECT CASE WHEN i % 23 = 0 THEN NULL ELSE i % 120 END AS k,
       i AS w, 'm' || (i % 4) AS tag
FROM generate_series(1, 900) i
UNION ALL SELECT 7, i, 'heavy' FROM generate_series(1, 500) i;
CREATE TABLE jf_empty AS SELECT * FROM jf_dim WHERE false;
-- dim2: keyed by jf_dim.w (a snowflake's second level; w 46-49 unmatched)
CREATE TABLE jf_dim2 AS
SELECT i AS w, 'region' || (i % 5) AS region, i * 10 AS pop FROM generate_series(0, 45) i;
-- region: keyed by jf_dim2.region, a text key (region4 unmatched, one NULL)
CREATE TABLE jf_region AS
SELECT 'region' || i AS region, 'zone' || (i % 2) AS zone FROM generate_series(0, 3) i
UNION ALL SELECT NULL, 'zone9';
-- pair: a two-column key (int4, int2), negative values, a NULL in each part
CREATE TABLE jf_pair AS
SELECT a, b::int2 AS b, a * 1000 + b AS val
FROM generate_series(-8, 8) a, generate_series(0, 399, 7) b
UNION ALL SELECT NULL, 7::int2, -1 UNION ALL SELECT 1, NULL, -2;
ANALYZE jf_fact, jf_dim, jf_multi, jf_empty, jf_pair, jf_dim2, jf_region;

-- the plans: no GpuHashJoin node, the aggregation has both sides as children
EXPLAIN (COSTS OFF)
SELECT count(*), sum(jf_fact.v), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k);
EXPLAIN (COSTS OFF, VERBOSE)
SELECT jf_dim.name, count(*), avg(jf_fact.f) FROM jf_fact LEFT JOIN jf_dim USING (k)
GROUP BY jf_dim.name;

-- INNER: plain and grouped, keys and aggregates from either side
SELECT aggjoin_check('SELECT count(*), sum(jf_fact.v), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k)');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_dim.w), min(jf_dim.x), max(jf_fact.f) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_dim.name, jf_fact.gt, count(jf_dim.w), avg(jf_fact.v), sum(jf_dim.m) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_dim.name, jf_fact.gt');
-- (float statistics rounded: the order of float additions differs)
SELECT aggjoin_check('SELECT jf_dim.w, count(*), round(stddev(jf_dim.x)::numeric, 9), variance(jf_fact.n), round(covar_pop(jf_dim.x, jf_dim.w)::numeric, 9) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_dim.w');
SELECT aggjoin_check('SELECT jf_fact.gt, sum(jf_fact.n), count(*) FILTER (WHERE jf_fact.v > 100), bool_and(jf_dim.w > 3) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.gt');
-- an expression of one side that cannot fail is computed by that side; one
-- that can (overflow, division by zero) is not, since the join may drop the
-- rows it fails on: big * 2 overflows only where k is NULL
SELECT aggjoin_check('SELECT jf_fact.g < 5, count(*), bool_or(jf_dim.w > 10), sum(jf_fact.v) FILTER (WHERE jf_fact.f < 5) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g < 5');
SELECT aggjoin_check('SELECT max(jf_fact.big * 2), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k)');
SELECT gpuagg_check('SELECT max(jf_fact.big * 2), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k)');
SELECT aggjoin_check('SELECT jf_fact.g % 3, sum(jf_dim.w * 2 + 1) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g % 3');
-- ... but the outer side of a LEFT join keeps every row: PostgreSQL computes
-- its expressions for all of them too (and fails the same way)
SELECT aggjoin_check('SELECT jf_fact.g % 3, sum(jf_fact.v / (jf_fact.g + 1)), count(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim USING (k) GROUP BY jf_fact.g % 3');
EXPLAIN (COSTS OFF) SELECT max(jf_fact.big * 2), count(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim USING (k);
SELECT max(jf_fact.big * 2), count(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim USING (k);
SET gpuagg.enabled = off;
SELECT max(jf_fact.big * 2), count(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim USING (k);
RESET gpuagg.enabled;
-- LEFT: rows without a match (NULL keys too) count, with the inner side NULL
SELECT aggjoin_check('SELECT count(*), count(jf_dim.w), sum(jf_dim.w), sum(jf_fact.v) FROM jf_fact LEFT JOIN jf_dim USING (k)');
SELECT aggjoin_check('SELECT jf_dim.name, count(*), max(jf_dim.x), min(jf_fact.f) FROM jf_fact LEFT JOIN jf_dim USING (k) GROUP BY jf_dim.name');
-- many to many, with one key matching 500 rows of the build side
SELECT aggjoin_check('SELECT jf_multi.tag, count(*), sum(jf_multi.w), sum(jf_fact.v) FROM jf_fact JOIN jf_multi USING (k) GROUP BY jf_multi.tag');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(jf_multi.w), sum(jf_multi.w) FROM jf_fact LEFT JOIN jf_multi USING (k) GROUP BY jf_fact.g');
-- cross-type keys (int2 = int4, int4 = int8) and date keys
SELECT aggjoin_check('SELECT count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_fact.k2 = jf_dim.k');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k8 GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_dim.name, count(*) FROM jf_fact JOIN jf_dim ON jf_fact.d = jf_dim.d GROUP BY jf_dim.name');
-- dictionary keys: text (and varchar), bpchar ('a' = 'a  '), numeric (1.5 =
-- 1.50): both sides' values become ids of one key dictionary
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_fact.t = jf_dim.name GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT count(*), count(jf_dim.w), sum(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim ON jf_fact.t = jf_dim.name');
SELECT aggjoin_check('SELECT jf_fact.gt, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_fact.t::varchar(12) = jf_dim.name::varchar(12) GROUP BY jf_fact.gt');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_fact.c = jf_dim.c GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), min(jf_dim.x) FROM jf_fact JOIN jf_dim ON jf_fact.n = jf_dim.m GROUP BY jf_fact.g');
-- (bpchar = text compares the bpchar's text: its blanks stripped)
SELECT aggjoin_check('SELECT count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim ON jf_fact.c = jf_dim.c::text');
-- ... not under a nondeterministic collation
CREATE COLLATION jf_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT aggjoin_check('SELECT count(*) FROM jf_fact JOIN jf_dim ON jf_fact.t COLLATE jf_ci = jf_dim.name');
SELECT gpuagg_check('SELECT count(*) FROM jf_fact JOIN jf_dim ON jf_fact.t COLLATE jf_ci = jf_dim.name');
DROP COLLATION jf_ci;
-- SEMI joins (EXISTS, IN): the build keeps each key once, so a probe row
-- counts once however many inner rows match it (jf_multi has duplicates)
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_fact.v) FROM jf_fact WHERE EXISTS (SELECT 1 FROM jf_multi WHERE jf_multi.k = jf_fact.k) GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT count(*), sum(jf_fact.v), max(jf_fact.f) FROM jf_fact WHERE jf_fact.k IN (SELECT k FROM jf_multi WHERE w > 100)');
SELECT aggjoin_check('SELECT jf_fact.gt, count(*) FROM jf_fact WHERE jf_fact.t IN (SELECT name FROM jf_dim) GROUP BY jf_fact.gt');
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact WHERE EXISTS (SELECT 1 FROM jf_multi WHERE jf_multi.k = jf_fact.k);
-- two int2/int4 keys: paired into one exact key (negative parts included)
SELECT aggjoin_check('SELECT jf_pair.a, count(*), sum(jf_pair.val), sum(jf_fact.v) FROM jf_fact JOIN jf_pair ON jf_fact.g - 6 = jf_pair.a AND jf_fact.k2 = jf_pair.b GROUP BY jf_pair.a');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(jf_pair.val), sum(jf_pair.val) FROM jf_fact LEFT JOIN jf_pair ON jf_fact.k2 = jf_pair.b AND jf_fact.g - 6 = jf_pair.a GROUP BY jf_fact.g');
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact JOIN jf_pair ON jf_fact.g - 6 = jf_pair.a AND jf_fact.k2 = jf_pair.b;
-- three keys, or an int8 among two: hashed and rechecked on the device
-- (more in aggjoin_keys)
SELECT aggjoin_check('SELECT count(*) FROM jf_fact JOIN jf_pair ON jf_fact.g - 6 = jf_pair.a AND jf_fact.k2 = jf_pair.b AND jf_fact.k = jf_pair.val');
SELECT aggjoin_check('SELECT count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k8 AND jf_fact.g = jf_dim.w');
-- a chain of joins: the aggregation joins them all on the device (up to
-- eight), each join's outer key from the probe side or a build side below it
EXPLAIN (COSTS OFF)
SELECT jf_dim.name, count(*), sum(jf_multi.w) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_multi ON jf_multi.k = jf_fact.k2 GROUP BY jf_dim.name;
SELECT aggjoin_check('SELECT jf_dim.name, count(*), sum(jf_multi.w) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_multi ON jf_multi.k = jf_fact.k2 GROUP BY jf_dim.name');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k) LEFT JOIN jf_pair ON jf_pair.a = jf_fact.g AND jf_pair.b = jf_fact.k2 GROUP BY jf_fact.g');
-- ... with an outer join below: its nullable side's columns come from the
-- probe side as that join left them
SELECT aggjoin_check('SELECT jf_dim.name, count(*), count(jf_multi.w), sum(jf_multi.w) FROM jf_fact LEFT JOIN jf_multi ON jf_multi.k = jf_fact.k2 JOIN jf_dim ON jf_dim.k = jf_fact.k GROUP BY jf_dim.name');
-- a snowflake: the second join's outer key is a column of the first one's
-- build side; LEFT joins in the chain (a null-extended key matches nothing
-- further up); four joins, many to many and SEMI among them
EXPLAIN (COSTS OFF)
SELECT jf_dim2.region, count(*), sum(jf_fact.v), sum(jf_dim2.pop) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY jf_dim2.region;
SELECT aggjoin_check('SELECT jf_dim2.region, count(*), sum(jf_fact.v), sum(jf_dim2.pop) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY jf_dim2.region');
SELECT aggjoin_check('SELECT jf_dim2.region, count(*), count(jf_dim.w), sum(jf_dim2.pop) FROM jf_fact LEFT JOIN jf_dim USING (k) LEFT JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY jf_dim2.region');
SELECT aggjoin_check('SELECT jf_fact.gt, count(*), sum(jf_dim2.pop) FROM jf_fact LEFT JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY jf_fact.gt');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_multi.w), max(jf_dim2.pop) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w JOIN jf_multi ON jf_multi.k = jf_fact.k2 WHERE jf_fact.g IN (SELECT a FROM jf_pair) GROUP BY jf_fact.g');
EXPLAIN (COSTS OFF)
SELECT jf_fact.g, count(*), sum(jf_multi.w), max(jf_dim2.pop) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w JOIN jf_multi ON jf_multi.k = jf_fact.k2 WHERE jf_fact.g IN (SELECT a FROM jf_pair) GROUP BY jf_fact.g;
-- seven joins, LEFT ones among them (one with an empty table) and a FULL one
-- on top keyed on a LEFT join's nullable side, in whole batches and in small ones
EXPLAIN (COSTS OFF)
SELECT jf_region.zone, count(*), sum(jf_fact.v), count(jf_empty.w), count(d3.k), sum(d4.pop), count(jf_multi.w) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w JOIN jf_region ON jf_region.region = jf_dim2.region LEFT JOIN jf_empty ON jf_empty.k = jf_fact.g LEFT JOIN jf_dim d3 ON d3.k = jf_fact.g + 1 LEFT JOIN jf_dim2 d4 ON d4.w = jf_fact.g FULL JOIN jf_multi ON jf_multi.w = d3.w GROUP BY jf_region.zone;
SELECT aggjoin_check('SELECT jf_region.zone, count(*), sum(jf_fact.v), count(jf_empty.w), count(d3.k), sum(d4.pop), count(jf_multi.w) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w JOIN jf_region ON jf_region.region = jf_dim2.region LEFT JOIN jf_empty ON jf_empty.k = jf_fact.g LEFT JOIN jf_dim d3 ON d3.k = jf_fact.g + 1 LEFT JOIN jf_dim2 d4 ON d4.w = jf_fact.g FULL JOIN jf_multi ON jf_multi.w = d3.w GROUP BY jf_region.zone');
SET gpuagg.batch_rows = 700;
SELECT aggjoin_check('SELECT jf_region.zone, count(*), sum(jf_fact.v), count(jf_empty.w), count(d3.k), sum(d4.pop), count(jf_multi.w) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w JOIN jf_region ON jf_region.region = jf_dim2.region LEFT JOIN jf_empty ON jf_empty.k = jf_fact.g LEFT JOIN jf_dim d3 ON d3.k = jf_fact.g + 1 LEFT JOIN jf_dim2 d4 ON d4.w = jf_fact.g FULL JOIN jf_multi ON jf_multi.w = d3.w GROUP BY jf_region.zone');
RESET gpuagg.batch_rows;
-- text keys in a chain: each join's two keys share their own dictionary
-- (text at the first and the third join, bpchar at a LEFT one)
SELECT aggjoin_check('SELECT jf_region.zone, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim ON jf_fact.t = jf_dim.name JOIN jf_dim2 ON jf_dim2.w = jf_dim.w JOIN jf_region ON jf_region.region = jf_dim2.region GROUP BY jf_region.zone');
EXPLAIN (COSTS OFF)
SELECT jf_region.zone, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim ON jf_fact.t = jf_dim.name JOIN jf_dim2 ON jf_dim2.w = jf_dim.w JOIN jf_region ON jf_region.region = jf_dim2.region GROUP BY jf_region.zone;
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(d2.w) FROM jf_fact JOIN jf_dim ON jf_fact.t = jf_dim.name LEFT JOIN jf_dim d2 ON d2.c = jf_fact.c GROUP BY jf_fact.g');
-- the joins' order: a LEFT join that multiplies the rows (13 values of g, so
-- each fact row meets about 900 others) does not go below the inner join with
-- the empty table, which drops every row: of the orders with far fewer rows to
-- handle, that join comes first (here as the build side of the top join)
SELECT aggjoin_check('SELECT a.g, count(*), max(c.id) FROM jf_fact a JOIN jf_empty b ON a.k = b.k LEFT JOIN jf_fact c ON a.g = c.g GROUP BY a.g');
EXPLAIN (COSTS OFF)
SELECT a.g, count(*), max(c.id) FROM jf_fact a JOIN jf_empty b ON a.k = b.k LEFT JOIN jf_fact c ON a.g = c.g GROUP BY a.g;
-- ... and the fact table stays on the probe side: PostgreSQL estimates the
-- two-key join with jf_pair at a few rows, yet its side reads the 12000 fact
-- rows, so d3 (300 rows) is the build side of the top join, not its probe side
EXPLAIN (COSTS OFF)
SELECT count(*), sum(jf_fact.v), max(jf_pair.val), count(d3.k) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_pair ON jf_pair.a = jf_fact.g - 6 AND jf_pair.b = jf_fact.k2 LEFT JOIN jf_dim d3 ON d3.k = jf_fact.g;
SELECT aggjoin_check('SELECT count(*), sum(jf_fact.v), max(jf_pair.val), count(d3.k) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_pair ON jf_pair.a = jf_fact.g - 6 AND jf_pair.b = jf_fact.k2 LEFT JOIN jf_dim d3 ON d3.k = jf_fact.g');
-- fewer joins on the device when an expression needs a join's result (a
-- FILTER over two tables), or a key above may fail on rows a join drops
-- (jf_dim.w + 1 overflows where PostgreSQL never computes it): the joins
-- below run as usual in the probe side
EXPLAIN (COSTS OFF)
SELECT count(*) FILTER (WHERE jf_fact.g < jf_multi.w), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_multi ON jf_multi.k = jf_fact.k2;
SELECT aggjoin_check('SELECT count(*) FILTER (WHERE jf_fact.g < jf_multi.w), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_multi ON jf_multi.k = jf_fact.k2');
SELECT aggjoin_check('SELECT count(*), sum(jf_dim2.pop) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w + 1');
SELECT gpuagg_used('SELECT count(*), sum(jf_dim2.pop) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w + 1', 'GpuHashJoin');
-- bounded numeric arithmetic cannot fail (numeric(8,2) columns, integers
-- cast to numeric, constants): computed on either side, like TPC-H's
-- revenue; a cast to a narrower numeric may fail, so it is not
SELECT aggjoin_check('SELECT jf_fact.g, sum(jf_fact.n * (1 - jf_fact.n)), sum(jf_dim.m * jf_dim.w::numeric) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT sum(jf_fact.n::numeric(3,1)) FROM jf_fact JOIN jf_dim USING (k)');
-- numeric arithmetic over two sides: the device multiplies after the joins
-- (an unmatched LEFT join row's build operands are null, so is the product)
EXPLAIN (COSTS OFF)
SELECT jf_fact.g, sum(jf_fact.n * jf_dim.m) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g;
SELECT aggjoin_check('SELECT jf_fact.g, sum(jf_fact.n * jf_dim.m), avg(jf_fact.n - jf_dim.m * 2), sum(jf_fact.v * jf_dim.m) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_dim.w, sum(jf_fact.n * jf_dim.m), count(*) FROM jf_fact LEFT JOIN jf_dim USING (k) GROUP BY jf_dim.w');
SELECT aggjoin_check('SELECT sum(jf_fact.n * jf_dim.m * jf_dim2.pop) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w');
-- ANTI joins (NOT EXISTS): the probe rows without a match, NULL keys among
-- them; exact and text keys, an empty inner side, in a chain
EXPLAIN (COSTS OFF)
SELECT count(*), sum(jf_fact.v) FROM jf_fact WHERE NOT EXISTS (SELECT 1 FROM jf_dim WHERE jf_dim.k = jf_fact.k);
SELECT aggjoin_check('SELECT count(*), sum(jf_fact.v) FROM jf_fact WHERE NOT EXISTS (SELECT 1 FROM jf_dim WHERE jf_dim.k = jf_fact.k)');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact WHERE NOT EXISTS (SELECT 1 FROM jf_multi WHERE jf_multi.k = jf_fact.k2) GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT count(*), count(jf_fact.t) FROM jf_fact WHERE NOT EXISTS (SELECT 1 FROM jf_dim WHERE jf_dim.name = jf_fact.t)');
SELECT aggjoin_check('SELECT count(*) FROM jf_fact WHERE NOT EXISTS (SELECT 1 FROM jf_empty WHERE jf_empty.k = jf_fact.k)');
SELECT aggjoin_check('SELECT jf_dim.name, count(*) FROM jf_fact JOIN jf_dim USING (k) WHERE NOT EXISTS (SELECT 1 FROM jf_multi WHERE jf_multi.k = jf_fact.k2) GROUP BY jf_dim.name');
-- RIGHT and FULL joins at the top: the build rows nothing matched come once,
-- after the probe rows, every other column null (NULL keys on both sides,
-- keys matched by many probe rows, keys matched by none)
CREATE TABLE jf_rf AS
SELECT i AS k, i * 3 AS r, (i / 4.0)::numeric(6,2) AS q FROM generate_series(-5, 5) i
UNION ALL SELECT 1000 + i, i, NULL::numeric(6,2) FROM generate_series(0, 5) i
UNION ALL SELECT NULL, 77, 1.25::numeric(6,2);
ANALYZE jf_rf;
EXPLAIN (COSTS OFF)
SELECT count(*), count(jf_fact.id), sum(jf_rf.r) FROM jf_fact RIGHT JOIN jf_rf ON jf_rf.k = jf_fact.k;
SELECT aggjoin_check('SELECT count(*), count(jf_fact.id), sum(jf_rf.r), sum(jf_fact.v) FROM jf_fact RIGHT JOIN jf_rf ON jf_rf.k = jf_fact.k');
SELECT aggjoin_check('SELECT jf_rf.r, count(*), count(jf_fact.id), sum(jf_fact.v), min(jf_fact.d) FROM jf_fact RIGHT JOIN jf_rf ON jf_rf.k = jf_fact.k GROUP BY jf_rf.r');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(jf_rf.k), sum(jf_rf.r) FROM jf_fact FULL JOIN jf_rf ON jf_rf.k = jf_fact.k GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_rf.k, count(*), sum(jf_fact.n * jf_rf.q), avg(jf_rf.q - jf_fact.n) FROM jf_fact FULL JOIN jf_rf ON jf_rf.k = jf_fact.k GROUP BY jf_rf.k');
SELECT aggjoin_check('SELECT count(*), sum(jf_rf.r), count(jf_dim.k) FROM jf_fact JOIN jf_dim USING (k) FULL JOIN jf_rf ON jf_rf.k = jf_dim.k');
SELECT aggjoin_check('SELECT count(*), count(jf_fact.id) FROM jf_fact FULL JOIN jf_empty ON jf_empty.k = jf_fact.k');
-- an expression over a null-extended side, or a filter over both sides
-- above the join, is not aggjoin
SELECT aggjoin_check('SELECT sum(coalesce(jf_fact.v, 0)), sum(jf_rf.r) FROM jf_fact RIGHT JOIN jf_rf ON jf_rf.k = jf_fact.k');
SELECT aggjoin_check('SELECT count(*), sum(jf_rf.r) FROM jf_fact RIGHT JOIN jf_rf ON jf_rf.k = jf_fact.k WHERE jf_fact.v IS NULL OR jf_rf.r > 0');
-- RIGHT and FULL joins below the top of a chain: their unmatched build rows
-- go through the joins above them after the probe rows, every side below
-- null (a key over those sides matches nothing, a key over their own side
-- may match, and a RIGHT or FULL join above counts those matches)
EXPLAIN (COSTS OFF)
SELECT jf_dim2.region, count(*), sum(jf_fact.v), sum(jf_dim.w), sum(jf_dim2.pop) FROM jf_fact RIGHT JOIN jf_dim ON jf_dim.k = jf_fact.k FULL JOIN jf_dim2 ON jf_dim2.w = jf_dim.w LEFT JOIN jf_rf ON jf_rf.k = jf_fact.g GROUP BY 1;
SELECT aggjoin_check('SELECT jf_dim2.region, count(*), sum(jf_fact.v), sum(jf_dim.w), sum(jf_dim2.pop) FROM jf_fact RIGHT JOIN jf_dim ON jf_dim.k = jf_fact.k FULL JOIN jf_dim2 ON jf_dim2.w = jf_dim.w LEFT JOIN jf_rf ON jf_rf.k = jf_fact.g GROUP BY 1');
SELECT aggjoin_check('SELECT count(*), count(jf_fact.id), sum(jf_rf.r), count(jf_dim.k), sum(jf_dim.w) FROM jf_fact FULL JOIN jf_rf ON jf_rf.k = jf_fact.k LEFT JOIN jf_dim ON jf_dim.k = jf_fact.g');
SELECT aggjoin_check('SELECT jf_dim.name, count(*), sum(jf_fact.v), sum(jf_rf.r) FROM jf_fact RIGHT JOIN jf_rf ON jf_rf.k = jf_fact.k FULL JOIN jf_dim ON jf_dim.k = jf_rf.r GROUP BY 1');
SELECT aggjoin_check('SELECT jf_rf.r, count(*), count(jf_multi.w) FROM jf_fact RIGHT JOIN jf_rf ON jf_rf.k = jf_fact.k LEFT JOIN jf_multi ON jf_multi.k = jf_fact.g GROUP BY 1');
-- a key expression over a side a FULL join null-extends (COALESCE is not
-- null there) is not computed below: the FULL join stays a GpuHashJoin
EXPLAIN (COSTS OFF)
SELECT count(*), sum(jf_rf.r), count(jf_dim.k) FROM jf_fact FULL JOIN jf_rf ON jf_rf.k = jf_fact.k LEFT JOIN jf_dim ON jf_dim.k = coalesce(jf_fact.g, 5);
SELECT aggjoin_check('SELECT count(*), sum(jf_rf.r), count(jf_dim.k) FROM jf_fact FULL JOIN jf_rf ON jf_rf.k = jf_fact.k LEFT JOIN jf_dim ON jf_dim.k = coalesce(jf_fact.g, 5)');
-- extract() of a whole field of a date cannot fail and spells each value
-- one way, so a build side computes it, also as a group key (TPC-H Q9's
-- extract(year FROM o_orderdate)); other fields stay above the join
SELECT aggjoin_check('SELECT extract(year FROM jf_dim.d), extract(MONTH FROM jf_fact.d), count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim USING (k) GROUP BY 1, 2');
SELECT aggjoin_check('SELECT extract(isoyear FROM jf_dim.d), extract(quarter FROM jf_dim.d), count(*) FROM jf_fact JOIN jf_dim USING (k) GROUP BY 1, 2');
SELECT aggjoin_check('SELECT extract(epoch FROM jf_dim.d), count(*) FROM jf_fact JOIN jf_dim USING (k) GROUP BY 1');
-- filters below the join stay with their side
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k) WHERE jf_fact.v > 1000 AND jf_dim.name <> ''name3'' GROUP BY jf_fact.g');
-- empty sides: no groups, or one row of a plain aggregate
SELECT aggjoin_check('SELECT count(*), sum(jf_fact.v), max(jf_empty.w) FROM jf_fact JOIN jf_empty USING (k)');
SELECT aggjoin_check('SELECT count(*), count(jf_empty.w) FROM jf_fact LEFT JOIN jf_empty USING (k)');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_empty USING (k) GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k) WHERE jf_fact.id < 0');
-- small batches: every batch joined and aggregated on its own
SET gpuagg.batch_rows = 700;
SELECT aggjoin_check('SELECT jf_multi.tag, jf_fact.g, count(*), sum(jf_multi.w) FROM jf_fact JOIN jf_multi USING (k) GROUP BY jf_multi.tag, jf_fact.g');
SELECT aggjoin_check('SELECT jf_dim2.region, count(*), sum(jf_fact.v), sum(jf_dim.w), sum(jf_dim2.pop) FROM jf_fact RIGHT JOIN jf_dim ON jf_dim.k = jf_fact.k FULL JOIN jf_dim2 ON jf_dim2.w = jf_dim.w LEFT JOIN jf_rf ON jf_rf.k = jf_fact.g GROUP BY 1');
RESET gpuagg.batch_rows;

-- an INNER join's conditions besides its keys: the device's filter over the
-- joined rows (AND, OR, NOT with SQL's nulls over comparisons of two sides'
-- integers, floats, dates, and one side's conditions); nan: float order
CREATE TABLE jf_nan AS
SELECT k, k % 2 AS p, x, x::float4 AS y
FROM (VALUES (1, 'NaN'::float8), (2, '-0'), (3, 'Infinity'), (4, NULL), (5, 0.25),
             (6, '-Infinity'), (7, 'NaN'), (8, 1.5), (9, 0)) v(k, x);
ANALYZE jf_nan;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.v > jf_dim.w GROUP BY 1;
SELECT aggjoin_check('SELECT count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.v > jf_dim.w');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.v > jf_dim.w GROUP BY 1');
SELECT aggjoin_check($$SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k) WHERE (jf_fact.gt = 'grp1' AND jf_dim.name = 'name3') OR (jf_fact.gt = 'grp2' AND jf_dim.name = 'name5') GROUP BY 1$$);
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND NOT (jf_fact.v < jf_dim.w) GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND (jf_fact.v IS NULL OR jf_fact.v < jf_dim.k8 OR jf_dim.w IS NULL) GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_nan ON jf_fact.g = jf_nan.k AND jf_fact.f < jf_nan.x GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_nan ON jf_fact.g = jf_nan.k AND (jf_nan.x = jf_fact.f OR jf_fact.f >= jf_nan.y) GROUP BY 1');
SELECT aggjoin_check('SELECT b.k, count(*), sum(a.k) FROM jf_nan a JOIN jf_nan b ON a.p = b.p AND a.x <> b.x GROUP BY 1');
SELECT aggjoin_check('SELECT b.k, count(*), sum(a.k) FROM jf_nan a JOIN jf_nan b ON a.p = b.p AND (a.x <= b.y AND NOT a.y > b.x) GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.d >= jf_dim.d GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.k2 <= jf_dim.k8 GROUP BY 1');
-- in a chain: over a LEFT join's null-extended side below, or below a LEFT join
SELECT aggjoin_check('SELECT jf_dim2.region, count(*), sum(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_fact.g AND jf_dim2.pop > jf_dim.w GROUP BY 1');
SELECT aggjoin_check('SELECT jf_dim2.region, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_dim.k = jf_fact.k AND jf_fact.g < jf_dim.w LEFT JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY 1');
-- nothing kept: a plain aggregate's one group, and no groups
SELECT aggjoin_check('SELECT count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.big < jf_dim.w AND jf_fact.big > jf_dim.k8');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.big < jf_dim.w AND jf_fact.big > jf_dim.k8 GROUP BY 1');
-- pieces of 700 joined rows, some filtered whole
SET gpuagg.batch_rows = 700;
SELECT aggjoin_check('SELECT jf_multi.tag, jf_fact.g, count(*), sum(jf_multi.w) FROM jf_fact JOIN jf_multi ON jf_fact.k = jf_multi.k AND (jf_multi.w > jf_fact.id OR jf_fact.g = 3) GROUP BY 1, 2');
RESET gpuagg.batch_rows;
-- an outer, semi or anti join's conditions besides its keys, and an INNER
-- join's below a RIGHT or FULL one: the step's own filter, checked for
-- each pair of equal keys at the join (a LEFT join null-extends a row none
-- of whose pairs passes; EXISTS keeps a row once however many pass)
EXPLAIN (COSTS OFF)
SELECT jf_fact.g, count(*), count(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.v > jf_dim.w GROUP BY 1;
SELECT aggjoin_check('SELECT count(*) FROM jf_fact LEFT JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.v > jf_dim.w');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(jf_dim.w), sum(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.v > jf_dim.w GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(jf_multi.w), sum(jf_multi.w) FROM jf_fact LEFT JOIN jf_multi ON jf_fact.k = jf_multi.k AND jf_multi.w < jf_fact.v GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(jf_nan.x) FROM jf_fact LEFT JOIN jf_nan ON jf_fact.g = jf_nan.k AND (jf_fact.f < jf_nan.x OR jf_nan.y IS NULL) GROUP BY 1');
EXPLAIN (COSTS OFF)
SELECT jf_fact.g, count(*) FROM jf_fact WHERE EXISTS (SELECT 1 FROM jf_multi WHERE jf_multi.k = jf_fact.k AND jf_multi.w > jf_fact.id) GROUP BY 1;
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_fact.v) FROM jf_fact WHERE EXISTS (SELECT 1 FROM jf_multi WHERE jf_multi.k = jf_fact.k AND jf_multi.w > jf_fact.id) GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_fact.v) FROM jf_fact WHERE NOT EXISTS (SELECT 1 FROM jf_multi WHERE jf_multi.k = jf_fact.k AND jf_multi.w > jf_fact.id) GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact WHERE NOT EXISTS (SELECT 1 FROM jf_nan WHERE jf_nan.k = jf_fact.g AND (jf_nan.x > jf_fact.f OR jf_nan.y IS NULL)) GROUP BY 1');
-- in chains: over an earlier LEFT join's null-extended side, below a RIGHT
-- or FULL join (whose matches count only the rows the condition keeps)
SELECT aggjoin_check('SELECT jf_dim2.region, count(*), sum(jf_dim.w), count(jf_dim2.pop) FROM jf_fact LEFT JOIN jf_dim USING (k) LEFT JOIN jf_dim2 ON jf_dim2.w = jf_fact.g AND jf_dim2.pop > jf_dim.w GROUP BY 1');
EXPLAIN (COSTS OFF)
SELECT count(*), sum(jf_dim2.pop) FROM jf_fact JOIN jf_dim ON jf_dim.k = jf_fact.k AND jf_fact.v > jf_dim.w RIGHT JOIN jf_dim2 ON jf_dim2.w = jf_dim.w;
SELECT aggjoin_check('SELECT count(*), sum(jf_dim2.pop) FROM jf_fact JOIN jf_dim ON jf_dim.k = jf_fact.k AND jf_fact.v > jf_dim.w RIGHT JOIN jf_dim2 ON jf_dim2.w = jf_dim.w');
SELECT aggjoin_check('SELECT jf_dim2.region, count(*), sum(jf_dim2.pop), count(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim ON jf_dim.k = jf_fact.k AND jf_fact.v > jf_dim.w FULL JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY 1');
SELECT aggjoin_check('SELECT jf_dim.name, count(*), count(jf_fact.v) FROM jf_fact RIGHT JOIN jf_dim ON jf_dim.k = jf_fact.k LEFT JOIN jf_dim2 ON jf_dim2.w = jf_dim.w AND jf_dim2.pop < jf_fact.v GROUP BY 1');
-- pieces of 700 rows: a heavy key's pairs span pieces
SET gpuagg.batch_rows = 700;
SELECT aggjoin_check('SELECT jf_multi.tag, jf_fact.g, count(*), sum(jf_multi.w) FROM jf_fact LEFT JOIN jf_multi ON jf_fact.k = jf_multi.k AND jf_multi.w > jf_fact.g GROUP BY 1, 2');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact WHERE EXISTS (SELECT 1 FROM jf_multi WHERE jf_multi.k = jf_fact.k AND jf_multi.w > jf_fact.id) GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact WHERE NOT EXISTS (SELECT 1 FROM jf_multi WHERE jf_multi.k = jf_fact.k AND jf_multi.w > jf_fact.id) GROUP BY 1');
RESET gpuagg.batch_rows;
-- = and <> of two sides' text, char(n), numeric values: both operands ids
-- of one key dictionary (char(n) ignores trailing blanks, 1.50 = 1.500;
-- NULL compares as NULL), in the filter after the chain and a step's own
EXPLAIN (COSTS OFF)
SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.t <> jf_dim.name GROUP BY 1;
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.t = jf_dim.name GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.t <> jf_dim.name GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.c <> jf_dim.c GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_dim ON jf_fact.g = jf_dim.k AND (jf_fact.n = jf_dim.m OR NOT jf_fact.c = jf_dim.c) GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.gt, count(*) FROM jf_fact WHERE EXISTS (SELECT 1 FROM jf_dim WHERE jf_dim.k = jf_fact.k AND jf_dim.name <> jf_fact.t) GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.gt, count(*) FROM jf_fact WHERE NOT EXISTS (SELECT 1 FROM jf_dim WHERE jf_dim.k = jf_fact.g AND jf_dim.name = jf_fact.t) GROUP BY 1');
SELECT aggjoin_check('SELECT jf_dim2.region, count(*) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w AND jf_dim2.region <> jf_fact.gt AND jf_dim.name = jf_fact.t GROUP BY 1');
-- ... not: arithmetic over two sides, a date compared with a timestamp, an
-- expression of a build side that may fail (also in a LEFT join's
-- condition, which PostgreSQL checks only for pairs of equal keys), an
-- order of text values (a collation's, not the dictionary's)
SELECT aggjoin_check('SELECT count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.t < jf_dim.name');
SELECT aggjoin_check('SELECT count(*) FROM jf_fact LEFT JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.v > jf_dim.w * 20');
SELECT aggjoin_check('SELECT count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.v + jf_dim.w > 100');
SELECT aggjoin_check('SELECT count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.d < jf_dim.d::timestamp');
SELECT aggjoin_check('SELECT count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.v > jf_dim.w * 20');

-- what is not aggjoin: GpuHashAgg over other inputs, or the native plan
-- (an aggregate over both sides, a LEFT join's inner expression, a float
-- key, DISTINCT, grouping sets)
SELECT aggjoin_check('SELECT sum(jf_fact.v * jf_dim.w) FROM jf_fact JOIN jf_dim USING (k)');
SELECT aggjoin_check('SELECT sum(coalesce(jf_dim.w, 0)) FROM jf_fact LEFT JOIN jf_dim USING (k)');
SELECT aggjoin_check('SELECT count(*) FROM jf_fact JOIN jf_dim ON jf_fact.f = jf_dim.x');
SELECT aggjoin_check('SELECT jf_fact.g, count(DISTINCT jf_dim.w) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_fact.g, jf_fact.gt, count(*) FROM jf_fact JOIN jf_dim USING (k) GROUP BY ROLLUP (jf_fact.g, jf_fact.gt)');
-- ... and with gpuagg.enable_hashjoin off, no device join at all
SET gpuagg.enable_hashjoin = off;
SELECT aggjoin_check('SELECT count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k)');
RESET gpuagg.enable_hashjoin;
SET gpuagg.enable_aggjoin = off;
SELECT aggjoin_check('SELECT count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k)');
EXPLAIN (COSTS OFF) SELECT count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k);
RESET gpuagg.enable_aggjoin;

-- a build side past the limit: GpuHashJoin partitions it on disk, and an
-- aggjoin, which cannot, is still planned when the few columns it holds fit
SET gpuagg.hashjoin_build_limit = '64kB';
SELECT gpuagg_used('SELECT jf_fact.g, jf_multi.tag FROM jf_fact JOIN jf_multi USING (k)', 'GpuHashJoin');
SELECT aggjoin_check('SELECT count(*), sum(jf_multi.w) FROM jf_fact JOIN jf_multi USING (k)');
-- a build over the limit for the aggjoin columns too (12000 rows) is no aggjoin
SELECT aggjoin_check('SELECT count(*), sum(f2.v) FROM jf_fact f1 JOIN jf_fact f2 USING (id)');
SET gpuagg.hashjoin_build_limit = -1;
SELECT aggjoin_check('SELECT count(*), sum(f2.v) FROM jf_fact f1 JOIN jf_fact f2 USING (id)');
RESET gpuagg.hashjoin_build_limit;

-- EXPLAIN ANALYZE: probe rows in, build rows, joined rows
CREATE FUNCTION jf_analyze(query text) RETURNS TABLE (property text, value text)
LANGUAGE sql AS $$
SELECT * FROM gpuagg_plan_properties(query, ARRAY['Custom Plan Provider', 'Input',
    'Input Rows', 'Build Rows', 'Joined Rows', 'Groups'])
$$;
SELECT * FROM jf_analyze('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g');
-- (a chain: Build Rows counts every build side's rows)
SELECT * FROM jf_analyze('SELECT jf_dim2.region, count(*) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY jf_dim2.region');
SELECT * FROM jf_analyze('SELECT count(*) FROM jf_fact LEFT JOIN jf_multi USING (k)');

-- parallel workers pack the probe side, the leader builds and aggregates
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF)
SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g;
SET gpuagg.batch_rows = 512;
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_dim.w), avg(jf_fact.f) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_dim.name, jf_fact.gt, count(*), sum(jf_fact.v) FROM jf_fact LEFT JOIN jf_dim USING (k) GROUP BY jf_dim.name, jf_fact.gt');
SELECT aggjoin_check('SELECT jf_multi.tag, count(*), sum(jf_multi.w) FROM jf_fact JOIN jf_multi USING (k) GROUP BY jf_multi.tag');
SELECT aggjoin_check('SELECT jf_multi.tag, count(*), sum(jf_multi.w) FROM jf_fact JOIN jf_multi ON jf_fact.k = jf_multi.k AND (jf_multi.w < jf_fact.v OR jf_fact.d > DATE ''2024-03-01'') GROUP BY jf_multi.tag');
-- a LEFT join's and EXISTS's own conditions, over packed probe batches
SELECT aggjoin_check('SELECT jf_multi.tag, count(*), sum(jf_fact.v) FROM jf_fact LEFT JOIN jf_multi ON jf_fact.k = jf_multi.k AND jf_multi.w < jf_fact.v GROUP BY jf_multi.tag');
SELECT aggjoin_check('SELECT jf_fact.gt, count(*), sum(jf_fact.v) FROM jf_fact WHERE EXISTS (SELECT 1 FROM jf_multi WHERE jf_multi.k = jf_fact.k AND jf_multi.w > jf_fact.id) GROUP BY jf_fact.gt');
-- a comparison of text ids: the workers' dictionary ids mapped to the leader's
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim ON jf_fact.k = jf_dim.k AND jf_fact.t <> jf_dim.name GROUP BY 1');
SELECT aggjoin_check('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_dim ON jf_fact.k = jf_dim.k AND (jf_fact.t = jf_dim.name OR jf_fact.c = jf_dim.c) GROUP BY 1');
-- the build side packed by workers too, with text keys: the workers'
-- dictionary ids mapped to the leader's, one dictionary for both sides' keys
SELECT aggjoin_check('SELECT jf_dim.name, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim ON jf_fact.t = jf_dim.name GROUP BY jf_dim.name');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), count(jf_dim.w) FROM jf_fact LEFT JOIN jf_dim ON jf_fact.c = jf_dim.c GROUP BY jf_fact.g');
-- a chain in parallel: the workers pack the probe side and each build side
EXPLAIN (COSTS OFF)
SELECT jf_dim2.region, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY jf_dim2.region;
SELECT aggjoin_check('SELECT jf_dim2.region, count(*), sum(jf_fact.v), sum(jf_dim2.pop) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY jf_dim2.region');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_multi.w) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_multi ON jf_multi.k = jf_fact.k2 WHERE NOT EXISTS (SELECT 1 FROM jf_pair WHERE jf_pair.a = jf_fact.g) GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_region.zone, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim ON jf_fact.t = jf_dim.name JOIN jf_dim2 ON jf_dim2.w = jf_dim.w JOIN jf_region ON jf_region.region = jf_dim2.region GROUP BY jf_region.zone');
-- the workers packing the probe side drop rows whose key no build row has
-- (Bloom filters of the build keys of INNER and RIGHT joins keyed on the
-- probe side and exact, that the planner expects to keep at most half the
-- rows): every fact row is tested; removed are the rows without a match,
-- less a few the filter lets through (its false positives)
CREATE FUNCTION jf_probe_filter(query text)
RETURNS TABLE (steps text, build_keys text, tested text, removed text)
LANGUAGE sql AS $$
SELECT n->>'Probe Filter Steps', n->>'Probe Filter Keys',
       n->>'Probe Filter Rows Tested', n->>'Probe Filter Rows Removed'
FROM jsonb_path_query(gpuagg_explain_json(query), 'lax $.**') n
WHERE jsonb_typeof(n) = 'object' AND n ? 'Probe Filter Steps'
$$;
CREATE TABLE jf_few AS SELECT * FROM jf_dim WHERE k % 10 = 3;
ANALYZE jf_few;
SELECT steps, build_keys, tested,
       removed::int BETWEEN 0.97 * (SELECT count(*) FROM jf_fact WHERE k IS NULL OR k % 10 <> 3 OR k > 300)
                         AND (SELECT count(*) FROM jf_fact WHERE k IS NULL OR k % 10 <> 3 OR k > 300) AS removed_ok
FROM jf_probe_filter('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_few USING (k) GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_few.w) FROM jf_fact JOIN jf_few USING (k) GROUP BY jf_fact.g');
-- two steps keyed on the probe side
SELECT steps, build_keys, tested FROM jf_probe_filter('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_few USING (k) JOIN jf_few f2 ON f2.k = jf_fact.k2 GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(f2.w) FROM jf_fact JOIN jf_few USING (k) JOIN jf_few f2 ON f2.k = jf_fact.k2 GROUP BY jf_fact.g');
-- a RIGHT join drops the probe rows without a match too (its own build rows come at finish)
SELECT steps, build_keys, tested FROM jf_probe_filter('SELECT jf_few.name, count(*), sum(jf_fact.v) FROM jf_fact RIGHT JOIN jf_few USING (k) GROUP BY jf_few.name');
SELECT aggjoin_check('SELECT jf_few.name, count(*), sum(jf_fact.v) FROM jf_fact RIGHT JOIN jf_few USING (k) GROUP BY jf_few.name');
-- with a filter on the probe side too (rows tested after it)
SELECT steps, build_keys, tested FROM jf_probe_filter('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_few USING (k) WHERE jf_fact.id % 3 = 0 GROUP BY jf_fact.g');
SELECT aggjoin_check('SELECT jf_fact.g, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_few USING (k) WHERE jf_fact.id % 3 = 0 GROUP BY jf_fact.g');
-- none: a join the planner expects to keep most rows, a LEFT join (keeps
-- every probe row), a text key (dictionary ids), the setting off
SELECT * FROM jf_probe_filter('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g');
SELECT * FROM jf_probe_filter('SELECT jf_fact.g, count(*) FROM jf_fact LEFT JOIN jf_few USING (k) GROUP BY jf_fact.g');
SELECT * FROM jf_probe_filter('SELECT jf_few.name, count(*) FROM jf_fact JOIN jf_few ON jf_fact.t = jf_few.name GROUP BY jf_few.name');
SET gpuagg.probe_filter = off;
SELECT * FROM jf_probe_filter('SELECT jf_fact.g, count(*) FROM jf_fact JOIN jf_few USING (k) GROUP BY jf_fact.g');
RESET gpuagg.probe_filter;
-- a device failure: the Gathers run again, the filter is shared again, and
-- the CPU's answer is native PostgreSQL's
SET gpuagg.debug_fail_at_batch = 2;
SELECT jf_fact.g, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_few USING (k) GROUP BY jf_fact.g ORDER BY jf_fact.g;
RESET gpuagg.debug_fail_at_batch;
SET gpuagg.enabled = off;
SELECT jf_fact.g, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_few USING (k) GROUP BY jf_fact.g ORDER BY jf_fact.g;
RESET gpuagg.enabled;
DROP FUNCTION jf_probe_filter(text);
DROP TABLE jf_few;
-- a device failure: both Gathers run again and the CPU finishes the query
SET gpuagg.debug_fail_at_batch = 2;
SELECT jf_dim.name, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim ON jf_fact.t = jf_dim.name GROUP BY jf_dim.name ORDER BY jf_dim.name;
RESET gpuagg.debug_fail_at_batch;
SELECT jf_dim.name, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim ON jf_fact.t = jf_dim.name GROUP BY jf_dim.name ORDER BY jf_dim.name;
RESET gpuagg.batch_rows;
-- unforced, a plain aggregate over a join the device can compute is offered
-- (the rule that leaves plain aggregates to parallel PostgreSQL is about
-- aggregating rows, not joining them); the cost decides
SET gpuagg.force = off;
SELECT gpuagg_used('SELECT count(*), sum(jf_fact.v), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k)');
SET gpuagg.force = on;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- a device failure in the middle: finished on the CPU (both sides read again)
SET gpuagg.batch_rows = 1000;
SET gpuagg.debug_fail_at_batch = 3;
SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g ORDER BY jf_fact.g;
RESET gpuagg.debug_fail_at_batch;
SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k) GROUP BY jf_fact.g ORDER BY jf_fact.g;
-- (a chain: every side read again)
SET gpuagg.debug_fail_at_batch = 3;
SELECT jf_dim2.region, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY jf_dim2.region ORDER BY 1;
RESET gpuagg.debug_fail_at_batch;
SELECT jf_dim2.region, count(*), sum(jf_fact.v) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w GROUP BY jf_dim2.region ORDER BY 1;
RESET gpuagg.batch_rows;

-- rescans: a correlated subquery runs the aggjoin per outer row
-- (the outer row's value changes the probe side; the build side is the same)
SELECT aggjoin_check('SELECT t.x, (SELECT count(*) FROM jf_fact JOIN jf_dim USING (k) WHERE jf_fact.g = t.x) FROM generate_series(0, 4) t(x)');
-- (here the build side changes with the outer row)
SELECT aggjoin_check('SELECT t.x, (SELECT sum(jf_fact.v) FROM jf_fact JOIN jf_dim USING (k) WHERE jf_dim.w = t.x) FROM generate_series(0, 4) t(x)');
-- (a chain, its top build side changing with the outer row)
SELECT aggjoin_check('SELECT t.x, (SELECT count(*) FROM jf_fact JOIN jf_dim USING (k) JOIN jf_dim2 ON jf_dim2.w = jf_dim.w WHERE jf_dim2.pop > t.x * 100) FROM generate_series(0, 4) t(x)');
-- prepared, with a generic plan
PREPARE jf_prep(int) AS
SELECT jf_fact.g, count(*), sum(jf_dim.w) FROM jf_fact JOIN jf_dim USING (k)
WHERE jf_fact.v > $1 GROUP BY jf_fact.g ORDER BY jf_fact.g;
SET plan_cache_mode = force_generic_plan;
EXECUTE jf_prep(20000);
EXECUTE jf_prep(30000);
RESET plan_cache_mode;
DEALLOCATE jf_prep;

DROP FUNCTION jf_analyze(text);
DROP TABLE jf_fact, jf_dim, jf_multi, jf_empty, jf_pair, jf_dim2, jf_region, jf_rf, jf_nan;
