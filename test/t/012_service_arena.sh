#!/usr/bin/env bash
# test/t/012_service_arena.sh - a grouping larger than the GPU service's shared memory
# allows partitions instead of failing over: with gpuagg.service_memory = 16MB, 300,000
# groups (about 30 MB of groups, against the half of the service's shared memory that a
# node may take) and a work_mem that would hold them all, GpuHashAgg on the service's
# CPU device gives native PostgreSQL's answer without finishing on the CPU in the
# backend: EXPLAIN ANALYZE shows partitions (Batches above 1) and no Fallback line, and
# gpuagg_stats counts no CPU fallback.
#
# Starts a throwaway cluster (gpuagg preloaded, every device in the service), so that the
# sizes do not depend on the suite's. The service runs the CPU device, so this runs
# wherever the suite does. Run by test/check.sh with PG_BINDIR, PGPORT and
# GPUAGG_RUN_USER exported.
set -euo pipefail

# shellcheck source=test/lib/tscript.sh
. "$(dirname "$0")/../lib/tscript.sh"

t_cluster_init arena 12 <<CONF
shared_preload_libraries = 'gpuagg'
gpuagg.service_memory = 16MB
gpuagg.device_host = service
gpuagg.device = cpu
max_parallel_workers_per_gather = 0
work_mem = '1GB'
CONF
t_cluster_start

T_NAME=012_service_arena
fail=0

psql_db -c "CREATE EXTENSION gpuagg" \
	-c "CREATE TABLE g AS SELECT i AS a, i % 7 AS b, (i % 1000)::float8 AS v FROM generate_series(1, 300000) i" \
	-c "ANALYZE g"
query="SELECT md5(string_agg(a || ':' || b || ':' || s || ':' || n, ',' ORDER BY a, b))
  FROM (SELECT a, b, sum(v) AS s, count(*) AS n FROM g GROUP BY a, b) q"
native=$(psql_db -c "SET gpuagg.enabled = off" -c "$query")
answer=$(psql_db -c "SET gpuagg.force = on" -c "$query")
[ "$answer" = "$native" ] || failed "answer $answer, native $native"

plan=$(psql_db -c "SET gpuagg.force = on" -c "SET gpuagg.explain_device_details = off" \
	-c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT a, b, sum(v), count(*) FROM g GROUP BY a, b")
printf '%s\n' "$plan"
grep -q 'GpuHashAgg' <<<"$plan" || failed "no GpuHashAgg in the plan"
grep -q 'Fallback' <<<"$plan" && failed "the node finished on the CPU in the backend"
batches=$(sed -n 's/.*Batches: \([0-9]*\).*/\1/p' <<<"$plan" | head -1)
[ "${batches:-0}" -gt 1 ] || failed "the groups were not partitioned (Batches: ${batches:-none})"
fallbacks=$(psql_db -c "SELECT sum(cpu_fallbacks) FROM gpuagg_stats")
[ "$fallbacks" = 0 ] || failed "gpuagg_stats counts $fallbacks CPU fallbacks"

if [ "$fail" = 0 ]; then echo "$T_NAME: ok"; else echo "$T_NAME: FAILED"; exit 1; fi
