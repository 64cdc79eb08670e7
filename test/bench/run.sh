#!/usr/bin/env bash
# test/bench/run.sh - the gpuagg benchmark: the db-benchmark group-by and join suites and
# a TPC-H subset (docs/benchmarks.md), each query timed native serial, native
# parallel and with gpuagg, every gpuagg answer checked against native PostgreSQL's.
#
#   bash test/bench/run.sh [options]          # 1e6 rows, TPC-H SF 0.1 (its run time:
#                                             # docs/benchmarks.md, "How to reproduce")
#   ROWS=1e8 SUITES=groupby bash test/bench/run.sh        # headline numbers, GPU host
#
# Sets up like test/demo.sh (as root on a fresh Debian 12: PostgreSQL 15, headers and a
# C toolchain if missing; or the PostgreSQL of PG_CONFIG; builds and installs gpuagg unless
# GPUAGG_SKIP_BUILD=1; a throwaway cluster run by an unprivileged user, removed at the
# end), generates the tables inside PostgreSQL (test/bench/gen_*.sql: set-based, in
# concurrent chunks, reproducible), then per suite: generate, run its queries, drop it.
# Prints a table of times and ratios and writes OUT/bench.csv, OUT/bench.txt (the table),
# OUT/bench.png (per query, gpuagg's speedup over native serial and over native parallel,
# bars from 1x on a log scale, forced plans marked: test/bench/lib/chart.py with
# matplotlib, else gnuplot, else skipped with a message) and OUT/explain.txt (EXPLAIN
# ANALYZE of a few queries under gpuagg). Exit status nonzero when a query fails or a
# gpuagg answer differs.
#
# Options (flag or environment variable):
#   --rows N        ROWS (or SCALE)  rows of the group-by table x (default 1e6; 1e7
#                                    everyday, 1e8 headline); 1e6-style notation accepted
#   --join-rows N   JOIN_ROWS        rows of the join tables x and big (default ROWS)
#   --sf F          SF               TPC-H scale factor (default ROWS / 1e7, at least 0.01)
#   --suites S      SUITES           "groupby join tpch" (default: all three)
#   --queries Q     QUERIES          query ids or suite names to run (default: all):
#                                    groupby q1 q2 q3 q4 q5 q6 q7 q9 q10; join j1 .. j5
#                                    (plain) and j1agg .. j5agg (wrapped in count/sum);
#                                    tpch Q1 Q3 Q5 Q7 Q9 Q10 Q21 Q13 Q18
#   --modes M       MODES            "serial parallel gpuagg" (default: all three); also
#                                    backend: gpuagg with gpuagg.device_host = backend
#                                    (no GPU service), printed in a table of its own
#                                    rows and pages: gpuagg without workers (the direct
#                                    scan reads the table) with gpuagg.page_scan off
#                                    and on, printed in a table of their own
#                                    ppages: gpuagg (parallel workers) with
#                                    gpuagg.page_scan on: the workers send pages,
#                                    printed against gpuagg in a table of its own
#   --runs N        RUNS             timed runs per query and mode (default 3; median)
#   --warmup N      WARMUP           untimed runs before them (default 1)
#   NATIVE_WARMUP=N  warm-up runs of the native modes (default WARMUP; the tables are
#                    pg_prewarm'ed, so 0 saves time at 1e8 rows without changing them)
#   --out DIR       OUT              output directory (default bench-out in the repository)
#   --device D      DEVICE           gpuagg device, gpu|cpu (default: gpu if usable, else cpu)
#   --time-limit S  TIME_LIMIT       seconds: start no query after S seconds from the start,
#                                    and cancel a running one (statement_timeout) then, so
#                                    that the run ends with its report in about S seconds
#                                    plus the report; skipped queries say so (default: none)
#   --explain Q     EXPLAIN_QUERIES  queries whose EXPLAIN ANALYZE under gpuagg goes to
#                                    explain.txt (default "q1 q3 j5agg Q1 Q18"; "" for none)
#   --no-check      CHECK=0          do not compare answers (saves two runs per query)
#   --cpu           CPU=1            also measure the CPU seconds of each timed run, summed
#                                    over every process of the cluster (backend, parallel
#                                    workers, GPU service, postmaster and its background
#                                    processes; from /proc), printed in a table of its own
#                                    and written to OUT/cpu.csv
#   SKIP_NATIVE_GPUAGG=1   do not time gpuagg mode for queries whose gpuagg plan has no
#                          gpuagg node (plain joins, q6: the same plan as native)
#   BENCH_GEN_JOBS=N       concurrent data generation sessions (default: cores)
#   GPUAGG_COMMIT          the commit the report names (default: git's HEAD)
#   GPUAGG_INSTALL         system|private|auto (default auto: a private copy of PostgreSQL
#                          unless the system's gpuagg is missing or this checkout's)
#   GPUAGG_SKIP_BUILD, PG_CONFIG, GPUAGG_USER, SHARED_BUFFERS_MB, WORK_MEM_MB,
#   GPUAGG_EXTRA_CONF, KEEP_CLUSTER=1 (also keeps the tables): see test/lib/common.sh
#
# Timing, as in test/demo.sh: each query q runs as `SELECT * FROM (q) s OFFSET <max>`
# (every output column computed, no row shipped to the client) in one psql session per
# query and mode, WARMUP untimed runs then RUNS timed ones, wall time from psql's \timing.
# Modes: serial = max_parallel_workers_per_gather 0, gpuagg off; parallel = as many workers
# as cores, gpuagg off; gpuagg = gpuagg.force on (so the column measures gpuagg's nodes;
# whether the planner picks them unforced is in the plan column), the same workers, device
# gpu if usable else cpu. A query whose gpuagg plan contains no gpuagg node runs natively
# in all three modes, and the plan column says why. Where the planner picks a gpuagg plan
# unforced that is not the forced one, that plan is timed too (the CSV's picked_s and
# speedup_picked_vs_best, the better of native serial and parallel; "planner's plan" in
# the plan column).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib/common.sh
. test/lib/common.sh
# another checkout's or a package's gpuagg stays as it is (test/lib/common.sh)
export GPUAGG_INSTALL=${GPUAGG_INSTALL:-auto}
# shellcheck source=test/lib/bench.sh
. test/lib/bench.sh

ALL_SUITES="groupby join tpch"
declare -A Q_SQL Q_KEYS Q_SUITE Q_NOTE SUITE_SCHEMA SUITE_QUERIES
declare -A R_T R_RUNS R_ROWS R_MATCH R_PLAN R_INPLAN R_PICKED
SUITE_SCHEMA=([groupby]=groupby [join]=joins [tpch]=tpch)
ORDER=()        # selected query ids, in run order
FAILURES=0
T_START=$(now_s)

