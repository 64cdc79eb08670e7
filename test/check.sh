#!/usr/bin/env bash
# test/check.sh - set everything up and run every gpuagg test.
#
#   bash test/check.sh [--only layout|regress|conformance|t|package|versions] [--keep]
#
# As root on a fresh Debian 12: installs PostgreSQL 15 (GPUAGG_PG_MAJOR) + headers + a C
# toolchain if missing, builds and installs gpuagg, checks the tree's layout rules
# (test/lint/layout.sh), starts a throwaway cluster as an
# unprivileged user, then runs the pg_regress suite, the device conformance test and
# test/t/*.sh, checks the Debian package (test/deb.sh check: builds postgresql-15-gpuagg,
# dpkg -i, `make installcheck` against a cluster that preloads it, removes it again),
# builds gpuagg against the other PostgreSQL versions (test/versions.sh:
# 15 16 17 18 with -Werror, headers fetched from Debian's archive; a version whose headers
# cannot be had is SKIPPED with the reason, a compile error or warning FAILS), and prints a
# summary (exit status nonzero if any step failed).
# With PG_CONFIG=/path/to/pg_config it uses that PostgreSQL instead (no apt).
#
# Environment:
#   GPUAGG_TEST_DEVICE  cpu|gpu: device for the suite (default: gpu if gpuagg_devices()
#                       lists a usable GPU, else cpu); set cluster-wide as gpuagg.device
#   GPUAGG_DEVICE_HOST  service|auto|backend: where the suite's device runs (default
#                       service: in the GPU service, the CPU device too, so that every
#                       run exercises the service); set cluster-wide as
#                       gpuagg.device_host
#   GPUAGG_REGRESS      space-separated pg_regress tests to run instead of the full list
#   GPUAGG_T            space-separated test/t scripts to run instead of all of them
#                       (names without .sh, e.g. "004_service_kill 008_startup_log")
#   GPUAGG_TEST_OUT     directory that receives summary.txt, regression.out (pg_regress's
#                       output), conformance.log, t.log, versions.log, and on failure
#                       regression.diffs, results.tar.gz and server.log: at most 8 files,
#                       no subfolders
#   GPUAGG_STEP_TIMEOUT seconds each test step (pg_regress, conformance, one t script)
#                       may run before it is stopped and failed (default 1800)
#   GPUAGG_PACKAGE      1|0|auto: the package step (default auto: only when PG_CONFIG is
#                       not given, as it installs into the system's PostgreSQL; it needs
#                       root and SKIPS without)
#   GPUAGG_PG_VERSIONS  versions test/versions.sh builds against (default "15 16 17 18";
#                       "none" skips that step, e.g. on a machine with no network)
#   KEEP_CLUSTER=1      same as --keep; see also test/lib/common.sh and test/versions.sh
#
# test/t/*.sh scripts run as the invoking user with PG_CONFIG, PG_BINDIR, PGHOST,
# PGPORT, PGUSER, PGDATABASE=postgres, GPUAGG_RUN_USER and GPUAGG_DEVICE exported
# (as root, run clients through `runuser -u "$GPUAGG_RUN_USER" --`, or source
# test/lib/common.sh and use psql_as).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=test/lib/common.sh
. test/lib/common.sh

ONLY=""
STEP_NAMES=()
STEP_RESULTS=()
STEP_SECS=()
CURRENT_STEP=""
CURRENT_T0=""
DEVICE=""
STEP_TIMEOUT=${GPUAGG_STEP_TIMEOUT:-1800}

# Print the usage text.
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }

# Parse the command line.
parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
			--only)
				[ $# -ge 2 ] || die "--only needs layout, regress, conformance, t, package or versions"
				ONLY=$2
				shift 2
				;;
			--only=*) ONLY=${1#--only=}; shift ;;
			--keep) KEEP_CLUSTER=1; shift ;;
			-h | --help) usage; exit 0 ;;
			*) usage >&2; die "unknown argument: $1" ;;
		esac
	done
	case "$ONLY" in
		"" | layout | regress | conformance | t | package | versions) ;;
		*) die "--only takes layout, regress, conformance, t, package or versions, not '$ONLY'" ;;
	esac
	export KEEP_CLUSTER=${KEEP_CLUSTER:-0}
}

