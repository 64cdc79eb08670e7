#!/usr/bin/env bash
# test/t/004_service_kill.sh - kill -9 of the GPU service's process while it runs
# an aggregation: the cluster does not restart, the query's answer equals native
# PostgreSQL's (the backend finishes it on its own CPU device), the service comes
# back by itself under a new pid, and the next query runs in the service again.
#
# The service runs the CPU device here (gpuagg.device_host = service), so that this
# runs wherever the suite does, with or without a GPU; with GPUAGG_DEVICE=gpu it
# kills the service during a GPU aggregation instead. Tiny batches make the query
# a long series of requests, so that the kill lands in the middle of it. Run by
# test/check.sh with PG_BINDIR, PGHOST, PGPORT, GPUAGG_RUN_USER and GPUAGG_DEVICE
# exported.
set -euo pipefail

# shellcheck source=test/lib/tscript.sh
. "$(dirname "$0")/../lib/tscript.sh"

T_NAME=004_service_kill
t_scratch_db gpuagg_service_kill service
device=${GPUAGG_DEVICE:-cpu}
fail=0

run_as "$PG_BINDIR/psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
t_agg_table
settings="SET gpuagg.device_host = service; SET gpuagg.device = $device; SET gpuagg.force = on;"

started=$(psql_db -c "SELECT pg_postmaster_start_time()")
native=$(psql_db -c "SET gpuagg.enabled = off" -c "$query")

# the service is up, runs the device, and names its process
pid=$(t_service_pid "$device")
[ -n "$pid" ] || { failed "the GPU service is not ready"; exit 1; }
echo "service process before: $pid"
psql_db -c "SELECT gpuagg_stats_reset()" >/dev/null

# the query, with batches of 64 rows, in the background
psql_db -c "$settings SET gpuagg.batch_rows = 64;" -c "$query" >"$work/answer" 2>"$work/messages" &
query_pid=$!

# kill -9 the service process once it holds the query's aggregation
killed=0
for _ in $(seq 1 600); do
	active=$(psql_db -c "SELECT coalesce(sum(active), 0) FROM gpuagg_stats")
	if [ "$active" -gt 0 ]; then
		kill -9 "$pid"
		killed=1
		break
	fi
	sleep 0.01
done
wait "$query_pid" || failed "the query failed: $(cat "$work/messages")"
[ "$killed" = 1 ] || failed "the query never reached the service"
echo "messages of the query: $(tr '\n' ' ' <"$work/messages")"
[ "$(cat "$work/answer")" = "$native" ] || failed "answer $(cat "$work/answer") differs from native $native"
grep -q "finishing the query on the CPU" "$work/messages" ||
	failed "the query did not notice the lost service (it finished before the kill?)"

# no cluster restart
[ "$(psql_db -c "SELECT pg_postmaster_start_time()")" = "$started" ] ||
	failed "pg_postmaster_start_time() changed: the cluster restarted"

# the service comes back by itself, under a new pid
state=""
for _ in $(seq 1 400); do
	state=$(psql_db -c "SELECT state || ' ' || pid FROM gpuagg_stats WHERE device ILIKE '${device}%' LIMIT 1")
	case "$state" in ready\ *) [ "${state#ready }" != "$pid" ] && break ;; esac
	sleep 0.05
done
echo "service process after: ${state#ready }"
case "$state" in
	ready\ *) [ "${state#ready }" != "$pid" ] || failed "the service process was not replaced" ;;
	*) failed "the GPU service did not come back ($state)" ;;
esac
# a request in flight at the kill is failed and counted; a kill between two requests
# leaves none in flight (the query learns of it at its next call)
failures=$(psql_db -c "SELECT coalesce(sum(failures), 0) FROM gpuagg_stats")
if grep -q "ended while this request ran" "$work/messages"; then
	[ "$failures" -ge 1 ] || failed "gpuagg_stats counts no failed request ($failures)"
fi
fallbacks=$(psql_db -c "SELECT coalesce(sum(cpu_fallbacks), 0) FROM gpuagg_stats")
[ "$fallbacks" -ge 1 ] || failed "gpuagg_stats counts no CPU fallback ($fallbacks)"

# the next query runs in the service again, with no fallback
again=$(psql_db -c "$settings" -c "$query")
[ "$again" = "$native" ] || failed "the next query's answer $again differs from native $native"
explain=$(psql_db -c "$settings" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $query")
if grep -q "Fallback" <<<"$explain"; then failed "the next query fell back to the CPU: $explain"; fi
queries=$(psql_db -c "SELECT sum(queries) FROM gpuagg_stats WHERE device ILIKE '${device}%'")
[ "$queries" -ge 2 ] || failed "gpuagg_stats counts $queries queries since the reset (expected at least 2)"

if [ "$fail" -ne 0 ]; then
	echo "004_service_kill: FAILED"
	exit 1
fi
echo "004_service_kill: ok"
