#!/usr/bin/env bash
# test/host/gpu-host-verify.sh - the GPU host's verification runs, one stage per device call
# (each fits the GPU host's 10-minute limit), results and logs under OUTDIR.
#
# On the GPU host, from the repository root, after unpacking the PostgreSQL bundle:
#   sh .gpu/tools/gpu-host-setup.sh .gpu/pg15.tar.gz >/dev/null && . /opt/pg/env.sh &&
#     bash test/host/gpu-host-verify.sh STAGE "$OUT"
# (the device tool's `run` with carry [".gpu/pg15.tar.gz", ".gpu/tools"]).
#
# Stages:
#   device    build for the host's GPU (CUDA_ARCHS, default 90), then the device
#             conformance test on every device (aggregation, hash join, aggjoin,
#             derived columns), two more seeds of the join suite, and when
#             compute-sanitizer is there the join suite under its memcheck,
#             racecheck and synccheck tools, small aggjoin cases
#             under memcheck and racecheck, and small aggregation cases under
#             memcheck and racecheck
#   aggjoin   build, then the aggjoin's conformance suite (300 random
#             cases, seed AGGJOIN_SEED: chains of joins, ANTI, every device) and small
#             cases of it under compute-sanitizer's AGGJOIN_TOOLS (default memcheck,
#             racecheck of the chain cases from case AGGJOIN_RACECHECK_FIRST, default
#             17, synccheck)
#   derived   build, then the derived-column suite (numeric arithmetic on the device:
#             random programs, known answers, aggjoin operands) on every device, and
#             under compute-sanitizer's memcheck, racecheck and synccheck
#   check     test/check.sh with gpuagg.device = gpu: pg_regress (GpuHashAgg and
#             GpuHashJoin on the GPU), conformance, test/t (no leaks, the differential
#             queries); on a slow machine it does not fit one call: CHECK_ONLY =
#             regress, conformance or t runs one step, to split it over calls
#   joinbench the db-benchmark join suite at JOIN_ROWS (default 1e7): native serial,
#             native parallel and gpuagg, answers checked (TIME_LIMIT 480 s)
#   groupby   the group-by suite at ROWS (default 1e8) (TIME_LIMIT 480 s)
#   tpch      the TPC-H subset at SF (default 10), QUERIES to narrow it (TIME_LIMIT 480 s)
#   profile   the group-by table at ROWS (default 1e8), then test/bench/profile.sql
#             (scan floor, leader participation, worker counts, EXPLAIN ANALYZE)
#   tpch-ab   TPC-H at SF: native parallel, gpuagg and gpuagg with AB_SETTING (default
#             gpuagg.probe_filter off), AB_QUERIES, ROUNDS round-robin in one session
#   strategies the group-by table at ROWS (default 1e8), then test/bench/strategies.sql
#             (q5 and q7 under auto, global and partitioned, two batch sizes)
#   load      test/bench/load.sh with its defaults (pgbench at 1 to 256 clients, native
#             and gpuagg, pgbench -C, the first query on a new connection; MODES,
#             CLIENTS, DURATION to change them) (TIME_LIMIT 540 s)
#
# Each stage ends with a one-line verdict in OUTDIR/STAGE.verdict and exits nonzero on
# failure; OUTDIR/STAGE.log holds everything it printed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

STAGE=${1:-}
OUTDIR=${2:-}
[ -n "$STAGE" ] && [ -n "$OUTDIR" ] || {
	echo "usage: bash test/host/gpu-host-verify.sh device|aggjoin|derived|check|joinbench|groupby|tpch|profile|strategies|load OUTDIR" >&2
	exit 2
}
mkdir -p "$OUTDIR"
LOG=$OUTDIR/$STAGE.log
export CUDA_ARCHS=${CUDA_ARCHS:-90}
export GPUAGG_PG_VERSIONS=${GPUAGG_PG_VERSIONS:-none}	# the other versions build in CI
export GPUAGG_USER=${GPUAGG_USER:-pgrun}