# Whether step kind $1 is selected by --only.
wanted() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

# Record the result of a step: record_step NAME PASS|FAIL|SKIP SECONDS.
record_step() {
	STEP_NAMES+=("$1")
	STEP_RESULTS+=("$2")
	STEP_SECS+=("$3")
}

# Run a setup step in this shell; if it dies, the EXIT hook records it as failed.
setup_step() {
	local name=$1
	shift
	section "$name"
	CURRENT_STEP=$name
	CURRENT_T0=$(now_s)
	"$@"
	record_step "$name" PASS "$(elapsed_since "$CURRENT_T0")"
	CURRENT_STEP=""
}

# Run a test step in a subshell with errexit on and record PASS/FAIL (a failure does not abort the script).
test_step() {
	local name=$1 t0 rc
	shift
	section "$name"
	t0=$(now_s)
	CURRENT_STEP="$name (interrupted)"
	CURRENT_T0=$t0
	set +e
	(
		set -e
		"$@"
	)
	rc=$?
	set -e
	CURRENT_STEP=""
	if [ "$rc" -eq 0 ]; then
		record_step "$name" PASS "$(elapsed_since "$t0")"
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		log "$name FAILED: stopped after GPUAGG_STEP_TIMEOUT=${STEP_TIMEOUT}s (exit status $rc)"
		record_step "$name" FAIL "$(elapsed_since "$t0")"
	else
		log "$name FAILED (exit status $rc)"
		record_step "$name" FAIL "$(elapsed_since "$t0")"
	fi
}

# Print the summary table; write it to GPUAGG_TEST_OUT/summary.txt too.
print_summary() {
	local i out
	out=$(
		printf '%-36s %-5s %8s\n' step result seconds
		for i in "${!STEP_NAMES[@]}"; do
			printf '%-36s %-5s %8s\n' "${STEP_NAMES[$i]}" "${STEP_RESULTS[$i]}" "${STEP_SECS[$i]}"
		done
		if [ -n "$DEVICE" ]; then printf 'device: %s\n' "$DEVICE"; fi
	)
	section "summary"
	printf '%s\n' "$out"
	if [ -n "${GPUAGG_TEST_OUT:-}" ]; then
		mkdir -p "$GPUAGG_TEST_OUT" && printf '%s\n' "$out" >"$GPUAGG_TEST_OUT/summary.txt"
	fi
}

# EXIT hook (called by ga_on_exit): record an aborted setup step, save the server log, stop the cluster, print the summary.
on_exit_hook() {
	local rc=$1 failed=0 r
	if [ -n "$CURRENT_STEP" ]; then
		record_step "$CURRENT_STEP" FAIL "$(elapsed_since "$CURRENT_T0")"
		CURRENT_STEP=""
	fi
	for r in "${STEP_RESULTS[@]}"; do
		if [ "$r" = FAIL ]; then failed=1; fi
	done
	if [ "$failed" = 1 ] && [ -n "${GPUAGG_TEST_OUT:-}" ] && [ -n "$CLUSTER_DIR" ] &&
		[ -f "$CLUSTER_DIR/server.log" ]; then
		mkdir -p "$GPUAGG_TEST_OUT" && cp "$CLUSTER_DIR/server.log" "$GPUAGG_TEST_OUT/server.log"
	fi
	stop_cluster
	print_summary
	if [ "$rc" -eq 0 ] && [ "$failed" = 0 ]; then
		log "all tests passed"
	else
		log "FAILED"
		if [ "$rc" -eq 0 ]; then GA_EXIT_RC=1; fi
	fi
}

