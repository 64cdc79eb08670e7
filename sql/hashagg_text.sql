--
-- hashagg_text: text and varchar group keys
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

EXPLAIN (COSTS OFF)
SELECT k_text, count(*) FROM agg_data GROUP BY k_text;

SELECT k_text, count(*), sum(v_int4), min(v_int2)
FROM agg_data GROUP BY k_text ORDER BY k_text LIMIT 8;

SELECT gpuagg_check('SELECT k_text, count(*), sum(v_int4), avg(v_float8) FROM agg_data GROUP BY k_text');
SELECT gpuagg_check('SELECT k_varchar, k_text, count(*), max(v_int8) FROM agg_data GROUP BY k_varchar, k_text');
SELECT gpuagg_check('SELECT upper(k_text), k_int2, count(*) FROM agg_data GROUP BY 1, 2');
SELECT pg_typeof(k_varchar) FROM agg_data GROUP BY k_varchar LIMIT 1;

-- empty strings, strings that differ only at the end, case, multibyte
CREATE TEMP TABLE words (w text, n int);
INSERT INTO words VALUES ('', 1), ('', 2), ('a', 3), ('A', 4), ('a ', 5),
    ('ab', 6), ('aB', 7), ('ü', 8), ('u', 9), ('ü', 10), (NULL, 11), (NULL, 12);
SELECT w, count(*), sum(n) FROM words GROUP BY w ORDER BY w COLLATE "C";
SELECT gpuagg_check('SELECT w, count(*), sum(n) FROM words GROUP BY w');

-- long and TOASTed (compressed and external) values
CREATE TEMP TABLE long_words (w text, n int);
ALTER TABLE long_words ALTER COLUMN w SET STORAGE EXTERNAL;
INSERT INTO long_words
SELECT repeat(chr(65 + i % 3), 3000) || (i % 4), i FROM generate_series(1, 40) i;
INSERT INTO long_words
SELECT repeat(md5(i::text), 200) || (i % 2), i FROM generate_series(1, 20) i;
SELECT length(w), left(w, 3), count(*), sum(n) FROM long_words GROUP BY w
ORDER BY 2, 1, 3, 4;
SELECT gpuagg_check('SELECT w, count(*), sum(n) FROM long_words GROUP BY w');

-- a nondeterministic collation keeps the native plan
CREATE COLLATION case_insensitive (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT gpuagg_used('SELECT w COLLATE case_insensitive, count(*) FROM words GROUP BY 1');
SELECT count(*) AS case_insensitive_groups
FROM (SELECT w COLLATE case_insensitive, count(*) FROM words GROUP BY 1) s;