# Record the stage's verdict and exit with its status.
verdict() {
	local rc=$1 text=$2
	printf '%s: %s (exit %d)\n' "$STAGE" "$text" "$rc" | tee "$OUTDIR/$STAGE.verdict"
	exit "$rc"
}

# Make a benchmark's tables with test/bench/run.sh (the environment names the suite and
# one quick query) and keep its cluster running: sets dir and port; $1 names the tables
# for the verdict when that fails.
keep_bench_cluster() {
	RUNS=1 WARMUP=0 MODES=gpuagg CHECK=0 EXPLAIN_QUERIES="" KEEP_CLUSTER=1 OUT=$OUTDIR/$STAGE \
		timeout 300 bash test/bench/run.sh >>"$LOG" 2>&1 || verdict 1 "$1 not made, see $STAGE.log"
	dir=$(sed -n 's/.*pg_ctl -D \(.*\)\/data stop.*/\1/p' "$LOG" | tail -1)
	port=$(sed -n 's/.*psql -h .* -p \([0-9]*\) postgres.*/\1/p' "$LOG" | tail -1)
	[ -n "$dir" ] && [ -n "$port" ] || verdict 1 "kept cluster not found in $STAGE.log"
}

# Stop the cluster keep_bench_cluster kept.
stop_bench_cluster() {
	runuser -u "$GPUAGG_USER" -- "$(pg_config --bindir)/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1
}

# Build the extension for this host (the GPU objects included).
build() {
	make -j"$(nproc)" >>"$LOG" 2>&1 || verdict 1 "build failed, see $STAGE.log"
	grep -q 'building the GPU device' "$LOG" || verdict 1 "built without the GPU device, see $STAGE.log"
}