# ---------------------------------------------------------------- the queries

# Define every query: Q_SQL, Q_KEYS (unique columns of the answer, for the answer check),
# Q_SUITE, Q_NOTE (why it runs natively, where known), SUITE_QUERIES.
define_queries() {
	local q j sel cols tj
	bench_groupby_queries
	for q in q1 q2 q3 q4 q5 q6 q7 q9 q10; do Q_SUITE[$q]=groupby; done
	SUITE_QUERIES[groupby]="q1 q2 q3 q4 q5 q6 q7 q9 q10"
	Q_NOTE[q6]="percentile_cont (an ordered-set aggregate) not supported"

	# db-benchmark's join queries: every column of x and the right table's other columns
	declare -A sel tj
	sel[j1]="x.*, small.id4 AS small_id4, small.v2"
	tj[j1]="x JOIN small USING (id1)"
	sel[j2]="x.*, medium.id1 AS medium_id1, medium.id4 AS medium_id4, medium.id5 AS medium_id5, medium.v2"
	tj[j2]="x JOIN medium USING (id2)"
	sel[j3]=${sel[j2]}
	tj[j3]="x LEFT JOIN medium USING (id2)"
	sel[j4]="x.*, medium.id1 AS medium_id1, medium.id2 AS medium_id2, medium.id4 AS medium_id4, medium.v2"
	tj[j4]="x JOIN medium USING (id5)"
	sel[j5]="x.*, big.id1 AS big_id1, big.id2 AS big_id2, big.id4 AS big_id4, big.id5 AS big_id5, big.id6 AS big_id6, big.v2"
	tj[j5]="x JOIN big USING (id3)"
	SUITE_QUERIES[join]=""
	for j in j1 j2 j3 j4 j5; do
		Q_SQL[$j]="SELECT ${sel[$j]} FROM ${tj[$j]}"
		Q_KEYS[$j]="id3"
		Q_NOTE[$j]="GpuHashJoin not offered (SET client_min_messages = debug1 says why)"
		Q_SQL[${j}agg]="SELECT count(*) AS n, sum(v1) AS v1, sum(v2) AS v2 FROM (${Q_SQL[$j]}) j"
		Q_KEYS[${j}agg]=""
		Q_SUITE[$j]="join"
		Q_SUITE[${j}agg]="join"
		SUITE_QUERIES[join]="${SUITE_QUERIES[join]} $j ${j}agg"
	done

	# TPC-H: one query per "-- Qn:" block of tpch_queries.sql
	SUITE_QUERIES[tpch]=""
	while IFS= read -r -d $'\x1e' q; do
		[ -n "$q" ] || continue
		Q_SQL[${q%%$'\x1f'*}]=${q#*$'\x1f'}
		Q_SUITE[${q%%$'\x1f'*}]=tpch
		SUITE_QUERIES[tpch]="${SUITE_QUERIES[tpch]} ${q%%$'\x1f'*}"
	done < <(awk '
		/^-- Q[0-9]+:/ { if (id != "") printf "%s\x1f%s\x1e", id, sql; id = substr($2, 1, length($2) - 1); sql = ""; next }
		/^--/ || /^[ \t]*$/ { next }
		id != "" { sub(/;[ \t]*$/, ""); sql = sql (sql == "" ? "" : "\n") $0 }
		END { if (id != "") printf "%s\x1f%s\x1e", id, sql }' test/bench/tpch_queries.sql)
	[ -n "${Q_SQL[Q1]:-}" ] || die "no TPC-H query read from test/bench/tpch_queries.sql"
	Q_KEYS[Q1]="l_returnflag l_linestatus"
	Q_KEYS[Q3]="l_orderkey"
	Q_KEYS[Q5]="n_name"
	Q_KEYS[Q7]="supp_nation cust_nation l_year"
	Q_KEYS[Q9]="nation o_year"
	Q_KEYS[Q10]="c_custkey"
	Q_KEYS[Q13]="c_count"
	Q_KEYS[Q18]="o_orderkey"
	Q_KEYS[Q21]="s_name"
}

# ---------------------------------------------------------------- options

# Print the usage text (the header of this file).
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }

# Parse the flags and the environment; check them.
parse_args() {
	local q found s m
	ROWS=${ROWS:-${SCALE:-1e6}}
	JOIN_ROWS=${JOIN_ROWS:-}
	SF=${SF:-}
	SUITES=${SUITES:-$ALL_SUITES}
	QUERIES=${QUERIES:-}
	MODES=${MODES:-serial parallel gpuagg}
	RUNS=${RUNS:-3}
	WARMUP=${WARMUP:-1}
	NATIVE_WARMUP=${NATIVE_WARMUP:-$WARMUP}
	OUT=${OUT:-$GA_ROOT/bench-out}
	DEVICE=${DEVICE:-${GPUAGG_BENCH_DEVICE:-}}
	TIME_LIMIT=${TIME_LIMIT:-}
	EXPLAIN_QUERIES=${EXPLAIN_QUERIES-q1 q3 j5agg Q1 Q18}
	CHECK=${CHECK:-1}
	CPU=${CPU:-0}
	SKIP_NATIVE_GPUAGG=${SKIP_NATIVE_GPUAGG:-0}
	while [ $# -gt 0 ]; do
		case "$1" in
			--rows | --scale) ROWS=${2:?$1 needs a value}; shift 2 ;;
			--join-rows) JOIN_ROWS=${2:?$1 needs a value}; shift 2 ;;
			--sf) SF=${2:?$1 needs a value}; shift 2 ;;
			--suites) SUITES=${2:?$1 needs a value}; shift 2 ;;
			--queries) QUERIES=${2:?$1 needs a value}; shift 2 ;;
			--modes) MODES=${2:?$1 needs a value}; shift 2 ;;
			--runs) RUNS=${2:?$1 needs a value}; shift 2 ;;
			--warmup) WARMUP=${2:?$1 needs a value}; shift 2 ;;
			--out) OUT=${2:?$1 needs a value}; shift 2 ;;
			--device) DEVICE=${2:?$1 needs a value}; shift 2 ;;
			--time-limit) TIME_LIMIT=${2:?$1 needs a value}; shift 2 ;;
			--explain) EXPLAIN_QUERIES=${2?$1 needs a value}; shift 2 ;;
			--no-check) CHECK=0; shift ;;
			--cpu) CPU=1; shift ;;
			-h | --help) usage; exit 0 ;;
			*) usage >&2; die "unknown argument: $1" ;;
		esac
	done
	int_var ROWS
	[ "$ROWS" -ge 1000 ] || die "ROWS must be at least 1000"
	int_var JOIN_ROWS "$ROWS"
	[ "$JOIN_ROWS" -ge 1000 ] || die "JOIN_ROWS must be at least 1000"
	if [ -z "$SF" ]; then
		SF=$(awk -v r="$ROWS" 'BEGIN { s = r / 1e7; if (s < 0.01) s = 0.01; printf "%g\n", s }')
	fi
	SF=$(awk -v x="$SF" 'BEGIN { if (x ~ /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ && x >= 0.001) printf "%g\n", x; else exit 1 }') ||
		die "SF must be a number of at least 0.001, not '$SF'"
	case "$RUNS" in '' | *[!0-9]* | 0) die "RUNS must be a positive integer, not '$RUNS'" ;; esac
	case "$WARMUP" in '' | *[!0-9]*) die "WARMUP must be a non-negative integer, not '$WARMUP'" ;; esac
	case "$NATIVE_WARMUP" in '' | *[!0-9]*) die "NATIVE_WARMUP must be a non-negative integer, not '$NATIVE_WARMUP'" ;; esac
	case "$TIME_LIMIT" in '' | *[!0-9]*) [ -z "$TIME_LIMIT" ] || die "TIME_LIMIT must be whole seconds, not '$TIME_LIMIT'" ;; esac
	case "$DEVICE" in "" | cpu | gpu) ;; *) die "DEVICE must be cpu or gpu, not '$DEVICE'" ;; esac
	for s in $SUITES; do
		case " $ALL_SUITES " in *" $s "*) ;; *) die "unknown suite '$s' in SUITES (known: $ALL_SUITES)" ;; esac
	done
	for m in $MODES; do
		case "$m" in serial | parallel | gpuagg | backend | rows | pages | ppages) ;; *) die "unknown mode '$m' in MODES (serial parallel gpuagg backend rows pages ppages)" ;; esac
	done
	[ -n "$MODES" ] || die "MODES is empty"
	for q in $QUERIES $EXPLAIN_QUERIES; do
		[ -n "${Q_SQL[$q]:-}" ] || case " $ALL_SUITES " in *" $q "*) ;;
			*) die "unknown query '$q' (known: ${SUITE_QUERIES[groupby]}${SUITE_QUERIES[join]}${SUITE_QUERIES[tpch]}, or a suite name)" ;; esac
	done
	for s in $SUITES; do
		for q in ${SUITE_QUERIES[$s]}; do
			found=0
			if [ -z "$QUERIES" ]; then found=1; fi
			case " $QUERIES " in *" $q "* | *" $s "*) found=1 ;; esac
			if [ "$found" = 1 ]; then ORDER+=("$q"); fi
		done
	done
	[ "${#ORDER[@]}" -gt 0 ] || die "no query selected (SUITES='$SUITES', QUERIES='$QUERIES')"
	mkdir -p "$OUT" || die "cannot create OUT=$OUT"
	OUT=$(cd "$OUT" && pwd)
	BENCH_RUNS=$RUNS
	BENCH_WARMUP=$WARMUP
}

