#!/usr/bin/env bash
# test/demo.sh - set everything up and run the gpuagg demo: the db-benchmark group-by
# queries (BENCHMARKS.md section 1) on native PostgreSQL (serial and parallel) and on
# gpuagg, with every gpuagg answer checked against native PostgreSQL's.
#
#   bash test/demo.sh
#
# As root on a fresh Debian 12: installs PostgreSQL 15 (GPUAGG_PG_MAJOR) + headers + a C
# toolchain if missing, builds and installs gpuagg, starts a throwaway cluster as an unprivileged
# user, generates table x, times each query, prints a table and two EXPLAIN ANALYZEs.
# With PG_CONFIG=/path/to/pg_config it uses that PostgreSQL instead (no apt).
#
# Environment:
#   ROWS=10000000        rows of table x (1e8 for headline numbers on a big host)
#   QUERIES="q1 ... q10" queries to run (default q1 q2 q3 q4 q5 q6 q7 q9 q10)
#   MODES="serial parallel gpuagg"   which of the three ways to run each query; gpuagg
#                        runs with gpuagg.force = on, so that it measures GpuHashAgg
#                        itself; a label "(planner: native)" says the planner would not
#                        pick GpuHashAgg unforced (often: native parallel looks cheaper)
#   RUNS=3               timed runs per query and mode, after one warm-up; median reported
#   GPUAGG_DEMO_DEVICE   gpu|cpu (default: gpu if gpuagg_devices() lists a usable GPU)
#   GPUAGG_DEMO_OUT      directory that receives demo.csv and explain.txt
#   SHARED_BUFFERS_MB, WORK_MEM_MB, GPUAGG_EXTRA_CONF, KEEP_CLUSTER=1: see test/lib/common.sh
#
# Timing: each query q runs as `SELECT * FROM (q) s OFFSET <max>` in one psql session
# per mode, wall time from psql's \timing: every output column is computed, no row
# travels to the client, and nothing above q aggregates (`SELECT count(*) FROM (q) s`
# would let the planner drop the aggregates; `count(s)` would add an aggregate that
# gpuagg.force moves onto gpuagg too). The exit status is nonzero when an answer
# differs from native PostgreSQL's or a query fails.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=test/lib/common.sh
. test/lib/common.sh

ROWS=${ROWS:-10000000}
QUERIES=${QUERIES:-q1 q2 q3 q4 q5 q6 q7 q9 q10}
MODES=${MODES:-serial parallel gpuagg}
RUNS=${RUNS:-3}
K=100
CORES=$(ncores)
SINK_OFFSET=9223372036854775807
DEVICE=""
FAILURES=0

declare -A Q_SQL Q_KEYS RESULT_T RESULT_GROUPS RESULT_MATCH RESULT_LABEL RESULT_ONGPU
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

# Check the environment knobs.
check_args() {
	local q m
	[ $# -eq 0 ] || { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0; }
	case "$ROWS" in '' | *[!0-9]*) die "ROWS must be a positive integer, not '$ROWS'" ;; esac
	[ "$ROWS" -gt 0 ] || die "ROWS must be positive"
	case "$RUNS" in '' | *[!0-9]* | 0) die "RUNS must be a positive integer, not '$RUNS'" ;; esac
	for q in $QUERIES; do
		[ -n "${Q_SQL[$q]:-}" ] || die "unknown query '$q' in QUERIES (known: ${!Q_SQL[*]})"
	done
	for m in $MODES; do
		case "$m" in serial | parallel | gpuagg) ;; *) die "unknown mode '$m' in MODES" ;; esac
	done
}

# Print the SET statements of a mode (serial, parallel, gpuagg).
mode_settings() {
	case "$1" in
		serial) echo "SET gpuagg.enabled = off; SET max_parallel_workers_per_gather = 0;" ;;
		parallel) echo "SET gpuagg.enabled = off; SET max_parallel_workers_per_gather = $CORES;" ;;
		gpuagg)
			# forced, so that the column measures GpuHashAgg itself; what the
			# planner picks unforced is reported separately (unforced mode)
			echo "SET gpuagg.enabled = on; SET gpuagg.device = '$DEVICE';" \
				"SET gpuagg.force = on; SET max_parallel_workers_per_gather = $CORES;"
			;;
		unforced)
			echo "SET gpuagg.enabled = on; SET gpuagg.device = '$DEVICE';" \
				"SET gpuagg.force = off; SET max_parallel_workers_per_gather = $CORES;"
			;;
	esac
}

