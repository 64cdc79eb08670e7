#!/usr/bin/env bash
# test/t/016_string_batches.sh - the text columns of the batches GpuHashAgg packs in its
# own memory start at the planner's average width and grow for longer values, so that its
# EXPLAIN ANALYZE Memory Usage past hash_mem stays near native HashAggregate's:
# SELECT k, sum(v) FROM t GROUP BY k over 1M rows of text keys ('key ' and the number)
# with work_mem = 1MB, no workers (test/bench/memory.sh KEY=text), natively and through
# GpuHashAgg on the device in the backend and in the GPU service.
#
# Checks, in a scratch database of the suite's cluster:
#   - every mode gives native's answer;
#   - GpuHashAgg's Memory Usage (peak_memory_kb) is at most 1.5 times HashAggregate's
#     plus 1 MB, in both modes (a 16 MB text column per batch would exceed it);
#   - EXPLAIN ANALYZE shows the partitions' Disk Usage.
# Run by test/check.sh with PG_BINDIR, PGHOST, PGPORT, GPUAGG_RUN_USER and GPUAGG_DEVICE
# exported.
set -euo pipefail

# shellcheck source=test/lib/tscript.sh
. "$(dirname "$0")/../lib/tscript.sh"

T_NAME=016_string_batches
fail=0
t_scratch_db gpuagg_string_batches strings
run_as "$PG_BINDIR/psql" -X -q -d postgres -c "CREATE DATABASE $db" >/dev/null
psql_db -c "CREATE EXTENSION gpuagg" >/dev/null

out=$(KEY=text ROWS=1e6 MODES="native backend service" DB=$db DEVICE=${GPUAGG_DEVICE:-cpu} \
	PSQL=$PG_BINDIR/psql bash "$(dirname "$0")/../bench/memory.sh" 2>&1) ||
	failed "memory.sh failed"
printf '%s\n' "$out" | grep -E '^(native|backend|service) '


native=$(memory_field native peak_memory_kb)
answer=$(memory_field native answer)
[ -n "$native" ] && [ -n "$answer" ] || failed "no native measurement"
for mode in backend service; do
	memory=$(memory_field $mode peak_memory_kb)
	[ -n "$memory" ] || { failed "no $mode measurement"; continue; }
	[ "$(memory_field $mode answer)" = "$answer" ] ||
		failed "$mode answer $(memory_field $mode answer), native $answer"
	if [ -n "$native" ] && [ $((memory * 2)) -gt $((native * 3 + 2048)) ]; then
		failed "$mode Memory Usage ${memory} kB is more than 1.5 times native's ${native} kB plus 1 MB"
	fi
	[ "$(memory_field $mode disk_kb)" -gt 0 ] 2>/dev/null ||
		failed "$mode: no Disk Usage in EXPLAIN ANALYZE"
done

if [ "$fail" = 0 ]; then echo "$T_NAME: ok"; else echo "$T_NAME: FAILED"; exit 1; fi