# Whether suite $1 has a selected query.
suite_selected() {
	local q
	for q in "${ORDER[@]}"; do
		if [ "${Q_SUITE[$q]}" = "$1" ]; then return 0; fi
	done
	return 1
}

# Print the scale of suite $1 in words.
suite_scale() {
	case "$1" in
		groupby) echo "$ROWS rows" ;;
		join) echo "$JOIN_ROWS rows" ;;
		tpch) echo "SF $SF" ;;
	esac
}

# Print the scales of the selected suites ("groupby 1000000 rows, TPC-H SF 0.1").
scales_text() {
	local s out=""
	for s in $SUITES; do
		suite_selected "$s" || continue
		case "$s" in
			groupby) out="${out:+$out, }groupby $ROWS rows" ;;
			join) out="${out:+$out, }join $JOIN_ROWS rows" ;;
			tpch) out="${out:+$out, }TPC-H SF $SF" ;;
		esac
	done
	echo "$out"
}

# Print the bytes the tables of the selected suites need at once (one suite is loaded at a time).
data_bytes() {
	local b=0 s n
	for s in $SUITES; do
		suite_selected "$s" || continue
		case "$s" in
			groupby) n=$((ROWS * 85)) ;;
			join) n=$((JOIN_ROWS * 150)) ;;
			tpch) n=$(awk -v sf="$SF" 'BEGIN { printf "%.0f", sf * 1.6e9 }') ;;
		esac
		if [ "$n" -gt "$b" ]; then b=$n; fi
	done
	echo "$b"
}

# Print a rough estimate of the seconds it takes to generate suite $1's data (measured on 2 cores, scaled).
gen_estimate_s() {
	case "$1" in
		groupby) awk -v r="$ROWS" -v c="$(ncores)" 'BEGIN { printf "%.0f\n", 2 + r * 1.6e-6 * 2 / c }' ;;
		join) awk -v r="$JOIN_ROWS" -v c="$(ncores)" 'BEGIN { printf "%.0f\n", 2 + r * 1.2e-6 * 2 / c }' ;;
		tpch) awk -v f="$SF" -v c="$(ncores)" 'BEGIN { printf "%.0f\n", 2 + f * 40 * 2 / c }' ;;
	esac
}

# Print a rough estimate of the run time in seconds (calibrated on a 2-core machine with the CPU
# device and nothing else running: the default run there, docs/benchmarks.md).
estimate_s() {
	local q s per=0 total=0 nmodes runs gen=0
	nmodes=$(wc -w <<<"$MODES")
	runs=$((RUNS + WARMUP))
	for s in $SUITES; do
		if suite_selected "$s"; then gen=$((gen + $(gen_estimate_s "$s"))); fi
	done
	for q in "${ORDER[@]}"; do
		# seconds per run of one mode at 1e6 rows / SF 0.1 on 2 cores (measured: the plan
		# checks, the answer check and psql's start spread over the runs), scaled
		case "${Q_SUITE[$q]}" in
			groupby) per=$(awk -v p="$per" -v r="$ROWS" 'BEGIN { printf "%.3f", p + 1.0 * r / 1e6 }') ;;
			join) per=$(awk -v p="$per" -v r="$JOIN_ROWS" 'BEGIN { printf "%.3f", p + 1.0 * r / 1e6 }') ;;
			tpch) per=$(awk -v p="$per" -v f="$SF" 'BEGIN { printf "%.3f", p + 0.9 * f / 0.1 }') ;;
		esac
	done
	total=$(awk -v g="$gen" -v p="$per" -v m="$nmodes" -v n="$runs" -v c="$(ncores)" -v k="$CHECK" -v nq="${#ORDER[@]}" \
		'BEGIN { printf "%.0f", g + p * (m * n + 2 * k + 1) * 2 / (c < 2 ? 2 : c) + nq * 0.5 + 5 }')
	echo "$total"
}