# Create the extension and choose the device (GPUAGG_DEMO_DEVICE, else a usable GPU, else cpu).
setup_extension() {
	local ngpu
	psql_as postgres -q -c "CREATE EXTENSION gpuagg"
	psql_as postgres -c "SELECT * FROM gpuagg_devices()"
	ngpu=$(count_usable_gpus postgres)
	if [ -n "${GPUAGG_DEMO_DEVICE:-}" ]; then
		case "$GPUAGG_DEMO_DEVICE" in cpu | gpu) DEVICE=$GPUAGG_DEMO_DEVICE ;;
			*) die "GPUAGG_DEMO_DEVICE must be cpu or gpu" ;; esac
	elif [ "$ngpu" -gt 0 ]; then
		DEVICE=gpu
	else
		DEVICE=cpu
	fi
	if [ "$DEVICE" = cpu ]; then
		log "gpuagg runs on the CPU device (no usable GPU listed${GPUAGG_DEMO_DEVICE:+, or GPUAGG_DEMO_DEVICE=cpu}):" \
			"gpuagg.force = on, since the planner would not choose the CPU device by itself"
	else
		log "gpuagg runs on the GPU ($ngpu usable GPU(s) listed by gpuagg_devices())"
	fi
}

# Generate table x (BENCHMARKS.md section 1, no NULLs) with ROWS rows, vacuum, analyze and prewarm it.
generate_table() {
	local nk t0 progress_pid size
	nk=$((ROWS / K))
	if [ "$nk" -lt 1 ]; then nk=1; fi
	log "generating table x: $ROWS rows, K=$K, id3/id6 over $nk values (setseed(0.42): reproducible)"
	t0=$(now_s)
	(
		while sleep 15; do
			log "  ... $(du -sm "$CLUSTER_DIR/data/base" 2>/dev/null | cut -f1) MB written (expect about $((ROWS / 11000)) MB)"
		done
	) &
	progress_pid=$!
	track_bg_pid "$progress_pid"
	# CREATE and INSERT in one transaction: with wal_level = minimal nothing is WAL-logged.
	# The series is a target-list SRF in a subquery so that it streams (a FROM-clause
	# function would be materialized first).
	psql_as postgres -q -o /dev/null <<SQL
SELECT setseed(0.42);
BEGIN;
CREATE TABLE x (id1 text, id2 text, id3 text, id4 int4, id5 int4, id6 int4, v1 int4, v2 int4, v3 float8);
INSERT INTO x
SELECT 'id' || lpad((1 + floor(random() * $K))::int::text, 3, '0'),
       'id' || lpad((1 + floor(random() * $K))::int::text, 3, '0'),
       'id' || lpad((1 + floor(random() * $nk))::int8::text, 10, '0'),
       (1 + floor(random() * $K))::int4,
       (1 + floor(random() * $K))::int4,
       (1 + floor(random() * $nk))::int4,
       (1 + floor(random() * 5))::int4,
       (1 + floor(random() * 15))::int4,
       floor(random() * 100000000) / 1000000
FROM (SELECT generate_series(1, $ROWS::int8) AS i) g;
COMMIT;
SQL
	kill "$progress_pid" 2>/dev/null || true
	wait "$progress_pid" 2>/dev/null || true
	log "inserted in $(elapsed_since "$t0")s; VACUUM (FREEZE, ANALYZE)"
	psql_as postgres -q -c "VACUUM (FREEZE, ANALYZE) x" \
		-c "ALTER TABLE x SET (parallel_workers = $CORES)"
	if [ "$(psql_as postgres -At -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_prewarm'")" = 1 ]; then
		psql_as postgres -q -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" \
			-c "SELECT pg_prewarm('x')" >/dev/null
		log "pg_prewarm('x') done"
	else
		log "pg_prewarm is not available: the warm-up runs bring x into shared_buffers"
	fi
	size=$(psql_as postgres -At -c "SELECT pg_size_pretty(pg_table_size('x')) || ' (shared_buffers ' || current_setting('shared_buffers') || ')'")
	log "table x ready in $(elapsed_since "$t0")s: $size"
	if [ "$(psql_as postgres -At -c "SELECT pg_table_size('x') > pg_size_bytes(current_setting('shared_buffers'))")" = t ]; then
		warn "x is larger than shared_buffers: timings include reads from the OS cache"
	fi
}

