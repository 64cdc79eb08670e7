--
-- hashagg_pages: a direct scan sending whole heap pages to the device,
-- which deforms them (gpuagg.page_scan): pages of every kind of
-- visibility, NULLs, alignment, added and dropped columns, each query
-- compared with gpuagg off, and EXPLAIN's count of pages; through the
-- GPU service (the suite's gpuagg.device_host), on the suite's device;
-- serial, and parallel with every participant sending pages
--
SET gpuagg.page_scan = on;
SET gpuagg.force = on;
SET max_parallel_workers_per_gather = 0;

-- The query's Heap Pages line of EXPLAIN ANALYZE (NULL: none).
CREATE FUNCTION heap_pages(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        IF line LIKE '%Heap Pages:%' THEN
            RETURN trim(line);
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;

-- gpuagg_check of the query, and its Heap Pages line.
CREATE FUNCTION pages_check(query text) RETURNS text
LANGUAGE sql AS $$
    SELECT gpuagg_check(query) || ', ' || coalesce(heap_pages(query), 'no Heap Pages line')
$$;

CREATE TABLE pg_pages (id int4, k int2, v int8, f float8, r float4, b bool,
                       d date, ts timestamp, t text, w int4);
ALTER TABLE pg_pages SET (autovacuum_enabled = off);
INSERT INTO pg_pages
SELECT i, CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 7)::int2 END,
       CASE WHEN i % 13 = 0 THEN NULL ELSE i::int8 * 1000003 END,
       CASE WHEN i % 17 = 0 THEN NULL ELSE i / 3.0 END,
       CASE WHEN i % 19 = 0 THEN NULL ELSE (i % 100) / 8.0 END,
       CASE WHEN i % 23 = 0 THEN NULL ELSE i % 2 = 0 END,
       date '2020-01-01' + (i % 9),
       CASE WHEN i % 29 = 0 THEN NULL ELSE timestamp '2020-01-01' + i * interval '1 hour' END,
       CASE WHEN i % 31 = 0 THEN NULL ELSE repeat('x', i % 40) END,
       i % 5
FROM generate_series(1, 20000) i;

-- fresh rows: no page is all-visible, each tuple's visibility is checked
SELECT heap_pages('SELECT k, count(*), sum(v) FROM pg_pages GROUP BY k');
SELECT pages_check('SELECT k, count(*), sum(v), round(avg(f)::numeric, 6), max(r), min(d), max(ts) FROM pg_pages GROUP BY k');
SELECT pages_check('SELECT w, b, count(t), count(ts), sum(id), min(f) FROM pg_pages GROUP BY w, b');
SELECT pages_check('SELECT d, count(*), sum(k), round(variance(f)::numeric, 3), round(stddev(r)::numeric, 6) FROM pg_pages GROUP BY d');
SELECT pages_check('SELECT count(*), count(k), sum(v), round(sum(f)::numeric, 3), max(ts), bool_and(b) FROM pg_pages');
SELECT pages_check('SELECT ts, count(*) FROM pg_pages GROUP BY ts');

-- after VACUUM every page is all-visible: the device reads the line pointers
VACUUM (FREEZE) pg_pages;
SELECT heap_pages('SELECT k, count(*), sum(v) FROM pg_pages GROUP BY k');
SELECT pages_check('SELECT k, count(*), sum(v), round(avg(f)::numeric, 6), max(r), min(d), max(ts) FROM pg_pages GROUP BY k');

-- deleted and updated rows, HOT updates among them, on all-visible pages
DELETE FROM pg_pages WHERE id % 3 = 0;
UPDATE pg_pages SET v = v + 1 WHERE k = 2;
UPDATE pg_pages SET w = w + 10 WHERE id % 50 = 1;
SELECT pages_check('SELECT k, w, count(*), sum(v), sum(id) FROM pg_pages GROUP BY k, w');

-- the transaction's own changes are visible, a rolled-back subtransaction's not
BEGIN;
INSERT INTO pg_pages (id, k, v) SELECT i, 99, i FROM generate_series(1, 300) i;
DELETE FROM pg_pages WHERE k = 1;
SAVEPOINT s;
INSERT INTO pg_pages (id, k, v) SELECT i, 98, i FROM generate_series(1, 300) i;
UPDATE pg_pages SET v = 0 WHERE k = 3;
ROLLBACK TO s;
UPDATE pg_pages SET v = -v WHERE k = 4;
SELECT pages_check('SELECT k, count(*), sum(v), max(id) FROM pg_pages GROUP BY k');
SELECT k, count(*), sum(v) FROM pg_pages WHERE k IN (1, 3, 4, 98, 99) GROUP BY k ORDER BY k;
ROLLBACK;
SELECT pages_check('SELECT k, count(*), sum(v), max(id) FROM pg_pages GROUP BY k');

-- a repeatable read snapshot does not see rows committed after it
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM pg_pages;
SELECT pages_check('SELECT k, count(*), sum(v) FROM pg_pages GROUP BY k');
COMMIT;

-- a column added with a default after rows exist (attmissingval), and one
-- added without; a dropped column before the ones read
ALTER TABLE pg_pages ADD COLUMN m int8 DEFAULT 42, ADD COLUMN m2 int4, ADD COLUMN m3 float8 DEFAULT 0.5;
INSERT INTO pg_pages (id, k, v, m, m2, m3) SELECT i, 5, i, i, i, i FROM generate_series(1, 100) i;
ALTER TABLE pg_pages DROP COLUMN f;
SELECT heap_pages('SELECT k, sum(m), count(m2), sum(m3) FROM pg_pages GROUP BY k');
SELECT pages_check('SELECT k, sum(m), count(m2), sum(m2), sum(m3), max(ts) FROM pg_pages GROUP BY k');
SELECT pages_check('SELECT m, count(*), sum(r) FROM pg_pages GROUP BY m');
VACUUM pg_pages;
SELECT pages_check('SELECT k, sum(m), count(m2), sum(m3), min(d) FROM pg_pages GROUP BY k');

-- alignment mixes: every width before and after NULLs and varlenas
-- and TOASTed values (compressed inline, and out of line) before them
CREATE TABLE pg_align (a bool, b int2, c int8, t1 text, d int2, e float8, f bool,
                       g date, t2 varchar, h timestamp, big text, i int4, j float4);
ALTER TABLE pg_align SET (autovacuum_enabled = off);
INSERT INTO pg_align
SELECT i % 3 = 0, (i % 5)::int2, i * 7, CASE WHEN i % 4 = 0 THEN NULL ELSE repeat('y', i % 200) END,
       CASE WHEN i % 6 = 0 THEN NULL ELSE (i % 4)::int2 END, i * 0.25,
       CASE WHEN i % 7 = 0 THEN NULL ELSE i % 2 = 1 END,
       date '2021-06-01' + i % 3, CASE WHEN i % 9 = 0 THEN NULL ELSE repeat('z', i % 3) END,
       timestamp '2021-01-01' + i * interval '1 minute',
       CASE i % 50 WHEN 0 THEN repeat('q', 10000)
                   WHEN 1 THEN (SELECT string_agg(md5(i::text || x), '') FROM generate_series(1, 200) x)
                   ELSE 'short' END,
       i, i / 7.0
FROM generate_series(1, 5000) i;
SELECT heap_pages('SELECT b, d, count(*), sum(c), sum(i) FROM pg_align GROUP BY b, d');
SELECT pages_check('SELECT b, d, f, count(*), sum(c), sum(e), max(h), min(g), sum(i), max(j) FROM pg_align GROUP BY b, d, f');
SELECT pages_check('SELECT a, g, count(t1), count(t2), count(big), min(j), max(j) FROM pg_align GROUP BY a, g');

-- what keeps pages on the host, as EXPLAIN says
SELECT heap_pages('SELECT k, count(*) FROM pg_pages WHERE v > 0 GROUP BY k');
SELECT heap_pages('SELECT t, count(*) FROM pg_pages GROUP BY t');
SET gpuagg.page_scan = off;
SELECT heap_pages('SELECT k, count(*) FROM pg_pages GROUP BY k');
SET gpuagg.page_scan = on;
SET gpuagg.batch_rows = 100;
SELECT heap_pages('SELECT k, count(*) FROM pg_pages GROUP BY k');
RESET gpuagg.batch_rows;
-- the pages cross to the GPU service, whose device counts the query
SET gpuagg.device_host = service;
SELECT sum(queries) AS queries_before FROM gpuagg_stats \gset
SELECT heap_pages('SELECT k, count(*) FROM pg_pages GROUP BY k');
SELECT sum(queries) > :queries_before AS in_the_service FROM gpuagg_stats;
-- the session's own device takes them the same way
SET gpuagg.device_host = backend;
SELECT pages_check('SELECT k, count(*), sum(v), sum(m) FROM pg_pages GROUP BY k');
RESET gpuagg.device_host;

-- several batches of pages
SET gpuagg.batch_rows = 1000;
SELECT heap_pages('SELECT k, count(*) FROM pg_pages GROUP BY k');
SELECT pages_check('SELECT k, count(*), sum(v), sum(m) FROM pg_pages GROUP BY k');
RESET gpuagg.batch_rows;

-- A parallel plan: every participant's GpuAggPack sends its pages in its
-- messages, and the Heap Pages line counts them all
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuagg.batch_rows = 2000;
SET gpuagg.explain_device_details = off;	-- the same plan on every device
EXPLAIN (COSTS OFF) SELECT k, count(*), sum(v) FROM pg_pages GROUP BY k;
RESET gpuagg.explain_device_details;

-- pages_check (gpuagg_check where the pages vary) through the GPU service
-- and in the session, each against PostgreSQL's own (parallel) plan
CREATE FUNCTION parallel_check(query text, pages boolean DEFAULT true) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    host text;
    old text := current_setting('gpuagg.device_host');
BEGIN
    FOREACH host IN ARRAY ARRAY['service', 'backend'] LOOP
        PERFORM set_config('gpuagg.device_host', host, true);
        RETURN NEXT host || ': ' ||
            CASE WHEN pages THEN pages_check(query) ELSE gpuagg_check(query) END;
    END LOOP;
    PERFORM set_config('gpuagg.device_host', old, true);
END;
$$;

-- whether workers ran the query, and its Heap Pages line
CREATE FUNCTION parallel_pages(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    launched boolean := false;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        launched := launched OR line ~ 'Workers Launched: [1-9]';
    END LOOP;
    RETURN CASE WHEN launched THEN 'workers' ELSE 'no worker' END || ', ' ||
        coalesce(heap_pages(query), 'no Heap Pages line');
END;
$$;

-- the workers alone send every page (the leader only aggregates)
SET parallel_leader_participation = off;
SELECT parallel_pages('SELECT k, count(*), sum(v) FROM pg_pages GROUP BY k');
SELECT parallel_check('SELECT k, w, count(*), sum(v), sum(m), min(d) FROM pg_pages GROUP BY k, w');
RESET parallel_leader_participation;
SELECT parallel_check('SELECT k, count(*), sum(v), sum(m), max(ts), bool_or(b) FROM pg_pages GROUP BY k');

-- pages of one table in every state: fresh (no page all-visible), frozen,
-- then deleted, updated and HOT-updated rows on all-visible pages
CREATE TABLE pp (id int4, k int2, v int8, f float8, pad text, w int4, n1 int4, n2 int8,
                 n3 float4, n4 int2, n5 date);
ALTER TABLE pp SET (autovacuum_enabled = off, fillfactor = 90);
INSERT INTO pp
SELECT i, (i % 13)::int2, i * 7, i / 4.0, CASE WHEN i % 10 = 0 THEN repeat('p', i % 300) END,
       i % 3,
       CASE WHEN i % 2 = 0 THEN i END, CASE WHEN i % 3 = 0 THEN i * 11 END,
       CASE WHEN i % 5 = 0 THEN i / 8.0 END, CASE WHEN i % 7 <> 0 THEN (i % 9)::int2 END,
       CASE WHEN i % 4 = 0 THEN date '2024-01-01' + i % 30 END
FROM generate_series(1, 30000) i;
SELECT parallel_check('SELECT k, count(*), sum(v), sum(f), count(pad), sum(w) FROM pp GROUP BY k');
-- many NULLs in every row: the null bitmap decides each column's bytes
SELECT parallel_check('SELECT n4, count(n1), sum(n2), max(n3), min(n5), sum(v) FROM pp GROUP BY n4');
VACUUM (FREEZE) pp;
SELECT parallel_pages('SELECT k, count(*) FROM pp GROUP BY k');
DELETE FROM pp WHERE id % 5 = 0;
UPDATE pp SET v = v + 1 WHERE k = 4;		-- HOT where the page has room
UPDATE pp SET w = w + 10 WHERE id % 97 = 1;
SELECT parallel_check('SELECT k, w, count(*), sum(v), sum(n2) FROM pp GROUP BY k, w');

-- the transaction's own changes are visible, a rolled-back subtransaction's
-- not, in the workers too
BEGIN;
INSERT INTO pp (id, k, v) SELECT i, 99, i FROM generate_series(1, 400) i;
DELETE FROM pp WHERE k = 1;
SAVEPOINT s;
INSERT INTO pp (id, k, v) SELECT i, 98, i FROM generate_series(1, 400) i;
UPDATE pp SET v = 0 WHERE k = 3;
ROLLBACK TO s;
UPDATE pp SET v = -v WHERE k = 5;
SELECT parallel_check('SELECT k, count(*), sum(v), max(id) FROM pp GROUP BY k');
ROLLBACK;
-- an aborted transaction's rows stay invisible
BEGIN;
INSERT INTO pp (id, k, v) SELECT i, 97, i FROM generate_series(1, 400) i;
UPDATE pp SET v = 1 WHERE k = 6;
ROLLBACK;
SELECT parallel_check('SELECT k, count(*), sum(v) FROM pp GROUP BY k');

-- a repeatable read snapshot in every worker
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM pp;
SELECT parallel_check('SELECT k, count(*), sum(v) FROM pp GROUP BY k');
COMMIT;

-- a column added with a default after rows exist, a dropped column
ALTER TABLE pp ADD COLUMN m int8 DEFAULT 42, ADD COLUMN m2 float8 DEFAULT 0.5;
INSERT INTO pp (id, k, v, m, m2) SELECT i, 7, i, i, i FROM generate_series(1, 300) i;
ALTER TABLE pp DROP COLUMN f;
SELECT parallel_check('SELECT k, sum(m), sum(m2), count(n1), sum(v) FROM pp GROUP BY k');

-- an unlogged table, and a partitioned one (an Append below: rows)
CREATE UNLOGGED TABLE pp_unlogged AS SELECT * FROM pp;
SELECT parallel_check('SELECT k, count(*), sum(v), sum(m) FROM pp_unlogged GROUP BY k');
CREATE TABLE pp_parts (id int4, k int2, v int8) PARTITION BY RANGE (id);
CREATE TABLE pp_parts_1 PARTITION OF pp_parts FOR VALUES FROM (MINVALUE) TO (15000);
CREATE TABLE pp_parts_2 PARTITION OF pp_parts FOR VALUES FROM (15000) TO (MAXVALUE);
INSERT INTO pp_parts SELECT id, k, v FROM pp;
SELECT parallel_check('SELECT k, count(*), sum(v) FROM pp_parts GROUP BY k');

-- the run restarted: a device failure goes on on the CPU device, which
-- rescans the workers with pages again; too many groups for hash_mem
-- (the planner expects a few) rescan them with rows (how many pages the
-- first run read before it stopped varies)
SET gpuagg.debug_fail_at_batch = 3;
SELECT parallel_check('SELECT k, count(*), sum(v), sum(m) FROM pp GROUP BY k', false);
RESET gpuagg.debug_fail_at_batch;
CREATE TABLE pp_many (id int4, k int4, v int8);
ALTER TABLE pp_many SET (autovacuum_enabled = off);
INSERT INTO pp_many SELECT i, i % 4, i FROM generate_series(1, 20000) i;
ANALYZE pp_many;
UPDATE pp_many SET k = id;
SET work_mem = '64kB';
SELECT regexp_replace(parallel_pages('SELECT k, count(*), sum(v) FROM pp_many GROUP BY k'),
                      '[0-9]+', 'N', 'g');
SELECT parallel_check('SELECT k, count(*), sum(v) FROM pp_many GROUP BY k', false);
RESET work_mem;

RESET gpuagg.batch_rows;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE pp, pp_unlogged, pp_parts, pp_many;
DROP FUNCTION parallel_check(text, boolean), parallel_pages(text);
DROP TABLE pg_pages, pg_align;
DROP FUNCTION pages_check(text), heap_pages(text);