# ---------------------------------------------------------------- data

# Generate the tables of suite $1 and make them ready to query.
generate_suite() {
	local s=$1 schema=${SUITE_SCHEMA[$1]} jobs=() gen=test/bench/gen_$1.sql t0 mb t
	t0=$(now_s)
	psql_as "$BENCH_DB" -q -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS $schema CASCADE" \
		-c "CREATE SCHEMA $schema"
	case "$s" in
		groupby)
			bench_gen_groupby "$schema" "$ROWS"
			;;
		join)
			log "generating $schema.x, small, medium, big: $JOIN_ROWS rows in x and big"
			bench_helpers
			bench_sql_file "$gen" schema="$schema" rows="$JOIN_ROWS" part=create
			mapfile -t jobs < <(
				bench_chunk_jobs "$GA_ROOT/$gen" x "$JOIN_ROWS" 0 schema="$schema" rows="$JOIN_ROWS"
				bench_chunk_jobs "$GA_ROOT/$gen" big "$JOIN_ROWS" 0 schema="$schema" rows="$JOIN_ROWS"
				printf 'bench_sql_file %q part=small schema=%q rows=%q\n' "$GA_ROOT/$gen" "$schema" "$JOIN_ROWS"
				printf 'bench_sql_file %q part=medium schema=%q rows=%q\n' "$GA_ROOT/$gen" "$schema" "$JOIN_ROWS"
			)
			bench_run_jobs "$schema tables" $((JOIN_ROWS * 150 / 1048576)) "${jobs[@]}"
			bench_finish_tables "$schema" x small medium big
			;;
		tpch)
			log "generating TPC-H-shaped tables at SF $SF in $schema"
			bench_helpers
			bench_sql_file "$gen" schema="$schema" sf="$SF" part=create
			# shellcheck disable=SC2046  # s c p o clerks
			set -- $(psql_as "$BENCH_DB" -At -F ' ' -c "SELECT s, c, p, o FROM $schema.gen_params")
			log "  $1 suppliers, $2 customers, $3 parts, $(($3 * 4)) partsupp, $4 orders, about $(($4 * 4)) lineitems"
			mb=$(awk -v sf="$SF" 'BEGIN { printf "%.0f", sf * 1400 }')
			mapfile -t jobs < <(
				# lineitem and orders are chunked by order number (about 4 lines an order)
				bench_chunk_jobs "$GA_ROOT/$gen" lineitem "$4" 0 schema="$schema"
				bench_chunk_jobs "$GA_ROOT/$gen" orders "$4" 0 schema="$schema"
				bench_chunk_jobs "$GA_ROOT/$gen" partsupp "$3" 0 schema="$schema"
				bench_chunk_jobs "$GA_ROOT/$gen" part "$3" 0 schema="$schema"
				bench_chunk_jobs "$GA_ROOT/$gen" customer "$2" 0 schema="$schema"
				bench_chunk_jobs "$GA_ROOT/$gen" supplier "$1" 0 schema="$schema"
				printf 'bench_sql_file %q part=region schema=%q\n' "$GA_ROOT/$gen" "$schema"
				printf 'bench_sql_file %q part=nation schema=%q\n' "$GA_ROOT/$gen" "$schema"
			)
			bench_run_jobs "$schema tables" "$mb" "${jobs[@]}"
			jobs=()
			for t in region nation supplier customer part partsupp orders; do
				jobs+=("$(printf 'bench_sql_file %q part=pk table=%q schema=%q' "$GA_ROOT/$gen" "$t" "$schema")")
			done
			bench_run_jobs "$schema primary keys" 0 "${jobs[@]}"
			# the specification's foreign keys, for the planner's join estimates
			bench_sql_file "$GA_ROOT/$gen" part=fk schema="$schema"
			bench_finish_tables "$schema" lineitem orders partsupp part customer supplier nation region
			;;
	esac
	log "$s data ready in $(elapsed_since "$t0")s"
}

# ---------------------------------------------------------------- running the queries

# Print the session SQL of suite $1: its search_path, and a statement_timeout that ends at TIME_LIMIT.
session_sql() {
	local left
	printf 'SET search_path = %s, public;' "${SUITE_SCHEMA[$1]}"
	if [ -n "$TIME_LIMIT" ]; then
		left=$(seconds_left)
		if [ "$left" -lt 1 ]; then left=1; fi
		printf ' SET statement_timeout = %s;' "$((left * 1000))"
	fi
	printf '\n'
}

# Print the whole seconds left before TIME_LIMIT (a large number when there is none).
seconds_left() {
	if [ -z "$TIME_LIMIT" ]; then echo 999999999; return 0; fi
	awk -v s="$T_START" -v n="$(now_s)" -v l="$TIME_LIMIT" 'BEGIN { printf "%d\n", l - (n - s) }'
}

# Print the statement that times query $1: all of it computed, no row returned.
timed_sql() { echo "SELECT * FROM (${Q_SQL[$1]}) s OFFSET $BENCH_SINK_OFFSET;"; }

# Describe query $1's plan under gpuagg: set R_INPLAN (yes|forced|no) and R_PLAN (a short note).
plan_note() {
	local q=$1 session plan unforced n_gpu n_agg n_gjoin n_aggjoin n_nat n_join why note
	session=$(session_sql "${Q_SUITE[$q]}")
	plan=$(bench_explain gpuagg "$session" "$(timed_sql "$q")")
	n_gpu=$(bench_plan_count "$plan" 'Custom Scan \(Gpu(HashAgg|HashJoin)\)')
	n_nat=$(bench_plan_count "$plan" '(HashAggregate|GroupAggregate|MixedAggregate|(^|[ >])Aggregate$)')
	n_agg=$(bench_plan_count "$plan" 'Custom Scan \(GpuHashAgg\)')
	n_gjoin=$(bench_plan_count "$plan" 'Custom Scan \(GpuHashJoin\)')
	n_aggjoin=$(bench_plan_count "$plan" 'children on the device')
	n_join=$(bench_plan_count "$plan" '(^|[ >])(Hash|Merge)( (Left|Right|Full|Semi|Anti|Right Semi|Right Anti))? Join|Nested Loop')
	why=$(bench_plan_reasons "$plan")
	if printf '%s\n' "$plan" | grep -q '^ERROR'; then
		R_INPLAN[$q]=error
		R_PLAN[$q]="EXPLAIN failed: $(printf '%s\n' "$plan" | grep -m1 '^ERROR' | cut -c1-80)"
		return 0
	fi
	if [ "$n_gpu" -gt 0 ]; then
		note=""
		if [ "$n_agg" -gt 0 ]; then note="GpuHashAgg"; fi
		if [ "$n_agg" -gt 1 ]; then note="$note x$n_agg"; fi
		if [ "$n_aggjoin" -eq 1 ]; then note="$note (joining on the device)"; fi
		if [ "$n_aggjoin" -gt 1 ]; then note="$note (joining on the device x$n_aggjoin)"; fi
		if [ "$n_gjoin" -gt 0 ]; then note="${note:+$note + }GpuHashJoin"; fi
		if [ "$n_gjoin" -gt 1 ]; then note="$note x$n_gjoin"; fi
		if [ "$n_nat" -gt 0 ]; then note="$note + native agg${why:+ ($why)}"; fi
		if [ "$n_join" -gt 0 ]; then note="$note, joins native"; fi
		unforced=$(bench_explain unforced "$session" "$(timed_sql "$q")")
		if printf '%s\n' "$unforced" | grep -q 'Custom Scan (Gpu'; then
			R_INPLAN[$q]=yes
			note="$note; planner picks it"
			if [ "$(grep -v '^DEBUG:' <<<"$unforced")" != "$(grep -v '^DEBUG:' <<<"$plan")" ]; then
				R_PICKED[$q]=1
				note="$note (another gpuagg plan: timed as planner's plan)"
			fi
		else
			R_INPLAN[$q]=forced
			note="$note; forced (planner: native)"
		fi
	else
		R_INPLAN[$q]=no
		note="native: ${Q_NOTE[$q]:-${why:-no gpuagg node}}"
	fi
	R_PLAN[$q]=$note
}

