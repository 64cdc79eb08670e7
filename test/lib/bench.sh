#!/usr/bin/env bash
# test/lib/bench.sh - shared pieces of test/demo.sh and test/bench/run.sh (sourced after
# test/lib/common.sh, not run).
#
# Provides: the three ways of running a query (native serial, native parallel, gpuagg)
# and the choice of the gpuagg device; timing a statement in one psql session (warm-up
# runs, then timed runs, from psql's \timing); reading a plan (gpuagg nodes, native
# aggregates and joins, gpuagg's reasons for not offering GpuHashAgg); checking a gpuagg
# answer against native PostgreSQL's; generating tables in concurrent chunks with
# progress (test/bench/gen_*.sql), and the group-by table x; median and ratios.
#
# Globals read here (the caller sets them):
#   BENCH_DEVICE    gpu|cpu|auto: gpuagg.device of the gpuagg modes (bench_choose_device)
#   BENCH_WORKERS   max_parallel_workers_per_gather of the parallel modes (default: cores)
#   BENCH_RUNS      timed runs per query and mode (default 3)
#   BENCH_WARMUP    untimed runs before them (default 1)
#   BENCH_GEN_JOBS  concurrent sessions that generate data (default: cores)
#   BENCH_DB        database (default postgres)
#   BENCH_DEADLINE  seconds since the epoch after which bench_time stops its session (empty: none)
#   BENCH_CPU_FILE  when set, bench_time appends "label mode cpu_s" to it: the CPU seconds per
#                   timed run of every process of the cluster (bench_cluster_cpu_script)

# shellcheck disable=SC2034  # globals set here for the callers: BENCH_SINK_OFFSET, Q_SQL, CMP_*
BENCH_SQL_DIR="$GA_ROOT/test/bench"
BENCH_DEVICE=${BENCH_DEVICE:-cpu}
BENCH_WORKERS=${BENCH_WORKERS:-$(ncores)}
BENCH_RUNS=${BENCH_RUNS:-3}
BENCH_WARMUP=${BENCH_WARMUP:-1}
BENCH_GEN_JOBS=${BENCH_GEN_JOBS:-$(ncores)}
BENCH_DB=${BENCH_DB:-postgres}
BENCH_DEADLINE=${BENCH_DEADLINE:-}
BENCH_SINK_OFFSET=9223372036854775807

# ---------------------------------------------------------------- modes and device

# Print the SET statements of a mode: serial, parallel (native), gpuagg (forced) or unforced.
bench_mode_settings() {
	case "$1" in
		serial) echo "SET gpuagg.enabled = off; SET max_parallel_workers_per_gather = 0;" ;;
		parallel) echo "SET gpuagg.enabled = off; SET max_parallel_workers_per_gather = $BENCH_WORKERS;" ;;
		gpuagg)
			# forced, so that the column measures gpuagg itself; what the planner picks
			# unforced is asked separately (unforced)
			echo "SET gpuagg.enabled = on; SET gpuagg.device = '$BENCH_DEVICE';" \
				"SET gpuagg.force = on; SET max_parallel_workers_per_gather = $BENCH_WORKERS;"
			;;
		backend)
			# as gpuagg, with the session opening the device itself instead of asking
			# the GPU service: the path without the service, for comparison
			bench_mode_settings gpuagg
			echo "SET gpuagg.device_host = backend;"
			;;
		rows | pages)
			# as gpuagg without workers, so that the direct scan reads the table, with
			# gpuagg.page_scan off (it deforms tuples) or on (the device deforms pages)
			bench_mode_settings gpuagg
			echo "SET max_parallel_workers_per_gather = 0;" \
				"SET gpuagg.page_scan = $([ "$1" = pages ] && echo on || echo off);"
			;;
		ppages)
			# as gpuagg, with gpuagg.page_scan on: the workers send pages
			bench_mode_settings gpuagg
			echo "SET gpuagg.page_scan = on;"
			;;
		unforced)
			# (BENCH_PLAN_DEVICE=gpu: what the planner picks for a GPU, asked on a machine
			# without one; only EXPLAIN may run so)
			echo "SET gpuagg.enabled = on; SET gpuagg.device = '${BENCH_PLAN_DEVICE:-$BENCH_DEVICE}';" \
				"SET gpuagg.force = off; SET max_parallel_workers_per_gather = $BENCH_WORKERS;"
			;;
		*) die "bench_mode_settings: unknown mode '$1'" ;;
	esac
}