# Print the statement that times query $1: all of it computed, no row returned.
timed_sql() { echo "SELECT * FROM (${Q_SQL[$1]}) s OFFSET $SINK_OFFSET;"; }

# Print the number of groups of query $1 (natively; unused aggregates are not computed).
count_groups() {
	psql_as postgres -At <<<"$(mode_settings parallel)
SELECT count(*) FROM (${Q_SQL[$1]}) s;" | tail -n 1
}

# Print "t1 t2 ..." (seconds) for query $1 in mode $2: one warm-up, then RUNS timed runs.
time_query() {
	local q=$1 mode=$2 stmt i script out
	stmt=$(timed_sql "$q")
	script="$(mode_settings "$mode")
\\timing on"
	for i in $(seq 0 "$RUNS"); do
		script="$script
$stmt"
	done
	out=$(psql_as postgres -At <<<"$script" 2>&1) || { printf '%s\n' "$out" >&2; return 1; }
	# one "Time: 123.456 ms" line per statement; the first is the warm-up
	awk '/^Time: / { t[nt++] = $2 / 1000 }
		END { for (i = 1; i < nt; i++) printf "%s%.4f", (i > 1 ? " " : ""), t[i]; printf "\n" }' <<<"$out"
}

# Print the median of the numbers given as arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.4f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Whether EXPLAIN of query $1 under the settings of mode $2 (default gpuagg) shows GpuHashAgg.
uses_gpuagg() {
	local plan
	plan=$(psql_as postgres -At <<<"$(mode_settings "${2:-gpuagg}")
EXPLAIN (COSTS OFF) $(timed_sql "$1")") || true
	case "$plan" in *GpuHashAgg*) return 0 ;; *) return 1 ;; esac
}

