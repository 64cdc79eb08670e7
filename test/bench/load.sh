#!/usr/bin/env bash
# test/bench/load.sh - the load benchmark: one aggregation run by many sessions at once
# under pgbench, natively and with gpuagg: throughput, failed transactions, latency and
# GPU memory per client count, pgbench -C (a new connection per transaction), and the
# time of the first query on a new connection.
#
#   bash test/bench/load.sh [options]        # 1e6 rows, 1 to 256 clients, 15 s a point
#   ROWS=1e5 CLIENTS="1 4 16" DURATION=3 DEVICE=cpu bash test/bench/load.sh   # a quick look
#
# Sets up like test/bench/run.sh (test/lib/common.sh: packages, build and install unless
# GPUAGG_SKIP_BUILD=1, a throwaway cluster run by an unprivileged user, with
# max_connections above the largest client count), makes table t of ROWS rows in NGROUPS
# groups (test/bench/gen_load.sql) and runs
#   SELECT k, sum(v), count(*), avg(f) FROM t GROUP BY k
# in each mode, all with max_parallel_workers_per_gather = cores:
#   native          gpuagg.enabled = off
#   gpuagg          gpuagg.force = on, gpuagg.device = DEVICE
#   gpuagg-backend  as gpuagg, with gpuagg.device_host = backend: each session opens the
#                   device itself (only where the extension has that setting)
#   gpuagg-gpu0     as gpuagg, with gpuagg.gpu_index = 0: every query on the first GPU,
#                   to compare one GPU with all of a host's
# Steps: the plan and one warm-up query per mode, gpuagg's answer checked against native;
# the first query on a new connection, FIRST_RUNS new connections per mode (the modes
# taking turns); pgbench -C at CONNECT_CLIENTS per mode; then for each count of CLIENTS,
# pgbench per mode for DURATION seconds (a custom script per mode, OUT/load-MODE.sql;
# -j THREADS, at most the clients). Per pgbench point: tps, failed transactions
# (pgbench's count, and the clients an error stopped), average latency; where nvidia-smi
# works, the peak GPU memory of each GPU (sampled every 100 ms); where the extension has
# the view gpuagg_stats, the queries each device of the GPU service carried. What is
# missing here is skipped, and the report says so.
#
# Writes OUT/load.csv (one row per mode and client count, then the -C and first-query
# rows), OUT/load.txt (the tables, ratios to native, the load targets met or not),
# OUT/load.png (tps against clients per mode: matplotlib, else gnuplot, else skipped
# with a message) and OUT/logs/ (pgbench's output and the GPU memory samples of each
# point). Exit status nonzero when a transaction failed, a client stopped on an error,
# a mode could not run (a setting it needs is missing, or its plan has no GpuHashAgg) or
# gpuagg's answer differs from native PostgreSQL's.
#
# Options (flag or environment variable):
#   --rows N             ROWS             rows of t (default 1e6; 1e6-style notation accepted)
#   --groups N           NGROUPS          groups (distinct k) of t (default 1000; bash keeps
#                                         GROUPS for itself)
#   --clients "C ..."    CLIENTS          pgbench client counts (default "1 4 16 64 128 256")
#   --modes M            MODES            "native gpuagg" (default); gpuagg-backend and
#                                         gpuagg-gpu0 too
#   --duration S         DURATION         seconds per pgbench point (default 15)
#   --connect-clients C  CONNECT_CLIENTS  clients of pgbench -C (default 16; 0 skips it)
#   --first-runs N       FIRST_RUNS       new connections per mode whose first query is
#                                         timed (default 20; 0 skips it)
#   --threads J          THREADS          pgbench threads (default: cores)
#   --device D           DEVICE           gpuagg device, gpu|cpu|auto (default: gpu if usable,
#                                         else cpu)
#   --out DIR            OUT              output directory (default bench-out/load in the repository)
#   --time-limit S       TIME_LIMIT       seconds from the start: start no step that would
#                                         end after it, and stop a pgbench point still
#                                         running then, so that the run ends with its
#                                         report; skipped steps say so (default: none)
#   --no-check           CHECK=0          do not compare gpuagg's answer with native's
#   BUDGET_SETTING=name  the setting that bounds the GPU memory gpuagg uses (default: a
#                        gpuagg setting named like *budget* or *gpu_memory*, if any)
#   GPUAGG_COMMIT      the commit the report names (default: git's HEAD)
#   GPUAGG_INSTALL     system|private|auto (default auto: a private copy of PostgreSQL
#                      unless the system's gpuagg is missing or this checkout's)
#   GPUAGG_SKIP_BUILD, PG_CONFIG, GPUAGG_USER, SHARED_BUFFERS_MB, WORK_MEM_MB,
#   GPUAGG_EXTRA_CONF, KEEP_CLUSTER=1: see test/lib/common.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib/common.sh
. test/lib/common.sh
# another checkout's or a package's gpuagg stays as it is (test/lib/common.sh)
export GPUAGG_INSTALL=${GPUAGG_INSTALL:-auto}
# shellcheck source=test/lib/bench.sh
. test/lib/bench.sh

QUERY="SELECT k, sum(v), count(*), avg(f) FROM t GROUP BY k"
ALL_MODES="native gpuagg gpuagg-backend gpuagg-gpu0"
APP_NAME=gpuagg-load
CSV_HEADER="kind,mode,clients,duration_s,tps,transactions,failed,aborted_clients,latency_avg_ms,tps_vs_native,gpu_peak_mib,gpu_peak_total_mib,service_queries,first_median_ms,first_max_ms,first_runs,status,note"
# per point, keyed MODE.CLIENTS (pgbench) or MODE.C (pgbench -C)
declare -A P_TPS P_TX P_FAILED P_ABORTED P_LAT P_GPU P_GPUTOTAL P_STATS P_STATUS P_NOTE
# per mode: the first query's times (ms), their median and max, and whether the mode runs
declare -A F_TIMES F_MED F_MAX F_STATUS MODE_OK MODE_WHY
NOTES=()
FAILURES=0
HAVE_SMI=0
HAVE_STATS=0
BUDGET_MIB=""
BUDGET_TEXT=""
declare -A GPU_IDLE
T_START=$(now_s)

