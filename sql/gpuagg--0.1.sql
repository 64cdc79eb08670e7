/* gpuagg--0.1.sql */

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
    OUT note text)
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
  'GPUs gpuagg can use (found at server start), or one row saying why there is none';
