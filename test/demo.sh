#!/usr/bin/env bash
# test/demo.sh - set everything up and run the gpuagg demo: the db-benchmark group-by
# queries (docs/benchmarks.md) on native PostgreSQL (serial and parallel) and on
# gpuagg, with every gpuagg answer checked against native PostgreSQL's.
#
#   bash test/demo.sh
#
# As root on a fresh Debian 12: installs PostgreSQL 15 (GPUAGG_PG_MAJOR) + headers + a C
# toolchain if missing, builds and installs gpuagg, starts a throwaway cluster as an unprivileged
# user, generates table x, times each query, prints a table and two EXPLAIN ANALYZEs
# (the pieces it shares with test/bench/run.sh are in test/lib/bench.sh).
# With PG_CONFIG=/path/to/pg_config it uses that PostgreSQL instead (no apt).
#
# Environment:
#   ROWS=10000000        rows of table x (1e7 notation accepted; 1e8 for headline numbers on a big host)
#   QUERIES="q1 ... q10" queries to run (default q1 q2 q3 q4 q5 q6 q7 q9 q10)
#   MODES="serial parallel gpuagg"   which of the three ways to run each query; gpuagg
#                        runs with gpuagg.force = on, so that it measures GpuHashAgg
#                        itself; a label "(planner: native)" says the planner would not
#                        pick GpuHashAgg unforced (often: native parallel looks cheaper)
#   RUNS=3               timed runs per query and mode, after one warm-up; median reported
#   GPUAGG_DEMO_DEVICE   gpu|cpu (default: gpu if gpuagg_devices() lists a usable GPU)
#   GPUAGG_DEMO_BUILD_GPU=1  build the GPU device even when `nvidia-smi -L` lists no GPU
#                        (by default such a machine builds the CPU device only: NVCC=,
#                        which skips minutes of compiling CUDA code it cannot run; an
#                        NVCC given in the environment is always followed)
#   GPUAGG_DEMO_OUT      directory that receives demo.csv and explain.txt
#   GPUAGG_INSTALL       system|private|auto (default auto: a private copy of PostgreSQL
#                        unless the system's gpuagg is missing or this checkout's)
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
# another checkout's or a package's gpuagg stays as it is (test/lib/common.sh)
export GPUAGG_INSTALL=${GPUAGG_INSTALL:-auto}
# shellcheck source=test/lib/bench.sh
. test/lib/bench.sh

ROWS=${ROWS:-10000000}
QUERIES=${QUERIES:-q1 q2 q3 q4 q5 q6 q7 q9 q10}
MODES=${MODES:-serial parallel gpuagg}
RUNS=${RUNS:-3}
CORES=$(ncores)
FAILURES=0

declare -A Q_SQL Q_KEYS RESULT_T RESULT_GROUPS RESULT_MATCH RESULT_LABEL RESULT_ONGPU
bench_groupby_queries

# Check the environment knobs.
check_args() {
	local q m
	[ $# -eq 0 ] || { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0; }
	int_var ROWS
	case "$RUNS" in '' | *[!0-9]* | 0) die "RUNS must be a positive integer, not '$RUNS'" ;; esac
	for q in $QUERIES; do
		[ -n "${Q_SQL[$q]:-}" ] || die "unknown query '$q' in QUERIES (known: ${!Q_SQL[*]})"
	done
	for m in $MODES; do
		case "$m" in serial | parallel | gpuagg) ;; *) die "unknown mode '$m' in MODES" ;; esac
	done
}

# Print the statement that times query $1: all of it computed, no row returned.
timed_sql() { echo "SELECT * FROM (${Q_SQL[$1]}) s OFFSET $BENCH_SINK_OFFSET;"; }

# Print the number of groups of query $1 (natively; unused aggregates are not computed).
count_groups() {
	psql_as postgres -At <<<"$(bench_mode_settings parallel)
SELECT count(*) FROM (${Q_SQL[$1]}) s;" | tail -n 1
}

