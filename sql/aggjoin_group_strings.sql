--
-- aggjoin_group_strings: text, varchar and char(n) group keys of an aggjoin,
-- from the probe side or from a build side, travel to the device as their
-- bytes; the device gathers them into the joined rows and groups those by
-- exact byte equality
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

-- adversarial spellings: empty, blanks, case, multibyte and decomposed,
-- prefixes of each other, NULLs; char(5) values equal but for trailing blanks
CREATE TABLE gs_fact (id int, k int, t text, v varchar(10), c char(5), n int);
INSERT INTO gs_fact
SELECT g, g % 23,
       (ARRAY['', ' ', 'a', 'a ', 'A', 'ab', 'aB', 'ü', U&'u\0308', 'u', '日本', '日本語',
              'pre', 'prefix', 'prefix2', NULL])[1 + g % 16],
       (ARRAY['', 'v', 'v ', 'ß', NULL])[1 + g % 5],
       (ARRAY['ab', 'ab  ', 'a', '', 'é', NULL])[1 + g % 6],
       g
FROM generate_series(1, 6000) g;
-- long keys, stored out of line and compressed, equal but for the last byte
ALTER TABLE gs_fact ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO gs_fact
SELECT 10000 + g, g % 23, repeat('long', 600 * g) || (g % 2), NULL, NULL, g
FROM generate_series(1, 6) g;
INSERT INTO gs_fact
SELECT 20000 + g, g % 23, repeat('zip', 3000) || (g % 3), NULL, NULL, g
FROM generate_series(1, 9) g;
-- the build side: keys 0 .. 19 (probe keys 20 .. 22 find nothing), two rows
-- for some keys, the same spellings as the probe side
CREATE TABLE gs_dim (k int, t text, v varchar(10), c char(5), w int);
INSERT INTO gs_dim
SELECT g % 20,
       (ARRAY['', 'a', 'A', 'aB', 'ü', 'u', '日本語', 'prefix', 'zzz', NULL])[1 + g % 10],
       (ARRAY['', 'v ', 'ß', NULL])[1 + g % 4],
       (ARRAY['ab', 'ab ', 'é', NULL])[1 + g % 4],
       g
FROM generate_series(0, 27) g;
INSERT INTO gs_dim
SELECT 30 + g, repeat('long', 600 * g) || '1', NULL, NULL, 100 + g
FROM generate_series(1, 3) g;
ALTER TABLE gs_dim ALTER COLUMN t SET STORAGE EXTERNAL;
ANALYZE gs_fact, gs_dim;

-- group keys of the probe side
SELECT aggjoin_check('SELECT f.t, count(*), sum(f.n), sum(d.w) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t');
SELECT aggjoin_check('SELECT f.t, f.v, f.c, count(*), sum(d.w) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t, f.v, f.c');
SELECT aggjoin_check('SELECT f.c, f.k, count(*) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.c, f.k');
-- group keys of the build side, alone and with the probe side's
SELECT aggjoin_check('SELECT d.t, count(*), sum(f.n) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY d.t');
SELECT aggjoin_check('SELECT d.t, d.v, d.c, count(*), sum(f.n) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY d.t, d.v, d.c');
SELECT aggjoin_check('SELECT d.t, f.t, count(*) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY d.t, f.t');
-- joined on a text key and grouped by text keys of both sides
SELECT aggjoin_check('SELECT f.v, d.v, count(*), sum(d.w) FROM gs_fact f JOIN gs_dim d USING (t) GROUP BY f.v, d.v');
SELECT aggjoin_check('SELECT f.t, count(*) FROM gs_fact f JOIN gs_dim d USING (t) GROUP BY f.t');

