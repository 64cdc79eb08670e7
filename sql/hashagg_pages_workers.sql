--
-- hashagg_pages_workers: parallel workers writing heap pages straight into
-- the GpuHashAgg's batches in the GPU service's arena (batch/page_share.c):
-- many batches per worker, with and without the leader taking part, runs
-- that stop early and start over, and the same queries with the batches in
-- the session, where pages travel in messages; each compared with gpuagg off
--
SET gpuagg.page_scan = on;
SET gpuagg.force = on;
-- the batches in the GPU service's arena, whatever the cluster's default
SET gpuagg.device_host = service;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;

-- whether workers ran the query, and its Heap Pages lines (or, where the
-- counts vary, whether pages went in place); how many pages went in place
-- varies with the time the device takes
CREATE FUNCTION worker_pages(query text, vary boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    launched boolean := false;
    pages text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        launched := launched OR line ~ 'Workers Launched: [1-9]';
        IF line LIKE '%Heap Pages%' THEN
            -- a worker that waits too long for the next batch sends a message
            pages := pages || ', ' || regexp_replace(trim(line), 'in Place: [0-9]+', 'in Place: N');
        END IF;
    END LOOP;
    IF vary THEN
        pages := CASE WHEN pages LIKE '%Heap Pages in Place: %' THEN ', pages in place'
                      ELSE ', no pages in place' END;
    END IF;
    RETURN CASE WHEN launched THEN 'workers' ELSE 'no worker' END || pages;
END;
$$;

-- gpuagg_check through the GPU service and in the session
CREATE FUNCTION host_check(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    host text;
    old text := current_setting('gpuagg.device_host');
BEGIN
    FOREACH host IN ARRAY ARRAY['service', 'backend'] LOOP
        PERFORM set_config('gpuagg.device_host', host, true);
        RETURN NEXT host || ': ' || gpuagg_check(query);
    END LOOP;
    PERFORM set_config('gpuagg.device_host', old, true);
END;
$$;

CREATE TABLE pw (id int4, k int4, g int2, v int8, f float8, n int4);
ALTER TABLE pw SET (autovacuum_enabled = off);
INSERT INTO pw
SELECT i, i % 10, (i % 3)::int2, i * 3, i / 4.0, CASE WHEN i % 5 <> 0 THEN i END
FROM generate_series(1, 60000) i;
VACUUM (FREEZE) pw;

-- batches of a few pages each: every worker fills many of them; with the
-- leader taking part, and without
SET gpuagg.batch_rows = 300;
SELECT worker_pages('SELECT k, count(*), sum(v) FROM pw GROUP BY k');
SELECT host_check('SELECT k, g, count(*), sum(v), sum(f), count(n), max(n) FROM pw GROUP BY k, g');
SET parallel_leader_participation = off;
SELECT worker_pages('SELECT k, count(*), sum(v) FROM pw GROUP BY k');
SELECT host_check('SELECT k, count(*), sum(v), min(f) FROM pw GROUP BY k');
RESET parallel_leader_participation;
SET gpuagg.batch_rows = 5000;
SELECT host_check('SELECT g, count(*), sum(v), sum(n) FROM pw GROUP BY g');
RESET gpuagg.batch_rows;
SELECT worker_pages('SELECT k, count(*), sum(v) FROM pw GROUP BY k');
SELECT host_check('SELECT count(*), sum(v), max(f), count(n) FROM pw');

-- in the session the pages travel in the workers' messages
SET gpuagg.device_host = backend;
SELECT worker_pages('SELECT k, count(*), sum(v) FROM pw GROUP BY k');
SET gpuagg.device_host = service;

-- fresh rows, deleted and updated ones: pages that are not all-visible
-- carry their visible line pointers
DELETE FROM pw WHERE id % 9 = 0;
UPDATE pw SET v = -v WHERE id % 11 = 0;
SET gpuagg.batch_rows = 300;
SELECT host_check('SELECT k, count(*), sum(v), sum(n) FROM pw GROUP BY k');
-- the transaction's own changes, a rolled-back subtransaction's not
BEGIN;
INSERT INTO pw (id, k, v) SELECT i, 77, i FROM generate_series(1, 500) i;
SAVEPOINT s;
DELETE FROM pw WHERE k = 3;
ROLLBACK TO s;
UPDATE pw SET v = 0 WHERE k = 4;
SELECT host_check('SELECT k, count(*), sum(v) FROM pw GROUP BY k');
ROLLBACK;

-- a run stopped early while workers wait for the next batch: a device
-- failure finishes on the session's CPU device (pages in messages), too
-- many groups for hash_mem start over with rows; both rescan the workers
SET gpuagg.debug_fail_at_batch = 5;
SELECT host_check('SELECT k, count(*), sum(v) FROM pw GROUP BY k');
SELECT worker_pages('SELECT k, count(*), sum(v) FROM pw GROUP BY k', true);
RESET gpuagg.debug_fail_at_batch;
CREATE TABLE pw_many (id int4, k int4, v int8);
ALTER TABLE pw_many SET (autovacuum_enabled = off);
INSERT INTO pw_many SELECT i, i % 4, i FROM generate_series(1, 30000) i;
ANALYZE pw_many;
UPDATE pw_many SET k = id;
SET work_mem = '64kB';
SELECT host_check('SELECT k, count(*), sum(v) FROM pw_many GROUP BY k');
-- ... and again below a nested loop: each rescan of the aggregate (its
-- groups spilled) sends pages in place again until it starts over
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT worker_pages('SELECT o.x, a.k, a.c FROM (VALUES (1), (2), (3)) o(x),
    LATERAL (SELECT k, count(*) + o.x AS c FROM pw_many GROUP BY k HAVING count(*) + o.x > 3) a', true);
SELECT host_check('SELECT o.x, a.k, a.c FROM (VALUES (1), (2), (3)) o(x),
    LATERAL (SELECT k, count(*) + o.x AS c FROM pw_many GROUP BY k HAVING count(*) + o.x > 3) a');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET work_mem;

RESET gpuagg.batch_rows;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
DROP TABLE pw, pw_many;
DROP FUNCTION worker_pages(text, boolean), host_check(text);
