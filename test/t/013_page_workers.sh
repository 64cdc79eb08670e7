#!/usr/bin/env bash
# test/t/013_page_workers.sh - parallel workers that write heap pages into the leader's
# batches in the GPU service's arena (gpuagg.page_scan, batch/page_share.c) stop cleanly
# when the query does: a statement_timeout while they fill batches and wait for the next
# one, and a worker terminated mid-scan (its error ends the leader's query). After each,
# the session's next query gives native PostgreSQL's answer with pages in place, no
# parallel worker is left behind and the service holds no object of the session.
#
# Runs through the suite's gpuagg.device_host (the GPU service by default); without the
# service the pages travel in messages and the script checks only the answers. Run by
# test/check.sh with PG_BINDIR, PGHOST, PGPORT, GPUAGG_RUN_USER and GPUAGG_DEVICE exported.
set -euo pipefail

# shellcheck source=test/lib/tscript.sh
. "$(dirname "$0")/../lib/tscript.sh"

T_NAME=013_page_workers
t_scratch_db gpuagg_page_workers pagew
fail=0

run_as "$PG_BINDIR/psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
psql_db -c "CREATE EXTENSION gpuagg" \
	-c "CREATE TABLE w (k int4, v int8, g int4) WITH (autovacuum_enabled = off)" \
	-c "INSERT INTO w SELECT i % 100, i, i % 7 FROM generate_series(1, 1000000) i" \
	-c "VACUUM (FREEZE) w"
query="SELECT md5(string_agg(r::text, ',' ORDER BY r::text)) FROM (SELECT k, g, count(*), sum(v) FROM w GROUP BY k, g) r"
# small batches: thousands of them, so that the workers wait for the leader's next one
settings="SET gpuagg.page_scan = on; SET gpuagg.force = on; SET gpuagg.batch_rows = 300;
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
native=$(psql_db -c "SET gpuagg.enabled = off" -c "$query")
service=$(psql_db -c "SHOW gpuagg.device_host")

# The session's query again: native's answer, pages in place through the service.
check_after() {
	local out
	out=$(psql_db -c "$settings" -c "$query" \
		-c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT k, count(*) FROM w GROUP BY k")
	[ "$(head -1 <<<"$out")" = "$native" ] || failed "$1: the next query's answer differs"
	grep -Eq 'Workers Launched: [1-9]' <<<"$out" || failed "$1: no parallel worker ran"
	if [ "$service" = service ]; then
		grep -Eq 'Heap Pages in Place: [1-9]' <<<"$out" || failed "$1: no pages in place: $(grep 'Heap Pages' <<<"$out")"
	fi
	echo "$1: $(grep -o 'Heap Pages.*' <<<"$out" | tr '\n' ' ')"
}

# No parallel worker of the scratch database is left (they end within a few seconds).
check_no_workers() {
	local n i
	for i in $(seq 1 100); do
		n=$(psql_db -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'parallel worker' AND datname = '$db'")
		[ "$n" -eq 0 ] && return 0
		sleep 0.1
	done
	failed "$1: $n parallel workers left"
}

# 1. statement_timeout while the workers fill batches
out=$(psql_db -c "$settings" -c "SET statement_timeout = '300ms'" -c "$query" 2>&1 || true)
grep -q "canceling statement due to statement timeout" <<<"$out" ||
	failed "statement_timeout: the query did not time out: $out"
check_no_workers "statement_timeout"
check_after "statement_timeout"

# 2. a worker terminated mid-scan: the leader's query fails with the worker's error
psql_db -c "$settings" -c "SELECT pg_sleep(0.2)" -c "$query" >"$work/b_out" 2>&1 &
b=$!
worker=""
for i in $(seq 1 200); do
	worker=$(psql_db -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'parallel worker' AND datname = '$db' LIMIT 1")
	[ -n "$worker" ] && break
	sleep 0.02
done
if [ -z "$worker" ]; then
	failed "worker terminated: no parallel worker seen"
	wait "$b" || true
else
	sleep 0.1
	psql_db -c "SELECT pg_terminate_backend($worker)" >/dev/null
	if wait "$b"; then
		# the query may have finished before the worker was terminated
		grep -qx "$native" "$work/b_out" || failed "worker terminated: wrong answer: $(cat "$work/b_out")"
		echo "worker terminated: the query finished first"
	else
		grep -q "due to administrator command" "$work/b_out" ||
			failed "worker terminated: unexpected error: $(cat "$work/b_out")"
	fi
fi
check_no_workers "worker terminated"
check_after "worker terminated"

# the service holds no object of this database's sessions once they are gone
if [ "$service" = service ]; then
	for _ in $(seq 1 100); do
		open=$(psql_db -c "SELECT coalesce(sum(active), 0) FROM gpuagg_stats")
		[ "$open" -eq 0 ] && break
		sleep 0.1
	done
	[ "$open" -eq 0 ] || failed "the service holds $open objects"
fi

if [ "$fail" -ne 0 ]; then
	echo "$T_NAME: FAILED"
	exit 1
fi
echo "$T_NAME: ok"