case "$STAGE" in
	device)
		{ nvidia-smi -L; nvcc --version | tail -1; } >>"$LOG" 2>&1
		build
		bash test/conformance/run.sh --device all >>"$LOG" 2>&1
		rc=$?
		bin=test/conformance/conformance
		for seed in 2 3; do
			echo "== join suite, 300 random cases, seed $seed" >>"$LOG"
			timeout 120 "$bin" --device all --suite join --join-cases 300 --seed "$seed" >>"$LOG" 2>&1 || rc=1
		done
		if command -v compute-sanitizer >/dev/null 2>&1 && [ -x "$bin" ]; then
			for tool in "memcheck --leak-check full" "racecheck --racecheck-report all" synccheck; do
				echo "== compute-sanitizer --tool $tool (join suite, GPU)" >>"$LOG"
				# shellcheck disable=SC2086 # $tool holds the tool and its options
				timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 \
					"$bin" --device gpu --suite join --join-cases 10 >>"$LOG" 2>&1 || rc=1
			done
			for tool in "memcheck --leak-check full" "racecheck --racecheck-report all"; do
				echo "== compute-sanitizer --tool $tool (aggregation suite, GPU, small cases)" >>"$LOG"
				# shellcheck disable=SC2086
				timeout 400 compute-sanitizer --tool $tool --error-exitcode 9 \
					"$bin" --device gpu --suite agg --cases 4 --max-rows 2000 >>"$LOG" 2>&1 || rc=1
			done
			for tool in "memcheck --leak-check full" "racecheck --racecheck-report all"; do
				echo "== compute-sanitizer --tool $tool (aggjoin suite, GPU, small cases)" >>"$LOG"
				# shellcheck disable=SC2086
				timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 \
					"$bin" --device gpu --suite aggjoin --aggjoin-cases 2 --max-rows 20000 >>"$LOG" 2>&1 || rc=1
			done
		else
			echo "compute-sanitizer not found: skipped" >>"$LOG"
		fi
		[ "$rc" -eq 0 ] && verdict 0 "conformance passed on every device" ||
			verdict 1 "conformance or sanitizer failed, see $STAGE.log"
		;;
	aggjoin)
		# the aggjoin's device code alone: random cases (chains of joins,
		# ANTI) on every device, then small cases under compute-sanitizer's tools
		# (AGGJOIN_TOOLS; racecheck from the first fixed chain case on: the whole
		# suite takes it longer than one call may run)
		build
		rc=0
		seed=${AGGJOIN_SEED:-11}
		echo "== aggjoin suite, 300 random cases, seed $seed" >>"$LOG"
		# (run.sh builds the program, with the GPU objects of the build above)
		timeout 150 sh test/conformance/run.sh --device all --suite aggjoin --aggjoin-cases 300 \
			--seed "$seed" >>"$LOG" 2>&1 || rc=1
		bin=test/conformance/conformance
		if command -v compute-sanitizer >/dev/null 2>&1; then
			for tool in ${AGGJOIN_TOOLS:-memcheck racecheck synccheck}; do
				case "$tool" in
					memcheck) opts="--tool memcheck --leak-check full" limit=120 first=0 ;;
					racecheck) opts="--tool racecheck --racecheck-report all" limit=300
						first=${AGGJOIN_RACECHECK_FIRST:-17} ;;
					*) opts="--tool $tool" limit=90 first=0 ;;
				esac
				echo "== compute-sanitizer $opts (aggjoin suite from case $first, GPU, small cases)" >>"$LOG"
				# shellcheck disable=SC2086 # $opts holds the tool and its options
				timeout "$limit" compute-sanitizer $opts --error-exitcode 9 \
					"$bin" --device gpu --suite aggjoin --aggjoin-cases 3 --aggjoin-first "$first" \
					--max-rows 2000 --seed 13 >>"$LOG" 2>&1 || rc=1
			done
		else
			echo "compute-sanitizer not found: skipped" >>"$LOG"
		fi
		[ "$rc" -eq 0 ] && verdict 0 "aggjoin conformance and sanitizers passed" ||
			verdict 1 "aggjoin conformance or sanitizer failed (or ran out of time), see $STAGE.log"
		;;
	derived)
		build
		rc=0
		echo "== derived-column suite, every device" >>"$LOG"
		timeout 150 sh test/conformance/run.sh --device all --suite derived >>"$LOG" 2>&1 || rc=1
		bin=test/conformance/conformance
		if command -v compute-sanitizer >/dev/null 2>&1 && [ -x "$bin" ]; then
			for tool in "memcheck --leak-check full" "racecheck --racecheck-report all" synccheck; do
				echo "== compute-sanitizer --tool $tool (derived-column suite, GPU)" >>"$LOG"
				# shellcheck disable=SC2086 # $tool holds the tool and its options
				timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 \
					"$bin" --device gpu --suite derived ${DERIVED_SANITIZE_ARGS:-} >>"$LOG" 2>&1 || rc=1
			done
		else
			echo "compute-sanitizer not found: skipped" >>"$LOG"
		fi
		[ "$rc" -eq 0 ] && verdict 0 "derived-column conformance and sanitizers passed" ||
			verdict 1 "derived-column conformance or sanitizer failed (or ran out of time), see $STAGE.log"
		;;
	check)
		# CHECK_ONLY narrows it to one step of check.sh (regress, conformance or t):
		# on a slow machine the whole run does not fit one call
		# shellcheck disable=SC2086 # CHECK_ONLY holds check.sh's --only list
		GPUAGG_TEST_DEVICE=gpu GPUAGG_TEST_OUT=$OUTDIR/check timeout 560 \
			bash test/check.sh ${CHECK_ONLY:+--only $CHECK_ONLY} >>"$LOG" 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && verdict 0 "test/check.sh passed with gpuagg.device = gpu" ||
			verdict 1 "test/check.sh failed, see $STAGE.log and check/"
		;;
	joinbench)
		JOIN_ROWS=${JOIN_ROWS:-1e7} ROWS=${JOIN_ROWS:-1e7} SUITES=join RUNS=${RUNS:-1} \
			TIME_LIMIT=${TIME_LIMIT:-480} OUT=$OUTDIR/joinbench timeout 590 \
			bash test/bench/run.sh >>"$LOG" 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && verdict 0 "join suite ran, answers match; table in joinbench/bench.txt" ||
			verdict 1 "join suite failed, see $STAGE.log"
		;;
	groupby)
		ROWS=${ROWS:-1e8} SUITES=groupby RUNS=${RUNS:-1} MODES=${MODES:-"parallel gpuagg"} NATIVE_WARMUP=${NATIVE_WARMUP:-0} \
			TIME_LIMIT=${TIME_LIMIT:-480} OUT=$OUTDIR/groupby timeout 590 \
			bash test/bench/run.sh >>"$LOG" 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && verdict 0 "group-by suite ran, answers match; table in groupby/bench.txt" ||
			verdict 1 "group-by suite failed, see $STAGE.log"
		;;
	tpch)
		SF=${SF:-10} SUITES=tpch RUNS=${RUNS:-1} MODES=${MODES:-"parallel gpuagg"} \
			TIME_LIMIT=${TIME_LIMIT:-480} OUT=$OUTDIR/tpch timeout 590 \
			bash test/bench/run.sh >>"$LOG" 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && verdict 0 "TPC-H queries ran, answers match; table in tpch/bench.txt" ||
			verdict 1 "TPC-H queries failed, see $STAGE.log"
		;;
	tpch-ab)
		# A/B timings in one session: native parallel, gpuagg forced, and gpuagg forced
		# with AB_SETTING (default: the probe-key filter off), AB_QUERIES at SF
		SF=${SF:-10} SUITES=tpch QUERIES=Q1 keep_bench_cluster "TPC-H tables"
		workers="SET max_parallel_workers_per_gather = ${WORKERS:-16};"
		GPUAGG_USER=$GPUAGG_USER timeout 280 bash test/bench/ab_settings.sh "$dir" "$port" \
			"${AB_QUERIES:-Q3 Q5 Q7 Q9 Q10}" "native:SET gpuagg.enabled = off; $workers" \
			"gpuagg:SET gpuagg.force = on; SET gpuagg.device = gpu; $workers" \
			"variant:SET gpuagg.force = on; SET gpuagg.device = gpu; ${AB_SETTING:-SET gpuagg.probe_filter = off;} $workers" \
			>"$OUTDIR/$STAGE.txt" 2>&1
		rc=$?
		stop_bench_cluster
		[ "$rc" -eq 0 ] && verdict 0 "A/B timings in $STAGE.txt" || verdict 1 "A/B run failed, see $STAGE.txt"
		;;
	profile | strategies)
		ROWS=${ROWS:-1e8} SUITES=groupby QUERIES=q1 keep_bench_cluster "group-by table"
		cp "test/bench/$STAGE.sql" /tmp/gpuagg-profile.sql && chmod a+r /tmp/gpuagg-profile.sql
		(cd /tmp && timeout 280 runuser -u "$GPUAGG_USER" -- "$(pg_config --bindir)/psql" -X -h "$dir" -p "$port" \
			-d postgres -f /tmp/gpuagg-profile.sql) >"$OUTDIR/$STAGE.txt" 2>&1
		rc=$?
		stop_bench_cluster
		[ "$rc" -eq 0 ] && verdict 0 "$STAGE in $STAGE.txt" || verdict 1 "$STAGE.sql failed, see $STAGE.txt"
		;;
	load)
		TIME_LIMIT=${TIME_LIMIT:-540} OUT=$OUTDIR/load timeout 590 bash test/bench/load.sh >>"$LOG" 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && verdict 0 "load benchmark ran, no failed transaction; table in load/load.txt" ||
			verdict 1 "load benchmark: a transaction failed or a mode could not run, see load/load.txt and $STAGE.log"
		;;
	*)
		echo "unknown stage '$STAGE': device, aggjoin, derived, check, joinbench, groupby, tpch, tpch-ab, profile, strategies or load" >&2
		exit 2
		;;
esac
