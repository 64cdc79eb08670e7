--
-- aggjoin_strings: text, varchar and char(n) join keys of an aggjoin travel
-- to the device as their bytes (written by whichever process packs the
-- batch); the device hashes them and joins by exact byte equality
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

-- adversarial spellings: empty, blanks, case, multibyte and decomposed,
-- prefixes of each other, NULLs; a char(5) and a char(3) of the same values
CREATE TABLE js_fact (id int, t text, v varchar(10), c char(5), c3 char(3), b bpchar,
                      i int, n int);
INSERT INTO js_fact
SELECT g,
       (ARRAY['', ' ', 'a', 'a ', 'A', 'ab', 'aB', 'ü', U&'u\0308', 'u', '日本', '日本語',
              'pre', 'prefix', 'prefix2', NULL])[1 + g % 16],
       (ARRAY['', 'v', 'v ', 'ß', NULL])[1 + g % 5],
       (ARRAY['ab', 'ab  ', 'a', '', 'é', NULL])[1 + g % 6],
       (ARRAY['ab', 'a', '', 'é', NULL])[1 + g % 5],
       (ARRAY['x', 'x ', 'y', NULL])[1 + g % 4],
       g % 7, g
FROM generate_series(1, 6000) g;
-- long keys, compressed and stored out of line, equal but for the last byte
ALTER TABLE js_fact ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO js_fact
SELECT 10000 + g, repeat('long', 600 * g) || (g % 2), NULL, NULL, NULL, NULL, g % 7, g
FROM generate_series(1, 6) g;
-- the build side: duplicate keys (many to many), keys no probe row has
CREATE TABLE js_dim (t text, v varchar(10), c char(5), c3 char(3), b bpchar, i int, w int);
INSERT INTO js_dim
SELECT (ARRAY['', 'a', 'A', 'aB', 'ü', 'u', '日本語', 'prefix', 'zzz', NULL])[1 + g % 10],
       (ARRAY['', 'v ', 'ß', NULL])[1 + g % 4],
       (ARRAY['ab', 'a', 'é', NULL])[1 + g % 4],
       (ARRAY['ab', 'a', 'é', NULL])[1 + g % 4],
       (ARRAY['x', 'y ', NULL])[1 + g % 3],
       g % 7, g
