--
-- devices: gpuagg_devices() lists GPUs or says why there is none
--
SELECT count(*) >= 1 AS has_rows FROM gpuagg_devices();
-- either usable GPUs with plausible properties, or exactly one row that says why not
SELECT CASE
         WHEN bool_or(usable) THEN bool_and(usable AND total_memory > 0 AND multiprocessors > 0
                                            AND compute_capability ~ '^[0-9]+\.[0-9]+$'
                                            AND driver_version ~ '^[0-9]+\.[0-9]+$')
         ELSE count(*) = 1 AND bool_and(name = 'none' AND note <> '' AND device IS NULL)
       END AS consistent
FROM gpuagg_devices();
SELECT proname, proretset, provolatile FROM pg_proc WHERE proname = 'gpuagg_devices';