# Run query $1 (the $2-th of $3) in every mode, check its answer, record the results.
run_query() {
	local q=$1 k=$2 n=$3 mode res rc t ref session left
	section "[$k/$n] $q (${Q_SUITE[$q]}, $(suite_scale "${Q_SUITE[$q]}")): $(head -c 160 <<<"${Q_SQL[$q]}" | tr '\n\t' '  ')"
	left=$(seconds_left)
	if [ "$left" -le 0 ]; then
		log "$q: skipped (TIME_LIMIT=${TIME_LIMIT}s reached)"
		R_PLAN[$q]="skipped (TIME_LIMIT)"
		append_csv "$q"
		return 0
	fi
	plan_note "$q"
	log "$q plan under gpuagg: ${R_PLAN[$q]}"
	for mode in $MODES; do
		if [ "$mode" != serial ] && [ "$mode" != parallel ] && [ "${R_INPLAN[$q]}" = no ] && [ "$SKIP_NATIVE_GPUAGG" = 1 ]; then
			R_T[$q.$mode]="native"
			continue
		fi
		if [ "$(seconds_left)" -le 0 ]; then
			R_T[$q.$mode]=skipped
			log "$q $mode: skipped (TIME_LIMIT=${TIME_LIMIT}s reached)"
			continue
		fi
		session=$(session_sql "${Q_SUITE[$q]}")
		rc=0
		case "$mode" in serial | parallel) BENCH_WARMUP=$NATIVE_WARMUP ;; *) BENCH_WARMUP=$WARMUP ;; esac
		res=$(bench_time "$q" "$mode" "$session" "$(timed_sql "$q")") || rc=$?
		if [ "$rc" = 0 ]; then
			# shellcheck disable=SC2086  # split the run times
			t=$(median $res)
			R_T[$q.$mode]=$t
			R_RUNS[$q.$mode]=$res
			log "$q $mode: $res s -> median $t s"
		elif [ "$rc" = 2 ]; then
			R_T[$q.$mode]=timeout
			log "$q $mode: cancelled at TIME_LIMIT"
		else
			R_T[$q.$mode]=error
			FAILURES=$((FAILURES + 1))
			log "$q $mode: ERROR (above)"
		fi
	done
	if [ "${R_PICKED[$q]:-0}" = 1 ] && [ "$(seconds_left)" -gt 0 ]; then
		# the planner's own gpuagg plan, unforced, where it is not the forced one
		BENCH_WARMUP=$WARMUP
		rc=0
		res=$(bench_time "$q" unforced "$(session_sql "${Q_SUITE[$q]}")" "$(timed_sql "$q")") || rc=$?
		if [ "$rc" = 0 ]; then
			# shellcheck disable=SC2086  # split the run times
			R_T[$q.picked]=$(median $res)
			log "$q planner's plan: $res s -> median ${R_T[$q.picked]} s"
		else
			R_T[$q.picked]=error
			log "$q planner's plan: not timed (above)"
		fi
	fi
	R_MATCH[$q]="-"
	session=$(session_sql "${Q_SUITE[$q]}")
	case " $MODES " in *" parallel "*) ref=parallel ;; *) ref=serial ;; esac
	if [ "${R_INPLAN[$q]}" = no ]; then
		R_MATCH[$q]="native plan"
	elif [ "$CHECK" != 1 ]; then
		R_MATCH[$q]="not checked"
	elif [ "$(seconds_left)" -le 0 ]; then
		R_MATCH[$q]="not checked (TIME_LIMIT)"
	else
		case " $MODES " in
			*" gpuagg "*)
				bench_compare "$session" "${Q_SQL[$q]}" "${Q_KEYS[$q]}" "$ref"
				R_MATCH[$q]=$CMP_RESULT
				R_ROWS[$q]=$CMP_ROWS
				if [ "${q%agg}" != "$q" ] && [ -n "$CMP_FIRST" ]; then
					R_ROWS[${q%agg}]=${R_ROWS[${q%agg}]:-$CMP_FIRST}
					R_ROWS[$q]="1 ($CMP_FIRST joined)"
				fi
				log "$q answers match native ($ref): ${R_MATCH[$q]}"
				case "${R_MATCH[$q]}" in yes | "not checked"*) ;; *) FAILURES=$((FAILURES + 1)) ;; esac
				;;
		esac
		case " $MODES " in
			*" ppages "*)
				# the pages from workers, checked on their own
				bench_compare "$session" "${Q_SQL[$q]}" "${Q_KEYS[$q]}" "$ref" ppages
				log "$q ppages answers match native ($ref): $CMP_RESULT"
				case "$CMP_RESULT" in
					yes | "not checked"*) ;;
					*)
						R_MATCH[$q]="${R_MATCH[$q]}; ppages: $CMP_RESULT"
						FAILURES=$((FAILURES + 1))
						;;
				esac
				;;
		esac
	fi
	if [ -z "${R_ROWS[$q]:-}" ] && [ "$(seconds_left)" -gt 0 ]; then
		case " ${ORDER[*]} " in
			*" ${q}agg "*) ;; # a plain join: its row count comes with the aggregated variant
			*) R_ROWS[$q]=$(psql_as "$BENCH_DB" -At <<<"$(bench_mode_settings parallel)
$session
SELECT count(*) FROM (${Q_SQL[$q]}) s;" 2>/dev/null | tail -n 1) || R_ROWS[$q]="?" ;;
		esac
	fi
	append_csv "$q"
}

