#!/usr/bin/env bash
# test/t/002_no_leaks.sh - errors, cancels and device failures in the middle of
# GpuHashAgg leave no device memory, pinned host memory or host memory behind.
#
# One backend runs 10 rounds of: an error in the child plan after the first
# batch went to the device, a statement_timeout cancel, an injected device
# failure finished on the CPU, and one that fails the query.  The backend's
# resident memory (pinned buffers and CPU-device buffers count there) and, with
# the GPU device, the GPU's used memory must not grow by more than one query's
# worth.  Run by test/check.sh with PG_BINDIR, PGHOST, PGPORT, GPUAGG_RUN_USER
# and GPUAGG_DEVICE exported.
set -euo pipefail

run_as() {
	# Run a command as the server user (we may be root).
	if [ "$(id -u)" -eq 0 ]; then runuser -u "$GPUAGG_RUN_USER" -- "$@"; else "$@"; fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-leaks.XXXXXX")
chmod 777 "$work"
trap 'rm -rf "$work"' EXIT

# sample.sh LABEL: append "LABEL rss_kb gpu_used_mib" for the backend in $work/pid
cat >"$work/sample.sh" <<'SAMPLE'
pid=$(tr -dc 0-9 < "$(dirname "$0")/pid")
rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
gpu=0
if [ "${GPUAGG_DEVICE:-cpu}" = gpu ] && command -v nvidia-smi >/dev/null 2>&1; then
	gpu=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
fi
echo "$1 $rss $gpu" >> "$(dirname "$0")/samples"
SAMPLE
chmod 755 "$work/sample.sh"

round() {
	# One round of failing queries.
	cat <<SQL
SELECT k, sum(v / (v - 2500000)) FROM leak GROUP BY k;
SET statement_timeout = '300ms';
SELECT a.k, count(*), sum(b.v) FROM leak a, leak b WHERE b.v < 20 GROUP BY a.k;
RESET statement_timeout;
SET gpuagg.debug_fail_at_batch = 2;
SELECT * FROM (SELECT k, sum(v), count(*) FROM leak GROUP BY k) s OFFSET 100000000;
SELECT * FROM (SELECT k, sum(v) FROM leak WHERE random() >= 0 GROUP BY k) s OFFSET 100000000;
RESET gpuagg.debug_fail_at_batch;
SQL
}

{
	cat <<SQL
\\o $work/pid
SELECT pg_backend_pid();
\\o
SET gpuagg.force = on;
SET gpuagg.device = '${GPUAGG_DEVICE:-cpu}';
SET gpuagg.batch_rows = 2097152;
SET client_min_messages = warning;
CREATE TEMP TABLE leak AS SELECT i % 100000 AS k, i AS v FROM generate_series(1, 3000000) i;
SELECT * FROM (SELECT k, sum(v) FROM leak GROUP BY k) s OFFSET 100000000;
SQL
	round
	echo "\\! $work/sample.sh before"
	for _ in 1 2 3 4 5 6 7 8 9 10; do round; done
	echo "\\! $work/sample.sh after"
	echo "SELECT count(*) AS groups, sum(s) FROM (SELECT k, sum(v) AS s FROM leak GROUP BY k) g;"
} >"$work/script.sql"
chmod 644 "$work/script.sql"

out=$(GPUAGG_DEVICE=${GPUAGG_DEVICE:-cpu} run_as "$PG_BINDIR/psql" -X -At -d postgres -f "$work/script.sql" 2>&1 || true)
errors=$(grep -c '^psql:.*ERROR' <<<"$out" || true)
cat "$work/samples"
read -r _ rss0 gpu0 < <(grep '^before' "$work/samples")
read -r _ rss1 gpu1 < <(grep '^after' "$work/samples")
echo "errors seen: $errors (expected 33: 11 rounds x 3 failing queries)"
echo "resident memory: ${rss0} kB -> ${rss1} kB; GPU used: ${gpu0} MiB -> ${gpu1} MiB"
fail=0
[ "$errors" -eq 33 ] || { echo "unexpected number of errors:"; echo "$out" | grep ERROR | sort | uniq -c; fail=1; }
grep -qx '100000|4500001500000' <<<"$out" || { echo "final query gave a wrong answer"; fail=1; }
[ $((rss1 - rss0)) -lt 65536 ] || { echo "resident memory grew by $(((rss1 - rss0) / 1024)) MB"; fail=1; }
[ $((gpu1 - gpu0)) -lt 64 ] || { echo "GPU memory grew by $((gpu1 - gpu0)) MiB"; fail=1; }
if [ "$fail" -ne 0 ]; then
	echo "002_no_leaks: FAILED"
	exit 1
fi
echo "002_no_leaks: ok"
