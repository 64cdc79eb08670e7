--
-- hashagg_spill: past hash_mem (work_mem x hash_mem_multiplier) GpuHashAgg
-- partitions its input on disk and aggregates one partition at a time, with
-- the same answers as native PostgreSQL
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64kB';

CREATE TABLE spill AS
SELECT i AS v, (i * 7919) % 20011 AS k, i % 97 AS k2,
       CASE WHEN i % 101 = 0 THEN NULL ELSE (i * 13) % 5003 END AS kn,
       'key ' || ((i * 31) % 4001) AS kt,
       ((i % 1000) * 0.25)::numeric(10,2) AS n, (i % 17) * 0.5::float8 AS f
FROM generate_series(1, 60000) i;
ANALYZE spill;

-- the planner expects more groups than fit: EXPLAIN shows HashAggregate's
-- Planned Partitions (4: as many as a quarter of hash_mem buffers)
CREATE FUNCTION spill_plan_line(query text, pattern text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN ' || query LOOP
        IF line LIKE pattern THEN
            RETURN NEXT line;
        END IF;
    END LOOP;
END
$$;
SELECT spill_plan_line('SELECT k, sum(v) FROM spill GROUP BY k', '%Planned Partitions%');
-- partitioned from the start, partitions too large by their key counts split
-- again
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT k, sum(v) FROM spill GROUP BY k;
SELECT count(*), sum(s), min(c), max(c) FROM (SELECT k, sum(v) AS s, count(*) AS c FROM spill GROUP BY k) g;
SELECT gpuagg_check('SELECT k, sum(v), count(*), avg(v), min(f), max(f), sum(f) FROM spill GROUP BY k');
SELECT gpuagg_check('SELECT k, sum(n), avg(n), min(n), max(n) FROM spill GROUP BY k');
SELECT gpuagg_check('SELECT k, k2, count(*), sum(v) FROM spill GROUP BY k, k2');
-- text keys, NULL keys
SELECT gpuagg_check('SELECT kt, count(*), sum(v), avg(f) FROM spill GROUP BY kt');
SELECT gpuagg_check('SELECT kn, kt, count(*), sum(n) FROM spill GROUP BY kn, kt');
SELECT gpuagg_check('SELECT kn, count(*), count(kn) FROM spill GROUP BY kn');
-- text keys sent as bytes: a record carries each value's length and bytes;
-- adversarial values (empty, NULL, prefixes of each other, multibyte,
-- several kB long, equal but for the last byte), varchar and char(n)
CREATE TABLE spill_text AS
SELECT i AS v,
       CASE WHEN i % 211 = 0 THEN NULL
            WHEN i % 7 = 0 THEN ''
            WHEN i % 7 = 1 THEN repeat('x', (i * 31) % 53)
            WHEN i % 7 = 2 THEN 'é' || ((i * 17) % 3001) || 'ü'
            WHEN i % 97 = 3 THEN repeat('long', 700 + i % 5) || ((i * 13) % 101)
            ELSE 'key ' || ((i * 31) % 4001) END AS t,
       ((i * 7) % 3001)::text::varchar(12) AS vc,
       CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 11) % 2999)::text::char(6) END AS ch
FROM generate_series(1, 30000) i;
ANALYZE spill_text;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT t, count(*) FROM spill_text GROUP BY t;
SELECT gpuagg_check('SELECT t, count(*), sum(v), min(length(t)) FROM spill_text GROUP BY t');
SELECT gpuagg_check('SELECT t, vc, count(*) FROM spill_text GROUP BY t, vc');
SELECT gpuagg_check('SELECT ch, vc, sum(v) FROM spill_text GROUP BY ch, vc');
SELECT gpuagg_check('SELECT t, count(DISTINCT vc), avg(v) FROM spill_text GROUP BY t');
SELECT gpuagg_check('SELECT t, ch, count(*) FROM spill_text GROUP BY GROUPING SETS ((t), (ch), (), (t, ch))');
SET gpuagg.debug_hash_bits = 2;
SELECT gpuagg_check('SELECT t, vc, count(*), sum(v) FROM spill_text GROUP BY t, vc');
RESET gpuagg.debug_hash_bits;
CREATE TEMP TABLE spill_text_nostats AS SELECT * FROM spill_text;
SELECT gpuagg_check('SELECT t, ch, count(*), sum(v) FROM spill_text_nostats GROUP BY t, ch');

-- HAVING, DISTINCT, FILTER
SELECT gpuagg_check('SELECT k, sum(v) FROM spill GROUP BY k HAVING count(*) > 2 AND sum(v) % 3 = 0');
SELECT gpuagg_check('SELECT k, count(DISTINCT k2), sum(DISTINCT f), count(*) FROM spill GROUP BY k');
SELECT gpuagg_check('SELECT kt, count(DISTINCT kn), sum(v) FILTER (WHERE k2 < 50) FROM spill GROUP BY kt');