# Print the time of the plan the planner picks unforced for query $1 when it holds a gpuagg
# node: the forced plan's, or the planner's own where that differs; empty otherwise.
picked_s() {
	if [ "${R_INPLAN[$1]:-}" != yes ]; then return 0; fi
	if [ "${R_PICKED[$1]:-0}" = 1 ]; then echo "${R_T[$1.picked]:-}"; else echo "${R_T[$1.gpuagg]:-}"; fi
}

# Print the better (smaller) of query $1's native serial and parallel times; empty if neither.
best_native_s() {
	awk -v s="${R_T[$1.serial]:-}" -v p="${R_T[$1.parallel]:-}" 'BEGIN {
		ok_s = s ~ /^[0-9.]+$/; ok_p = p ~ /^[0-9.]+$/
		if (ok_s && ok_p) print (s + 0 < p + 0 ? s : p); else if (ok_s) print s; else if (ok_p) print p }'
}

# Print $1 as a quoted CSV field.
csv_field() { printf '"%s"' "${1//\"/\"\"}"; }

# Append query $1's row to OUT/bench.csv (written as the run goes, so a cut-off run keeps its rows).
append_csv() {
	local q=$1 s p g
	s=${R_T[$q.serial]:-}
	p=${R_T[$q.parallel]:-}
	g=${R_T[$q.gpuagg]:-}
	{
		printf '%s,%s,%s,%s,%s,%s,' "${Q_SUITE[$q]}" "$q" "$(csv_field "$(suite_scale "${Q_SUITE[$q]}")")" \
			"$(csv_field "${R_ROWS[$q]:-}")" "$BENCH_DEVICE" "${R_INPLAN[$q]:-}"
		printf '%s,%s,%s,%s,' "$(csv_field "${R_PLAN[$q]:-}")" "$s" "$p" "$g"
		printf '%s,%s,%s,' "$(ratio_num "$s" "$g")" "$(ratio_num "$p" "$g")" "$(csv_field "${R_MATCH[$q]:-}")"
		printf '%s,%s,%s,%s,%s,' "$(csv_field "${R_RUNS[$q.serial]:-}")" "$(csv_field "${R_RUNS[$q.parallel]:-}")" \
			"$(csv_field "${R_RUNS[$q.gpuagg]:-}")" "${R_T[$q.backend]:-}" "$(csv_field "${R_RUNS[$q.backend]:-}")"
		printf '%s,%s,' "$(picked_s "$q")" "$(ratio_num "$(best_native_s "$q")" "$(picked_s "$q")")"
		printf '%s,%s,%s,%s,' "${R_T[$q.rows]:-}" "$(csv_field "${R_RUNS[$q.rows]:-}")" \
			"${R_T[$q.pages]:-}" "$(csv_field "${R_RUNS[$q.pages]:-}")"
		printf '%s,%s\n' "${R_T[$q.ppages]:-}" "$(csv_field "${R_RUNS[$q.ppages]:-}")"
	} >>"$OUT/bench.csv"
}

# Append EXPLAIN (ANALYZE, VERBOSE) under gpuagg of the selected EXPLAIN_QUERIES of suite $1 to OUT/explain.txt.
explain_suite() {
	local s=$1 q out
	for q in $EXPLAIN_QUERIES; do
		[ "${Q_SUITE[$q]:-}" = "$s" ] || continue
		case " ${ORDER[*]} " in *" $q "*) ;; *) continue ;; esac
		[ "$(seconds_left)" -gt 0 ] || continue
		log "EXPLAIN ANALYZE $q under gpuagg -> $OUT/explain.txt"
		out=$(psql_as "$BENCH_DB" 2>&1 <<<"$(bench_mode_settings gpuagg)
$(session_sql "$s")
EXPLAIN (ANALYZE, VERBOSE) ${Q_SQL[$q]};" | grep -v '^SET$') || true
		{
			printf '==== %s (%s, %s; device %s; gpuagg.force on) ====\n%s;\n\n' "$q" "$s" "$(suite_scale "$s")" \
				"$BENCH_DEVICE" "${Q_SQL[$q]}"
			printf '%s\n\n' "$out"
		} >>"$OUT/explain.txt"
	done
}

# Append the planner's total cost of each selected query of suite $1 under the native
# parallel, the unforced and the forced gpuagg settings to OUT/costs.csv (for calibrating
# gpuagg's cost settings against the measured times in bench.csv).
costs_suite() {
	local s=$1 q mode line
	for q in "${ORDER[@]}"; do
		[ "${Q_SUITE[$q]:-}" = "$s" ] || continue
		for mode in parallel unforced gpuagg; do
			line=$(psql_as "$BENCH_DB" -At 2>/dev/null <<<"$(bench_mode_settings "$mode")
$(session_sql "$s")
EXPLAIN ${Q_SQL[$q]};" | grep -v '^SET$' | head -n 1) || line=""
			printf '%s,%s,"%s"\n' "$q" "$mode" "${line//\"/\"\"}" >>"$OUT/costs.csv"
		done
	done
}

# ---------------------------------------------------------------- report

# Print "N warm-up(s)", and the native modes' count where it differs.
warmup_text() {
	if [ "$NATIVE_WARMUP" = "$WARMUP" ]; then
		echo "$WARMUP warm-up(s)"
	else
		echo "$WARMUP warm-up(s) (native modes: $NATIVE_WARMUP)"
	fi
}

# When MODES has both modes $1 and $2, print each query's times in them and
# their ratio, under heading $3.
print_mode_pair() {
	local q a b
	case " $MODES " in *" $1 "*) ;; *) return 0 ;; esac
	case " $MODES " in *" $2 "*) ;; *) return 0 ;; esac
	printf '\n%s:\n' "$3"
	printf '%-7s %10s %10s %12s\n' query "$1 s" "$2 s" "$1/$2"
	for q in "${ORDER[@]}"; do
		a=${R_T[$q.$1]:--}
		b=${R_T[$q.$2]:--}
		printf '%-7s %10s %10s %12s\n' "$q" "$a" "$b" "$(ratio "$a" "$b")"
	done
}