# Create the extension and set BENCH_DEVICE: $1 (cpu|gpu) when given, else gpu if gpuagg_devices() lists a usable GPU, else cpu.
bench_choose_device() {
	local requested=${1:-} ngpu
	psql_as "$BENCH_DB" -q -c "CREATE EXTENSION IF NOT EXISTS gpuagg"
	psql_as "$BENCH_DB" -c "SELECT * FROM gpuagg_devices()"
	ngpu=$(count_usable_gpus "$BENCH_DB")
	case "$requested" in
		cpu | gpu | auto) BENCH_DEVICE=$requested ;;
		"") if [ "$ngpu" -gt 0 ]; then BENCH_DEVICE=gpu; else BENCH_DEVICE=cpu; fi ;;
		*) die "the gpuagg device must be cpu, gpu or auto, not '$requested'" ;;
	esac
	if [ "$BENCH_DEVICE" = auto ]; then
		log "gpuagg runs with gpuagg.device = auto ($ngpu usable GPU(s) listed): the GPU where one" \
			"is usable and has room, else the CPU device"
	elif [ "$BENCH_DEVICE" = cpu ]; then
		log "gpuagg runs on the CPU device (${requested:+asked for; }$ngpu usable GPU(s) listed):" \
			"gpuagg.force = on, so that every supported query measures the CPU device (unforced, the planner chooses by cost)"
	else
		log "gpuagg runs on the GPU ($ngpu usable GPU(s) listed by gpuagg_devices())"
	fi
}

# Set Q_SQL[q] and Q_KEYS[q] (the caller declares both with declare -A) for the group-by
# queries q1 .. q10 of db-benchmark (over table x; no q8 in db-benchmark's list).
bench_groupby_queries() {
	declare -gA Q_SQL Q_KEYS
	Q_SQL[q1]="SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1"
	Q_KEYS[q1]="id1"
	Q_SQL[q2]="SELECT id1, id2, sum(v1) AS v1 FROM x GROUP BY id1, id2"
	Q_KEYS[q2]="id1 id2"
	Q_SQL[q3]="SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM x GROUP BY id3"
	Q_KEYS[q3]="id3"
	Q_SQL[q4]="SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4"
	Q_KEYS[q4]="id4"
	Q_SQL[q5]="SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6"
	Q_KEYS[q5]="id6"
	Q_SQL[q6]="SELECT id4, id5, percentile_cont(0.5) WITHIN GROUP (ORDER BY v3) AS median_v3, stddev(v3) AS sd_v3 FROM x GROUP BY id4, id5"
	Q_KEYS[q6]="id4 id5"
	Q_SQL[q7]="SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3"
	Q_KEYS[q7]="id3"
	Q_SQL[q9]="SELECT id2, id4, power(corr(v1, v2), 2) AS r2 FROM x GROUP BY id2, id4"
	Q_KEYS[q9]="id2 id4"
	Q_SQL[q10]="SELECT id1, id2, id3, id4, id5, id6, sum(v3) AS v3, count(*) AS count FROM x GROUP BY id1, id2, id3, id4, id5, id6"
	Q_KEYS[q10]="id1 id2 id3 id4 id5 id6"
}

# ---------------------------------------------------------------- timing

# Write to $1 a script that prints the CPU clock ticks the cluster of postmaster pid $2 has
# used so far: the postmaster's own and those of its children it has reaped (parallel
# workers, ended backends), plus those of its live children (backends, the GPU service,
# the background processes).  /proc/PID/stat's command name may hold spaces and
# parentheses, so the fields are counted from its last ')'.
bench_cluster_cpu_script() {
	cat >"$1" <<EOS
#!/bin/sh
# the CPU clock ticks of the processes of the cluster of postmaster $2
sleep 0.2	# reaping a parallel worker that just exited
cat /proc/[0-9]*/stat 2>/dev/null | awk -v pm=$2 '{
	p = 0; r = \$0
	while ((k = index(substr(r, p + 1), ")")) > 0) p += k
	n = split(substr(r, p + 2), f, " ")
	if (\$1 == pm) t += f[12] + f[13] + f[14] + f[15]
	else if (f[2] == pm) t += f[12] + f[13]
} END { printf "%d\\n", t }'
EOS
	chmod a+rx "$1"
}