# ---------------------------------------------------------------- options

# Print the usage text (the header of this file).
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }


# Parse the flags and the environment; check them.
parse_args() {
	local m c
	ROWS=${ROWS:-1e6}
	NGROUPS=${NGROUPS:-1000}
	CLIENTS=${CLIENTS:-1 4 16 64 128 256}
	MODES=${MODES:-native gpuagg}
	DURATION=${DURATION:-15}
	CONNECT_CLIENTS=${CONNECT_CLIENTS:-16}
	FIRST_RUNS=${FIRST_RUNS:-20}
	THREADS=${THREADS:-$(ncores)}
	DEVICE=${DEVICE:-${GPUAGG_BENCH_DEVICE:-}}
	OUT=${OUT:-$GA_ROOT/bench-out/load}
	TIME_LIMIT=${TIME_LIMIT:-}
	CHECK=${CHECK:-1}
	BUDGET_SETTING=${BUDGET_SETTING:-}
	while [ $# -gt 0 ]; do
		case "$1" in
			--rows) ROWS=${2:?$1 needs a value}; shift 2 ;;
			--groups) NGROUPS=${2:?$1 needs a value}; shift 2 ;;
			--clients) CLIENTS=${2:?$1 needs a value}; shift 2 ;;
			--modes) MODES=${2:?$1 needs a value}; shift 2 ;;
			--duration) DURATION=${2:?$1 needs a value}; shift 2 ;;
			--connect-clients) CONNECT_CLIENTS=${2:?$1 needs a value}; shift 2 ;;
			--first-runs) FIRST_RUNS=${2:?$1 needs a value}; shift 2 ;;
			--threads) THREADS=${2:?$1 needs a value}; shift 2 ;;
			--device) DEVICE=${2:?$1 needs a value}; shift 2 ;;
			--out) OUT=${2:?$1 needs a value}; shift 2 ;;
			--time-limit) TIME_LIMIT=${2:?$1 needs a value}; shift 2 ;;
			--no-check) CHECK=0; shift ;;
			-h | --help) usage; exit 0 ;;
			*) usage >&2; die "unknown argument: $1" ;;
		esac
	done
	int_var ROWS
	int_var NGROUPS
	[ "$ROWS" -ge "$NGROUPS" ] || die "ROWS ($ROWS) must be at least NGROUPS ($NGROUPS)"
	case "$DURATION" in '' | *[!0-9]* | 0) die "DURATION must be a positive number of seconds, not '$DURATION'" ;; esac
	case "$CONNECT_CLIENTS" in '' | *[!0-9]*) die "CONNECT_CLIENTS must be a non-negative integer, not '$CONNECT_CLIENTS'" ;; esac
	case "$FIRST_RUNS" in '' | *[!0-9]*) die "FIRST_RUNS must be a non-negative integer, not '$FIRST_RUNS'" ;; esac
	case "$THREADS" in '' | *[!0-9]* | 0) die "THREADS must be a positive integer, not '$THREADS'" ;; esac
	case "$TIME_LIMIT" in '' | *[!0-9]*) [ -z "$TIME_LIMIT" ] || die "TIME_LIMIT must be whole seconds, not '$TIME_LIMIT'" ;; esac
	case "$DEVICE" in "" | cpu | gpu | auto) ;; *) die "DEVICE must be cpu, gpu or auto, not '$DEVICE'" ;; esac
	case "$CHECK" in 0 | 1) ;; *) die "CHECK must be 0 or 1, not '$CHECK'" ;; esac
	[ -n "$CLIENTS" ] || die "CLIENTS is empty"
	for c in $CLIENTS; do
		case "$c" in '' | *[!0-9]* | 0) die "CLIENTS must be positive integers, not '$c'" ;; esac
	done
	[ -n "$MODES" ] || die "MODES is empty"
	for m in $MODES; do
		case " $ALL_MODES " in *" $m "*) ;; *) die "unknown mode '$m' in MODES (known: $ALL_MODES)" ;; esac
	done
	mkdir -p "$OUT/logs" || die "cannot create OUT=$OUT"
	OUT=$(cd "$OUT" && pwd)
}

# Print the whole seconds left before TIME_LIMIT (a large number when there is none).
seconds_left() {
	if [ -z "$TIME_LIMIT" ]; then echo 999999999; return 0; fi
	awk -v s="$T_START" -v n="$(now_s)" -v l="$TIME_LIMIT" 'BEGIN { printf "%d\n", l - (n - s) }'
}

# Print the largest client count that connects at once (CLIENTS and CONNECT_CLIENTS).
# shellcheck disable=SC2086  # CLIENTS is a word list
max_clients() { printf '%s\n' $CLIENTS "$CONNECT_CLIENTS" | sort -n | tail -n 1; }

# Print a rough estimate of the run time in seconds (setup not included).
estimate_s() {
	local nm nc
	nm=$(wc -w <<<"$MODES")
	nc=$(wc -w <<<"$CLIENTS")
	if [ "$CONNECT_CLIENTS" -gt 0 ]; then nc=$((nc + 1)); fi
	echo $((nm * nc * (DURATION + 3) + nm * FIRST_RUNS / 2 + ROWS / 200000 + 10))
}

# ---------------------------------------------------------------- setup

