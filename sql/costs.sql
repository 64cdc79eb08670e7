--
-- costs: what the planner weighs for gpuagg's nodes on the CPU device, and
-- the cost a forced plan shows
--
SET gpuagg.device = cpu;
SET gpuagg.explain_device_details = off;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE cost_fact AS
SELECT g % 100 AS k, g % 5000 AS d, g AS v FROM generate_series(1, 100000) g;
CREATE TABLE cost_dim AS
SELECT g AS k, g * 2 AS w FROM generate_series(0, 99) g;
ANALYZE cost_fact, cost_dim;

-- The top node of a query's plan and its total cost, as EXPLAIN prints it.
CREATE FUNCTION cost_top_node(query text, OUT node text, OUT total_cost float8)
LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
    node := coalesce(plan->0->'Plan'->>'Custom Plan Provider', plan->0->'Plan'->>'Node Type');
    total_cost := (plan->0->'Plan'->>'Total Cost')::float8;
END
$$;

-- the CPU device takes every row in one process: a plain grouping, which
-- PostgreSQL hashes as fast, stays native
EXPLAIN (COSTS OFF) SELECT k, sum(v) FROM cost_fact GROUP BY k;
-- ... and so does a join the device would compute
EXPLAIN (COSTS OFF) SELECT count(*), sum(f.v), sum(d.w) FROM cost_fact f JOIN cost_dim d USING (k);
EXPLAIN (COSTS OFF) SELECT f.v, d.w FROM cost_fact f JOIN cost_dim d USING (k);
-- a DISTINCT aggregate, for which PostgreSQL sorts the input: the CPU
-- device hashes it instead, faster
EXPLAIN (COSTS OFF) SELECT k, count(DISTINCT d) FROM cost_fact GROUP BY k;

-- forced plans keep the cost the planner computed for them: above a
-- plan's own children, and the same as the unforced plan's where the
-- planner picks it anyway
SET gpuagg.force = on;
SELECT node, total_cost > 0 AS has_cost,
       total_cost > (SELECT total_cost FROM cost_top_node('SELECT k, v FROM cost_fact')) AS above_scan
FROM cost_top_node('SELECT k, sum(v) FROM cost_fact GROUP BY k');
SELECT node, total_cost > 0 AS has_cost
FROM cost_top_node('SELECT f.v, d.w FROM cost_fact f JOIN cost_dim d USING (k)');
SELECT node, total_cost > 0 AS has_cost
FROM cost_top_node('SELECT count(*), sum(f.v), sum(d.w) FROM cost_fact f JOIN cost_dim d USING (k)');
CREATE TEMP TABLE cost_forced AS
SELECT * FROM cost_top_node('SELECT k, count(DISTINCT d) FROM cost_fact GROUP BY k');
-- a forced plan wins whatever its cost
SET gpuagg.cpu_device_tuple_cost = 1e6;
EXPLAIN (COSTS OFF) SELECT k, sum(v) FROM cost_fact GROUP BY k;
EXPLAIN (COSTS OFF) SELECT f.v, d.w FROM cost_fact f JOIN cost_dim d USING (k);
RESET gpuagg.cpu_device_tuple_cost;
RESET gpuagg.force;
SELECT f.node, f.total_cost = u.total_cost AS same_cost
FROM cost_forced f, cost_top_node('SELECT k, count(DISTINCT d) FROM cost_fact GROUP BY k') u;

-- the setting moves the choice: free CPU-device rows make the plain grouping go there
SET gpuagg.cpu_device_tuple_cost = 0;
EXPLAIN (COSTS OFF) SELECT k, sum(v) FROM cost_fact GROUP BY k;
RESET gpuagg.cpu_device_tuple_cost;

-- a grouping into as many groups as rows over a join PostgreSQL can run in
-- parallel: the CPU device would take every row the workers produce in one
-- process, as a Gather's leader does, and aggregates the serial join
-- instead; a GPU takes the workers' batches
CREATE TABLE cost_big AS
SELECT g AS v, g % 1000 AS w FROM generate_series(1, 100000) g;
ANALYZE cost_big;
SET gpuagg.enable_aggjoin = off;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF)
SELECT f.v, f.k, sum(b.w) FROM cost_fact f JOIN cost_big b USING (v) GROUP BY f.v, f.k;
SET gpuagg.device = gpu;
EXPLAIN (COSTS OFF)
SELECT f.v, f.k, sum(b.w) FROM cost_fact f JOIN cost_big b USING (v) GROUP BY f.v, f.k;
SET gpuagg.device = cpu;
RESET min_parallel_table_scan_size;
RESET parallel_setup_cost;
SET max_parallel_workers_per_gather = 0;
RESET gpuagg.enable_aggjoin;
DROP TABLE cost_big;

-- the parallel variant takes fewer workers than the table's scan was costed
-- for (few rows: two), which then pack more rows each but read its pages
-- only once: it costs what it costs over a scan costed for two workers
SET max_parallel_workers_per_gather = 16;
SET gpuagg.force = on;
ALTER TABLE cost_fact SET (parallel_workers = 2);
CREATE TEMP TABLE cost_two AS
SELECT * FROM cost_top_node('SELECT k, sum(v) FROM cost_fact GROUP BY k');
ALTER TABLE cost_fact SET (parallel_workers = 16);
EXPLAIN (COSTS OFF) SELECT k, sum(v) FROM cost_fact GROUP BY k;
SELECT s.node, abs(s.total_cost - t.total_cost) < 0.01 * t.total_cost AS same_cost
FROM cost_two t, cost_top_node('SELECT k, sum(v) FROM cost_fact GROUP BY k') s;
ALTER TABLE cost_fact RESET (parallel_workers);
RESET gpuagg.force;
SET max_parallel_workers_per_gather = 0;

DROP FUNCTION cost_top_node(text);
DROP TABLE cost_fact, cost_dim, cost_forced, cost_two;
RESET max_parallel_workers_per_gather;
RESET gpuagg.explain_device_details;
RESET gpuagg.device;
