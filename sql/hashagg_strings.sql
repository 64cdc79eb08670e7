--
-- hashagg_strings: text, varchar and char(n) group keys travel to the device
-- as their bytes; the device hashes and compares them
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

CREATE TABLE str_data (t text, v varchar(12), c char(4), b bpchar, i int, n int);
-- adversarial spellings: empty, blanks, case, multibyte, prefixes, NULLs
INSERT INTO str_data
SELECT (ARRAY['', ' ', '  ', 'a', 'a ', 'A', 'ab', 'aB', 'ü', U&'u\0308', 'u', '日本',
              '日本語', 'x' || chr(9), NULL])[1 + g % 15],
       (ARRAY['', 'v', 'v ', 'ß', NULL])[1 + g % 5],
       (ARRAY['ab', 'ab  ', 'a', '', 'é', NULL])[1 + g % 6],
       (ARRAY['x', 'x ', 'x  ', 'y', NULL])[1 + g % 5],
       g % 7, g
FROM generate_series(1, 3000) g;
-- many groups: one per row for a third of them
INSERT INTO str_data
SELECT md5(g::text) || repeat('é', g % 5), left(md5(g::text), g % 13), NULL, NULL, g % 3, g
FROM generate_series(1, 5000) g;
ANALYZE str_data;

SELECT t, count(*), sum(n) FROM str_data WHERE length(t) < 8 GROUP BY t ORDER BY t COLLATE "C";
SELECT c, length(c::text), count(*) FROM str_data GROUP BY c ORDER BY c COLLATE "C";
SELECT gpuagg_check('SELECT t, count(*), sum(n), avg(n) FROM str_data GROUP BY t');
SELECT gpuagg_check('SELECT v, count(*), min(n), max(n) FROM str_data GROUP BY v');
SELECT gpuagg_check('SELECT c, count(*), sum(i) FROM str_data GROUP BY c');
SELECT gpuagg_check('SELECT b, count(*), sum(i) FROM str_data GROUP BY b');
-- text keys mixed with integer keys, and with each other
SELECT gpuagg_check('SELECT t, i, count(*), sum(n) FROM str_data GROUP BY t, i');
SELECT gpuagg_check('SELECT i, v, t, c, count(*) FROM str_data GROUP BY i, v, t, c');
SELECT gpuagg_check('SELECT t || v, count(*) FROM str_data GROUP BY 1');
-- count() of a text key reads the key's column
SELECT gpuagg_check('SELECT t, count(t), count(*), count(v) FROM str_data GROUP BY t, v');
-- grouping sets, DISTINCT aggregates, HAVING
SELECT gpuagg_check('SELECT t, i, count(*), sum(n) FROM str_data GROUP BY GROUPING SETS ((t), (t, i), (i), ())');
SELECT gpuagg_check('SELECT t, count(DISTINCT i), sum(DISTINCT i) FROM str_data GROUP BY t');
SELECT gpuagg_check('SELECT i, count(DISTINCT t) FROM str_data GROUP BY i');
SELECT gpuagg_check('SELECT t, count(*) FROM str_data GROUP BY t HAVING count(*) > 1');

-- DISTINCT arguments of text, varchar and char(n) travel as bytes too (an
-- unconstrained bpchar keeps its dictionary, blind to trailing blanks)
SELECT gpuagg_check('SELECT i, count(DISTINCT t), count(DISTINCT v), count(DISTINCT c), count(DISTINCT b) FROM str_data GROUP BY i');
SELECT gpuagg_check('SELECT count(DISTINCT t), count(DISTINCT v), count(DISTINCT c), count(t), count(*) FROM str_data');
SELECT gpuagg_check('SELECT t, count(DISTINCT t), count(DISTINCT v), count(DISTINCT i) FROM str_data GROUP BY t');
SELECT gpuagg_check('SELECT v, c, count(DISTINCT t) FILTER (WHERE n % 3 = 0), count(DISTINCT t), sum(n) FROM str_data GROUP BY v, c');
SELECT gpuagg_check('SELECT i, count(DISTINCT t || v), count(DISTINCT lower(t)) FROM str_data GROUP BY i HAVING count(DISTINCT t) > 1');
SELECT i, count(DISTINCT t), count(DISTINCT v), count(DISTINCT c), count(DISTINCT b)
FROM str_data WHERE n <= 3000 GROUP BY i ORDER BY i;

