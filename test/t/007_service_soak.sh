#!/usr/bin/env bash
# test/t/007_service_soak.sh - 10,000 queries through the GPU service leave its memory
# where it was: the service process's resident memory, the GPU's used memory (with a
# GPU) and the service's open objects do not grow, and the service keeps its pid.
#
# pgbench runs 10,000 transactions from 4 clients, each a GpuHashAgg, an aggregation
# fed by a join on the device, or a GpuHashJoin, in the service (gpuagg.device_host =
# service) on GPUAGG_DEVICE (cpu here, gpu on the GPU host). The memory is sampled
# after 500 warm-up queries and after the 10,000: growth past a bound is a leak,
# since each query frees what it took. Run by test/check.sh with PG_BINDIR, PGHOST,
# PGPORT, GPUAGG_RUN_USER and GPUAGG_DEVICE exported.
set -euo pipefail

# shellcheck source=test/lib/tscript.sh
. "$(dirname "$0")/../lib/tscript.sh"

T_NAME=007_service_soak
t_scratch_db gpuagg_service_soak soak
device=${GPUAGG_DEVICE:-cpu}
queries=${SOAK_QUERIES:-10000}
clients=4
fail=0

[ -x "$PG_BINDIR/pgbench" ] || { echo "007_service_soak: skipped (no pgbench in $PG_BINDIR)"; exit 0; }

run_as "$PG_BINDIR/psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
psql_db -c "CREATE EXTENSION gpuagg" \
	-c "CREATE TABLE f AS SELECT i % 500 AS k, i AS v, (i % 7)::float8 AS x FROM generate_series(1, 20000) i" \
	-c "CREATE TABLE d AS SELECT i AS k, i % 10 AS g FROM generate_series(0, 499) i" \
	-c "ANALYZE f" -c "ANALYZE d"

settings="SET gpuagg.device_host = service; SET gpuagg.device = $device; SET gpuagg.force = on;"
# one script per kind of query; pgbench picks one at random for each transaction
cat >"$work/agg.sql" <<SQL
$settings
SELECT k, sum(v), count(*), avg(x) FROM f GROUP BY k;
SQL
cat >"$work/aggjoin.sql" <<SQL
$settings
SELECT d.g, sum(f.v), count(*) FROM f JOIN d USING (k) GROUP BY d.g;
SQL
cat >"$work/join.sql" <<SQL
$settings
SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT f.k, d.g FROM f JOIN d USING (k) WHERE f.v % 1000 = 0;
SQL
chmod 644 "$work"/*.sql

# every kind runs in the service (the plans name the nodes)
plans=$(psql_db -c "$settings" -c "EXPLAIN (COSTS OFF) $(sed -n 2p "$work/agg.sql")" \
	-c "EXPLAIN (COSTS OFF) $(sed -n 2p "$work/aggjoin.sql")" \
	-c "SET enable_mergejoin = off" -c "SET enable_nestloop = off" \
	-c "EXPLAIN (COSTS OFF) $(sed -n 3p "$work/join.sql")")
for node in "GpuHashAgg" "joining on the device\|joins of its\|join of its two children" "GpuHashJoin"; do
	grep -q "$node" <<<"$plans" || failed "no plan has '$node':"$'\n'"$plans"
done

# sample LABEL: "LABEL pid rss_kb gpu_mib active" for the service process
sample() {
	local row pid rss gpu=0 active
	row=$(psql_db -c "SELECT pid, (SELECT sum(active) FROM gpuagg_stats) FROM gpuagg_stats
		WHERE device ILIKE '${device}%' LIMIT 1")
	pid=${row%%|*}
	active=${row##*|}
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
	if [ "$device" = gpu ] && command -v nvidia-smi >/dev/null 2>&1; then
		gpu=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | awk '{ s += $1 } END { print s + 0 }')
	fi
	echo "$1 $pid $rss $gpu $active"
}

bench() {
	# Run $1 transactions over the three scripts; print pgbench's output.
	(cd "$work" && run_as "$PG_BINDIR/pgbench" -n -c "$clients" -j 2 -t $(($1 / clients)) \
		-f agg.sql -f aggjoin.sql -f join.sql "$db" 2>&1)
}

stats() {
	# queries|cpu_fallbacks|failures of the devices of that kind in the service (cumulative; every GPU)
	psql_db -c "SELECT sum(queries), sum(cpu_fallbacks), sum(failures) FROM gpuagg_stats WHERE device ILIKE '${device}%'"
}

out=$(bench 500) || { echo "$out"; failed "warm-up pgbench failed"; }
read -r _ pid0 rss0 gpu0 active0 < <(sample before)
IFS='|' read -r nq0 nfall0 nfail0 <<<"$(stats)"
t0=$(date +%s)
out=$(bench "$queries") || failed "pgbench failed"
done_tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
failed_tx=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
read -r _ pid1 rss1 gpu1 active1 < <(sample after)
echo "$queries queries in $(($(date +%s) - t0)) s; processed ${done_tx:-?}, failed ${failed_tx:-0}"
echo "service pid $pid0 -> $pid1; resident ${rss0} kB -> ${rss1} kB; GPU used ${gpu0} MiB -> ${gpu1} MiB;" \
	"open objects $active0 -> $active1"

[ "${done_tx:-0}" -eq $((queries / clients * clients)) ] || { echo "$out" | tail -20; failed "not every transaction ran"; }
[ "${failed_tx:-0}" -eq 0 ] || failed "$failed_tx transactions failed"
[ "$pid0" = "$pid1" ] || failed "the service process changed ($pid0 -> $pid1)"
[ "$active1" -eq 0 ] || failed "the service still holds $active1 objects"
[ $((rss1 - rss0)) -lt 32768 ] || failed "the service's resident memory grew by $(((rss1 - rss0) / 1024)) MB"
[ $((gpu1 - gpu0)) -lt 64 ] || failed "GPU memory grew by $((gpu1 - gpu0)) MiB"
IFS='|' read -r nq1 nfall1 nfail1 <<<"$(stats)"
echo "gpuagg_stats for $device during the run: $((nq1 - nq0)) queries, $((nfall1 - nfall0)) CPU fallbacks," \
	"$((nfail1 - nfail0)) failed requests"
[ $((nq1 - nq0)) -ge "$queries" ] || failed "the service counted $((nq1 - nq0)) queries, fewer than $queries"
[ $((nfail1 - nfail0)) -eq 0 ] || failed "the service failed $((nfail1 - nfail0)) requests"
[ $((nfall1 - nfall0)) -eq 0 ] || failed "$((nfall1 - nfall0)) queries fell back to the CPU"

if [ "$fail" -ne 0 ]; then
	echo "007_service_soak: FAILED"
	exit 1
fi
echo "007_service_soak: ok"