# Make table t (ROWS rows, NGROUPS groups) in public, frozen, analyzed and prewarmed.
make_table() {
	local jobs=() gen=$BENCH_SQL_DIR/gen_load.sql
	log "generating t: $ROWS rows, k uniform over 1 .. $NGROUPS ($BENCH_GEN_JOBS sessions at most)"
	bench_helpers
	bench_sql_file "$gen" schema=public rows="$ROWS" groups="$NGROUPS" part=create
	mapfile -t jobs < <(bench_chunk_jobs "$gen" t "$ROWS" 1 schema=public rows="$ROWS" groups="$NGROUPS")
	bench_run_jobs "t" $((ROWS / 40000)) "${jobs[@]}"
	bench_finish_tables public t
	log "t: $(psql_as "$BENCH_DB" -At -c "SELECT count(DISTINCT k) FROM t") groups"
}

# Print the SET statements of mode $1, one a line.
mode_settings() {
	case "$1" in
		native) bench_mode_settings parallel ;;
		gpuagg) bench_mode_settings gpuagg ;;
		gpuagg-backend)
			bench_mode_settings gpuagg
			echo "SET gpuagg.device_host = backend;"
			;;
		gpuagg-gpu0)
			bench_mode_settings gpuagg
			echo "SET gpuagg.gpu_index = 0;"
			;;
	esac | sed 's/; */;\n/g' | grep -v '^$'
}

# Whether the server has setting $1.
has_setting() {
	[ "$(psql_as "$BENCH_DB" -At -c "SELECT count(*) FROM pg_settings WHERE name = '$1'")" = 1 ]
}

# Check each mode: the settings it needs, its plan (GpuHashAgg in gpuagg modes, none
# natively), one warm-up query; set MODE_OK and MODE_WHY, and write its pgbench script.
check_modes() {
	local m plan err
	for m in $MODES; do
		MODE_OK[$m]=yes
		if [ "$m" = gpuagg-backend ] && ! has_setting gpuagg.device_host; then
			MODE_OK[$m]=no
			MODE_WHY[$m]="this gpuagg has no setting gpuagg.device_host"
		else
			plan=$(psql_as "$BENCH_DB" -At 2>&1 <<<"$(mode_settings "$m")
EXPLAIN (COSTS OFF) $QUERY;" | grep -v '^SET$') || true
			log "$m plan: $(printf '%s\n' "$plan" | head -n 4 | sed 's/^ *//' | paste -sd '|' - | sed 's/|/ | /g')"
			case "$m:$plan" in
				*ERROR*) MODE_OK[$m]=no; MODE_WHY[$m]="EXPLAIN failed: $(printf '%s\n' "$plan" | grep -m1 ERROR)" ;;
				native:*"Custom Scan (Gpu"*) MODE_OK[$m]=no; MODE_WHY[$m]="the native plan has a gpuagg node" ;;
				native:*) ;;
				*"Custom Scan (GpuHashAgg)"*) ;;
				*) MODE_OK[$m]=no; MODE_WHY[$m]="its plan has no GpuHashAgg" ;;
			esac
		fi
		if [ "${MODE_OK[$m]}" = yes ] && ! err=$(psql_as "$BENCH_DB" -q -o /dev/null 2>&1 <<<"$(mode_settings "$m")
$QUERY;"); then
			MODE_OK[$m]=no
			MODE_WHY[$m]="the warm-up query failed: $(printf '%s\n' "$err" | grep -m1 ERROR || printf '%s\n' "$err" | head -n 1)"
		fi
		if [ "${MODE_OK[$m]}" = yes ]; then
			{ mode_settings "$m"; echo "$QUERY;"; } >"$OUT/load-$m.sql"
			cp "$OUT/load-$m.sql" "$CLUSTER_DIR/load-$m.sql"
			chmod a+r "$CLUSTER_DIR/load-$m.sql"
			log "$m: ready (pgbench script $OUT/load-$m.sql)"
		else
			FAILURES=$((FAILURES + 1))
			warn "$m cannot run: ${MODE_WHY[$m]}"
		fi
	done
	if [ "$CHECK" = 1 ] && [ "${MODE_OK[gpuagg]:-}" = yes ]; then
		bench_compare "" "$QUERY" "k" parallel
		log "gpuagg's answer matches native PostgreSQL's: $CMP_RESULT ($CMP_ROWS groups)"
		if [ "$CMP_RESULT" != yes ]; then
			FAILURES=$((FAILURES + 1))
			NOTES+=("gpuagg's answer differs from native PostgreSQL's: $CMP_RESULT")
		fi
	fi
}