# Choose the suite's device (GPUAGG_TEST_DEVICE, else ask gpuagg_devices()) and set it cluster-wide.
choose_device() {
	local ngpu
	if [ -n "${GPUAGG_TEST_DEVICE:-}" ]; then
		case "$GPUAGG_TEST_DEVICE" in
			cpu | gpu) DEVICE=$GPUAGG_TEST_DEVICE ;;
			*) die "GPUAGG_TEST_DEVICE must be cpu or gpu, not '$GPUAGG_TEST_DEVICE'" ;;
		esac
		log "device from GPUAGG_TEST_DEVICE: $DEVICE"
	fi
	if psql_as postgres -q -c "CREATE EXTENSION gpuagg"; then
		psql_as postgres -c "SELECT * FROM gpuagg_devices()" || true
		if ngpu=$(count_usable_gpus postgres); then
			if [ -z "$DEVICE" ]; then
				if [ "$ngpu" -gt 0 ]; then DEVICE=gpu; else DEVICE=cpu; fi
			elif [ "$DEVICE" = gpu ] && [ "$ngpu" -eq 0 ]; then
				warn "GPUAGG_TEST_DEVICE=gpu but gpuagg_devices() lists no usable GPU"
			fi
		else
			warn "gpuagg_devices() failed; using the CPU device"
		fi
		psql_as postgres -q -c "DROP EXTENSION gpuagg"
	else
		warn "CREATE EXTENSION gpuagg failed in the scratch database; using the CPU device" \
			"(the suite's setup test will show the error)"
	fi
	DEVICE=${DEVICE:-cpu}
	DEVICE_HOST=${GPUAGG_DEVICE_HOST:-service}
	case "$DEVICE_HOST" in
		service | auto | backend) ;;
		*) die "GPUAGG_DEVICE_HOST must be service, auto or backend, not '$DEVICE_HOST'" ;;
	esac
	psql_as postgres -q -c "ALTER SYSTEM SET gpuagg.device = '$DEVICE'" \
		-c "ALTER SYSTEM SET gpuagg.device_host = '$DEVICE_HOST'" -c "SELECT pg_reload_conf()" >/dev/null
	log "the suite runs on the ${DEVICE^^} device (gpuagg.device = '$DEVICE'," \
		"gpuagg.device_host = '$DEVICE_HOST', cluster-wide)"
	export GPUAGG_DEVICE=$DEVICE
}

# Print the directory pg_regress reads sql/ and expected/ from (a copy when the server user cannot read the repo).
regress_inputdir() {
	local copy d
	if as_pguser test -r "$GA_ROOT/sql" -a -x "$GA_ROOT/sql" -a -r "$GA_ROOT/expected" -a -x "$GA_ROOT/expected" 2>/dev/null; then
		echo "$GA_ROOT"
		return 0
	fi
	copy=$CLUSTER_DIR/regress-input
	mkdir -p "$copy"
	for d in sql expected input output data; do
		if [ -d "$GA_ROOT/$d" ]; then cp -R "$GA_ROOT/$d" "$copy/"; fi
	done
	if is_root; then chown -R "$GPUAGG_RUN_USER:" "$copy"; fi
	log "'$GPUAGG_RUN_USER' cannot read $GA_ROOT: pg_regress reads a copy in $copy" >&2
	echo "$copy"
}

