#!/usr/bin/env bash
# test/t/001_preload.sh - gpuagg used without shared_preload_libraries fails with
# a clear error and a hint, instead of half-working.
#
# Run by test/check.sh with PG_BINDIR, PGHOST, PGPORT, GPUAGG_RUN_USER exported.
# Starts a second throwaway cluster without the preload, tries CREATE EXTENSION.
set -euo pipefail

# shellcheck source=test/lib/tscript.sh
. "$(dirname "$0")/../lib/tscript.sh"

t_cluster_init preload 1 </dev/null
run_as "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null

out=$(run_as "$PG_BINDIR/psql" -X -h "$dir" -p "$port" -d postgres -v VERBOSITY=default \
	-c 'CREATE EXTENSION gpuagg' 2>&1 || true)
echo "$out"
fail=0
grep -q 'ERROR:  gpuagg must be loaded via shared_preload_libraries' <<<"$out" || fail=1
grep -q "HINT:  Add gpuagg to shared_preload_libraries in postgresql.conf and restart the server." <<<"$out" || fail=1
# the server survived and has no gpuagg objects
run_as "$PG_BINDIR/psql" -X -h "$dir" -p "$port" -d postgres -Atc \
	"SELECT count(*) FROM pg_extension WHERE extname = 'gpuagg'" | grep -qx 0 || fail=1
if [ "$fail" -ne 0 ]; then
	echo "001_preload: FAILED: expected the preload error and hint"
	exit 1
fi
echo "001_preload: ok"
