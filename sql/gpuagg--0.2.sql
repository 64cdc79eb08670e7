/* gpuagg--0.2.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION gpuagg" to load this file. \quit

-- What gpuagg sees: one row per GPU found at server start, or one row
-- (name 'none', usable false) saying why no GPU can be used.
CREATE FUNCTION gpuagg_devices(
    OUT device integer,
    OUT name text,
    OUT total_memory bigint,
    OUT multiprocessors integer,
    OUT compute_capability text,
    OUT driver_version text,
    OUT runtime_version text,
    OUT usable boolean,
    OUT note text,
    OUT service text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuagg_devices'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- The output of GpuAggPack, the node that packs batches in parallel workers
-- (see EXPLAIN VERBOSE); an internal marker that cannot be called.
CREATE FUNCTION gpuagg_batch()
RETURNS bytea
AS 'MODULE_PATHNAME', 'gpuagg_batch'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION gpuagg_batch() IS
  'internal: marks the batches GpuAggPack sends to GpuHashAgg; cannot be called';

COMMENT ON FUNCTION gpuagg_devices() IS
  'GPUs gpuagg can use (found at server start), or one row saying why there is none; service is the GPU service''s state';

-- The GPU service's cumulative statistics: one row per device it runs (the
-- CPU device and each GPU), with the pid of the process doing that device's
-- work, and the memory the device holds now and may hold (its budget), in
-- bytes: a GPU's device memory, the CPU device's share of the service's
-- shared memory; and for a GPU, its launch tuner's state (shape classes
-- tuned and exploring, the tuning file).  Times are in milliseconds.
CREATE FUNCTION gpuagg_stats(
    OUT device text,
    OUT state text,
    OUT pid integer,
    OUT queries bigint,
    OUT batches bigint,
    OUT rows bigint,
    OUT bytes bigint,
    OUT device_time double precision,
    OUT queue_time double precision,
    OUT cpu_fallbacks bigint,
    OUT out_of_memory bigint,
    OUT failures bigint,
    OUT active bigint,
    OUT memory_used bigint,
    OUT memory_budget bigint,
    OUT tuning text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuagg_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW gpuagg_stats AS SELECT * FROM gpuagg_stats();

CREATE FUNCTION gpuagg_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'gpuagg_stats_reset'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

REVOKE ALL ON FUNCTION gpuagg_stats_reset() FROM PUBLIC;

COMMENT ON VIEW gpuagg_stats IS
  'what each device of the GPU service has done, and the pid of the process doing its work';
COMMENT ON FUNCTION gpuagg_stats_reset() IS
  'zero the GPU service''s statistics';
