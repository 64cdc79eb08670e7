#!/usr/bin/env bash
# test/t/009_service_stuck.sh - a GPU service that answers nothing (its process stopped
# with SIGSTOP, as a service thread stuck in a device call would look to its clients)
# holds no backend: while it is stopped, pg_cancel_backend ends a query waiting for it,
# pg_terminate_backend ends a backend in the middle of a query and one that is idle
# after its query, a client that goes away (client_connection_check_interval) ends its
# backend, and statement_timeout ends a query that waits for it, each within a few
# seconds. Once the service runs again (SIGCONT) it serves the next query, and what
# the backends left to it comes back: no object stays open, no memory held.
#
# Starts a throwaway cluster of its own (gpuagg preloaded, every device in the
# service), so that stopping its service disturbs no other test. The queries run on the
# service's CPU device, or its GPU with GPUAGG_DEVICE=gpu. Run by test/check.sh with
# PG_BINDIR, PGPORT, GPUAGG_RUN_USER and GPUAGG_DEVICE exported.
set -euo pipefail

# shellcheck source=test/lib/tscript.sh
. "$(dirname "$0")/../lib/tscript.sh"

device=${GPUAGG_DEVICE:-cpu}
t_cluster_init stuck 9 <<CONF
shared_preload_libraries = 'gpuagg'
gpuagg.service_threads = 2
gpuagg.device_host = service
gpuagg.device = $device
max_parallel_workers_per_gather = 0
CONF
t_cluster_start

T_NAME=009_service_stuck
fail=0
service_pid=""

# Let a stopped service process go on (at exit too, so that the cluster can stop).
resume() {
	if [ -n "$service_pid" ]; then kill -CONT "$service_pid" 2>/dev/null || true; fi
}
trap 'resume; t_cluster_cleanup' EXIT

t_agg_table
# batches of 64 rows: a query is a long series of requests, always near one
settings="SET gpuagg.force = on; SET gpuagg.batch_rows = 64;"
native=$(psql_db -c "SET gpuagg.enabled = off" -c "$query")

# the service is up and names its process
service_pid=$(t_service_pid "$device")
[ -n "$service_pid" ] || { failed "the GPU service is not ready"; exit 1; }

# Start session $1 (its application_name) running SQL $2 in the background; its
# client's pid in client_$1.
start_session() {
	PGAPPNAME=$1 psql_db -c "$2" >"$dir/out.$1" 2>"$dir/err.$1" &
	eval "client_$1=$!"
}

