#!/usr/bin/env bash
# test/bench/memory.sh - a backend's peak memory for one large aggregation, natively and
# through GpuHashAgg: SELECT k, sum(v) FROM t GROUP BY k over ROWS rows in NGROUPS groups,
# no parallel workers, work_mem = WORK_MEM; k an integer, or with KEY=text a text key
# ('key ' and the number), which GpuHashAgg sends as bytes. With SHAPE=join the groups come
# from a join instead, whose build side (memdim, NGROUPS rows) exceeds hash_mem:
# SELECT d.g, sum(m.v) FROM memtest m JOIN memdim d USING (k) GROUP BY d.g, 1000 groups.
#
#   PGHOST=... PGPORT=... bash test/bench/memory.sh      # a running cluster that preloads
#                                                         # gpuagg (test/check.sh --keep)
#   ROWS=1e6 MODES="native backend" bash test/bench/memory.sh
#
# Makes table memtest (and memdim; dropped at the end unless KEEP=1) in database DB, then per mode
# runs the query in a new session (its groups counted in an outer aggregate, so that no
# group reaches the client) while sampling the backend's /proc/PID/status every 20 ms, and
# prints one line per mode:
#   MODE hwm_kb=N anon_kb=N answer=GROUPS|SUM|KEYHASH peak_memory_kb=N disk_kb=N
# hwm_kb is VmHWM (resident peak; the shared buffers the scan touches count there),
# anon_kb the largest sampled RssAnon (the backend's private memory: what the query
# allocated), peak_memory_kb and disk_kb the aggregation's EXPLAIN ANALYZE figures
# (HashAggregate's or GpuHashAgg's Memory Usage and Disk Usage, the largest of the plan's;
# 0 where the plan printed none). A run of
# EXPLAIN ANALYZE per mode follows the measured run. Modes:
#   native   gpuagg.enabled = off (HashAggregate, which spills past hash_mem)
#   backend  GpuHashAgg forced, gpuagg.device = DEVICE, gpuagg.device_host = backend
#   service  the same in the GPU service (gpuagg.device_host = service)
#
# Environment: ROWS (default 8e6), NGROUPS (default ROWS / 2; bash keeps GROUPS), KEY (int or
# text, default int), SHAPE (agg or join, default agg), WORK_MEM (default 1MB),
# MODES (default "native backend service"), DEVICE (default cpu), DB (default postgres),
# PSQL (default psql on PATH, else PG_BINDIR/psql), KEEP=1 keeps the table, VERBOSE=1
# prints each plan. As root the
# sessions run as GPUAGG_RUN_USER (default postgres).
set -euo pipefail

# shellcheck source=test/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

int_var ROWS 8e6
int_var NGROUPS $((ROWS / 2))
WORK_MEM=${WORK_MEM:-1MB}
KEY=${KEY:-int}
case $KEY in
int) KEY_EXPR="(hashint8(i) & 2147483647) % $NGROUPS" ;;
text) KEY_EXPR="'key ' || (hashint8(i) & 2147483647) % $NGROUPS" ;;
*) echo "memory.sh: KEY must be int or text, not $KEY" >&2; exit 2 ;;
esac
MODES=${MODES:-native backend service}
DEVICE=${DEVICE:-cpu}
DB=${DB:-postgres}
if [ -z "${PSQL:-}" ]; then
	if [ -n "${PG_BINDIR:-}" ]; then PSQL=$PG_BINDIR/psql; else PSQL=psql; fi
fi

# Run a command as the server user (we may be root).
run_as() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u "${GPUAGG_RUN_USER:-postgres}" -- "$@"; else "$@"; fi
}

