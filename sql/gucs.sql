--
-- gucs: the gpuagg.* settings and their errors
--
SELECT name, boot_val, vartype, min_val, max_val, enumvals, context
FROM pg_settings WHERE name LIKE 'gpuagg.%' ORDER BY name;
SET gpuagg.device = 'tpu';
SET gpuagg.batch_rows = 0;
SET gpuagg.batch_rows = 'many';
SET gpuagg.strategy = 'fastest';
SET gpuagg.gpu_startup_cost = -1;
SET gpuagg.enabled = 'maybe';
SET gpuagg.no_such_setting = on;
SET gpuagg.hashjoin_build_limit = '10kB';
SET gpuagg.hashjoin_build_limit = 0;
SHOW gpuagg.hashjoin_build_limit;
SET gpuagg.batch_rows = 5000;
SHOW gpuagg.batch_rows;
RESET gpuagg.batch_rows;
SHOW gpuagg.batch_rows;
SET gpuagg.device = cpu;
SHOW gpuagg.device;
SET gpuagg.gpu_memory_budget = 100;

-- testing knobs are for superusers only
CREATE ROLE gpuagg_gucs_user;
SET ROLE gpuagg_gucs_user;
SET gpuagg.debug_fail_at_batch = 1;
SET gpuagg.force = on;
RESET ROLE;
DROP ROLE gpuagg_gucs_user;
RESET gpuagg.force;

-- gpuagg.gpu_index must name a GPU gpuagg found at server start: the one past the
-- last it found is refused, saying so (whatever the machine)
DO $$
DECLARE
    found int := (SELECT count(*) FROM gpuagg_devices() WHERE usable);
    detail text;
BEGIN
    EXECUTE format('SET gpuagg.gpu_index = %s', found);
    RAISE NOTICE 'accepted';
EXCEPTION WHEN invalid_parameter_value THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RAISE NOTICE 'refused; the detail says it names no GPU: %', detail LIKE '%names no GPU%';
END
$$;
SHOW gpuagg.gpu_index;