# Run pg_regress over `make -s regress-list` (or GPUAGG_REGRESS); print and save the diffs on failure.
run_regress() {
	local tests inputdir outdir rc
	if [ -n "${GPUAGG_REGRESS:-}" ]; then
		tests=$GPUAGG_REGRESS
	else
		tests=$(make -s --no-print-directory regress-list PG_CONFIG="$PG_CONFIG")
	fi
	[ -n "$tests" ] || die "no pg_regress tests listed"
	inputdir=$(regress_inputdir)
	outdir=$CLUSTER_DIR/regress
	mkdir -p "$outdir"
	if is_root; then chown "$GPUAGG_RUN_USER:" "$outdir"; fi
	log "pg_regress ($(wc -w <<<"$tests") tests): $tests"
	# pg_regress deletes its regression.out on success: keep our own copy of its output
	set +e
	# shellcheck disable=SC2086  # $tests is a word list
	as_pguser timeout -k 10 "$STEP_TIMEOUT" "$PG_REGRESS" --inputdir="$inputdir" --outputdir="$outdir" --bindir="$PG_BINDIR" \
		--host="$CLUSTER_DIR" --port="$PGPORT_CLUSTER" --dbname=contrib_regression \
		--no-locale --encoding=UTF8 $tests 2>&1 |
		tee "$CLUSTER_DIR/pg_regress.out"
	rc=${PIPESTATUS[0]}
	set -e
	if [ -n "${GPUAGG_TEST_OUT:-}" ]; then
		mkdir -p "$GPUAGG_TEST_OUT"
		cp "$CLUSTER_DIR/pg_regress.out" "$GPUAGG_TEST_OUT/regression.out"
	fi
	if [ "$rc" -ne 0 ]; then
		if [ -s "$outdir/regression.diffs" ]; then
			echo "======== regression.diffs ========"
			cat "$outdir/regression.diffs"
			echo "======== end of regression.diffs ========"
		fi
		if [ -n "${GPUAGG_TEST_OUT:-}" ]; then
			if [ -f "$outdir/regression.diffs" ]; then cp "$outdir/regression.diffs" "$GPUAGG_TEST_OUT/"; fi
			if [ -d "$outdir/results" ]; then tar czf "$GPUAGG_TEST_OUT/results.tar.gz" -C "$outdir" results; fi
			log "regression.out, regression.diffs and results.tar.gz copied to $GPUAGG_TEST_OUT"
		fi
		return "$rc"
	fi
}

# Run the device conformance test: the CPU device and the GPU service's (through a
# service inside the test's process), or every device when the suite uses the GPU.
run_conformance() {
	local which=cpu,service
	if [ "$DEVICE" = gpu ]; then which=all; fi
	log "bash test/conformance/run.sh --device $which"
	if [ -n "${GPUAGG_TEST_OUT:-}" ]; then
		mkdir -p "$GPUAGG_TEST_OUT"
		timeout -k 10 "$STEP_TIMEOUT" bash test/conformance/run.sh --device "$which" 2>&1 |
			tee "$GPUAGG_TEST_OUT/conformance.log"
	else
		timeout -k 10 "$STEP_TIMEOUT" bash test/conformance/run.sh --device "$which"
	fi
}

# Run one test/t/*.sh script with the cluster's connection settings exported.
run_t_script() {
	export PGHOST=$CLUSTER_DIR PGPORT=$PGPORT_CLUSTER PGUSER=$GPUAGG_RUN_USER PGDATABASE=postgres
	if [ -n "${GPUAGG_TEST_OUT:-}" ]; then
		mkdir -p "$GPUAGG_TEST_OUT"
		{ echo "==== $1"; timeout -k 10 "$STEP_TIMEOUT" bash "$1" 2>&1; } | tee -a "$GPUAGG_TEST_OUT/t.log"
	else
		timeout -k 10 "$STEP_TIMEOUT" bash "$1"
	fi
}

# Check the Debian package (test/deb.sh check) unless GPUAGG_PACKAGE or a given PG_CONFIG says not to.
run_package() {
	local mode=${GPUAGG_PACKAGE:-auto} name="package (postgresql-$GA_PG_MAJOR-gpuagg)" why="" t0 rc
	case "$mode" in
		1 | 0 | auto) ;;
		*) die "GPUAGG_PACKAGE must be 1, 0 or auto, not '$mode'" ;;
	esac
	if [ "$mode" = 0 ]; then
		why="GPUAGG_PACKAGE=0"
	elif [ "$mode" = auto ] && [ -n "$GA_PG_CONFIG_GIVEN" ]; then
		why="PG_CONFIG given, and the step installs into the system's PostgreSQL $GA_PG_MAJOR (GPUAGG_PACKAGE=1 runs it)"
	elif ! is_root; then
		why="not root (the step installs the package with dpkg -i)"
	fi
	if [ -n "$why" ]; then
		section "$name"
		log "SKIPPED: $why"
		record_step "$name" SKIP 0
		return 0
	fi
	section "$name"
	t0=$(now_s)
	CURRENT_STEP="$name (interrupted)"
	CURRENT_T0=$t0
	set +e
	timeout -k 10 "$STEP_TIMEOUT" bash test/deb.sh check
	rc=$?
	set -e
	CURRENT_STEP=""
	case "$rc" in
		0) record_step "$name" PASS "$(elapsed_since "$t0")" ;;
		77) record_step "$name" SKIP "$(elapsed_since "$t0")" ;;
		*)
			log "$name FAILED (exit status $rc)"
			record_step "$name" FAIL "$(elapsed_since "$t0")"
			;;
	esac
}