# Print the results table (also to OUT/bench.txt).
print_results() {
	local q s p g b fmt out picks
	fmt='%-7s %-8s %18s %10s %10s %10s %8s %8s  %-13s %s\n'
	out=$(
		# shellcheck disable=SC2059  # the format is a variable on purpose
		printf "$fmt" query suite rows/groups "serial s" "parallel s" "gpuagg s" "vs ser." "vs par." "answers match" "plan under gpuagg"
		for q in "${ORDER[@]}"; do
			s=${R_T[$q.serial]:--}
			p=${R_T[$q.parallel]:--}
			g=${R_T[$q.gpuagg]:--}
			# shellcheck disable=SC2059
			printf "$fmt" "$q" "${Q_SUITE[$q]}" "${R_ROWS[$q]:--}" "$s" "$p" "$g" "$(ratio "$s" "$g")" "$(ratio "$p" "$g")" \
				"${R_MATCH[$q]:--}" "${R_PLAN[$q]:-}"
		done
		print_mode_pair gpuagg backend \
			'backend mode (gpuagg.device_host = backend: each session opens the device, no GPU service)'
		print_mode_pair rows pages \
			'rows and pages modes (no workers; gpuagg.page_scan off: the scan deforms tuples, on: the device deforms pages)'
		print_mode_pair gpuagg ppages \
			'gpuagg and ppages modes (parallel workers; gpuagg.page_scan off: they deform tuples, on: they send pages)'
		print_cpu
		picks=""
		for q in "${ORDER[@]}"; do
			if [ "${R_INPLAN[$q]:-}" = yes ]; then picks="$picks $q"; fi
		done
		if [ -n "$picks" ]; then
			printf '\nthe plans the planner picks with gpuagg (unforced), against the better native plan:\n'
			printf '%-7s %10s %14s %8s  %s\n' query "picked s" "best native s" speedup plan
			for q in $picks; do
				g=$(picked_s "$q")
				b=$(best_native_s "$q")
				printf '%-7s %10s %14s %8s  %s\n' "$q" "${g:--}" "${b:--}" "$(ratio "$b" "$g")" \
					"$([ "${R_PICKED[$q]:-0}" = 1 ] && echo "the planner's own (not the forced one)" || echo "the forced one")"
			done
		fi
	)
	section "results: $(scales_text); $(ncores) cores, $BENCH_WORKERS workers;" \
		"gpuagg device $BENCH_DEVICE; median of $RUNS run(s) after $(warmup_text), seconds"
	printf '%s\n' "$out"
	{
		printf 'gpuagg benchmark, %s: %s; %s cores, %s MB RAM;\n' \
			"$(date -u +%Y-%m-%dT%H:%MZ)" "$(scales_text)" "$(ncores)" "$(mem_total_mb)"
		printf '%s; gpuagg device %s (%s); commit %s; median of %s run(s) after %s, seconds\n\n' \
			"$PG_VERSION_STR" "$BENCH_DEVICE" "$DEVICE_NAME" "$(bench_commit)" "$RUNS" "$(warmup_text)"
		printf '%s\n' "$out"
	} >"$OUT/bench.txt"
	log "wrote $OUT/bench.txt and $OUT/bench.csv"
}

# Print the CPU table (CPU=1) and write OUT/cpu.csv: per query and mode the median wall
# time, the CPU seconds per run of every process of the cluster and their ratio (the cores
# kept busy on average).
print_cpu() {
	local q mode cpu wall
	if [ -z "${BENCH_CPU_FILE:-}" ] || [ ! -s "$BENCH_CPU_FILE" ]; then return 0; fi
	printf '\nCPU seconds per run, every process of the cluster together (CPU=1):\n'
	printf '%-7s %-9s %10s %10s %8s\n' query mode "wall s" "CPU s" cores
	echo "query,mode,wall_s,cpu_s" >"$OUT/cpu.csv"
	while read -r q mode cpu; do
		case "$mode" in unforced) wall=${R_T[$q.picked]:-} ;; *) wall=${R_T[$q.$mode]:-} ;; esac
		printf '%-7s %-9s %10s %10s %8s\n' "$q" "$mode" "${wall:--}" "$cpu" \
			"$(awk -v c="$cpu" -v w="$wall" 'BEGIN { if (w ~ /^[0-9.]+$/ && w > 0) printf "%.1f", c / w; else printf "-" }')"
		echo "$q,$mode,$wall,$cpu" >>"$OUT/cpu.csv"
	done <"$BENCH_CPU_FILE"
}

