--
-- hashagg_errors: errors are PostgreSQL's own, and the session goes on
--
SET gpuagg.force = on;
SET gpuagg.explain_device_details = off;

-- expressions below the node are evaluated by PostgreSQL
SELECT k_int2, sum(v_int4 * 10000000) FROM agg_data GROUP BY k_int2;
SELECT k_int2, sum(v_int2 * 1000::int2) FROM agg_data GROUP BY k_int2;
SELECT k_int4 / (k_int4 - 50), count(*) FROM agg_data GROUP BY 1;
SELECT sum(v_int8 + 1) FROM agg_data;
-- float overflow of a sum
SELECT k_int2, sum(v_float8 * 1e307) FROM agg_data GROUP BY k_int2;
-- and the same in the native plan
SET gpuagg.enabled = off;
SELECT k_int2, sum(v_int4 * 10000000) FROM agg_data GROUP BY k_int2;
SELECT k_int2, sum(v_float8 * 1e307) FROM agg_data GROUP BY k_int2;
RESET gpuagg.enabled;
-- the session works after errors
SELECT count(*), sum(v_int4) FROM agg_data;
-- an error inside a subtransaction releases the device's work
DO $$
BEGIN
    BEGIN
        PERFORM k_int2, sum(v_int4 * 10000000) FROM agg_data GROUP BY k_int2;
    EXCEPTION WHEN numeric_value_out_of_range THEN
        RAISE NOTICE 'caught: %', SQLERRM;
    END;
END
$$;
SELECT gpuagg_check('SELECT k_int2, sum(v_int4) FROM agg_data GROUP BY k_int2');
