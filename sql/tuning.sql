--
-- tuning: gpuagg.tuning and gpuagg.debug_launch (the GPU's launch parameters): answers
-- do not change under extreme ones, and EXPLAIN ANALYZE shows them on a GPU node
--
SHOW gpuagg.tuning;
SET gpuagg.tuning = off;
SHOW gpuagg.debug_launch;

-- debug_launch: name=value pairs within each parameter's range
SET gpuagg.debug_launch = 'threads=48';
SET gpuagg.debug_launch = 'replicas_max=3';
SET gpuagg.debug_launch = 'blocks_per_sm=33';
SET gpuagg.debug_launch = 'part_shift=9';
SET gpuagg.debug_launch = 'warps=4';
SET gpuagg.debug_launch = 'threads';
SET gpuagg.debug_launch = 'threads=many';
SET gpuagg.debug_launch = 'threads=1024, blocks_per_sm=32, replicas_max=32, cache_less=12, part_shift=8';
SET gpuagg.debug_launch = 'threads=32,blocks_per_sm=1,replicas_max=1,cache_less=-1,part_shift=-8';
SHOW gpuagg.debug_launch;

-- answers do not depend on it
SET gpuagg.force = on;
SELECT gpuagg_check('SELECT k_int4 % 100 AS k, count(*), sum(v_int4) FROM agg_data GROUP BY 1');
SELECT gpuagg_check('SELECT k_int8, min(v_float8), max(v_int4) FROM agg_data GROUP BY k_int8');
SET gpuagg.explain_device_details = on;
CREATE FUNCTION pg_temp.launch_lines(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        IF line LIKE '%Device:%' OR line LIKE '%Launch%' THEN
            RETURN NEXT line;
        END IF;
    END LOOP;
END $$;
-- a GPU node shows the forced parameters; the CPU device has none
SELECT count(*) FILTER (WHERE line LIKE '%Device: GPU%') =
       count(*) FILTER (WHERE line LIKE '%Launch: % kernels, forced: threads=32 blocks_per_sm=1 replicas_max=1 cache_less=-1 part_shift=-8;%')
       AS launch_where_gpu
FROM pg_temp.launch_lines('SELECT k_int4 % 10, count(*) FROM agg_data GROUP BY 1') line;
RESET gpuagg.explain_device_details;
RESET gpuagg.force;
RESET gpuagg.debug_launch;

-- for superusers only
CREATE ROLE gpuagg_tuning_user;
SET ROLE gpuagg_tuning_user;
SET gpuagg.debug_launch = 'threads=64';
RESET ROLE;
DROP ROLE gpuagg_tuning_user;

-- gpuagg_stats has the tuner's column; the CPU device has no tuner
SELECT device, tuning IS NULL AS no_tuner FROM gpuagg_stats WHERE device = 'CPU';
