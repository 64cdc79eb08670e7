--
-- hashagg_direct_scan: GpuHashAgg (and GpuAggPack) reading the pages of a
-- plain Seq Scan themselves (gpuagg.direct_scan): visibility, NULLs,
-- alignment, added and dropped columns, TOAST, rescans, parallel workers
--
SET gpuagg.explain_device_details = on;
SET gpuagg.device = cpu;
SET gpuagg.force = on;

CREATE TABLE ds (a int2, t text, b int8, n numeric(10,3), f float8, c char(3),
                 big text, d date, flag bool);
ALTER TABLE ds SET (autovacuum_enabled = off);
INSERT INTO ds
SELECT CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 7)::int2 END,
       CASE WHEN i % 13 = 0 THEN NULL ELSE 'key' || (i % 5) END,
       CASE WHEN i % 17 = 0 THEN NULL ELSE i::int8 * 1000003 END,
       CASE WHEN i % 19 = 0 THEN NULL ELSE (i % 100) / 8.0 END,
       CASE WHEN i % 23 = 0 THEN NULL ELSE i / 3.0 END,
       CASE WHEN i % 29 = 0 THEN NULL ELSE 'c' || (i % 3) END,
       CASE WHEN i % 31 = 0 THEN NULL ELSE repeat('x', i % 40) END,
       date '2020-01-01' + (i % 9),
       i % 2 = 0
FROM generate_series(1, 5000) i;

-- the plan reads the table itself (table columns only), also with a filter
EXPLAIN (COSTS OFF) SELECT a, count(*) FROM ds GROUP BY a;
EXPLAIN (COSTS OFF) SELECT a, count(*) FROM ds WHERE b > 0 GROUP BY a;
-- but not for a computed column
EXPLAIN (COSTS OFF) SELECT a + 1, count(*) FROM ds GROUP BY a + 1;

-- fresh rows: pages are not all-visible, each tuple's visibility is checked
SELECT gpuagg_check('SELECT a, t, count(*), sum(b), avg(n), max(f), min(d) FROM ds GROUP BY a, t');
SELECT gpuagg_check('SELECT c, flag, count(big), max(length(big)), sum(n) FROM ds GROUP BY c, flag');
SELECT gpuagg_check('SELECT big, count(*) FROM ds GROUP BY big');
SELECT gpuagg_check('SELECT count(*), count(a), count(t), sum(b), sum(f), bool_and(flag) FROM ds');
-- filters: on columns before and after text, NULLs, system columns, the whole row
SELECT gpuagg_check('SELECT a, count(*), sum(b) FROM ds WHERE b % 5 = 1 GROUP BY a');
SELECT gpuagg_check('SELECT t, count(*), max(d) FROM ds WHERE f > 100 AND big IS NOT NULL GROUP BY t');
SELECT gpuagg_check('SELECT a, count(*) FROM ds WHERE n IS NULL OR c = ''c1'' GROUP BY a');
SELECT gpuagg_check('SELECT a, count(*) FROM ds WHERE (ctid::text::point)[0] < 10 GROUP BY a');
SELECT gpuagg_check('SELECT a, count(*) FROM ds WHERE ds IS NOT NULL GROUP BY a');
SELECT gpuagg_check('SELECT a, count(*) FROM ds WHERE false GROUP BY a');

-- deleted and updated rows (dead and HOT-updated tuples on the pages)
DELETE FROM ds WHERE b % 3 = 0;
UPDATE ds SET n = n + 1, t = upper(t) WHERE a = 2;
SELECT gpuagg_check('SELECT a, t, count(*), sum(b), avg(n) FROM ds GROUP BY a, t');

-- the transaction's own changes are visible, rolled-back ones are not
BEGIN;
INSERT INTO ds (a, t, b) SELECT 99, 'mine', i FROM generate_series(1, 300) i;
DELETE FROM ds WHERE a = 1;
SELECT gpuagg_check('SELECT a, t, count(*), sum(b) FROM ds GROUP BY a, t');
SELECT a, count(*), sum(b) FROM ds WHERE a IN (1, 99) GROUP BY a ORDER BY a;
ROLLBACK;
SELECT gpuagg_check('SELECT a, count(*), sum(b) FROM ds GROUP BY a');

-- after VACUUM the pages are all-visible: the fast path
VACUUM (FREEZE) ds;
SELECT gpuagg_check('SELECT a, t, count(*), sum(b), avg(n), max(f), min(d) FROM ds GROUP BY a, t');