# Whether EXPLAIN of query $1 under the settings of mode $2 (default gpuagg) shows GpuHashAgg.
uses_gpuagg() {
	case "$(bench_explain "${2:-gpuagg}" "" "$(timed_sql "$1")")" in
		*"Custom Scan (GpuHashAgg)"*) return 0 ;;
		*) return 1 ;;
	esac
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
		if res=$(bench_time "$q" "$mode" "" "$(timed_sql "$q")"); then
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
			bench_compare "" "${Q_SQL[$q]}" "${Q_KEYS[$q]}" "$ref"
			RESULT_MATCH[$q]=$CMP_RESULT
			log "$q answers match native ($ref): ${RESULT_MATCH[$q]}"
			if [ "${RESULT_MATCH[$q]}" != yes ]; then FAILURES=$((FAILURES + 1)); fi
			;;
		*) RESULT_MATCH[$q]="-" ;;
	esac
}

# Print the results table; write demo.csv to GPUAGG_DEMO_OUT when set.
print_results() {
	local q s p g fmt csv=""
	fmt='%-32s %10s %16s %18s %10s %18s %12s  %s\n'
	section "results: $ROWS rows, $CORES cores, gpuagg device: $BENCH_DEVICE (median of $RUNS runs, seconds)"
	# shellcheck disable=SC2059  # the format is a variable on purpose
	printf "$fmt" query groups "native serial s" "native parallel s" "gpuagg s" "speedup vs serial" "vs parallel" "answers match"
	for q in $QUERIES; do
		s=${RESULT_T[$q.serial]:--}
		p=${RESULT_T[$q.parallel]:--}
		g=${RESULT_T[$q.gpuagg]:--}
		# shellcheck disable=SC2059
		printf "$fmt" "${RESULT_LABEL[$q]}" "${RESULT_GROUPS[$q]:--}" "$s" "$p" "$g" \
			"$(ratio "$s" "$g")" "$(ratio "$p" "$g")" "${RESULT_MATCH[$q]:--}"
		csv="$csv$q,\"${RESULT_LABEL[$q]}\",$ROWS,${RESULT_GROUPS[$q]:-},$BENCH_DEVICE,${RESULT_ONGPU[$q]},$s,$p,$g,$(ratio_num "$s" "$g"),$(ratio_num "$p" "$g"),\"${RESULT_MATCH[$q]:-}\"
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
		section "EXPLAIN (ANALYZE, VERBOSE) $q under gpuagg (device $BENCH_DEVICE)"
		out=$(psql_as postgres <<<"$(bench_mode_settings gpuagg)
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

# Build the GPU device only where it can run, unless asked: export NVCC= (the CPU device
# only) when nvidia-smi lists no GPU, and say which build it is.
choose_build() {
	if [ -n "${NVCC+set}" ]; then
		log "NVCC=${NVCC:-(empty)} given: $([ -n "$NVCC" ] && echo "building the GPU device with it" || echo "building the CPU device only")"
	elif [ "${GPUAGG_DEMO_BUILD_GPU:-0}" = 1 ]; then
		log "GPUAGG_DEMO_BUILD_GPU=1: building the GPU device too (when nvcc is found)"
	elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
		log "nvidia-smi lists a GPU: building the GPU device too (when nvcc is found)"
	else
		export NVCC=
		log "no GPU here (nvidia-smi -L lists none): building the CPU device only, without the" \
			"CUDA code that could not run; GPUAGG_DEMO_BUILD_GPU=1 builds it anyway"
	fi
}

# Set up, generate the data, run the queries, report.
main() {
	local q t0
	check_args "$@"
	BENCH_RUNS=$RUNS
	install_exit_trap
	t0=$(now_s)
	log "gpuagg demo: ROWS=$ROWS, queries: $QUERIES; modes: $MODES; $CORES cores, $(mem_total_mb) MB RAM"
	section "packages"
	ensure_packages
	section "build+install"
	choose_build
	build_and_install
	section "cluster"
	start_cluster demo $((ROWS * 100))
	psql_as postgres -At -c "SELECT 'work_mem ' || current_setting('work_mem') || ', max_parallel_workers_per_gather ' ||
		current_setting('max_parallel_workers_per_gather') || ', jit ' || CASE WHEN pg_jit_available() THEN current_setting('jit') ELSE 'unavailable' END"
	section "extension"
	bench_choose_device "${GPUAGG_DEMO_DEVICE:-}"
	section "data"
	bench_gen_groupby public "$ROWS"
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