# Run SQL (stdin or -c) in DB, unaligned and quiet.
sql() { run_as "$PSQL" -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

# Print the settings of mode $1. JIT is off in every mode: a plan whose cost passes
# jit_above_cost loads LLVM's library, tens of MB of it, into the backend, which would
# count against whichever mode's plan happens to cost more.
mode_settings() {
	echo "SET max_parallel_workers_per_gather = 0; SET work_mem = '$WORK_MEM'; SET jit = off;"
	case $1 in
	native) echo "SET gpuagg.enabled = off;" ;;
	backend | service)
		echo "SET gpuagg.force = on; SET gpuagg.device = '$DEVICE';"
		echo "SET gpuagg.device_host = $1;"
		;;
	*) echo "memory.sh: unknown mode $1" >&2; exit 2 ;;
	esac
}

SHAPE=${SHAPE:-agg}
case $SHAPE in
agg) QUERY="SELECT k, sum(v) AS s FROM memtest GROUP BY k" ;;
join) QUERY="SELECT d.g AS k, sum(m.v) AS s FROM memtest m JOIN memdim d USING (k) GROUP BY d.g" ;;
*) echo "memory.sh: SHAPE must be agg or join, not $SHAPE" >&2; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-memory.XXXXXX")
chmod 777 "$work"
cleanup() {
	[ -n "${sampler:-}" ] && kill "$sampler" 2>/dev/null || true
	[ "${KEEP:-0}" = 1 ] || sql -c "DROP TABLE IF EXISTS memtest, memdim" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

sql <<SQL
DROP TABLE IF EXISTS memtest;
CREATE TABLE memtest AS
	SELECT $KEY_EXPR AS k, i AS v
	FROM generate_series(1, $ROWS) i;
ANALYZE memtest;
DROP TABLE IF EXISTS memdim;
SQL
[ "$SHAPE" = agg ] || sql <<SQL
CREATE TABLE memdim AS
	SELECT k, (hashtext(k::text) & 2147483647) % 1000 AS g, md5(k::text) AS pad
	FROM (SELECT DISTINCT k FROM memtest) s;
ANALYZE memdim;
SQL

for mode in $MODES; do
	# the sampler: the backend's VmHWM and largest RssAnon while the query runs
	cat >"$work/sample.sh" <<'SAMPLE'
#!/bin/sh
dir=$(dirname "$0")
while [ ! -s "$dir/pid" ]; do sleep 0.02; done
pid=$(tr -dc 0-9 < "$dir/pid")
max=0
while [ ! -e "$dir/done" ]; do
	status=$(cat "/proc/$pid/status" 2>/dev/null) || break
	anon=$(printf '%s\n' "$status" | awk '/^RssAnon:/ { print $2 }')
	hwm=$(printf '%s\n' "$status" | awk '/^VmHWM:/ { print $2 }')
	[ -n "$hwm" ] || break
	[ "${anon:-0}" -gt "$max" ] && max=$anon
	echo "$hwm $max" > "$dir/peak.tmp" && mv "$dir/peak.tmp" "$dir/peak"
	sleep 0.02
done
SAMPLE
	chmod 755 "$work/sample.sh"
	rm -f "$work/pid" "$work/done" "$work/peak"
	"$work/sample.sh" &
	sampler=$!
	answer=$({
		echo "\\o $work/pid"
		echo "SELECT pg_backend_pid();"
		echo "\\o"
		mode_settings "$mode"
		echo "SELECT count(*) || '|' || sum(s) || '|' || sum(hashtext(k::text)) FROM ($QUERY) g;"
	} | sql)
	touch "$work/done"
	wait "$sampler" || true
	sampler=""
	read -r hwm anon <"$work/peak"
	plan=$({
		mode_settings "$mode"
		echo "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT count(*) FROM ($QUERY) g;"
	} | sql)
	memory=$(grep -o 'Memory Usage: [0-9]*kB' <<<"$plan" | tr -dc '0-9\n' | sort -n | tail -1 || true)
	disk=$(grep -o 'Disk Usage: [0-9]*kB' <<<"$plan" | tr -dc '0-9\n' | sort -n | tail -1 || true)
	echo "$mode hwm_kb=$hwm anon_kb=$anon answer=$answer peak_memory_kb=${memory:-0} disk_kb=${disk:-0}"
	if [ -n "${VERBOSE:-}" ]; then printf '%s\n' "$plan" | sed 's/^/    /'; fi
done