# Print the CPU seconds per run from the two tick counts in file $1 and the runs $2.
bench_cpu_per_run() {
	awk -v n="$2" -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" \
		'{ v[NR] = $1 } END { if (NR == 2 && n > 0) printf "%.3f\n", (v[2] - v[1]) / hz / n }' "$1"
}

# Print "t1 t2 ..." (seconds) of statement $4 in mode $2 with session SQL $3 (search_path,
# statement_timeout ...): BENCH_WARMUP untimed runs, then BENCH_RUNS timed ones, in one psql
# session; runs of a second or more are logged (stderr) as they finish, labelled $1. Exit
# status 1 on an error (its message on stderr), 2 when statement_timeout or BENCH_DEADLINE
# cancelled it.
bench_time() {
	local label=$1 mode=$2 session=$3 stmt=$4 i script errf out rc=0 total left wrap=()
	local cpu_script="" cpu_ticks="" cpu
	total=$((BENCH_WARMUP + BENCH_RUNS))
	# line-buffered, so that each run is logged when it ends; SIGINT (psql cancels the
	# query) at the deadline
	if command -v stdbuf >/dev/null 2>&1; then wrap=(stdbuf -oL); fi
	if [ -n "$BENCH_DEADLINE" ] && command -v timeout >/dev/null 2>&1; then
		left=$((BENCH_DEADLINE - $(date +%s)))
		if [ "$left" -lt 1 ]; then left=1; fi
		wrap=(timeout -s INT -k 30 "$left" "${wrap[@]}")
	fi
	script="$(bench_mode_settings "$mode")
$session
\\timing on"
	if [ -n "${BENCH_CPU_FILE:-}" ]; then
		cpu_script=$(mktemp "${GPUAGG_TMPDIR:-/tmp}/gpuagg-cpu.XXXXXX")
		cpu_ticks=$(mktemp "${GPUAGG_TMPDIR:-/tmp}/gpuagg-ticks.XXXXXX")
		chmod a+rw "$cpu_ticks"
		bench_cluster_cpu_script "$cpu_script" "$(head -n 1 "$CLUSTER_DIR/data/postmaster.pid")"
	fi
	for i in $(seq 1 "$total"); do
		if [ -n "$cpu_script" ] && [ "$i" = $((BENCH_WARMUP + 1)) ]; then
			script="$script
\\! $cpu_script >> $cpu_ticks"
		fi
		script="$script
$stmt"
	done
	if [ -n "$cpu_script" ]; then
		script="$script
\\! $cpu_script >> $cpu_ticks"
	fi
	errf=$(mktemp "${GPUAGG_TMPDIR:-/tmp}/gpuagg-bench.XXXXXX")
	# one "Time: 123.456 ms" line per statement; the first BENCH_WARMUP are the warm-up
	out=$(as_pguser "${wrap[@]}" "$PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 -h "$CLUSTER_DIR" -p "$PGPORT_CLUSTER" \
		-d "$BENCH_DB" -At <<<"$script" 2>"$errf" | bench_time_lines "$BENCH_WARMUP" "$total" "$label $mode") || rc=$?
	# cut off at the deadline after its last run: the runs count
	if [ "$rc" -ne 0 ] && [ "$(wc -w <<<"$out")" -eq "$BENCH_RUNS" ]; then rc=0; fi
	if [ "$rc" -ne 0 ] || [ -z "$out" ]; then
		grep -v '^$' "$errf" | tail -n 5 >&2
		if [ -n "$cpu_script" ]; then rm -f "$cpu_script" "$cpu_ticks"; fi
		if grep -q -e 'statement timeout' -e 'canceling statement due to user request' "$errf"; then rc=2; else rc=1; fi
		rm -f "$errf"
		return "$rc"
	fi
	rm -f "$errf"
	if [ -n "$cpu_script" ]; then
		cpu=$(bench_cpu_per_run "$cpu_ticks" "$BENCH_RUNS")
		if [ -n "$cpu" ]; then printf '%s %s %s\n' "$label" "$mode" "$cpu" >>"$BENCH_CPU_FILE"; fi
		rm -f "$cpu_script" "$cpu_ticks"
	fi
	printf '%s\n' "$out"
}

# Read psql's output: print the seconds of the "Time:" lines after the first $1 (warm-up),
# space-separated; log those of a second or more to stderr as they come ($2 runs in all,
# labelled $3). A shell loop, since awk may read its input in blocks.
bench_time_lines() {
	local w=$1 n=$2 label=$3 line k=0 t times=""
	while IFS= read -r line; do
		case "$line" in
			"Time: "*)
				k=$((k + 1))
				t=$(awk -v ms="${line#Time: }" 'BEGIN { split(ms, a, " "); printf "%.4f\n", a[1] / 1000 }')
				if awk -v t="$t" 'BEGIN { exit !(t >= 1) }'; then
					if [ "$k" -le "$w" ]; then
						log "  $label: warm-up $k/$w $t s" >&2
					else
						log "  $label: run $((k - w))/$((n - w)) $t s" >&2
					fi
				fi
				if [ "$k" -gt "$w" ]; then times="${times:+$times }$t"; fi
				;;
		esac
	done
	printf '%s\n' "$times"
}

