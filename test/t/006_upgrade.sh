#!/usr/bin/env bash
# test/t/006_upgrade.sh - an install of the extension's first version, 0.1, served by
# this library and upgraded with ALTER EXTENSION gpuagg UPDATE, equals a fresh install of
# the default version, and passes the pg_regress suite.
#
# Checks, in scratch databases of the suite's cluster:
#   - CREATE EXTENSION gpuagg VERSION '0.1' and its gpuagg_devices(), whose 0.1
#     declaration has fewer columns than this library returns (a library installed before
#     the ALTER EXTENSION); a declaration with a column the library does not know fails
#     with an error that names ALTER EXTENSION gpuagg UPDATE;
#   - ALTER EXTENSION gpuagg UPDATE reaches default_version (gpuagg.control) through the
#     scripts' chain, and a few queries run on the upgraded extension;
#   - the upgraded extension's objects (each member with its definition, volatility,
#     parallel safety, strictness, privileges and comment) equal a fresh install's;
#   - the pg_regress suite, with its setup test installing 0.1 and upgrading instead of
#     CREATE EXTENSION gpuagg.
# Run by test/check.sh with PG_CONFIG, PG_BINDIR, PGHOST, PGPORT, GPUAGG_RUN_USER exported.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

run_as() {
	# Run a command as the server user (we may be root).
	if [ "$(id -u)" -eq 0 ]; then runuser -u "$GPUAGG_RUN_USER" -- "$@"; else "$@"; fi
}