-- outer joins: a build side's key is null where no build row matched, a
-- probe side's where only the build row is there
SELECT aggjoin_check('SELECT d.t, d.c, count(*), count(d.w) FROM gs_fact f LEFT JOIN gs_dim d USING (k) GROUP BY d.t, d.c');
SELECT aggjoin_check('SELECT f.t, d.t, count(*), count(f.n) FROM gs_fact f RIGHT JOIN gs_dim d USING (k) GROUP BY f.t, d.t');
SELECT aggjoin_check('SELECT f.v, d.v, count(*), count(f.n), count(d.w) FROM gs_fact f FULL JOIN gs_dim d USING (k) GROUP BY f.v, d.v');
SELECT aggjoin_check('SELECT f.t, count(*) FROM gs_fact f WHERE k IN (SELECT k FROM gs_dim) GROUP BY f.t');
SELECT aggjoin_check('SELECT f.t, count(*) FROM gs_fact f WHERE NOT EXISTS (SELECT 1 FROM gs_dim d WHERE d.k = f.k) GROUP BY f.t');

-- the results, printed once: char(5) groups without trailing blanks, NULLs
-- one group, long keys apart
SELECT d.c, f.c, count(*) FROM gs_fact f JOIN gs_dim d USING (k)
GROUP BY d.c, f.c ORDER BY d.c, f.c;
SELECT d.t IS NULL AS t_null, length(d.t) AS len, count(*), sum(f.n)
FROM gs_fact f LEFT JOIN gs_dim d USING (k) GROUP BY d.t ORDER BY 1, 2, 4;
SELECT length(f.t) AS len, right(f.t, 1) AS last, count(*)
FROM gs_fact f JOIN gs_dim d USING (k) WHERE length(f.t) > 100 GROUP BY f.t ORDER BY 1, 2;

-- equal hashes: only the bytes keep the groups apart
SET gpuagg.debug_hash_bits = 1;
SELECT aggjoin_check('SELECT f.t, d.t, count(*), sum(f.n) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t, d.t');
SELECT aggjoin_check('SELECT d.v, d.c, f.c, count(*) FROM gs_fact f LEFT JOIN gs_dim d USING (k) GROUP BY d.v, d.c, f.c');
SET gpuagg.debug_hash_bits = 2;
SELECT aggjoin_check('SELECT f.t, f.v, count(*) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t, f.v');
RESET gpuagg.debug_hash_bits;

-- batches small in rows, and gpuagg.string_keys off (dictionaries): the same
SET gpuagg.batch_rows = 700;
SELECT aggjoin_check('SELECT f.t, d.t, count(*), sum(f.n) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t, d.t');
RESET gpuagg.batch_rows;
SET gpuagg.string_keys = off;
SELECT aggjoin_check('SELECT f.t, d.t, count(*), sum(f.n) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t, d.t');
RESET gpuagg.string_keys;

-- in this session's own process as in the GPU service
SET gpuagg.device_host = backend;
SELECT aggjoin_check('SELECT f.t, d.t, d.c, count(*), sum(f.n) FROM gs_fact f LEFT JOIN gs_dim d USING (k) GROUP BY f.t, d.t, d.c');
SET gpuagg.device_host = service;
SELECT aggjoin_check('SELECT f.t, d.t, d.c, count(*), sum(f.n) FROM gs_fact f LEFT JOIN gs_dim d USING (k) GROUP BY f.t, d.t, d.c');
RESET gpuagg.device_host;

-- TPC-H Q10's shape: customers' text columns grouped after joining orders
-- and a nation
CREATE TABLE gs_customer (c_custkey int, c_name varchar(25), c_address varchar(40),
                          c_nationkey int, c_phone char(15), c_acctbal numeric(15,2),
                          c_comment text);
INSERT INTO gs_customer
SELECT g, 'Customer#' || lpad(g::text, 9, '0'), md5(g::text), g % 5,
       (10 + g % 5) || '-' || lpad((g % 997)::text, 3, '0'),
       (g % 1000) - 500.25, repeat(md5((g % 50)::text), 1 + g % 3)
FROM generate_series(1, 3000) g;
CREATE TABLE gs_orders (o_orderkey int, o_custkey int, o_price numeric(15,2), o_date date);
INSERT INTO gs_orders
SELECT g, 1 + (g * 7) % 3500, (g % 100) * 1.5, date '1993-01-01' + g % 400
FROM generate_series(1, 20000) g;
CREATE TABLE gs_nation (n_nationkey int, n_name char(25));
INSERT INTO gs_nation VALUES (0, 'ALGERIA'), (1, 'ARGENTINA'), (2, 'BRAZIL'),
    (3, 'CANADA'), (4, 'EGYPT');