# Draw OUT/bench.png: matplotlib, else gnuplot, else say why there is none.
draw_chart() {
	local py title data q kind vs_serial vs_parallel term span
	title="gpuagg (device $BENCH_DEVICE: $DEVICE_NAME) vs native serial and parallel PostgreSQL ($BENCH_WORKERS workers): $(scales_text)"
	rm -f "$OUT/bench.png"
	py=$(find_matplotlib)
	if [ -n "$py" ]; then
		if MPLBACKEND=Agg "$py" test/bench/lib/chart.py "$OUT/bench.csv" "$OUT/bench.png" "$title"; then
			log "wrote $OUT/bench.png (matplotlib, $py)"
			return 0
		fi
		warn "chart.py failed; trying gnuplot"
	fi
	if command -v gnuplot >/dev/null 2>&1; then
		data=$(mktemp "${GPUAGG_TMPDIR:-/tmp}/gpuagg-chart.XXXXXX")
		# query (starred when forced), speedup vs native serial and vs native parallel
		# (NaN when there is none), the plan: 0 gpuagg, 1 forced, 2 no gpuagg node
		for q in "${ORDER[@]}"; do
			case "${R_INPLAN[$q]:-}" in forced) kind=1 ;; no) kind=2 ;; *) kind=0 ;; esac
			vs_serial=$(ratio_num "${R_T[$q.serial]:-}" "${R_T[$q.gpuagg]:-}")
			vs_parallel=$(ratio_num "${R_T[$q.parallel]:-}" "${R_T[$q.gpuagg]:-}")
			printf '%s %s %s %d\n' "$q$([ "$kind" = 1 ] && echo '*')" "${vs_serial:-NaN}" \
				"${vs_parallel:-NaN}" "$kind"
		done >"$data"
		# a log scale centred on 1x: as far below it as the largest ratio or inverse is above
		span=$(awk '{ for (i = 2; i <= 3; i++) if ($i != "NaN" && $i > 0) { v = $i < 1 ? 1 / $i : $i; if (v > m) m = v } }
			END { printf "%g", (m > 2 ? m : 2) * 1.6 }' "$data")
		for term in "pngcairo size 1100,520 font \",9\"" "png size 1100,520"; do
			# bars from 1x to the ratio: x y xlow xhigh ylow yhigh (boxxyerror)
			if gnuplot <<GP 2>/dev/null; then
set terminal $term
set output "$OUT/bench.png"
set title "${title//\"/}"
set style fill solid 0.8 border -1
set logscale y
set yrange [1.0 / $span:$span]
set xrange [-0.7:${#ORDER[@]} - 0.3]
set ylabel "gpuagg speedup (native time / gpuagg time)"
set label 1 "light: vs native serial; dark: vs native parallel; orange, *: forced (the planner keeps the native plan unforced); grey: no gpuagg node" at graph 0.01, graph 0.96 font ",8"
set xtics rotate by -60
set grid ytics
unset key
lo(v) = v < 1 ? v : 1
hi(v) = v < 1 ? 1 : v
plot "$data" using (\$0 - 0.2):(1):(\$0 - 0.38):(\$0 - 0.02):(lo(\$2)):(hi(\$2)):(\$4 == 2 ? 0xd9d9d9 : \$4 == 1 ? 0xfdbf6f : 0x9ecae1):xtic(1) with boxxyerror lc rgb variable, \
	"" using (\$0 + 0.2):(1):(\$0 + 0.02):(\$0 + 0.38):(lo(\$3)):(hi(\$3)):(\$4 == 2 ? 0xb0b0b0 : \$4 == 1 ? 0xff7f00 : 0x1f77b4) with boxxyerror lc rgb variable, \
	1 with lines lc rgb "black"
GP
				rm -f "$data"
				log "wrote $OUT/bench.png (gnuplot, ${term%% *} terminal; orange: forced, grey: no gpuagg node)"
				return 0
			fi
		done
		rm -f "$data"
		warn "gnuplot failed"
	fi
	log "no chart: neither python3 with matplotlib nor a working gnuplot here (apt-get install python3-matplotlib," \
		"or gnuplot); OUT/bench.csv has the numbers"
}

# EXIT hook (called by ga_on_exit): when cut off before the report, say where the rows are.
on_exit_hook() {
	if [ "$1" != 0 ] && [ -n "${OUT:-}" ] && [ -s "${OUT:-}/bench.csv" ] && [ "${REPORTED:-0}" = 0 ]; then
		warn "stopped before the report; the finished queries are in $OUT/bench.csv"
	fi
}

# ---------------------------------------------------------------- main

# Set up, then per suite: generate, run, drop; report.
main() {
	local s q k=0 n est t0
	define_queries
	parse_args "$@"
	install_exit_trap
	if [ -n "$TIME_LIMIT" ]; then BENCH_DEADLINE=$(($(date +%s) + TIME_LIMIT)); fi
	n=${#ORDER[@]}
	est=$(estimate_s)
	log "gpuagg benchmark: suites $SUITES; $n queries: ${ORDER[*]}"
	log "scale: $(scales_text); modes: $MODES; $RUNS run(s) after $(warmup_text);" \
		"$(ncores) cores, $(mem_total_mb) MB RAM; output in $OUT"
	log "estimated run time: about $(((est + 59) / 60)) min (rough: timings of a 2-core machine with the CPU device," \
		"scaled by rows and cores; data generation included; more on a busy machine, and when native serial" \
		"TPC-H Q21 plans a nested loop: docs/benchmarks.md)${TIME_LIMIT:+; TIME_LIMIT ${TIME_LIMIT}s}"
	section "packages"
	ensure_packages
	section "build+install"
	build_and_install
	section "cluster"
	start_cluster demo "$(data_bytes)"
	psql_as "$BENCH_DB" -At -c "SELECT 'work_mem ' || current_setting('work_mem') || ', max_parallel_workers_per_gather ' ||
		current_setting('max_parallel_workers_per_gather') || ', jit ' || CASE WHEN pg_jit_available() THEN current_setting('jit') ELSE 'unavailable' END"
	PG_VERSION_STR=$(psql_as "$BENCH_DB" -At -c "SELECT split_part(version(), ' on ', 1)")
	section "extension"
	bench_choose_device "$DEVICE"
	DEVICE_NAME=$(psql_as "$BENCH_DB" -At -c "SELECT CASE WHEN '$BENCH_DEVICE' = 'cpu' THEN 'CPU device'
		ELSE coalesce((SELECT name FROM gpuagg_devices() d WHERE d.usable ORDER BY 1 LIMIT 1), '?') END" 2>/dev/null || echo '?')
	rm -f "$OUT/bench.csv" "$OUT/explain.txt" "$OUT/bench.png" "$OUT/bench.txt" "$OUT/costs.csv" "$OUT/cpu.csv"
	if [ "$CPU" = 1 ]; then
		BENCH_CPU_FILE=$OUT/cpu.txt
		: >"$BENCH_CPU_FILE"
	fi
	echo "suite,query,scale,rows,device,gpuagg_in_plan,plan,native_serial_s,native_parallel_s,gpuagg_s,speedup_vs_serial,speedup_vs_parallel,answers_match,serial_runs_s,parallel_runs_s,gpuagg_runs_s,backend_s,backend_runs_s,picked_s,speedup_picked_vs_best,rows_s,rows_runs_s,pages_s,pages_runs_s,ppages_s,ppages_runs_s" >"$OUT/bench.csv"
	for s in $SUITES; do
		suite_selected "$s" || continue
		section "$s: data ($(suite_scale "$s"))"
		if [ "$(seconds_left)" -le $(($(gen_estimate_s "$s") + 10)) ]; then
			log "$s: skipped: $(seconds_left)s left before TIME_LIMIT=${TIME_LIMIT}s, and generating the data takes" \
				"about $(gen_estimate_s "$s")s"
			for q in "${ORDER[@]}"; do
				if [ "${Q_SUITE[$q]}" = "$s" ]; then
					k=$((k + 1))
					R_PLAN[$q]="skipped (TIME_LIMIT)"
					append_csv "$q"
				fi
			done
			continue
		fi
		generate_suite "$s"
		t0=$(now_s)
		for q in "${ORDER[@]}"; do
			[ "${Q_SUITE[$q]}" = "$s" ] || continue
			k=$((k + 1))
			run_query "$q" "$k" "$n"
			log "elapsed $(elapsed_since "$T_START")s in all, $(elapsed_since "$t0")s on $s queries; $((n - k)) queries left"
		done
		explain_suite "$s"
		costs_suite "$s"
		if [ "${KEEP_CLUSTER:-0}" != 1 ]; then
			psql_as "$BENCH_DB" -q -c "SET client_min_messages = warning" -c "DROP SCHEMA ${SUITE_SCHEMA[$s]} CASCADE"
		fi
	done
	print_results
	draw_chart
	REPORTED=1
	section "done in $(elapsed_since "$T_START")s"
	if [ -s "$OUT/explain.txt" ]; then log "EXPLAIN ANALYZE under gpuagg: $OUT/explain.txt"; fi
	if [ "$FAILURES" -gt 0 ]; then
		log "$FAILURES problem(s): a query failed or a gpuagg answer differs from native PostgreSQL's (above)"
		exit 1
	fi
	log "every checked gpuagg answer matches native PostgreSQL's"
}

# Run main unless sourced (sourcing lets a test reuse the functions).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