FROM generate_series(1, 40) g;
INSERT INTO js_dim
SELECT repeat('long', 600 * g) || '1', NULL, NULL, NULL, NULL, g % 7, 100 + g
FROM generate_series(1, 3) g;
-- a second level, keyed by js_dim.v (a snowflake's text key from a build side)
CREATE TABLE js_dim2 (v varchar(10), region text);
INSERT INTO js_dim2 VALUES ('', 'r0'), ('v ', 'r1'), ('v', 'r2'), (NULL, 'r3'), ('ß', 'r4');
CREATE TABLE js_empty (t text, w int);
ANALYZE js_fact, js_dim, js_dim2, js_empty;

-- inner joins on text, varchar, char(n) of one length; group keys of either side
SELECT aggjoin_check('SELECT js_fact.i, count(*), sum(js_fact.n), sum(js_dim.w) FROM js_fact JOIN js_dim USING (t) GROUP BY js_fact.i');
SELECT aggjoin_check('SELECT js_dim.w, count(*) FROM js_fact JOIN js_dim USING (t) GROUP BY js_dim.w');
SELECT aggjoin_check('SELECT count(*), sum(js_fact.n), sum(js_dim.w) FROM js_fact JOIN js_dim USING (v)');
SELECT aggjoin_check('SELECT js_fact.i, count(*), sum(js_dim.w) FROM js_fact JOIN js_dim USING (c) GROUP BY js_fact.i');
-- char(n) of other lengths and an unconstrained bpchar keep a dictionary
SELECT aggjoin_check('SELECT count(*), sum(js_dim.w) FROM js_fact JOIN js_dim ON js_fact.c3 = js_dim.c');
SELECT aggjoin_check('SELECT count(*), sum(js_dim.w) FROM js_fact JOIN js_dim ON js_fact.c3 = js_dim.c3');
SELECT aggjoin_check('SELECT count(*), sum(js_dim.w) FROM js_fact JOIN js_dim USING (b)');
-- text against varchar, and a text expression
SELECT aggjoin_check('SELECT count(*), sum(js_dim.w) FROM js_fact JOIN js_dim ON js_fact.t = js_dim.v');
SELECT aggjoin_check('SELECT count(*), sum(js_dim.w) FROM js_fact JOIN js_dim ON lower(js_fact.t) = js_dim.t');
-- several keys mixing text and integers
SELECT aggjoin_check('SELECT js_fact.i, count(*), sum(js_dim.w) FROM js_fact JOIN js_dim USING (t, i) GROUP BY js_fact.i');
SELECT aggjoin_check('SELECT count(*), sum(js_fact.n) FROM js_fact JOIN js_dim USING (i, v, c)');

-- outer, semi and anti joins: a NULL key never matches, LEFT keeps its row
SELECT aggjoin_check('SELECT js_fact.i, count(*), count(js_dim.w), sum(js_dim.w) FROM js_fact LEFT JOIN js_dim USING (t) GROUP BY js_fact.i');
SELECT aggjoin_check('SELECT count(*), count(js_fact.n), sum(js_dim.w) FROM js_fact RIGHT JOIN js_dim USING (t)');
SELECT aggjoin_check('SELECT count(*), count(js_fact.n), count(js_dim.w) FROM js_fact FULL JOIN js_dim USING (v)');
SELECT aggjoin_check('SELECT i, count(*) FROM js_fact WHERE t IN (SELECT t FROM js_dim) GROUP BY i');
SELECT aggjoin_check('SELECT i, count(*) FROM js_fact WHERE EXISTS (SELECT 1 FROM js_dim WHERE js_dim.t = js_fact.t AND js_dim.w > js_fact.i) GROUP BY i');
SELECT aggjoin_check('SELECT i, count(*), count(t) FROM js_fact WHERE NOT EXISTS (SELECT 1 FROM js_dim WHERE js_dim.t = js_fact.t) GROUP BY i');
SELECT aggjoin_check('SELECT count(*), sum(js_fact.n) FROM js_fact JOIN js_empty USING (t)');
SELECT aggjoin_check('SELECT count(*), count(js_empty.w) FROM js_fact LEFT JOIN js_empty USING (t)');

-- a chain: the second join's text key comes from the first join's build side
SELECT aggjoin_check('SELECT js_dim2.region, count(*), sum(js_fact.n) FROM js_fact JOIN js_dim USING (t) JOIN js_dim2 ON js_dim2.v = js_dim.v GROUP BY js_dim2.region');
SELECT aggjoin_check('SELECT js_dim2.region, count(*) FROM js_fact JOIN js_dim2 USING (v) JOIN js_dim ON js_dim.c = js_fact.c GROUP BY js_dim2.region');
-- a FULL join's unmatched build rows meet a later text key of the probe side (null)
SELECT aggjoin_check('SELECT js_dim2.region, count(*), count(js_dim.w) FROM js_fact FULL JOIN js_dim ON js_dim.t = js_fact.t LEFT JOIN js_dim2 ON js_dim2.v = js_fact.v GROUP BY js_dim2.region');

-- the results, printed once
SELECT js_dim.t IS NULL AS t_null, length(js_dim.t) AS len, count(*), sum(js_fact.n)
FROM js_fact JOIN js_dim USING (t) GROUP BY 1, 2 ORDER BY 1, 2;
SELECT js_fact.i, count(*), count(js_dim.w) FROM js_fact LEFT JOIN js_dim USING (c)
GROUP BY js_fact.i ORDER BY js_fact.i;

-- batches small in rows, and gpuagg.string_keys off (dictionaries): the same
SET gpuagg.batch_rows = 700;
SELECT aggjoin_check('SELECT js_fact.i, count(*), sum(js_dim.w) FROM js_fact JOIN js_dim USING (t) GROUP BY js_fact.i');
RESET gpuagg.batch_rows;
SET gpuagg.string_keys = off;
SELECT aggjoin_check('SELECT js_fact.i, count(*), sum(js_dim.w) FROM js_fact JOIN js_dim USING (t) GROUP BY js_fact.i');
SELECT aggjoin_check('SELECT count(*), count(js_fact.n), count(js_dim.w) FROM js_fact FULL JOIN js_dim USING (v)');
RESET gpuagg.string_keys;

-- parallel workers pack the probe side (and a build side) with its bytes
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 512;
EXPLAIN (COSTS OFF)
SELECT f.i, count(*), sum(g.n) FROM js_fact f JOIN js_fact g ON f.t = g.t AND f.id % 50 = g.id % 50 GROUP BY f.i;
SELECT aggjoin_check('SELECT js_fact.i, count(*), sum(js_fact.n), sum(js_dim.w) FROM js_fact JOIN js_dim USING (t) GROUP BY js_fact.i');
SELECT aggjoin_check('SELECT js_fact.i, count(*), count(js_dim.w) FROM js_fact LEFT JOIN js_dim USING (t, i) GROUP BY js_fact.i');
SELECT aggjoin_check('SELECT count(*), sum(js_fact.n) FROM js_fact WHERE NOT EXISTS (SELECT 1 FROM js_dim WHERE js_dim.c = js_fact.c)');
SELECT aggjoin_check('SELECT f.i, count(*), sum(g.n) FROM js_fact f JOIN js_fact g ON f.t = g.t AND f.id % 50 = g.id % 50 GROUP BY f.i');
RESET gpuagg.batch_rows;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
RESET max_parallel_workers_per_gather;

DROP TABLE js_fact, js_dim, js_dim2, js_empty;