-- a column added with a default (rows that predate it take the default),
-- one added without, a dropped column in the middle
ALTER TABLE ds ADD COLUMN later int4 DEFAULT 7, ADD COLUMN later2 text;
ALTER TABLE ds DROP COLUMN c;
INSERT INTO ds (a, t, b, later, later2) VALUES (5, 'new', 1, 8, 'z'), (5, 'new', 2, NULL, NULL);
SELECT gpuagg_check('SELECT later, later2, count(*), sum(b), max(d) FROM ds GROUP BY later, later2');
SELECT later, later2, count(*) FROM ds GROUP BY later, later2 ORDER BY later, later2;

-- compressed inline and out-of-line (TOAST) values as keys and arguments
CREATE TABLE ds_toast (k text, v numeric(20,2));
INSERT INTO ds_toast
SELECT repeat(chr(65 + i % 3), 3000 + i % 2), i * 1.5
FROM generate_series(1, 20) i;
ALTER TABLE ds_toast ALTER k SET STORAGE EXTERNAL;	-- out of line, uncompressed
INSERT INTO ds_toast
SELECT string_agg(md5(j::text), '') || (i % 2), i
FROM generate_series(1, 6) i, generate_series(1, 200) j GROUP BY i;
SELECT gpuagg_check('SELECT k, count(*), sum(v) FROM ds_toast GROUP BY k');
SELECT left(k, 5), length(k), count(*) FROM ds_toast GROUP BY k ORDER BY 1, 2;