# Print the median of the numbers given as arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.4f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Print a/b with one decimal (two below 1) and an x, or "-" when either is not a number.
ratio() {
	awk -v a="${1:-}" -v b="${2:-}" 'BEGIN {
		if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf (a / b < 1 ? "%.2fx" : "%.1fx"), a / b
		else printf "-" }'
}

# Print a/b with three decimals, or nothing when either is not a number (for CSV files).
ratio_num() {
	awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.3f", a / b }'
}

# ---------------------------------------------------------------- plans

# Print EXPLAIN (COSTS OFF) of statement $3 in mode $1 with session SQL $2, followed by the
# lines in which gpuagg says why it did not offer GpuHashAgg (client_min_messages = debug1).
bench_explain() {
	psql_as "$BENCH_DB" -At 2>&1 <<<"$(bench_mode_settings "$1")
$2
SET client_min_messages = debug1;
EXPLAIN (COSTS OFF) $3" | awk '!/^SET$/ && (!/^DEBUG:/ || /gpuagg/)' || true
}

# Print how many lines of plan text $1 match the extended regular expression $2.
bench_plan_count() { printf '%s\n' "$1" | grep -c -E "$2" || true; }

# Print gpuagg's distinct reasons, in plan text $1, for not offering GpuHashAgg ("; "-separated).
bench_plan_reasons() {
	printf '%s\n' "$1" | sed -n 's/.*gpuagg: GpuHashAgg not used: //p' | sort -u | paste -sd ';' - |
		sed 's/;/; /g'
}

# ---------------------------------------------------------------- answers

# Print the SQL condition "float values $1 and $2 are equal" (column $3 of bench.ans_ref gives the scale).
bench_float_equal() {
	echo "($1 IS NOT DISTINCT FROM $2 OR abs($1 - $2) <= 1e-9 * greatest(abs($1), abs($2),
		1e-3 * (SELECT max(abs($3)) FROM bench.ans_ref)))"
}