# The backend pid of session $1, once it runs a statement matching $2 (waits up to
# 10 s); empty when it does not.
backend_of() {
	local pid="" i
	for i in $(seq 1 200); do
		pid=$(psql_db -c "SELECT pid FROM pg_stat_activity
			WHERE application_name = '$1' AND state = 'active' AND query LIKE '$2'")
		[ -n "$pid" ] && break
		sleep 0.05
	done
	echo "$pid"
}

# Whether backend $1 leaves within 5 s.
gone_within() {
	local i
	for i in $(seq 1 50); do
		[ -z "$(psql_db -c "SELECT 1 FROM pg_stat_activity WHERE pid = $1")" ] && return 0
		sleep 0.1
	done
	return 1
}

# Whether client process $1 (a background job) ends within 5 s.
client_ends_within() {
	local i
	for i in $(seq 1 50); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# sessions in the middle of aggregations (three in a row, so that the stop finds them
# there however fast the machine), and one idle in pg_sleep after one
start_session cancel "$settings $query; $query; $query"
start_session terminate "$settings $query; $query; $query"
start_session disconnect "$settings SET client_connection_check_interval = '100ms';
	$query; $query; $query"
start_session idle "$settings $query; SELECT pg_sleep(600)"
cancel_pid=$(backend_of cancel '%GROUP BY%')
terminate_pid=$(backend_of terminate '%GROUP BY%')
disconnect_pid=$(backend_of disconnect '%GROUP BY%')
idle_pid=$(backend_of idle '%pg_sleep%')
for s in cancel terminate disconnect idle; do
	[ -n "$(eval echo "\$${s}_pid")" ] || { failed "session $s did not start: $(cat "$dir/err.$s")"; exit 1; }
done

# every aggregation holds its objects in the service, then the service stops
for _ in $(seq 1 200); do
	[ "$(psql_db -c "SELECT sum(active) FROM gpuagg_stats")" -ge 3 ] && break
	sleep 0.05
done
sleep 0.2
kill -STOP "$service_pid"
echo "service process $service_pid stopped"
sleep 0.5

psql_db -c "SELECT pg_cancel_backend($cancel_pid)" >/dev/null
if client_ends_within "$client_cancel"; then
	grep -q "canceling statement" "$dir/err.cancel" ||
		failed "the cancelled query did not end with a cancel: $(cat "$dir/err.cancel")"
else
	failed "pg_cancel_backend left the query waiting for the stopped service"
fi

psql_db -c "SELECT pg_terminate_backend($terminate_pid)" >/dev/null
gone_within "$terminate_pid" ||
	failed "pg_terminate_backend left a backend in a query waiting for the stopped service"

# a client that goes away: its psql killed, with the processes that started it
kill_tree() {
	local child
	for child in $(ps -o pid= --ppid "$1"); do kill_tree "$child"; done
	kill -9 "$1" 2>/dev/null || true
}
kill_tree "$client_disconnect"
gone_within "$disconnect_pid" ||
	failed "a backend whose client went away waits for the stopped service"

psql_db -c "SELECT pg_terminate_backend($idle_pid)" >/dev/null
gone_within "$idle_pid" ||
	failed "pg_terminate_backend left a backend exiting after its query to the stopped service"

# a new query waiting for the stopped service ends at its statement_timeout
start=$(date +%s%N)
if psql_db -c "$settings SET statement_timeout = '1s';" -c "$query" >/dev/null 2>"$dir/err.timeout"; then
	failed "a query ran to its end while the service was stopped"
fi
took=$((($(date +%s%N) - start) / 1000000))
echo "a query's statement_timeout of 1 s while the service is stopped: $took ms"
[ "$took" -lt 6000 ] || failed "statement_timeout ended the query after $took ms"
grep -q "statement timeout" "$dir/err.timeout" ||
	failed "the query did not end at its statement_timeout: $(cat "$dir/err.timeout")"

kill -CONT "$service_pid"
echo "service process $service_pid continued"
for s in cancel terminate disconnect idle; do
	wait "$(eval echo "\$client_$s")" 2>/dev/null || true
done

# the service serves again, in the same process, without a fallback
again=$(psql_db -c "SET gpuagg.force = on" -c "$query")
[ "$again" = "$native" ] || failed "the next query's answer $again differs from native $native"
explain=$(psql_db -c "SET gpuagg.force = on" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $query")
if grep -q "Fallback" <<<"$explain"; then failed "the next query fell back to the CPU: $explain"; fi
[ "$(psql_db -c "SELECT pid FROM gpuagg_stats WHERE device ILIKE '$device%' LIMIT 1")" = "$service_pid" ] ||
	failed "the service process was replaced"

# what the backends left to the service is dropped: no object open, no memory of the
# CPU device (its share of the service's shared memory) held
left=""
for _ in $(seq 1 100); do
	left=$(psql_db -c "SELECT sum(active) || ' ' || sum(memory_used) FILTER (WHERE device = 'CPU')
		FROM gpuagg_stats")
	[ "$left" = "0 0" ] && break
	sleep 0.1
done
echo "objects open and memory held once the service ran again: $left"
[ "$left" = "0 0" ] || failed "the service still holds objects or memory of the ended backends ($left)"

if [ "$fail" -ne 0 ]; then
	echo "009_service_stuck: FAILED"
	exit 1
fi
echo "009_service_stuck: ok"