old_db=gpuagg_upgrade_old
new_db=gpuagg_upgrade_new
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-upgrade.XXXXXX")
chmod 755 "$work"
cleanup() {
	# Drop the scratch databases and the work directory.
	run_as "$PG_BINDIR/psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS $old_db" \
		-c "DROP DATABASE IF EXISTS $new_db" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

psql_db() {
	# Run SQL in database $1, unaligned and quiet.
	local db=$1
	shift
	run_as "$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$db" "$@"
}

fail=0
failed() {
	# Report a failed check.
	echo "006_upgrade: $*"
	fail=1
}

default_version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" gpuagg.control)
[ -n "$default_version" ] || { echo "006_upgrade: no default_version in gpuagg.control"; exit 1; }

# Every member of the extension in database $1, one line each, with what defines it.
members_sql="SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
	|| coalesce(' | ' || pg_get_function_arguments(p.oid) || ' | ' || pg_get_function_result(p.oid) || ' | ' || p.provolatile::text || p.proparallel::text
		|| p.proisstrict::text || ' | ' || coalesce(p.proacl::text, 'default acl'), '')
	|| coalesce(' | ' || pg_get_viewdef(c.oid), '')
	|| coalesce(' | ' || obj_description(d.objid, d.classid::regclass::name), '')
FROM pg_depend d
LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpuagg')
ORDER BY 1"

for db in $old_db $new_db; do
	psql_db postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
done

# ---- 0.1, served by this library
psql_db $old_db -c "CREATE EXTENSION gpuagg VERSION '0.1'"
v=$(psql_db $old_db -c "SELECT extversion FROM pg_extension WHERE extname = 'gpuagg'")
[ "$v" = 0.1 ] || failed "CREATE EXTENSION gpuagg VERSION '0.1' installed '$v'"
if ! out=$(psql_db $old_db -c "SELECT row_to_json(d) FROM gpuagg_devices() d LIMIT 1" 2>&1); then
	failed "gpuagg_devices() of 0.1 failed with this library: $out"
else
	echo "gpuagg_devices() under 0.1: $out"
	grep -q '"note"' <<<"$out" && ! grep -q '"service"' <<<"$out" ||
		failed "gpuagg_devices() under 0.1 should have 0.1's columns, up to note"
fi
out=$(psql_db $old_db -c "CREATE FUNCTION pg_temp.devices_unknown(OUT device integer, OUT colour text)
		RETURNS SETOF record AS '\$libdir/gpuagg', 'gpuagg_devices' LANGUAGE C" \
	-c "SELECT * FROM pg_temp.devices_unknown()" 2>&1 || true)
grep -q 'declared with a column "colour" of type text that this gpuagg library does not return' <<<"$out" &&
	grep -q 'ALTER EXTENSION gpuagg UPDATE' <<<"$out" ||
	failed "a declaration with an unknown column did not fail with the upgrade hint: $out"

# ---- ALTER EXTENSION gpuagg UPDATE
psql_db $old_db -c "ALTER EXTENSION gpuagg UPDATE"
v=$(psql_db $old_db -c "SELECT extversion FROM pg_extension WHERE extname = 'gpuagg'")
[ "$v" = "$default_version" ] || failed "ALTER EXTENSION gpuagg UPDATE reached '$v', not '$default_version'"
echo "ALTER EXTENSION gpuagg UPDATE: 0.1 -> $v"
psql_db $old_db -c "SELECT count(*) FROM gpuagg_devices() WHERE service IS NOT NULL" >/dev/null ||
	failed "gpuagg_devices() after the upgrade"
psql_db $old_db -c "SELECT count(*) FROM gpuagg_stats" >/dev/null || failed "gpuagg_stats after the upgrade"
group_by="SELECT k, sum(v), count(*) FROM t GROUP BY k ORDER BY k"
psql_db $old_db -c "CREATE TABLE t AS SELECT g % 7 AS k, g AS v FROM generate_series(1, 1000) g"
plan=$(psql_db $old_db -c "SET gpuagg.force = on" -c "EXPLAIN (COSTS OFF) $group_by")
grep -q 'Custom Scan (GpuHashAgg)' <<<"$plan" || failed "no GpuHashAgg on the upgraded extension: $plan"
accelerated=$(psql_db $old_db -c "SET gpuagg.force = on" -c "$group_by")
native=$(psql_db $old_db -c "SET gpuagg.enabled = off" -c "$group_by")
[ "$accelerated" = "$native" ] && [ -n "$native" ] ||
	failed "GROUP BY on the upgraded extension: gpuagg '$accelerated', native '$native'"
psql_db $old_db -c "DROP TABLE t"

# ---- the same objects as a fresh install
psql_db $new_db -c "CREATE EXTENSION gpuagg"
psql_db $old_db -c "$members_sql" >"$work/upgraded.txt"
psql_db $new_db -c "$members_sql" >"$work/fresh.txt"
if ! diff -u "$work/fresh.txt" "$work/upgraded.txt"; then
	failed "the upgraded extension's objects differ from a fresh install's (diff above: - fresh, + upgraded)"
else
	echo "the upgraded extension's $(psql_db $new_db -c "SELECT count(*) FROM pg_depend WHERE deptype = 'e'
		AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpuagg')") members equal a fresh install's"
fi

# ---- the pg_regress suite, its setup test upgrading from 0.1
mkdir -p "$work/input" "$work/out"
cp -R sql expected "$work/input/"
for f in "$work/input/sql/setup.sql" "$work/input/expected/setup.out"; do
	sed -i "s/^CREATE EXTENSION gpuagg;\$/CREATE EXTENSION gpuagg VERSION '0.1';\nALTER EXTENSION gpuagg UPDATE;/" "$f"
	grep -q "^ALTER EXTENSION gpuagg UPDATE;" "$f" || { failed "no CREATE EXTENSION gpuagg line in $f"; exit 1; }
done
chmod -R a+rX "$work/input"
if [ "$(id -u)" -eq 0 ]; then chown "$GPUAGG_RUN_USER:" "$work/out"; fi
tests=$(make -s --no-print-directory regress-list PG_CONFIG="$PG_CONFIG")
# shellcheck disable=SC2086  # $tests is a word list
if ! (cd "$work" && run_as "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress" \
	--inputdir="$work/input" --outputdir="$work/out" --bindir="$PG_BINDIR" \
	--host="$PGHOST" --port="$PGPORT" --dbname=gpuagg_upgrade_regress \
	--no-locale --encoding=UTF8 $tests); then
	if [ -f "$work/out/regression.diffs" ]; then cat "$work/out/regression.diffs"; fi
	failed "the pg_regress suite on an extension upgraded from 0.1"
fi
run_as "$PG_BINDIR/psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS gpuagg_upgrade_regress" >/dev/null 2>&1 || true

if [ "$fail" -ne 0 ]; then
	echo "006_upgrade: FAILED"
	exit 1
fi
echo "006_upgrade: ok"