# Compare query $2's answer in gpuagg mode (or mode $5: ppages, backend ...) with its answer
# in native mode $4 (session SQL $1; $3: the key columns, unique in the answer, or "" to
# match rows by all non-float columns).
# Sets CMP_RESULT ("yes", "NO (...)", "ERROR (...)" or "not checked (statement timeout)"), CMP_ROWS (rows of the native answer)
# and CMP_FIRST (its first value). Float columns are equal to about 9 significant digits
# (relative 1e-9; values under 1e-3 of the column's largest are compared to 1e-12 of that
# largest: a corr() near 0 is rounding noise, native serial and parallel differ there);
# everything else exactly, NULL equal to NULL.
bench_compare() {
	local session=$1 sql=$2 keys=$3 ref=$4 checked=${5:-gpuagg} cols c k kq exact="" floats="" cond="" on="" out
	local part="" order="" aggs="" side mode err
	CMP_RESULT="ERROR (comparison failed)"
	CMP_ROWS=""
	CMP_FIRST=""
	psql_as "$BENCH_DB" -q -c "SET client_min_messages = warning" \
		-c "DROP TABLE IF EXISTS bench.ans_ref, bench.ans_gpu" -c "CREATE SCHEMA IF NOT EXISTS bench"
	for side in ref gpu; do
		if [ "$side" = ref ]; then mode=$ref; else mode=$checked; fi
		if ! err=$(psql_as "$BENCH_DB" -q 2>&1 >/dev/null <<<"$(bench_mode_settings "$mode")
$session
CREATE UNLOGGED TABLE bench.ans_$side AS $sql;"); then
			printf '%s\n' "$err" >&2
			case "$err" in
				*"statement timeout"*) CMP_RESULT="not checked (statement timeout)" ;;
				*) CMP_RESULT="ERROR ($mode: $(printf '%s\n' "$err" | grep -m1 ERROR | cut -c1-100))" ;;
			esac
			return 0
		fi
	done
	CMP_ROWS=$(psql_as "$BENCH_DB" -At -c "SELECT count(*) FROM bench.ans_ref")
	CMP_FIRST=$(psql_as "$BENCH_DB" -At -c "SELECT * FROM bench.ans_ref LIMIT 1" | cut -d '|' -f 1)
	# "quoted_name:float|exact" per column
	cols=$(psql_as "$BENCH_DB" -At -F ' ' -c "SELECT quote_ident(attname), format_type(atttypid, atttypmod)
		FROM pg_attribute WHERE attrelid = 'bench.ans_ref'::regclass AND attnum > 0 ORDER BY attnum" |
		awk '{ print $1 ":" ($2 ~ /^(double|real)/ ? "float" : "exact") }')
	for c in $cols; do
		k=${c%:*}
		if [ "${c##*:}" = float ]; then floats="$floats $k"; else exact="$exact $k"; fi
	done
	for k in $floats; do
		if [ -n "$keys" ]; then
			cond="${cond:+$cond AND }$(bench_float_equal "r.$k" "g.$k" "$k")"
		else
			kq="${k//\"/}"
			aggs="$aggs, min($k) AS \"${kq}_lo\", max($k) AS \"${kq}_hi\", count($k) AS \"${kq}_n\""
			cond="${cond:+$cond AND }(\"${kq}_n\" = 0 OR (\"${kq}_n\" = 2 AND
				$(bench_float_equal "\"${kq}_lo\"" "\"${kq}_hi\"" "$k")))"
		fi
	done
	if [ -n "$keys" ]; then
		for k in $keys; do on="${on:+$on AND }r.$k = g.$k"; done
		for k in $exact; do
			case " $keys " in *" $k "*) continue ;; esac
			cond="${cond:+$cond AND }r.$k IS NOT DISTINCT FROM g.$k"
		done
		out=$(psql_as "$BENCH_DB" -At -F ' ' <<<"SET max_parallel_workers_per_gather = $BENCH_WORKERS;
SELECT (SELECT count(*) FROM bench.ans_ref), (SELECT count(*) FROM bench.ans_gpu),
	count(*) FILTER (WHERE r.ga_present IS NULL OR g.ga_present IS NULL),
	count(*) FILTER (WHERE r.ga_present AND g.ga_present AND NOT (${cond:-true}))
FROM (SELECT *, true AS ga_present FROM bench.ans_ref) r
FULL JOIN (SELECT *, true AS ga_present FROM bench.ans_gpu) g ON $on;") || out=""
	else
		# rows matched by their exact columns, then by rank of their float columns
		for k in $exact; do part="${part:+$part, }$k"; done
		for k in $floats; do order="${order:+$order, }$k"; done
		out=$(psql_as "$BENCH_DB" -At -F ' ' <<<"SET max_parallel_workers_per_gather = $BENCH_WORKERS;
SELECT (SELECT count(*) FROM bench.ans_ref), (SELECT count(*) FROM bench.ans_gpu),
	count(*) FILTER (WHERE nr <> 1 OR ng <> 1),
	count(*) FILTER (WHERE nr = 1 AND ng = 1 AND NOT (${cond:-true}))
FROM (SELECT count(*) FILTER (WHERE side = 1) AS nr, count(*) FILTER (WHERE side = 2) AS ng $aggs
	FROM (SELECT 1 AS side, *, row_number() OVER (${part:+PARTITION BY $part} ${order:+ORDER BY $order}) AS ga_rn
		FROM bench.ans_ref
		UNION ALL
		SELECT 2, *, row_number() OVER (${part:+PARTITION BY $part} ${order:+ORDER BY $order})
		FROM bench.ans_gpu) u
	GROUP BY ${part:+$part, }ga_rn) m;") || out=""
	fi
	psql_as "$BENCH_DB" -q -c "SET client_min_messages = warning" \
		-c "DROP TABLE IF EXISTS bench.ans_ref, bench.ans_gpu" || true
	# shellcheck disable=SC2046  # split the four numbers
	set -- $(printf '%s\n' "$out" | grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9]+$' || true)
	if [ $# -ne 4 ]; then
		CMP_RESULT="ERROR (comparison failed)"
	elif [ "$1" = "$2" ] && [ "$3" = 0 ] && [ "$4" = 0 ]; then
		CMP_RESULT=yes
	else
		CMP_RESULT="NO (native $1 rows, gpuagg $2, unmatched $3, differing $4)"
	fi
}

# ---------------------------------------------------------------- data generation

# Run SQL file $1 with psql variables (the remaining arguments: name=value ...).
bench_sql_file() {
	local file=$1 a args=()
	shift
	for a in "$@"; do args+=(-v "$a"); done
	psql_as "$BENCH_DB" -q "${args[@]}" <"$file"
}

# Print the shell commands that fill part $3 of generator $1 in chunks of the 0-based
# (or with $5 = 1, 1-based) range of $4 numbers; more variables after $5. One chunk per
# 2^20 numbers at least, as many as BENCH_GEN_JOBS allows.
bench_chunk_jobs() {
	local file=$1 part=$2 total=$3 base=$4 n size lo hi i
	shift 4
	n=$(((total + 1048575) / 1048576))
	if [ "$n" -gt "$BENCH_GEN_JOBS" ]; then n=$BENCH_GEN_JOBS; fi
	if [ "$n" -lt 1 ]; then n=1; fi
	size=$(((total + n - 1) / n))
	for i in $(seq 0 $((n - 1))); do
		lo=$((i * size))
		hi=$((lo + size - 1))
		if [ "$hi" -ge "$total" ]; then hi=$((total - 1)); fi
		[ "$lo" -le "$hi" ] || continue
		printf 'bench_sql_file %q part=%q lo=%q hi=%q' "$file" "$part" $((lo + base)) $((hi + base))
		printf ' %q' "$@"
		printf '\n'
	done
}

# Forget background process $1 (ended): the EXIT trap must not signal its id, which may be reused.
bench_untrack_pid() {
	local p keep=()
	for p in "${GA_BG_PIDS[@]}"; do
		if [ "$p" != "$1" ]; then keep+=("$p"); fi
	done
	GA_BG_PIDS=("${keep[@]}")
}

# Run shell commands (arguments from $3 on) BENCH_GEN_JOBS at a time, logging progress every
# 15 s: "$1" names the step, $2 the MB it is expected to write (0: do not report MB). Dies
# with the failing command's output when one fails.
bench_run_jobs() {
	local label=$1 expect_mb=$2 dir t0 mon i=0 job pids=() p alive failed=0 total base_mb
	shift 2
	total=$#
	dir=$(mktemp -d "${GPUAGG_TMPDIR:-/tmp}/gpuagg-jobs.XXXXXX")
	t0=$(now_s)
	base_mb=$(du -sm "$CLUSTER_DIR/data/base" 2>/dev/null | cut -f1)
	(
		while sleep 15; do
			msg="  ... $label: $(find "$dir" -name '*.rc' | wc -l)/$total parts done"
			if [ "$expect_mb" -gt 0 ]; then
				msg="$msg, $(($(du -sm "$CLUSTER_DIR/data/base" 2>/dev/null | cut -f1) - base_mb)) of about $expect_mb MB written"
			fi
			log "$msg, $(elapsed_since "$t0")s"
		done
	) &
	mon=$!
	track_bg_pid "$mon"
	for job in "$@"; do
		while [ "${#pids[@]}" -ge "$BENCH_GEN_JOBS" ]; do
			wait -n "${pids[@]}" 2>/dev/null || true
			alive=()
			for p in "${pids[@]}"; do
				if kill -0 "$p" 2>/dev/null; then alive+=("$p"); fi
			done
			pids=("${alive[@]}")
		done
		i=$((i + 1))
		printf '%s\n' "$job" >"$dir/$i.cmd"
		(
			set +e
			eval "$job" >"$dir/$i.out" 2>&1
			echo $? >"$dir/$i.rc.tmp"
			mv "$dir/$i.rc.tmp" "$dir/$i.rc"
		) &
		pids+=("$!")
	done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	kill "$mon" 2>/dev/null || true
	wait "$mon" 2>/dev/null || true
	bench_untrack_pid "$mon"
	for i in $(seq 1 "$total"); do
		if [ "$(cat "$dir/$i.rc" 2>/dev/null)" != 0 ]; then
			failed=1
			warn "$label: failed: $(cat "$dir/$i.cmd")"
			tail -n 20 "$dir/$i.out" >&2 || true
		fi
	done
	rm -rf "$dir"
	[ "$failed" = 0 ] || die "$label failed (above)"
	log "$label: $total part(s) in $(elapsed_since "$t0")s"
}

# Freeze, analyze and prewarm tables $2... of schema $1 (concurrently); give those over 8 MB
# parallel_workers = BENCH_WORKERS, as native parallel plans of big tables get on a big host.
bench_finish_tables() {
	local schema=$1 t jobs=() prewarm
	shift
	for t in "$@"; do
		jobs+=("psql_as $BENCH_DB -q -c $(printf %q "VACUUM (FREEZE, ANALYZE) $schema.$t")")
	done
	bench_run_jobs "VACUUM (FREEZE, ANALYZE) $schema" 0 "${jobs[@]}"
	for t in "$@"; do
		psql_as "$BENCH_DB" -q -c "DO \$\$BEGIN IF pg_table_size('$schema.$t') > 8 * 1024 * 1024 THEN
			EXECUTE 'ALTER TABLE $schema.$t SET (parallel_workers = $BENCH_WORKERS)'; END IF; END\$\$"
	done
	prewarm=$(psql_as "$BENCH_DB" -At -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_prewarm'")
	if [ "$prewarm" = 1 ]; then
		psql_as "$BENCH_DB" -q -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm"
		for t in "$@"; do
			psql_as "$BENCH_DB" -q -o /dev/null -c "SELECT pg_prewarm('$schema.$t')"
		done
		log "$schema: pg_prewarm done ($*)"
	else
		log "pg_prewarm is not available: the warm-up runs bring the tables into shared_buffers"
	fi
	log "$schema: $(psql_as "$BENCH_DB" -At -c "SELECT pg_size_pretty(sum(pg_table_size(c.oid))) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$schema' AND c.relkind = 'r'")" \
		"in tables (shared_buffers $(psql_as "$BENCH_DB" -At -c "SHOW shared_buffers"))"
	if [ "$(psql_as "$BENCH_DB" -At -c "SELECT sum(pg_table_size(c.oid)) > pg_size_bytes(current_setting('shared_buffers'))
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN ('groupby', 'joins', 'tpch', '$schema') AND c.relkind = 'r'")" = t ]; then
		warn "the tables are larger than shared_buffers: timings include reads from the OS cache"
	fi
}

# Create the generators' helper functions (schema bench).
bench_helpers() { bench_sql_file "$BENCH_SQL_DIR/gen_common.sql"; }

# Generate the db-benchmark group-by table $1.x with $2 rows, ready to query.
bench_gen_groupby() {
	local schema=$1 rows=$2 nk jobs=()
	nk=$((rows / 100))
	if [ "$nk" -lt 1 ]; then nk=1; fi
	log "generating $schema.x: $rows rows, K=100, id3/id6 over $nk values ($(ncores) cores," \
		"up to $BENCH_GEN_JOBS sessions; values hashed from the row number: reproducible)"
	bench_helpers
	psql_as "$BENCH_DB" -q -c "SET client_min_messages = warning" -c "CREATE SCHEMA IF NOT EXISTS $schema"
	bench_sql_file "$BENCH_SQL_DIR/gen_groupby.sql" schema="$schema" rows="$rows" part=create
	mapfile -t jobs < <(bench_chunk_jobs "$BENCH_SQL_DIR/gen_groupby.sql" x "$rows" 1 schema="$schema" rows="$rows")
	bench_run_jobs "$schema.x" $((rows / 12500)) "${jobs[@]}"
	bench_finish_tables "$schema" x
}

# Print a python3 that can import matplotlib, or nothing.
find_matplotlib() {
	local py
	for py in ${PYTHON:-} python3 /usr/bin/python3 /usr/local/bin/python3; do
		if command -v "$py" >/dev/null 2>&1 && MPLBACKEND=Agg "$py" -c 'import matplotlib' >/dev/null 2>&1; then
			echo "$py"
			return 0
		fi
	done
}

# Print the commit the benchmark runs: GPUAGG_COMMIT when set (a copy of the tree
# whose .git is not the checkout's, such as a GPU host's), else git's HEAD, else "?".
bench_commit() {
	if [ -n "${GPUAGG_COMMIT:-}" ]; then
		echo "$GPUAGG_COMMIT"
	else
		git -C "$GA_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'
	fi
}
