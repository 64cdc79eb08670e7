#!/usr/bin/env bash
# test/t/005_service_queue.sh - the GPU service's queue: with gpuagg.service_memory
# too small for 8 aggregations at once, 8 concurrent sessions each running one all get
# native PostgreSQL's answer, none on its own CPU device (the ones that find no room
# wait in the service's queue: cpu_fallbacks 0, queue time counted); with
# gpuagg.service_wait = 0 the ones that find no room run on their own CPU device
# instead, counted in cpu_fallbacks and out_of_memory, still with the right answer.
# gpuagg.gpu_memory_budget is refused by SET (a reload setting) and reaches
# gpuagg_stats.memory_budget through ALTER SYSTEM and pg_reload_conf().
#
# Starts a second throwaway cluster (gpuagg preloaded, gpuagg.service_memory = 16MB,
# every device in the service), so that the sizes do not depend on the suite's. The
# service runs the CPU device, so this runs wherever the suite does. Run by
# test/check.sh with PG_BINDIR, PGPORT and GPUAGG_RUN_USER exported.
set -euo pipefail

# shellcheck source=test/lib/tscript.sh
. "$(dirname "$0")/../lib/tscript.sh"

t_cluster_init queue 5 <<CONF
shared_preload_libraries = 'gpuagg'
gpuagg.service_memory = 16MB
gpuagg.service_threads = 4
gpuagg.device_host = service
gpuagg.device = cpu
max_parallel_workers_per_gather = 0
CONF
t_cluster_start

T_NAME=005_service_queue
fail=0

t_agg_table
# batches of 400,000 rows: about 6.5 MB of the 16 MB each, so two run at once
settings="SET gpuagg.force = on; SET gpuagg.batch_rows = 400000;"
native=$(psql_db -c "SET gpuagg.enabled = off" -c "$query")

# the service is up
state=""
for _ in $(seq 1 200); do
	state=$(psql_db -c "SELECT state FROM gpuagg_stats WHERE device = 'CPU'")
	[ "$state" = ready ] && break
	sleep 0.05
done
[ "$state" = ready ] || { failed "the GPU service is not ready ($state)"; exit 1; }

# Run the query in n sessions at once with extra settings; answers in $dir/answer.N.
run_concurrently() {
	local n=$1 extra=$2 pids=() i
	for i in $(seq 1 "$n"); do
		psql_db -c "$settings $extra" -c "$query" >"$dir/answer.$i" 2>"$dir/messages.$i" &
		pids+=($!)
	done
	for i in $(seq 1 "$n"); do
		wait "${pids[$((i - 1))]}" || failed "session $i failed: $(cat "$dir/messages.$i")"
		[ "$(cat "$dir/answer.$i")" = "$native" ] ||
			failed "session $i answered $(cat "$dir/answer.$i"), native $native"
	done
}

# one query alone fits, and shows what it holds
psql_db -c "SELECT gpuagg_stats_reset()" >/dev/null
run_concurrently 1 ""
[ "$(psql_db -c "SELECT cpu_fallbacks FROM gpuagg_stats WHERE device = 'CPU'")" = 0 ] ||
	failed "a query alone ran on its own CPU device"

# 8 at once: the ones that find no room wait their turn
psql_db -c "SELECT gpuagg_stats_reset()" >/dev/null
run_concurrently 8 "SET gpuagg.service_wait = '60s';"
read -r queries fallbacks oom queue <<<"$(psql_db -F ' ' -c "SELECT queries, cpu_fallbacks,
	out_of_memory, queue_time FROM gpuagg_stats WHERE device = 'CPU'")"
echo "8 sessions waiting up to 60 s: $queries queries, $fallbacks CPU fallbacks, $oom out of memory, $queue ms queued"
[ "$queries" -ge 8 ] || failed "the service ran $queries queries, not 8"
[ "$fallbacks" = 0 ] || failed "$fallbacks queries ran on their own CPU device"
[ "$oom" = 0 ] || failed "$oom requests found no room within 60 s"
awk -v q="$queue" 'BEGIN { exit !(q >= 100) }' ||
	failed "queue time $queue ms: the queries did not wait for each other"

# 8 at once with no wait: the ones that find no room run on their own CPU device
fallbacks=0
for attempt in 1 2 3; do
	psql_db -c "SELECT gpuagg_stats_reset()" >/dev/null
	run_concurrently 8 "SET gpuagg.service_wait = 0;"
	read -r fallbacks oom <<<"$(psql_db -F ' ' -c "SELECT cpu_fallbacks, out_of_memory
		FROM gpuagg_stats WHERE device = 'CPU'")"
	echo "8 sessions not waiting (attempt $attempt): $fallbacks CPU fallbacks, $oom out of memory"
	[ "$fallbacks" -ge 1 ] && break
done
[ "$fallbacks" -ge 1 ] || failed "no query ran on its own CPU device with gpuagg.service_wait = 0"
[ "$oom" -ge "$fallbacks" ] || failed "$fallbacks CPU fallbacks but $oom out-of-memory refusals"

# the budget: a reload setting, shown in gpuagg_stats
out=$(psql_db -c "SET gpuagg.gpu_memory_budget = 8" 2>&1 || true)
grep -q 'cannot be changed now' <<<"$out" || failed "SET gpuagg.gpu_memory_budget was not refused: $out"
before=$(psql_db -c "SELECT memory_budget FROM gpuagg_stats WHERE device = 'CPU'")
[ "$before" = $((16 * 1024 * 1024)) ] || failed "memory_budget is $before, not the whole arena"
psql_db -c "ALTER SYSTEM SET gpuagg.gpu_memory_budget = 8" -c "SELECT pg_reload_conf()" >/dev/null
budget=""
for _ in $(seq 1 100); do
	budget=$(psql_db -c "SELECT memory_budget FROM gpuagg_stats WHERE device = 'CPU'")
	[ "$budget" = $((8 * 1024 * 1024)) ] && break
	sleep 0.1
done
echo "memory_budget: $before, after the reload $budget"
[ "$budget" = $((8 * 1024 * 1024)) ] || failed "memory_budget is $budget after the reload, not 8 MB"

# under that budget one query runs at a time, and still none on its own CPU device
psql_db -c "SELECT gpuagg_stats_reset()" >/dev/null
run_concurrently 3 "SET gpuagg.service_wait = '60s';"
[ "$(psql_db -c "SELECT cpu_fallbacks FROM gpuagg_stats WHERE device = 'CPU'")" = 0 ] ||
	failed "a query ran on its own CPU device under the 8 MB budget"

if [ "$fail" -ne 0 ]; then
	echo "005_service_queue: FAILED"
	exit 1
fi
echo "005_service_queue: ok"
