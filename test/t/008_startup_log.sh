#!/usr/bin/env bash
# test/t/008_startup_log.sh - at server start gpuagg writes one line to the server log
# that lists the GPUs it found, or says that there is none and why in the words of
# gpuagg_devices(); a gpuagg.gpu_index in postgresql.conf that names no GPU is let be
# with a warning (the server starts; gpuagg.device = auto plans natively, gpu fails with
# why), and SET refuses such a value.
#
# Run by test/check.sh with PG_BINDIR, PGHOST, PGPORT, GPUAGG_RUN_USER exported.
# Starts a second throwaway cluster that preloads gpuagg, with gpuagg.gpu_index = 15
# (no machine has sixteen GPUs), and reads its log.
set -euo pipefail

# shellcheck source=test/lib/tscript.sh
. "$(dirname "$0")/../lib/tscript.sh"

t_cluster_init startlog 2 <<CONF
shared_preload_libraries = 'gpuagg'
gpuagg.gpu_index = 15
CONF
run_as "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null

psql_db() {
	# Run SQL in the throwaway cluster, unaligned.
	run_as "$PG_BINDIR/psql" -X -At -h "$dir" -p "$port" -d postgres "$@"
}

T_NAME=008_startup_log
fail=0

lines=$(grep -E 'LOG:  gpuagg: ([0-9]+ usable GPUs?: |no usable GPU: )' "$dir/log" || true)
printf 'start-up line: %s\n' "$lines"
[ "$(grep -c . <<<"$lines")" = 1 ] || failed "expected one start-up line about the GPUs, found: $lines"
psql_db -c "CREATE EXTENSION gpuagg" >/dev/null
usable=$(psql_db -c "SELECT count(*) FROM gpuagg_devices() WHERE usable")
note=$(psql_db -c "SELECT note FROM gpuagg_devices() WHERE NOT usable")
if [ "$usable" -gt 0 ]; then
	grep -qF "gpuagg: $usable usable GPU" <<<"$lines" ||
		failed "gpuagg_devices() lists $usable GPU(s), the log line says otherwise"
else
	grep -qF "gpuagg: no usable GPU: $note;" <<<"$lines" ||
		failed "the log line does not give gpuagg_devices()'s reason ($note)"
	case "$note" in
		*"CUDA driver version is insufficient"*) failed "the reason is CUDA's, not in a DBA's words: $note" ;;
	esac
fi

# gpuagg.gpu_index = 15 from postgresql.conf: a warning, the server is up, auto plans
# natively (the aggregates above ran), and gpuagg.device = gpu fails planning with why
grep -q 'WARNING:  gpuagg.gpu_index is 15, which names no GPU' "$dir/log" ||
	failed "no warning about gpuagg.gpu_index = 15 in the server log"
[ "$(psql_db -c "SHOW gpuagg.gpu_index")" = 15 ] || failed "gpuagg.gpu_index from postgresql.conf was not kept"
out=$(psql_db -c "SET gpuagg.gpu_index = 15" 2>&1 || true)
printf 'SET gpuagg.gpu_index = 15: %s\n' "$out"
grep -q 'invalid value for parameter "gpuagg.gpu_index": 15' <<<"$out" || failed "SET gpuagg.gpu_index = 15 was not refused"
grep -q 'names no GPU' <<<"$out" || failed "the refusal does not say why"
if [ "$usable" -gt 0 ]; then
	out=$(psql_db -c "SET gpuagg.device = gpu" \
		-c "SELECT k, count(*) FROM (VALUES (1), (2)) v(k) GROUP BY k" 2>&1 || true)
	printf 'gpuagg.device = gpu with gpuagg.gpu_index = 15: %s\n' "$out"
	grep -q 'ERROR:  gpuagg.gpu_index is 15, which names no GPU' <<<"$out" ||
		failed "gpuagg.device = gpu planned with a gpuagg.gpu_index that names no GPU"
fi

if [ "$fail" -ne 0 ]; then
	echo "--- server log:"
	cat "$dir/log"
	echo "008_startup_log: FAILED"
	exit 1
fi
echo "008_startup_log: ok"
