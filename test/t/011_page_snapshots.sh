#!/usr/bin/env bash
# test/t/011_page_snapshots.sh - heap pages sent to the device (gpuagg.page_scan) give
# exactly what native PostgreSQL gives under concurrent transactions: a repeatable-read
# snapshot taken before another session commits inserts, deletes and updates (on pages
# VACUUM made all-visible and on fresh ones), and a read-committed query while another
# session holds uncommitted changes. Each answer is compared with gpuagg off in the same
# transaction, and EXPLAIN ANALYZE must show pages going to the device; then the same
# in a parallel plan, whose workers send the pages.
#
# The pages go to the suite's device through the suite's gpuagg.device_host (the GPU
# service by default), with gpuagg.page_scan = on. Run by test/check.sh with PG_BINDIR, PGHOST, PGPORT, GPUAGG_RUN_USER and
# GPUAGG_DEVICE exported.
set -euo pipefail

# shellcheck source=test/lib/tscript.sh
. "$(dirname "$0")/../lib/tscript.sh"

T_NAME=011_page_snapshots
t_scratch_db gpuagg_page_snapshots pages
fail=0

run_as "$PG_BINDIR/psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
psql_db -c "CREATE EXTENSION gpuagg" \
	-c "CREATE TABLE p (k int4, v int8, f float8) WITH (autovacuum_enabled = off)" \
	-c "INSERT INTO p SELECT i % 50, i, i / 4.0 FROM generate_series(1, 200000) i" \
	-c "VACUUM (FREEZE) p"
query="SELECT k, count(*), sum(v), sum(f) FROM p GROUP BY k"
settings="SET gpuagg.page_scan = on; SET gpuagg.force = on; SET max_parallel_workers_per_gather = 0;"
# the forced answer, the native one and the Heap Pages line, in one transaction's snapshot
compare="$settings
SELECT md5(string_agg(r::text, ',' ORDER BY r::text)) FROM ($query) r;
SET gpuagg.enabled = off;
SELECT md5(string_agg(r::text, ',' ORDER BY r::text)) FROM ($query) r;
SET gpuagg.enabled = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $query;"
# ... and in a parallel plan
parallel="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
compare="$compare
$parallel
${compare#"$settings"}
SET max_parallel_workers_per_gather = 0;"

# Session A's statements go through a fifo; mark $1 waits until it printed line $1.
mkfifo "$work/a_in"
run_as "$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$db" <"$work/a_in" >"$work/a_out" 2>&1 &
a_pid=$!
exec 3>"$work/a_in"
mark() {
	local i
	echo "\\echo $1" >&3
	for i in $(seq 1 600); do
		grep -qx "$1" "$work/a_out" 2>/dev/null && return 0
		kill -0 "$a_pid" 2>/dev/null || break
		sleep 0.05
	done
	failed "session A did not reach $1: $(tail -5 "$work/a_out")"
	exit 1
}
# Check the four md5s (serial and parallel, forced and native), the two Heap Pages lines
# and the parallel plan's workers that session A printed after mark $1.
check() {
	local out
	out=$(sed -n "/^$1\$/,\$p" "$work/a_out" | sed 1d)
	mapfile -t sums < <(grep -E '^[0-9a-f]{32}$' <<<"$out")
	if [ "${#sums[@]}" -ne 4 ] || [ "$(printf '%s\n' "${sums[@]}" | sort -u | wc -l)" -ne 1 ]; then
		failed "$2: the forced and native answers differ (${sums[*]})"
	fi
	[ "$(grep -Ec 'Heap Pages: [1-9][0-9]* to the device' <<<"$out")" -eq 2 ] ||
		failed "$2: no pages went to the device: $(grep 'Heap Pages' <<<"$out")"
	grep -Eq 'Workers Launched: [1-9]' <<<"$out" || failed "$2: no parallel worker ran"
	echo "$2: ${sums[0]:-none} $(grep -o 'Heap Pages:.*' <<<"$out" | tr '\n' ' ')"
}

# 1. a repeatable-read snapshot, then another session's committed changes
echo "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM p;" >&3
mark snapshot
psql_db -c "INSERT INTO p SELECT 99, i, 0 FROM generate_series(1, 5000) i" \
	-c "DELETE FROM p WHERE v % 7 = 0" -c "UPDATE p SET v = v + 1 WHERE k = 3"
echo "$compare" >&3
mark rr_done
check snapshot "repeatable read"
echo "COMMIT;" >&3

# 2. read committed, while another session holds uncommitted changes
psql_db -c "BEGIN" -c "DELETE FROM p WHERE k = 4" -c "INSERT INTO p SELECT 98, i, 0 FROM generate_series(1, 3000) i" \
	-c "SELECT pg_sleep(3)" -c "ROLLBACK" >/dev/null &
other=$!
sleep 1
mark before_rc
echo "$compare" >&3
mark rc_done
check before_rc "read committed, uncommitted changes elsewhere"
wait "$other"

exec 3>&-
wait "$a_pid" || failed "session A ended with an error: $(tail -5 "$work/a_out")"
if [ "$fail" -ne 0 ]; then
	echo "$T_NAME: FAILED"
	exit 1
fi
echo "$T_NAME: ok"
