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