-- equal hashes for unequal keys: the device compares the bytes
SET gpuagg.debug_hash_bits = 1;
SELECT gpuagg_check('SELECT t, count(*), sum(n) FROM str_data GROUP BY t');
SELECT gpuagg_check('SELECT t, i, v, count(*) FROM str_data GROUP BY t, i, v');
SELECT gpuagg_check('SELECT t, count(DISTINCT i) FROM str_data GROUP BY t');
SELECT gpuagg_check('SELECT i, count(DISTINCT t), count(DISTINCT v) FROM str_data GROUP BY i');
SELECT gpuagg_check('SELECT v, count(DISTINCT t), count(DISTINCT c) FROM str_data GROUP BY v');
SET gpuagg.debug_hash_bits = 4;
SELECT gpuagg_check('SELECT c, v, count(*) FROM str_data GROUP BY c, v');
SELECT gpuagg_check('SELECT count(DISTINCT t), count(DISTINCT v) FROM str_data');
RESET gpuagg.debug_hash_bits;

-- the dictionary path gives the same groups
SET gpuagg.string_keys = off;
SELECT gpuagg_check('SELECT t, i, count(*), sum(n) FROM str_data GROUP BY t, i');
SELECT gpuagg_check('SELECT i, count(DISTINCT t), count(DISTINCT c) FROM str_data GROUP BY i');
RESET gpuagg.string_keys;

-- parallel workers write the bytes; the leader copies them
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 512;
EXPLAIN (COSTS OFF) SELECT t, count(*) FROM str_data GROUP BY t;
SELECT gpuagg_check('SELECT t, count(*), sum(n), avg(n) FROM str_data GROUP BY t');
SELECT gpuagg_check('SELECT t, i, v, count(*) FROM str_data GROUP BY t, i, v');
SET parallel_leader_participation = off;
SET gpuagg.debug_hash_bits = 2;
SELECT gpuagg_check('SELECT t, c, count(*), max(n) FROM str_data GROUP BY t, c');
SELECT gpuagg_check('SELECT i, count(DISTINCT t), count(DISTINCT v), count(*) FROM str_data GROUP BY i');
RESET gpuagg.debug_hash_bits;
SELECT gpuagg_check('SELECT v, count(DISTINCT t), count(DISTINCT c) FROM str_data GROUP BY v');
RESET parallel_leader_participation;
RESET gpuagg.batch_rows;
RESET max_parallel_workers_per_gather;

-- long and TOASTed keys: more than a batch's bytes (16 MB) split batches; a
-- key longer than that is refused
CREATE TEMP TABLE str_long (t text, n int);
INSERT INTO str_long SELECT repeat(chr(65 + g % 3), 7000000) || g % 4, g FROM generate_series(1, 8) g;
INSERT INTO str_long SELECT repeat(md5(g::text), 100), g FROM generate_series(1, 30) g;
INSERT INTO str_long SELECT repeat(md5(g::text), 100), g FROM generate_series(1, 30) g;
SELECT left(t, 1), right(t, 1), length(t), count(*), sum(n) FROM str_long GROUP BY t
ORDER BY 3 DESC, 1, 2, 5 LIMIT 10;
SELECT gpuagg_check('SELECT md5(t), count(*), sum(n) FROM (SELECT t, count(*), sum(n) AS n FROM str_long GROUP BY t) s GROUP BY 1');
SELECT gpuagg_check('SELECT n % 3, count(DISTINCT t), count(DISTINCT left(t, 1)) FROM str_long GROUP BY 1');
SET gpuagg.batch_rows = 16;
SELECT gpuagg_check('SELECT md5(t), count(*), sum(n) FROM (SELECT t, count(*), sum(n) AS n FROM str_long GROUP BY t) s GROUP BY 1');
SELECT gpuagg_check('SELECT n % 3, count(DISTINCT t) FROM str_long GROUP BY 1');
RESET gpuagg.batch_rows;
INSERT INTO str_long VALUES (repeat('z', 17000000), 0);
SELECT length(t), count(*) FROM str_long GROUP BY t ORDER BY 1 DESC LIMIT 1;
SELECT count(DISTINCT t) FROM str_long;
SET gpuagg.string_keys = off;
SELECT length(t), count(*) FROM str_long GROUP BY t ORDER BY 1 DESC LIMIT 1;
SELECT count(DISTINCT t) FROM str_long;
RESET gpuagg.string_keys;

DROP TABLE str_data;