ANALYZE gs_customer, gs_orders, gs_nation;
SELECT aggjoin_check($$SELECT c_custkey, c_name, sum(o_price) AS revenue, c_acctbal, n_name,
    c_address, c_phone, c_comment
  FROM gs_orders JOIN gs_customer ON c_custkey = o_custkey
  JOIN gs_nation ON n_nationkey = c_nationkey
  WHERE o_date >= date '1993-10-01' AND o_date < date '1994-01-01'
  GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment$$);
SELECT aggjoin_check($$SELECT c_name, c_address, c_phone, c_comment, n_name, count(*), sum(o_price)
  FROM gs_orders JOIN gs_customer ON c_custkey = o_custkey
  JOIN gs_nation ON n_nationkey = c_nationkey
  GROUP BY c_name, c_address, c_phone, c_comment, n_name$$);

-- parallel workers pack the probe side (and a build side) with its bytes
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 512;
EXPLAIN (COSTS OFF)
SELECT f.t, d.t, count(*) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t, d.t;
SELECT aggjoin_check('SELECT f.t, d.t, count(*), sum(f.n) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t, d.t');
SELECT aggjoin_check('SELECT f.v, f.c, d.c, count(*) FROM gs_fact f LEFT JOIN gs_dim d USING (k) GROUP BY f.v, f.c, d.c');
SELECT aggjoin_check('SELECT f.t, count(*), sum(g.n) FROM gs_fact f JOIN gs_fact g ON f.t = g.t AND f.id % 50 = g.id % 50 GROUP BY f.t');
SELECT aggjoin_check($$SELECT c_name, c_address, c_phone, c_comment, n_name, count(*), sum(o_price)
  FROM gs_orders JOIN gs_customer ON c_custkey = o_custkey
  JOIN gs_nation ON n_nationkey = c_nationkey
  GROUP BY c_name, c_address, c_phone, c_comment, n_name$$);
RESET gpuagg.batch_rows;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
RESET max_parallel_workers_per_gather;

-- join input: a GpuHashAgg over a GpuHashJoin writes the joined rows' text
-- keys as bytes too; keys of 40 MB in all fill a batch's string columns, so
-- that a joined row waits for the next batch
SET gpuagg.enable_aggjoin = off;
EXPLAIN (COSTS OFF)
SELECT f.t, d.t, count(*) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t, d.t;
SELECT gpuagg_check('SELECT f.t, d.t, count(*), sum(f.n) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t, d.t');
SELECT gpuagg_check('SELECT d.t, d.c, f.c, count(*), count(d.w) FROM gs_fact f LEFT JOIN gs_dim d USING (k) GROUP BY d.t, d.c, f.c');
SELECT gpuagg_check('SELECT f.t, count(DISTINCT d.t) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t');
SET gpuagg.debug_hash_bits = 1;
SELECT gpuagg_check('SELECT f.t, f.v, d.v, count(*) FROM gs_fact f JOIN gs_dim d USING (k) GROUP BY f.t, f.v, d.v');
RESET gpuagg.debug_hash_bits;
CREATE TABLE gs_big AS
SELECT g % 20 AS k, repeat(chr(65 + g % 26), 1000000) || g AS t FROM generate_series(1, 40) g;
ANALYZE gs_big;
SELECT gpuagg_check('SELECT b.t, count(*), sum(d.w) FROM gs_big b JOIN gs_dim d USING (k) GROUP BY b.t');
SELECT length(b.t) AS len, count(*), sum(d.w) FROM gs_big b JOIN gs_dim d USING (k)
GROUP BY b.t ORDER BY right(b.t, 2) LIMIT 3;
RESET gpuagg.enable_aggjoin;

DROP TABLE gs_fact, gs_dim, gs_customer, gs_orders, gs_nation, gs_big;