-- the planner expects few groups (no statistics): the first pass finds too
-- many and reads the input again, partitioned (on the CPU device: the GPU
-- may count a batch's groups only after the next, and this input is one
-- batch; test/t/010_memory_bound.sh checks the second reading)
CREATE TEMP TABLE spill_nostats AS SELECT * FROM spill;
SELECT gpuagg_check('SELECT k, sum(v), count(*) FROM spill_nostats GROUP BY k');
SELECT gpuagg_check('SELECT kt, kn, count(DISTINCT k2), avg(n) FROM spill_nostats GROUP BY kt, kn');
-- a volatile input cannot be read again: its groups stay unbounded, and
-- EXPLAIN ANALYZE says so
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT k, count(*) FROM spill_nostats WHERE random() >= 0 GROUP BY k;
SELECT count(*), sum(c) FROM (SELECT k, count(*) AS c FROM spill_nostats WHERE random() >= 0 GROUP BY k) g;

-- grouping sets: one spill per set of keys, the sets' groups in turn; a set
-- of no keys aggregated as the input goes by
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT k, k2, count(*) FROM spill GROUP BY GROUPING SETS ((k), (k2), (), (k, k2));
SELECT gpuagg_check('SELECT k, k2, count(*), sum(v), GROUPING(k, k2) FROM spill GROUP BY GROUPING SETS ((k), (k2), (), (k, k2))');
SELECT gpuagg_check('SELECT kt, k, count(*), avg(n) FROM spill GROUP BY ROLLUP (kt, k)');
SELECT gpuagg_check('SELECT kn, k2, sum(v) FROM spill_nostats GROUP BY CUBE (kn, k2)');

-- parallel workers' batches partitioned like a serial child's
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT gpuagg_check('SELECT k, kt, sum(v), count(*) FROM spill GROUP BY k, kt');
SELECT gpuagg_check('SELECT t, vc, sum(v), count(*) FROM spill_text GROUP BY t, vc');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- a cursor reads the groups across partitions; a scroll cursor gets every
-- group at once
BEGIN;
DECLARE c CURSOR FOR SELECT k, count(*) FROM spill GROUP BY k;
MOVE 19990 IN c;
MOVE FORWARD ALL IN c;
CLOSE c;
DECLARE s SCROLL CURSOR FOR SELECT k, count(*) FROM spill GROUP BY k;
MOVE FORWARD ALL IN s;
MOVE BACKWARD ALL IN s;
MOVE 10 IN s;
MOVE BACKWARD 3 IN s;
MOVE FORWARD ALL IN s;
COMMIT;

-- a device failure once groups went out: the CPU device aggregates the
-- partition it hit again from disk, and the partitions after it, without
-- reading the input again (so a volatile input finishes too) and without
-- returning a group twice (batches of 1000 rows; the partitions' batches
-- count together, so the failure hits a later partition)
SET gpuagg.batch_rows = 1000;
SET gpuagg.debug_fail_at_batch = 10;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT k, sum(v) FROM spill GROUP BY k;
SELECT gpuagg_check('SELECT k, sum(v), count(*), avg(f) FROM spill GROUP BY k');
SELECT gpuagg_check('SELECT t, vc, count(*), sum(v) FROM spill_text GROUP BY t, vc');
SELECT gpuagg_check('SELECT k, count(DISTINCT k2), sum(v) FROM spill GROUP BY k');
SELECT gpuagg_check('SELECT k, k2, count(*) FROM spill GROUP BY GROUPING SETS ((k), (k2))');
-- ... with a set of no keys: its one group, aggregated beside the
-- partitioning pass, is in the node's memory when the GPU service's
-- device fails, and the CPU device finishes the other sets
SELECT gpuagg_check('SELECT k, k2, count(*), sum(v) FROM spill GROUP BY GROUPING SETS ((k), (k2), ())');
SELECT gpuagg_check('SELECT k, sum(v), avg(f), GROUPING(k) FROM spill GROUP BY ROLLUP (k)');
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT k, sum(v) FROM spill WHERE random() >= 0 GROUP BY k;
-- a cursor's groups, fetched one at a time: each key once
CREATE TEMP TABLE spill_fetched (k int, n bigint);
DO $$
DECLARE
    c NO SCROLL CURSOR FOR SELECT k, count(*) AS n FROM spill GROUP BY k;
    r record;
BEGIN
    OPEN c;
    LOOP
        FETCH c INTO r;
        EXIT WHEN NOT FOUND;
        INSERT INTO spill_fetched VALUES (r.k, r.n);
    END LOOP;
    CLOSE c;
END
$$;
RESET gpuagg.debug_fail_at_batch;
RESET gpuagg.batch_rows;
SELECT count(*), count(DISTINCT k), sum(n) FROM spill_fetched;

-- rescans with new parameters aggregate afresh
SELECT x, (SELECT count(*) FROM (SELECT k, sum(v) FROM spill WHERE v > x GROUP BY k) g)
FROM (VALUES (0), (30000), (59990)) o(x);
SET gpuagg.enabled = off;
SELECT x, (SELECT count(*) FROM (SELECT k, sum(v) FROM spill WHERE v > x GROUP BY k) g)
FROM (VALUES (0), (30000), (59990)) o(x);
RESET gpuagg.enabled;

RESET work_mem;
RESET max_parallel_workers_per_gather;
DROP TABLE spill;
DROP TABLE spill_text;
DROP FUNCTION spill_plan_line(text, text);