# Find what this host and this gpuagg offer: nvidia-smi, the view gpuagg_stats, a GPU
# memory budget setting; say what is missing.
probe_extras() {
	local row
	if command -v nvidia-smi >/dev/null 2>&1 &&
		nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits >"$OUT/logs/gpu-idle.csv" 2>/dev/null &&
		[ -s "$OUT/logs/gpu-idle.csv" ]; then
		HAVE_SMI=1
		while IFS=', ' read -r i mib; do GPU_IDLE[$i]=$mib; done <"$OUT/logs/gpu-idle.csv"
		log "nvidia-smi: $(wc -l <"$OUT/logs/gpu-idle.csv") GPU(s); memory in use before the first query (MiB):" \
			"$(tr -d ' ' <"$OUT/logs/gpu-idle.csv" | tr ',\n' ': ')"
	else
		NOTES+=("no working nvidia-smi here: no GPU memory measured")
	fi
	if [ "$(psql_as "$BENCH_DB" -At -c "SELECT to_regclass('gpuagg_stats') IS NOT NULL")" = t ]; then
		HAVE_STATS=1
		log "gpuagg_stats is there: queries per device of the GPU service are counted per point"
	else
		NOTES+=("this gpuagg has no view gpuagg_stats: the queries each device carried are not shown")
	fi
	if [ -z "$BUDGET_SETTING" ]; then
		BUDGET_SETTING=$(psql_as "$BENCH_DB" -At -c "SELECT name FROM pg_settings WHERE name LIKE 'gpuagg.%'
			AND (name LIKE '%budget%' OR name LIKE '%gpu_memory%') AND unit IN ('kB', '8kB', 'MB') ORDER BY name LIMIT 1")
	fi
	if [ -n "$BUDGET_SETTING" ] && has_setting "$BUDGET_SETTING"; then
		row=$(psql_as "$BENCH_DB" -At -F ' ' -c "SELECT current_setting('$BUDGET_SETTING'),
			pg_size_bytes(current_setting('$BUDGET_SETTING')) / 1048576")
		BUDGET_TEXT="$BUDGET_SETTING = ${row% *}"
		BUDGET_MIB=${row##* }
		log "GPU memory budget: $BUDGET_TEXT"
	else
		NOTES+=("no GPU memory budget setting${BUDGET_SETTING:+ ($BUDGET_SETTING is not a setting here)}: peak GPU memory is not compared with one")
	fi
}

# ---------------------------------------------------------------- measuring

# Start sampling every GPU's memory in use every 100 ms into file $1 (where nvidia-smi works).
gpu_sampler_start() {
	SAMPLER_PID=""
	[ "$HAVE_SMI" = 1 ] || return 0
	nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 100 >"$1" 2>/dev/null &
	SAMPLER_PID=$!
	track_bg_pid "$SAMPLER_PID"
}

# Stop the sampler; print the peak memory of each GPU in file $1 ("0:8700 1:312", MiB).
gpu_sampler_stop() {
	[ -n "$SAMPLER_PID" ] || return 0
	kill "$SAMPLER_PID" 2>/dev/null || true
	wait "$SAMPLER_PID" 2>/dev/null || true
	bench_untrack_pid "$SAMPLER_PID"
	awk -F', *' 'NF >= 2 && $2 ~ /^[0-9]+$/ { if (!($1 in m) || $2 + 0 > m[$1]) m[$1] = $2 + 0 }
		END { for (i in m) printf "%s:%s\n", i, m[i] }' "$1" | sort -n | paste -sd ' ' -
}

# Print the service's counters per device: "device queries cpu_fallbacks out_of_memory" lines.
stats_snapshot() {
	[ "$HAVE_STATS" = 1 ] || return 0
	psql_as "$BENCH_DB" -At -F ' ' -c "SELECT replace(coalesce(j->>'device', '?'), ' ', '_'),
		coalesce((j->>'queries')::int8, 0), coalesce((j->>'cpu_fallbacks')::int8, 0),
		coalesce((j->>'out_of_memory')::int8, 0)
		FROM (SELECT to_jsonb(s) AS j FROM gpuagg_stats s) x ORDER BY 1" 2>/dev/null || true
}

# Print what each device did between snapshots $1 and $2 ("gpu0=260 cpu=0", with
# fallbacks and out-of-memory events where there were any).
stats_delta() {
	awk 'NR == FNR { q[$1] = $2; fb[$1] = $3; oom[$1] = $4; next }
		{ d = $2 - q[$1]; f = $3 - fb[$1]; o = $4 - oom[$1]
		  s = $1 "=" d; if (f > 0) s = s "/fallbacks " f; if (o > 0) s = s "/oom " o
		  out = out (out == "" ? "" : " ") s }
		END { print out }' <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# Wait for this benchmark's sessions to end; cancel, then terminate, those that linger
# (a pgbench stopped at its time limit leaves its queries running: $1 = now cancels them
# at once).
end_sessions() {
	local i n cancel_at=25
	if [ "${1:-}" = now ]; then cancel_at=1; fi
	for i in $(seq 1 150); do
		n=$(psql_as "$BENCH_DB" -At -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$APP_NAME'")
		[ "$n" -gt 0 ] || return 0
		if [ "$i" = "$cancel_at" ]; then
			psql_as "$BENCH_DB" -At -o /dev/null -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
				WHERE application_name = '$APP_NAME'"
		elif [ "$i" = 100 ]; then
			psql_as "$BENCH_DB" -At -o /dev/null -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE application_name = '$APP_NAME'"
		fi
		sleep 0.2
	done
	warn "$n session(s) of the benchmark still there after 30 s"
}

# Print the first number after text $2 in pgbench output $1 (or nothing).
pgbench_value() { printf '%s\n' "$1" | sed -n "s/^$2 *\([0-9][0-9.]*\).*/\1/p" | head -n 1; }

# Run pgbench in mode $1 with $2 clients for DURATION seconds ($3 = -C: a new connection
# per transaction) and record the point under key $1.$2 (or $1.C).
run_point() {
	local m=$1 c=$2 connect=${3:-} key label limit threads out rc=0 before after logf extra=()
	if [ -n "$connect" ]; then key=$m.C; label="$m -C $c"; extra=(-C); else key=$m.$c; label="$m $c"; fi
	logf=$OUT/logs/pgbench-$m-${connect:+C-}$c.log
	if [ "${MODE_OK[$m]}" != yes ]; then
		P_STATUS[$key]="not run"
		P_NOTE[$key]=${MODE_WHY[$m]}
		return 0
	fi
	limit=$((DURATION + (DURATION > 30 ? DURATION : 30)))
	if [ "$(seconds_left)" -lt $((DURATION + 5)) ]; then
		P_STATUS[$key]="skipped (TIME_LIMIT)"
		log "$label client(s): skipped ($(seconds_left)s left before TIME_LIMIT=${TIME_LIMIT}s)"
		return 0
	fi
	if [ "$limit" -gt "$(seconds_left)" ]; then limit=$(seconds_left); fi
	threads=$THREADS
	if [ "$threads" -gt "$c" ]; then threads=$c; fi
	before=$(stats_snapshot)
	gpu_sampler_start "$OUT/logs/gpu-$m-${connect:+C-}$c.csv"
	out=$(as_pguser env PGAPPNAME="$APP_NAME" timeout -s INT -k 15 "$limit" "$PG_BINDIR/pgbench" -n \
		-h "$CLUSTER_DIR" -p "$PGPORT_CLUSTER" -f "$CLUSTER_DIR/load-$m.sql" -c "$c" -j "$threads" \
		-T "$DURATION" "${extra[@]}" "$BENCH_DB" 2>&1) || rc=$?
	P_GPU[$key]=$(gpu_sampler_stop "$OUT/logs/gpu-$m-${connect:+C-}$c.csv")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then end_sessions now; else end_sessions; fi
	after=$(stats_snapshot)
	printf '%s\n' "$out" >"$logf"
	if [ -n "${P_GPU[$key]}" ]; then
		P_GPUTOTAL[$key]=$(tr ' ' '\n' <<<"${P_GPU[$key]}" | awk -F: '{ s += $2 } END { print s + 0 }')
	fi
	if [ -n "$before$after" ]; then P_STATS[$key]=$(stats_delta "$before" "$after"); fi
	P_TPS[$key]=$(pgbench_value "$out" "tps =")
	P_TX[$key]=$(pgbench_value "$out" "number of transactions actually processed:")
	P_FAILED[$key]=$(pgbench_value "$out" "number of failed transactions:")
	P_FAILED[$key]=${P_FAILED[$key]:-0}
	P_LAT[$key]=$(pgbench_value "$out" "latency average =")
	P_ABORTED[$key]=$(printf '%s\n' "$out" | grep -c -E 'client [0-9]+ .*abort' || true)
	P_STATUS[$key]=ok
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		P_STATUS[$key]="stopped after ${limit}s"
	elif [ "${P_FAILED[$key]}" != 0 ] || [ "${P_ABORTED[$key]}" != 0 ]; then
		# (pgbench exits 2 when an error stopped a client)
		P_STATUS[$key]=failed
	elif [ "$rc" != 0 ] || [ -z "${P_TPS[$key]}" ]; then
		P_STATUS[$key]="error (pgbench exit $rc)"
	fi
	if [ "${P_STATUS[$key]}" != ok ]; then
		FAILURES=$((FAILURES + 1))
		P_NOTE[$key]=$(printf '%s\n' "$out" | grep -m1 -E 'ERROR|error:|FATAL' | cut -c1-200 || true)
		warn "$label client(s): ${P_STATUS[$key]}${P_NOTE[$key]:+: ${P_NOTE[$key]}} (pgbench output: $logf)"
	fi
	log "$label client(s): ${P_TPS[$key]:--} tps, ${P_TX[$key]:--} transactions, ${P_FAILED[$key]} failed," \
		"${P_ABORTED[$key]} client(s) stopped, latency ${P_LAT[$key]:--} ms${P_GPU[$key]:+, peak GPU MiB ${P_GPU[$key]}}${P_STATS[$key]:+, service: ${P_STATS[$key]}}"
}

# Time the first query on FIRST_RUNS new connections per mode (the modes taking turns).
first_queries() {
	local i m out ms
	for m in $MODES; do
		F_TIMES[$m]=""
		if [ "${MODE_OK[$m]}" = yes ]; then F_STATUS[$m]=ok; else F_STATUS[$m]="not run"; fi
	done
	for i in $(seq 1 "$FIRST_RUNS"); do
		if [ "$(seconds_left)" -le 0 ]; then
			log "first query: stopped after $((i - 1)) connection(s) per mode (TIME_LIMIT=${TIME_LIMIT}s)"
			for m in $MODES; do
				if [ "${F_STATUS[$m]}" = ok ]; then F_STATUS[$m]="cut short (TIME_LIMIT)"; fi
			done
			break
		fi
		for m in $MODES; do
			[ "${MODE_OK[$m]}" = yes ] || continue
			if out=$(as_pguser env PGAPPNAME="$APP_NAME" "$PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 -At -o /dev/null \
				-h "$CLUSTER_DIR" -p "$PGPORT_CLUSTER" -d "$BENCH_DB" 2>&1 <<<"$(mode_settings "$m")
\\timing on
$QUERY;"); then
				ms=$(printf '%s\n' "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | head -n 1)
				F_TIMES[$m]="${F_TIMES[$m]:+${F_TIMES[$m]} }$ms"
			else
				F_STATUS[$m]=error
				FAILURES=$((FAILURES + 1))
				warn "first query, $m: $(printf '%s\n' "$out" | grep -m1 ERROR || printf '%s\n' "$out" | head -n 1)"
			fi
		done
	done
	for m in $MODES; do
		[ -n "${F_TIMES[$m]}" ] || continue
		# shellcheck disable=SC2086  # split the times
		F_MED[$m]=$(median ${F_TIMES[$m]})
		F_MAX[$m]=$(tr ' ' '\n' <<<"${F_TIMES[$m]}" | sort -g | tail -n 1)
		log "first query, $m: median ${F_MED[$m]} ms, max ${F_MAX[$m]} ms ($(wc -w <<<"${F_TIMES[$m]}") connections)"
	done
}

# ---------------------------------------------------------------- report

# Print a - b with one decimal and a sign, or "-" when either is not a number.
diff_ms() {
	awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/) printf "%+.1f", a - b; else printf "-" }'
}

# Print number $1 with one decimal, or "-" when it is not a number.
dec1() { awk -v x="${1:-}" 'BEGIN { if (x ~ /^[0-9.]+$/) printf "%.1f", x; else printf "-" }'; }

# Print $1 as a quoted CSV field.
csv_field() { printf '"%s"' "${1//\"/\"\"}"; }

# Write OUT/load.csv.
write_csv() {
	local m c key kind clients
	{
		echo "$CSV_HEADER"
		for key in $(point_keys); do
			m=${key%.*}
			c=${key##*.}
			kind=pgbench
			clients=$c
			if [ "$c" = C ]; then kind=connect; clients=$CONNECT_CLIENTS; fi
			printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,' "$kind" "$m" "$clients" "$DURATION" "${P_TPS[$key]:-}" \
				"${P_TX[$key]:-}" "${P_FAILED[$key]:-}" "${P_ABORTED[$key]:-}" "${P_LAT[$key]:-}" \
				"$(ratio_num "${P_TPS[$key]:-}" "${P_TPS[native.$c]:-}")"
			printf '%s,%s,%s,,,,%s,%s\n' "$(csv_field "${P_GPU[$key]:-}")" "${P_GPUTOTAL[$key]:-}" \
				"$(csv_field "${P_STATS[$key]:-}")" "$(csv_field "${P_STATUS[$key]:-}")" "$(csv_field "${P_NOTE[$key]:-}")"
		done
		if [ "$FIRST_RUNS" -gt 0 ]; then
			for m in $MODES; do
				printf 'first,%s,1,,,,,,,,,,,%s,%s,%s,%s,%s\n' "$m" "${F_MED[$m]:-}" "${F_MAX[$m]:-}" \
					"$(wc -w <<<"${F_TIMES[$m]:-}")" "$(csv_field "${F_STATUS[$m]:-}")" "$(csv_field "${MODE_WHY[$m]:-}")"
			done
		fi
	} >"$OUT/load.csv"
}

# Print the keys of the points in report order: MODE.CLIENTS per count, then MODE.C.
point_keys() {
	local c m
	for c in $CLIENTS; do
		for m in $MODES; do echo "$m.$c"; done
	done
	if [ "$CONNECT_CLIENTS" -gt 0 ]; then
		for m in $MODES; do echo "$m.C"; done
	fi
}

# Print one table line of point $1 (format $2).
point_line() {
	local key=$1 fmt=$2 c=${1##*.}
	# shellcheck disable=SC2059  # the format is a variable on purpose
	printf "$fmt" "$(if [ "$c" = C ]; then echo "$CONNECT_CLIENTS"; else echo "$c"; fi)" "${key%.*}" \
		"$(dec1 "${P_TPS[$key]:-}")" "$(if [ "${key%.*}" = native ]; then echo -; else ratio "${P_TPS[$key]:-}" "${P_TPS[native.$c]:-}"; fi)" \
		"${P_FAILED[$key]:--}" "${P_ABORTED[$key]:--}" "$(dec1 "${P_LAT[$key]:-}")" "${P_GPU[$key]:--}" \
		"${P_STATS[$key]:--}" "${P_STATUS[$key]:--}"
}

# Print the load targets, each met, missed or not measured (gpuagg against native).
print_targets() {
	local c key r bad="" miss="" none="" n=0 ngpu used
	case " $MODES " in *" native "*) ;; *) echo "  (no native mode: the targets need it)"; return 0 ;; esac
	case " $MODES " in *" gpuagg "*) ;; *) echo "  (no gpuagg mode: the targets need it)"; return 0 ;; esac
	for key in $(point_keys); do
		case "${P_STATUS[$key]:-}" in ok) ;; failed | error* | stopped*) bad="$bad ${key/./ }" ;; esac
	done
	echo "  no failed transaction at any client count: $(if [ -z "$bad" ]; then echo met; else echo "MISSED (${bad# })"; fi)"
	for c in $CLIENTS; do
		r=$(ratio_num "${P_TPS[gpuagg.$c]:-}" "${P_TPS[native.$c]:-}")
		if [ -z "$r" ]; then none="$none $c"; continue; fi
		n=$((n + 1))
		if awk -v r="$r" 'BEGIN { exit !(r < 1.3) }'; then miss="$miss $c:${r}x"; fi
	done
	echo "  gpuagg tps >= 1.3x native at every client count: $(if [ -n "$miss" ]; then echo "MISSED at${miss}"; elif
		[ "$n" = 0 ]; then echo "not measured"; else echo met; fi)${none:+ (not measured at${none})}"
	if [ "$CONNECT_CLIENTS" -gt 0 ]; then
		r=$(ratio_num "${P_TPS[gpuagg.C]:-}" "${P_TPS[native.C]:-}")
		echo "  pgbench -C, $CONNECT_CLIENTS clients, gpuagg tps >= native: $(if [ -z "$r" ]; then echo "not measured"; elif
			awk -v r="$r" 'BEGIN { exit !(r >= 1) }'; then echo "met (${r}x)"; else echo "MISSED (${r}x)"; fi)"
	fi
	if [ -n "${F_MED[gpuagg]:-}" ] && [ -n "${F_MED[native]:-}" ]; then
		r=$(diff_ms "${F_MED[gpuagg]}" "${F_MED[native]}")
		echo "  first query on a new connection at most 20 ms slower (median): $(if awk -v d="$r" 'BEGIN { exit !(d <= 20) }'; then
			echo met; else echo MISSED; fi) ($r ms; max $(diff_ms "${F_MAX[gpuagg]}" "${F_MAX[native]}") ms)"
	else
		echo "  first query on a new connection at most 20 ms slower: not measured"
	fi
	if [ "$HAVE_SMI" = 1 ] && [ -n "$BUDGET_MIB" ]; then
		# the memory in use before the first query (contexts, anything resident) is not the budget's
		bad=""
		for c in $CLIENTS; do
			for used in ${P_GPU[gpuagg.$c]:-}; do
				if [ $((${used#*:} - ${GPU_IDLE[${used%%:*}]:-0})) -gt "$BUDGET_MIB" ]; then bad="$bad $c:GPU${used%%:*}"; fi
			done
		done
		echo "  peak GPU memory (less what was in use before the first query) within $BUDGET_TEXT:" \
			"$(if [ -z "$bad" ]; then echo met; else echo "MISSED at${bad}"; fi)"
	else
		echo "  peak GPU memory within the budget: not measured ($(if [ "$HAVE_SMI" = 1 ]; then echo "no budget setting"; else echo "no nvidia-smi"; fi))"
	fi
	ngpu=0
	if [ "$HAVE_SMI" = 1 ]; then ngpu=$(wc -l <"$OUT/logs/gpu-idle.csv"); fi
	if [ "$HAVE_SMI" = 1 ] && [ "$ngpu" -ge 2 ] && [ "$HAVE_STATS" = 1 ] && [ -n "${P_STATS[gpuagg.64]:-}" ]; then
		used=$(tr ' ' '\n' <<<"${P_STATS[gpuagg.64]}" | grep -v -i '^cpu' | awk -F'[=/]' '$2 > 0' | wc -l)
		echo "  every GPU carrying queries at 64 clients: $(if [ "$used" -ge "$ngpu" ]; then echo met; else echo MISSED; fi)" \
			"($used of $ngpu: ${P_STATS[gpuagg.64]})"
	else
		echo "  every GPU carrying queries at 64 clients: not measured (needs 2 GPUs, gpuagg_stats and 64 in CLIENTS)"
	fi
	r=$(ratio_num "${P_TPS[gpuagg.64]:-}" "${P_TPS[gpuagg-gpu0.64]:-}")
	if [ "$ngpu" -ge 2 ] && [ -n "$r" ]; then
		echo "  every GPU at 64 clients no fewer tps than the first GPU alone (gpuagg-gpu0):" \
			"$(if awk -v r="$r" 'BEGIN { exit !(r >= 1) }'; then echo met; else echo MISSED; fi) (${r}x)"
	else
		echo "  every GPU against one at 64 clients: not measured (needs 2 GPUs, the gpuagg-gpu0 mode and 64 in CLIENTS)"
	fi
}

# Print the report (also to OUT/load.txt).
print_results() {
	local key m fmt hdr note
	fmt='%7s  %-15s %9s %9s %7s %8s %11s  %-16s %-22s %s\n'
	hdr=$(
		# shellcheck disable=SC2059  # the format is a variable on purpose
		printf "$fmt" clients mode tps "vs native" failed stopped "latency ms" "peak GPU MiB" "service queries" status
	)
	{
		printf 'gpuagg load benchmark, %s: table t, %s rows, %s groups; %s cores, %s MB RAM;\n' \
			"$(date -u +%Y-%m-%dT%H:%MZ)" "$ROWS" "$NGROUPS" "$(ncores)" "$(mem_total_mb)"
		printf '%s; gpuagg device %s (%s); commit %s; max_parallel_workers_per_gather %s\n' "$PG_VERSION_STR" \
			"$BENCH_DEVICE" "$DEVICE_NAME" "$(bench_commit)" "$BENCH_WORKERS"
		printf 'query: %s\n' "$QUERY"
		printf 'pgbench: %s s per point, -j %s (at most the clients)%s\n\n' "$DURATION" "$THREADS" \
			"${SERVICE_TEXT:+; $SERVICE_TEXT}"
		printf 'pgbench, one connection per client (stopped: clients an error stopped; peak GPU MiB per GPU index):\n%s\n' "$hdr"
		for key in $(point_keys); do
			[ "${key##*.}" != C ] || continue
			point_line "$key" "$fmt"
		done
		if [ "$CONNECT_CLIENTS" -gt 0 ]; then
			printf '\npgbench -C (a new connection per transaction), %s clients:\n%s\n' "$CONNECT_CLIENTS" "$hdr"
			for m in $MODES; do point_line "$m.C" "$fmt"; done
		fi
		if [ "$FIRST_RUNS" -gt 0 ]; then
			printf '\nfirst query on a new connection, %s connections per mode (ms):\n' "$FIRST_RUNS"
			printf '%-15s %9s %9s %14s %14s  %s\n' mode median max "median - nat." "max - nat." status
			for m in $MODES; do
				printf '%-15s %9s %9s %14s %14s  %s\n' "$m" "$(dec1 "${F_MED[$m]:-}")" "$(dec1 "${F_MAX[$m]:-}")" \
					"$(if [ "$m" = native ]; then echo -; else diff_ms "${F_MED[$m]:-}" "${F_MED[native]:-}"; fi)" \
					"$(if [ "$m" = native ]; then echo -; else diff_ms "${F_MAX[$m]:-}" "${F_MAX[native]:-}"; fi)" \
					"${F_STATUS[$m]:--}"
			done
		fi
		printf '\ntargets (gpuagg against native):\n'
		print_targets
		if [ "${#NOTES[@]}" -gt 0 ]; then
			printf '\nnotes:\n'
			for note in "${NOTES[@]}"; do printf '  %s\n' "$note"; done
		fi
		for m in $MODES; do
			if [ "${MODE_OK[$m]:-}" = no ]; then printf '  %s could not run: %s\n' "$m" "${MODE_WHY[$m]}"; fi
		done
	} >"$OUT/load.txt"
	section "results"
	cat "$OUT/load.txt"
	log "wrote $OUT/load.txt and $OUT/load.csv"
}

# Draw OUT/load.png: matplotlib, else gnuplot, else say why there is none.
draw_chart() {
	local py title data m c plot="" term
	title="gpuagg load: $ROWS rows, $NGROUPS groups, device $BENCH_DEVICE ($DEVICE_NAME), $(ncores) cores, ${DURATION} s a point"
	rm -f "$OUT/load.png"
	py=$(find_matplotlib)
	if [ -n "$py" ]; then
		if MPLBACKEND=Agg "$py" test/bench/lib/load_chart.py "$OUT/load.csv" "$OUT/load.png" "$title"; then
			log "wrote $OUT/load.png (matplotlib, $py)"
			return 0
		fi
		warn "load_chart.py failed; trying gnuplot"
	fi
	if command -v gnuplot >/dev/null 2>&1; then
		data=$(mktemp "${GPUAGG_TMPDIR:-/tmp}/gpuagg-chart.XXXXXX")
		# one block per mode (separated by two blank lines): clients tps
		for m in $MODES; do
			printf '# %s\n' "$m"
			for c in $CLIENTS; do
				if [ -n "${P_TPS[$m.$c]:-}" ]; then printf '%s %s\n' "$c" "${P_TPS[$m.$c]}"; fi
			done
			printf '\n\n'
		done >"$data"
		c=0
		for m in $MODES; do
			plot="${plot:+$plot, }\"$data\" index $c using 1:2 with linespoints lw 2 pt 7 title \"$m\""
			c=$((c + 1))
		done
		for term in "pngcairo size 900,560 font \",9\"" "png size 900,560"; do
			if gnuplot <<GP 2>/dev/null; then
set terminal $term
set output "$OUT/load.png"
set title "${title//\"/}"
set logscale x 2
set xlabel "clients"
set ylabel "transactions per second"
set yrange [0:*]
set grid
set key top left
plot $plot
GP
				rm -f "$data"
				log "wrote $OUT/load.png (gnuplot, ${term%% *} terminal)"
				return 0
			fi
		done
		rm -f "$data"
		warn "gnuplot failed"
	fi
	log "no chart: neither python3 with matplotlib nor a working gnuplot here (apt-get install python3-matplotlib," \
		"or gnuplot); OUT/load.csv has the numbers"
}

# EXIT hook (called by ga_on_exit): when cut off before the report, say so.
on_exit_hook() {
	if [ "$1" != 0 ] && [ "${REPORTED:-0}" = 0 ] && [ -n "${OUT:-}" ]; then
		warn "stopped before the report; pgbench's output so far is in $OUT/logs"
	fi
}

# ---------------------------------------------------------------- main

# Set up, measure, report.
main() {
	local c m maxc
	parse_args "$@"
	install_exit_trap
	if [ -n "$TIME_LIMIT" ]; then BENCH_DEADLINE=$(($(date +%s) + TIME_LIMIT)); fi
	maxc=$(max_clients)
	log "gpuagg load benchmark: $ROWS rows, $NGROUPS groups; modes: $MODES; clients: $CLIENTS;" \
		"$DURATION s a point; pgbench -C at $CONNECT_CLIENTS; first query x $FIRST_RUNS; output in $OUT"
	log "estimated run time after setup: about $((($(estimate_s) + 59) / 60)) min${TIME_LIMIT:+; TIME_LIMIT ${TIME_LIMIT}s}"
	section "packages"
	ensure_packages
	[ -x "$PG_BINDIR/pgbench" ] || die "$PG_BINDIR/pgbench not found (it comes with the PostgreSQL server package)"
	section "build+install"
	build_and_install
	section "cluster"
	# room for every client, the benchmark's own sessions and the reserved slots
	GPUAGG_EXTRA_CONF="max_connections = $((maxc + 20))${GPUAGG_EXTRA_CONF:+
$GPUAGG_EXTRA_CONF}"
	start_cluster demo $((ROWS * 50))
	log "max_connections $(psql_as "$BENCH_DB" -At -c "SHOW max_connections"), work_mem" \
		"$(psql_as "$BENCH_DB" -At -c "SHOW work_mem"), max_parallel_workers_per_gather $BENCH_WORKERS"
	PG_VERSION_STR=$(psql_as "$BENCH_DB" -At -c "SELECT split_part(version(), ' on ', 1)")
	section "extension"
	bench_choose_device "$DEVICE"
	DEVICE_NAME=$(psql_as "$BENCH_DB" -At -c "SELECT CASE WHEN '$BENCH_DEVICE' = 'cpu' THEN 'CPU device'
		ELSE coalesce((SELECT name FROM gpuagg_devices() d WHERE d.usable ORDER BY 1 LIMIT 1), '?') END" 2>/dev/null || echo '?')
	SERVICE_TEXT=""
	if has_setting gpuagg.device_host; then
		SERVICE_TEXT="gpuagg.service $(psql_as "$BENCH_DB" -At -c "SELECT coalesce(current_setting('gpuagg.service', true), '-')")"
		SERVICE_TEXT="$SERVICE_TEXT, gpuagg.device_host $(psql_as "$BENCH_DB" -At -c "SHOW gpuagg.device_host") (gpuagg mode)"
	else
		NOTES+=("this gpuagg has no GPU service settings (gpuagg.device_host): every session opens the device itself")
	fi
	probe_extras
	section "data"
	make_table
	section "modes"
	rm -f "$OUT/load.csv" "$OUT/load.txt" "$OUT/load.png" "$OUT"/load-*.sql "$OUT"/logs/pgbench-*.log "$OUT"/logs/gpu-*-*.csv
	check_modes
	if [ "$FIRST_RUNS" -gt 0 ]; then
		section "first query on a new connection ($FIRST_RUNS per mode)"
		first_queries
	fi
	if [ "$CONNECT_CLIENTS" -gt 0 ]; then
		section "pgbench -C, $CONNECT_CLIENTS clients"
		for m in $MODES; do run_point "$m" "$CONNECT_CLIENTS" -C; done
	fi
	for c in $CLIENTS; do
		section "pgbench, $c client(s)"
		for m in $MODES; do run_point "$m" "$c"; done
		log "elapsed $(elapsed_since "$T_START")s"
	done
	write_csv
	print_results
	draw_chart
	REPORTED=1
	section "done in $(elapsed_since "$T_START")s"
	if [ "$FAILURES" -gt 0 ]; then
		log "$FAILURES problem(s): a transaction failed, a client stopped on an error, a mode could not run" \
			"or an answer differs (above, and in $OUT/load.txt)"
		exit 1
	fi
	log "no failed transaction"
}

# Run main unless sourced (sourcing lets a test reuse the functions).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