# Print "yes", or what differs, comparing query $1's gpuagg answer with native's (mode $2).
compare_answers() {
	local q=$1 ref=$2 cols keys c on="" cond="" out k
	psql_as postgres -q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS public.demo_ans_ref, public.demo_ans_gpu" 2>/dev/null
	psql_as postgres -q <<<"$(mode_settings "$ref")
CREATE UNLOGGED TABLE public.demo_ans_ref AS ${Q_SQL[$q]};" >/dev/null || { echo "ERROR (native)"; return 0; }
	psql_as postgres -q <<<"$(mode_settings gpuagg)
CREATE UNLOGGED TABLE public.demo_ans_gpu AS ${Q_SQL[$q]};" >/dev/null || { echo "ERROR (gpuagg)"; return 0; }
	keys=" ${Q_KEYS[$q]} "
	for k in ${Q_KEYS[$q]}; do
		on="${on:+$on AND }r.$k = g.$k"
	done
	# value columns: exact, except floats: equal to about 9 significant digits (relative
	# 1e-9), where values under 1e-3 of the column's largest are compared to 1e-12 of that
	# largest (a corr() near 0 is all rounding noise: native serial and parallel differ)
	cols=$(psql_as postgres -At -F ' ' -c "SELECT attname, format_type(atttypid, atttypmod)
		FROM pg_attribute WHERE attrelid = 'public.demo_ans_ref'::regclass AND attnum > 0 ORDER BY attnum" |
		awk '{ print $1 ":" ($2 ~ /^(double|real)/ ? "float" : "exact") }')
	for c in $cols; do
		k=${c%%:*}
		case "$keys" in *" $k "*) continue ;; esac
		if [ "${c#*:}" = float ]; then
			cond="${cond:+$cond AND }(r.$k IS NOT DISTINCT FROM g.$k OR abs(r.$k - g.$k) <= 1e-9 *
				greatest(abs(r.$k), abs(g.$k), 1e-3 * (SELECT max(abs($k)) FROM public.demo_ans_ref)))"
		else
			cond="${cond:+$cond AND }r.$k IS NOT DISTINCT FROM g.$k"
		fi
	done
	out=$(psql_as postgres -At -F ' ' <<<"SET max_parallel_workers_per_gather = $CORES;
SELECT (SELECT count(*) FROM public.demo_ans_ref), (SELECT count(*) FROM public.demo_ans_gpu),
       count(*) FILTER (WHERE r.present IS NULL OR g.present IS NULL),
       count(*) FILTER (WHERE r.present AND g.present AND NOT (${cond:-true}))
FROM (SELECT *, true AS present FROM public.demo_ans_ref) r
FULL JOIN (SELECT *, true AS present FROM public.demo_ans_gpu) g ON $on;") || out=""
	psql_as postgres -q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS public.demo_ans_ref, public.demo_ans_gpu" || true
	# shellcheck disable=SC2046  # split the four numbers
	set -- $(printf '%s\n' "$out" | grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9]+$' || true)
	if [ $# -ne 4 ]; then
		echo "ERROR (comparison failed)"
	elif [ "$1" = "$2" ] && [ "$3" = 0 ] && [ "$4" = 0 ]; then
		echo yes
	else
		echo "NO (native $1 rows, gpuagg $2, unmatched $3, differing $4)"
	fi
}

# Run query $1 in every mode, check its answer, and record the results.
bench_query() {
	local q=$1 mode res t ref
	section "$q: ${Q_SQL[$q]}"
	RESULT_GROUPS[$q]=$(count_groups "$q") || RESULT_GROUPS[$q]=error
	if ! uses_gpuagg "$q"; then
		RESULT_ONGPU[$q]=no
		RESULT_LABEL[$q]="$q (native: not supported yet)"
		log "$q: EXPLAIN shows no GpuHashAgg even with gpuagg.force: it runs natively"
	elif uses_gpuagg "$q" unforced; then
		RESULT_ONGPU[$q]=yes
		RESULT_LABEL[$q]=$q
		log "$q: the planner chooses GpuHashAgg by cost"
	else
		RESULT_ONGPU[$q]=forced
		RESULT_LABEL[$q]="$q (planner: native)"
		log "$q: GpuHashAgg runs under gpuagg.force; unforced, the planner prefers the native plan"
	fi
	for mode in $MODES; do
		if res=$(time_query "$q" "$mode"); then
			# shellcheck disable=SC2086  # split the run times
			t=$(median $res)
			RESULT_T[$q.$mode]=$t
			log "$q $mode: $res s -> median $t s (${RESULT_GROUPS[$q]} groups)"
		else
			RESULT_T[$q.$mode]=error
			FAILURES=$((FAILURES + 1))
			log "$q $mode: ERROR (above)"
		fi
	done
	case " $MODES " in
		*" gpuagg "*)
			ref=parallel
			case " $MODES " in *" parallel "*) ;; *) ref=serial ;; esac
			RESULT_MATCH[$q]=$(compare_answers "$q" "$ref")
			log "$q answers match native ($ref): ${RESULT_MATCH[$q]}"
			if [ "${RESULT_MATCH[$q]}" != yes ]; then FAILURES=$((FAILURES + 1)); fi
			;;
		*) RESULT_MATCH[$q]="-" ;;
	esac
}

# Print a/b with one decimal and an x, or "-" when either is not a number.
ratio() {
	awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.1fx", a / b; else printf "-" }'
}

# Print a/b with three decimals, or nothing when either is not a number (for the CSV).
ratio_num() {
	awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.3f", a / b }'
}

