--
-- hashagg_string_batches: the string columns of a batch that the node packs
-- itself (partitions past hash_mem, a parallel worker's messages) start at
-- the planner's average width and grow for a longer value, so that small
-- work_mem gives small memory and one long key still fits
--
SET gpuagg.force = on;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '1MB';

CREATE TABLE string_batches AS
SELECT i % 1000 AS k, 'value-' || i AS t, i AS v
FROM generate_series(1, 200000) i;
ANALYZE string_batches;

-- The peak host memory EXPLAIN ANALYZE shows for GpuHashAgg, in kB.
CREATE FUNCTION string_batches_memory(query text) RETURNS int8
LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || query INTO plan;
    RETURN (jsonb_path_query_first(plan, 'strict $.**?(@."Custom Plan Provider" == "GpuHashAgg")."Peak Memory Usage"'))::int8;
END
$$;

-- past hash_mem by text keys: a few MB at most, not a 16 MB string column
SELECT string_batches_memory('SELECT t, count(*) FROM string_batches GROUP BY t') BETWEEN 1 AND 8192 AS small;
SELECT gpuagg_check('SELECT t, count(*), sum(v) FROM string_batches GROUP BY t');
SELECT string_batches_memory('SELECT k, count(DISTINCT t) FROM string_batches GROUP BY k') BETWEEN 1 AND 8192 AS small;
SELECT gpuagg_check('SELECT k, count(DISTINCT t), sum(v) FROM string_batches GROUP BY k');

-- longer values than the planner's width: the column grows, answers stay
INSERT INTO string_batches
SELECT i % 7, repeat('long-' || (i % 50), 200 + i % 300), i FROM generate_series(1, 20000) i;
SELECT gpuagg_check('SELECT t, count(*), sum(v) FROM string_batches GROUP BY t');

-- keys of several MB each in partitions: an empty batch grows for each
INSERT INTO string_batches
SELECT i, repeat(chr(97 + i), 3000000 + i), i FROM generate_series(1, 3) i;
SELECT gpuagg_check('SELECT t, count(*), sum(v) FROM string_batches GROUP BY t');
SELECT length(t), count(*) FROM string_batches GROUP BY t HAVING length(t) > 1000000 ORDER BY 1;

-- parallel workers pack the long keys into their messages too
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
SET work_mem = '64MB';
SELECT gpuagg_check('SELECT t, count(*), sum(v) FROM string_batches GROUP BY t');

RESET min_parallel_table_scan_size;
RESET parallel_setup_cost;
RESET max_parallel_workers_per_gather;
RESET work_mem;
RESET gpuagg.force;
DROP FUNCTION string_batches_memory(text);
DROP TABLE string_batches;