-- EXPLAIN ANALYZE counts the Seq Scan's rows as a native plan does
CREATE FUNCTION ds_explain_rows(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || query
        INTO plan;
    plan := plan->0->'Plan';
    RETURN format('%s: Input %s, %s: rows %s loops %s removed by filter %s',
                  plan->>'Custom Plan Provider', plan->>'Input',
                  plan->'Plans'->0->>'Node Type',
                  (plan->'Plans'->0->>'Actual Rows')::numeric::bigint,
                  plan->'Plans'->0->>'Actual Loops',
                  coalesce((plan->'Plans'->0->>'Rows Removed by Filter')::numeric::bigint, 0));
END
$$;
SELECT ds_explain_rows('SELECT a, count(*) FROM ds GROUP BY a');
SELECT count(*) FROM ds;
SELECT ds_explain_rows('SELECT a, count(*) FROM ds WHERE b % 2 = 0 GROUP BY a');
SELECT count(*) FILTER (WHERE b % 2 = 0) AS kept, count(*) FILTER (WHERE b % 2 = 0 IS NOT TRUE) AS removed FROM ds;
DROP FUNCTION ds_explain_rows(text);

-- rescans and cursors
SELECT gpuagg_check('SELECT g, (SELECT count(*) + g FROM (SELECT a FROM ds GROUP BY a) s) FROM generate_series(1, 3) g');
SELECT gpuagg_check('SELECT g, s.* FROM generate_series(1, 3) g, LATERAL (SELECT a, count(*) + g AS n FROM ds GROUP BY a) s');
SELECT gpuagg_cursor_round_trip('SELECT a, t, count(*) FROM ds GROUP BY a, t', 4);
-- a filter on the outer query's value: the Seq Scan is rescanned with it
SELECT gpuagg_check('SELECT g, (SELECT count(*) FROM (SELECT a FROM ds WHERE a = g GROUP BY a) s) FROM generate_series(0, 7) g');
SELECT gpuagg_check('SELECT g, s.* FROM generate_series(1, 3) g, LATERAL (SELECT a, count(*) AS n FROM ds WHERE b % 3 = g % 3 GROUP BY a) s');
SET gpuagg.debug_fail_at_batch = 2;
SET gpuagg.batch_rows = 500;
SELECT gpuagg_check('SELECT a, count(*), sum(b) FROM ds GROUP BY a');
RESET gpuagg.debug_fail_at_batch;
RESET gpuagg.batch_rows;

-- a serializable transaction reads through the Seq Scan (predicate locks)
BEGIN ISOLATION LEVEL SERIALIZABLE;
EXPLAIN (COSTS OFF) SELECT a, count(*) FROM ds GROUP BY a;
SELECT gpuagg_check('SELECT a, count(*) FROM ds GROUP BY a');
COMMIT;

-- off: the same plan, rows through the Seq Scan node
SET gpuagg.direct_scan = off;
EXPLAIN (COSTS OFF) SELECT a, count(*) FROM ds GROUP BY a;
SELECT gpuagg_check('SELECT a, t, count(*), sum(b) FROM ds GROUP BY a, t');
RESET gpuagg.direct_scan;

-- parallel workers read their share of the pages
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT a, count(*) FROM ds GROUP BY a;
SET gpuagg.batch_rows = 256;
SELECT gpuagg_check('SELECT a, t, count(*), sum(b), avg(n) FROM ds GROUP BY a, t');
DELETE FROM ds WHERE a = 3;
SELECT gpuagg_check('SELECT a, t, count(*), sum(b), avg(n) FROM ds GROUP BY a, t');
SELECT gpuagg_check('SELECT g, (SELECT count(*) + g FROM (SELECT t FROM ds GROUP BY t) s) FROM generate_series(1, 2) g');
RESET gpuagg.batch_rows;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- short text keys (packed into one word by the key dictionary), the same
-- values computed (4-byte headers), and longer ones, in one dictionary
CREATE TABLE ds_short (t text, v int);
INSERT INTO ds_short
SELECT (ARRAY['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'abcdef', 'abcdefg',
              'abcdefgh', 'abcdefghi', 'b', 'ba', 'abd', 'abce'])[1 + i % 14], i
FROM generate_series(1, 2000) i;
SELECT gpuagg_check('SELECT t, count(*), sum(v) FROM ds_short GROUP BY t');
SELECT gpuagg_check('SELECT k, count(*) FROM (SELECT t AS k FROM ds_short UNION ALL SELECT t || '''' FROM ds_short) s GROUP BY k');
SELECT t, count(*) FROM ds_short GROUP BY t ORDER BY t;
-- enough distinct short values that the short-value cache grows past the
-- size where it may become half full
INSERT INTO ds_short SELECT 'k' || (i % 20000), i FROM generate_series(1, 40000) i;
SELECT gpuagg_check('SELECT t, count(*), sum(v) FROM ds_short GROUP BY t');
DROP TABLE ds_short;

-- with no numeric argument, a page's rows are appended column by column:
-- every key encoding (bpchar, numeric and interval spellings, -0), NULLs,
-- FILTER, sender spelling ids, batches that end in the middle of a page;
-- and with a numeric argument, row by row from the deformed columns.
-- (No min or max over floats here: with both 0 and -0 in a group, which
-- one the device returns need not be the one PostgreSQL returns.)
CREATE TABLE ds_col (i int4, s int2, b bool, d date, c bpchar, f8 float8,
                     f4 float4, n numeric, t text, iv interval, u uuid,
                     m numeric(10,2));
ALTER TABLE ds_col SET (autovacuum_enabled = off);
INSERT INTO ds_col
SELECT i,
       CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 5)::int2 END,
       CASE WHEN i % 11 = 0 THEN NULL ELSE i % 3 = 0 END,
       date '2024-02-27' + i % 4,
       CASE WHEN i % 13 = 0 THEN NULL ELSE rpad('c' || i % 3, 2 + i % 3)::bpchar END,
       CASE WHEN i % 17 = 0 THEN NULL WHEN i % 4 = 0 THEN '-0'::float8 ELSE (i % 3)::float8 END,
       CASE WHEN i % 23 = 0 THEN NULL WHEN i % 5 = 0 THEN '-0'::float4 ELSE (i % 6) / 2.0::float4 END,
       CASE WHEN i % 19 = 0 THEN NULL ELSE round((i % 4) / 2.0, i % 3) END,
       CASE WHEN i % 29 = 0 THEN NULL WHEN i % 31 = 0 THEN repeat('long', 10 + i % 2)
            ELSE 't' || i % 10 END,
       CASE WHEN i % 2 = 0 THEN make_interval(months => i % 3) ELSE make_interval(days => 30 * (i % 3)) END,
       CASE WHEN i % 37 = 0 THEN NULL ELSE md5((i % 5)::text)::uuid END,
       CASE WHEN i % 41 = 0 THEN NULL ELSE i / 8.0 END
FROM generate_series(1, 3000) i;
VACUUM (FREEZE) ds_col;
EXPLAIN (COSTS OFF) SELECT s, b, d, count(*), sum(i) FROM ds_col GROUP BY s, b, d;
SELECT gpuagg_check('SELECT s, b, d, count(*), count(f8), sum(i), min(s), max(d), bool_or(b) FROM ds_col GROUP BY s, b, d');
SELECT gpuagg_check('SELECT c, count(*), sum(i) FROM ds_col GROUP BY c');
SELECT gpuagg_check('SELECT f8, f4, count(*), sum(s) FROM ds_col GROUP BY f8, f4');
SELECT gpuagg_check('SELECT n, iv, count(*), min(i) FROM ds_col GROUP BY n, iv');
SELECT gpuagg_check('SELECT t, u, count(*) FILTER (WHERE b), sum(i) FILTER (WHERE b), max(s) FILTER (WHERE NOT b) FROM ds_col GROUP BY t, u');
SELECT gpuagg_check('SELECT s, variance(s), stddev_pop(i), count(c) FROM ds_col GROUP BY s');
SELECT gpuagg_check('SELECT t, count(*), sum(m), avg(m) FILTER (WHERE b) FROM ds_col GROUP BY t');
SELECT c, f8, count(*) FROM ds_col WHERE i < 40 GROUP BY c, f8 ORDER BY c, f8;
SET gpuagg.batch_rows = 50;
SELECT gpuagg_check('SELECT c, n, f8, count(*), sum(i) FILTER (WHERE b) FROM ds_col GROUP BY c, n, f8');
SELECT gpuagg_check('SELECT t, count(*), sum(m) FROM ds_col GROUP BY t');
RESET gpuagg.batch_rows;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 100;
-- (which spelling a group shows depends on which worker read its first row:
-- shown here in one spelling)
SELECT gpuagg_check('SELECT c::text, t, round(n, 2), count(*), sum(i) FILTER (WHERE b), min(s), count(f8) FROM ds_col GROUP BY c, t, n');
RESET gpuagg.batch_rows;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
DROP TABLE ds_col;
-- values with 4-byte headers after an odd offset (padding before them), and
-- columns of wider alignment after narrower ones
CREATE TABLE ds_pad (flag bool, t text, k int2, w int8, x char(1), y float8);
INSERT INTO ds_pad
SELECT i % 2 = 0, repeat(chr(97 + i % 3), 200 + i % 4), (i % 5)::int2, i,
       chr(65 + i % 2), i / 4.0
FROM generate_series(1, 1000) i;
SELECT gpuagg_check('SELECT t, k, x, count(*), sum(w), sum(y) FROM ds_pad GROUP BY t, k, x');
SELECT gpuagg_check('SELECT flag, x, count(*), max(w), min(k) FROM ds_pad GROUP BY flag, x');
DROP TABLE ds_pad;

-- pages found in the buffer after the previous page's (ReadRecentBuffer), or
-- not; and a temporary table's local buffers, where no buffer is guessed
CREATE TEMP TABLE ds_temp AS SELECT * FROM ds;
EXPLAIN (COSTS OFF) SELECT a, count(*) FROM ds_temp GROUP BY a;
SELECT gpuagg_check('SELECT a, t, count(*), sum(b) FROM ds_temp GROUP BY a, t');
DROP TABLE ds_temp;

-- the planner does not charge the executor's per-tuple cost of a Seq Scan
-- the direct scan reads (plain columns), and does where it cannot (an
-- expression in the child's output): the GpuHashAgg's own cost, unforced,
-- with native aggregation priced out, with gpuagg.direct_scan on and off
CREATE FUNCTION ds_cost(query text, direct text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    PERFORM set_config('gpuagg.direct_scan', direct, true);
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
    PERFORM set_config('gpuagg.direct_scan', 'on', true);
    IF plan->0->'Plan'->>'Custom Plan Provider' IS DISTINCT FROM 'GpuHashAgg' THEN
        RAISE EXCEPTION 'not a GpuHashAgg at the top: %', plan->0->'Plan'->>'Node Type';
    END IF;
    RETURN (plan->0->'Plan'->>'Total Cost')::float8;
END
$$;
SET gpuagg.force = off;
SET enable_hashagg = off;
SET enable_sort = off;
SET max_parallel_workers_per_gather = 0;
SELECT abs(ds_cost(q, 'off') - ds_cost(q, 'on') -
           (SELECT reltuples FROM pg_class WHERE relname = 'ds') *
           current_setting('cpu_tuple_cost')::float8) < 0.001 AS saves_the_scan_tuple_cost
FROM (VALUES ('SELECT a, count(*), sum(b) FROM ds GROUP BY a')) v(q);
SELECT ds_cost(q, 'off') = ds_cost(q, 'on') AS saves_nothing
FROM (VALUES ('SELECT a + 1, count(*) FROM ds GROUP BY a + 1')) v(q);
RESET max_parallel_workers_per_gather;
RESET enable_sort;
RESET enable_hashagg;
SET gpuagg.force = on;
DROP FUNCTION ds_cost(text, text);

DROP TABLE ds, ds_toast;
RESET gpuagg.force;
RESET gpuagg.device;
RESET gpuagg.explain_device_details;