# Print the results table; write demo.csv to GPUAGG_DEMO_OUT when set.
print_results() {
	local q s p g fmt csv=""
	fmt='%-32s %10s %16s %18s %10s %18s %12s  %s\n'
	section "results: $ROWS rows, $CORES cores, gpuagg device: $DEVICE (median of $RUNS runs, seconds)"
	# shellcheck disable=SC2059  # the format is a variable on purpose
	printf "$fmt" query groups "native serial s" "native parallel s" "gpuagg s" "speedup vs serial" "vs parallel" "answers match"
	for q in $QUERIES; do
		s=${RESULT_T[$q.serial]:--}
		p=${RESULT_T[$q.parallel]:--}
		g=${RESULT_T[$q.gpuagg]:--}
		# shellcheck disable=SC2059
		printf "$fmt" "${RESULT_LABEL[$q]}" "${RESULT_GROUPS[$q]:--}" "$s" "$p" "$g" \
			"$(ratio "$s" "$g")" "$(ratio "$p" "$g")" "${RESULT_MATCH[$q]:--}"
		csv="$csv$q,\"${RESULT_LABEL[$q]}\",$ROWS,${RESULT_GROUPS[$q]:-},$DEVICE,${RESULT_ONGPU[$q]},$s,$p,$g,$(ratio_num "$s" "$g"),$(ratio_num "$p" "$g"),\"${RESULT_MATCH[$q]:-}\"
"
	done
	if [ -n "${GPUAGG_DEMO_OUT:-}" ]; then
		mkdir -p "$GPUAGG_DEMO_OUT"
		{
			echo "query,label,rows,groups,device,gpuagg_in_plan,native_serial_s,native_parallel_s,gpuagg_s,speedup_vs_serial,speedup_vs_parallel,answers_match"
			printf '%s' "$csv"
		} >"$GPUAGG_DEMO_OUT/demo.csv"
		log "wrote $GPUAGG_DEMO_OUT/demo.csv"
	fi
}

# Print EXPLAIN (ANALYZE, VERBOSE) of q1 and q3 under gpuagg settings (also to GPUAGG_DEMO_OUT/explain.txt).
print_explains() {
	local q out all=""
	for q in q1 q3; do
		case " $QUERIES " in *" $q "*) ;; *) continue ;; esac
		section "EXPLAIN (ANALYZE, VERBOSE) $q under gpuagg (device $DEVICE)"
		out=$(psql_as postgres <<<"$(mode_settings gpuagg)
EXPLAIN (ANALYZE, VERBOSE) ${Q_SQL[$q]};" 2>&1 | grep -v '^SET$') || true
		printf '%s\n' "$out"
		all="$all== $q: ${Q_SQL[$q]}
$out
"
	done
	if [ -n "${GPUAGG_DEMO_OUT:-}" ] && [ -n "$all" ]; then
		printf '%s' "$all" >"$GPUAGG_DEMO_OUT/explain.txt"
	fi
}

# Set up, generate the data, run the queries, report.
main() {
	local q t0
	check_args "$@"
	install_exit_trap
	t0=$(now_s)
	log "gpuagg demo: ROWS=$ROWS, queries: $QUERIES; modes: $MODES; $CORES cores, $(mem_total_mb) MB RAM"
	section "packages"
	ensure_packages
	section "build+install"
	build_and_install
	section "cluster"
	start_cluster demo $((ROWS * 100))
	psql_as postgres -At -c "SELECT 'work_mem ' || current_setting('work_mem') || ', max_parallel_workers_per_gather ' ||
		current_setting('max_parallel_workers_per_gather') || ', jit ' || CASE WHEN pg_jit_available() THEN current_setting('jit') ELSE 'unavailable' END"
	section "extension"
	setup_extension
	section "data"
	generate_table
	for q in $QUERIES; do
		bench_query "$q"
	done
	print_results
	print_explains
	section "done in $(elapsed_since "$t0")s"
	if [ "$FAILURES" -gt 0 ]; then
		log "$FAILURES problem(s): a query failed or an answer differs from native PostgreSQL (above)"
		exit 1
	fi
	log "every gpuagg answer matches native PostgreSQL"
}

# Run main unless sourced (sourcing lets a test reuse the functions).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
