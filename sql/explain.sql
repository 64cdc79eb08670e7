--
-- explain: what EXPLAIN shows for GpuHashAgg
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

EXPLAIN (COSTS OFF) SELECT k_text, k_int4 % 3, sum(v_int4) FROM agg_data GROUP BY k_text, k_int4 % 3;
EXPLAIN (COSTS OFF, VERBOSE) SELECT k_text, k_int4 % 3, sum(v_int4), avg(v_int2) FILTER (WHERE k_bool)
FROM agg_data GROUP BY k_text, k_int4 % 3 HAVING count(*) > 1;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT k_int2, count(*) FROM agg_data GROUP BY k_int2;
EXPLAIN (COSTS OFF, FORMAT JSON) SELECT k_int2, count(*) FROM agg_data GROUP BY k_int2;

-- device details, on the CPU device so that the output is the same everywhere
SET gpuagg.device = cpu;
SET gpuagg.explain_device_details = on;
EXPLAIN (COSTS OFF) SELECT k_int2, count(*) FROM agg_data GROUP BY k_int2;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT k_int2, count(*), sum(v_int4) FROM agg_data GROUP BY k_int2;
EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT YAML)
SELECT count(*) FROM agg_data;
RESET gpuagg.device;

-- plain EXPLAIN does not run the node
SET gpuagg.explain_device_details = off;
SET gpuagg.debug_fail_at_batch = 1;
EXPLAIN (COSTS OFF) SELECT k_int2, count(*) FROM agg_data GROUP BY k_int2;
RESET gpuagg.debug_fail_at_batch;

-- without force the planner chooses by cost: a tiny input stays native
RESET gpuagg.force;
SET gpuagg.device = cpu;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM (VALUES (1), (2)) v(k) GROUP BY k;