# Build against the other PostgreSQL versions (test/versions.sh); one summary row per version.
run_versions() {
	local results rc v r secs detail
	section "build against PostgreSQL ${GPUAGG_PG_VERSIONS-15 16 17 18}"
	if [ "${GPUAGG_PG_VERSIONS-}" = none ]; then
		log "SKIPPED: GPUAGG_PG_VERSIONS=none"
		record_step "versions" SKIP 0
		return 0
	fi
	results=$(mktemp "${GPUAGG_TMPDIR:-/tmp}/gpuagg-versions.XXXXXX")
	set +e
	if [ -n "${GPUAGG_TEST_OUT:-}" ]; then
		mkdir -p "$GPUAGG_TEST_OUT"
		GPUAGG_VERSIONS_RESULTS=$results timeout -k 10 "$STEP_TIMEOUT" bash test/versions.sh 2>&1 |
			tee "$GPUAGG_TEST_OUT/versions.log"
		rc=${PIPESTATUS[0]}
	else
		GPUAGG_VERSIONS_RESULTS=$results timeout -k 10 "$STEP_TIMEOUT" bash test/versions.sh
		rc=$?
	fi
	set -e
	if [ ! -s "$results" ]; then
		log "test/versions.sh FAILED (exit status $rc) before reporting any version"
		record_step "versions" FAIL 0
	else
		while read -r v r secs detail; do
			record_step "build with PostgreSQL $v -Werror" "$r" "$secs"
		done <"$results"
		if [ "$rc" -ne 0 ] && ! grep -q ' FAIL ' "$results"; then
			log "test/versions.sh exited with status $rc"
			record_step "versions" FAIL 0
		fi
	fi
	rm -f "$results"
}

# Set up, run the selected steps, and let the EXIT hook print the summary.
main() {
	local t found=0
	parse_args "$@"
	GA_PG_CONFIG_GIVEN=${PG_CONFIG:-}
	install_exit_trap
	log "gpuagg check in $GA_ROOT${ONLY:+ (only: $ONLY)}"
	setup_step "packages" ensure_packages
	setup_step "build+install" build_and_install
	if wanted layout; then
		test_step "layout" bash test/lint/layout.sh
	fi
	if [ "$ONLY" != versions ] && [ "$ONLY" != layout ] && [ "$ONLY" != package ]; then
		setup_step "cluster" start_cluster test
		setup_step "device" choose_device
	fi

	if wanted regress; then
		test_step "regress" run_regress
	fi
	if wanted conformance; then
		if [ -f test/conformance/run.sh ]; then
			test_step "conformance ($([ "$DEVICE" = gpu ] && echo all || echo cpu,service))" run_conformance
		else
			section "conformance"
			log "SKIPPED: test/conformance/run.sh does not exist yet"
			record_step "conformance" SKIP 0
		fi
	fi
	if wanted t; then
		for t in test/t/*.sh; do
			[ -f "$t" ] || continue
			if [ -n "${GPUAGG_T:-}" ] && ! [[ " $GPUAGG_T " == *" $(basename "$t" .sh) "* ]]; then
				continue
			fi
			found=1
			test_step "$t" run_t_script "$t"
		done
		[ "$found" = 1 ] || log "no test/t/*.sh scripts"
	fi
	if wanted package; then
		run_package
	fi
	if wanted versions; then
		run_versions
	fi
}

main "$@"
