#!/usr/bin/env bash
# test/lib/tscript.sh - what the test/t scripts share: running a program as the server
# user, a throwaway cluster of a script's own, and a scratch database in the suite's
# cluster. Sourced by test/t/*.sh, which test/check.sh runs with PG_BINDIR, PGHOST,
# PGPORT, GPUAGG_RUN_USER and GPUAGG_DEVICE exported.

# Run a command as the server user (we may be root).
run_as() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u "$GPUAGG_RUN_USER" -- "$@"; else "$@"; fi
}

# Make a throwaway cluster, not started, in a new directory gpuagg-$1.* on port
# PGPORT + $2, its postgresql.conf the socket and port lines and then the lines on
# stdin; sets dir and port; the cluster is stopped and its directory removed at exit.
t_cluster_init() {
	dir=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-$1.XXXXXX")
	chmod 755 "$dir"
	if [ "$(id -u)" -eq 0 ]; then chown "$GPUAGG_RUN_USER:" "$dir"; fi
	trap t_cluster_cleanup EXIT
	port=$((PGPORT + $2))
	run_as "$PG_BINDIR/initdb" -D "$dir/data" -A trust >/dev/null
	{
		printf "listen_addresses = ''\nunix_socket_directories = '%s'\nport = %s\n" "$dir" "$port"
		cat
	} >>"$dir/data/postgresql.conf"
}

# Start the throwaway cluster (its log in $dir/log) and point psql_db at its postgres
# database, unaligned and quiet, stopping at the first error.
t_cluster_start() {
	run_as "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null
	psql_db() {
		run_as "$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -d postgres "$@"
	}
}

# Stop the throwaway cluster and remove its directory.
t_cluster_cleanup() {
	run_as "$PG_BINDIR/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}

# Use scratch database $1 of the suite's cluster (dropped at exit, with the work
# directory): sets db and work (a new directory gpuagg-$2.* every user may write).
t_scratch_db() {
	db=$1
	work=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-$2.XXXXXX")
	chmod 777 "$work"
	trap t_scratch_cleanup EXIT
}

# Drop the scratch database and the work directory.
t_scratch_cleanup() {
	run_as "$PG_BINDIR/psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
	rm -rf "$work"
}

# Run SQL in the scratch database, unaligned and quiet.
psql_db() {
	run_as "$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$db" "$@"
}

# Create the extension and table t (2e6 rows, 5000 groups of k) through psql_db, and set
# query to an aggregation over t whose groups fold into one md5.
t_agg_table() {
	psql_db -c "CREATE EXTENSION gpuagg" \
		-c "CREATE TABLE t AS SELECT i % 5000 AS k, i AS v, (i % 7)::float8 AS f FROM generate_series(1, 2000000) i" \
		-c "ANALYZE t"
	query="SELECT md5(string_agg(k || ':' || s || ':' || n || ':' || a, ',' ORDER BY k))
  FROM (SELECT k, sum(v) AS s, count(*) AS n, avg(f) AS a FROM t GROUP BY k) g"
}

# Wait up to 10 s for the GPU service to run device $1 (a gpuagg_stats device name
# prefix), through psql_db; print its pid, or nothing when it is not ready.
t_service_pid() {
	local state="" i
	for i in $(seq 1 200); do
		state=$(psql_db -c "SELECT state || ' ' || pid FROM gpuagg_stats WHERE device ILIKE '$1%' LIMIT 1")
		case "$state" in ready\ *) echo "${state#ready }"; return ;; esac
		sleep 0.05
	done
}

# Print field $2 (name=value) of mode $1's line in $out, the output of
# test/bench/memory.sh.
memory_field() {
	printf '%s\n' "$out" | awk -v m="$1" -v f="$2" \
		'$1 == m { for (i = 2; i <= NF; i++) if (index($i, f "=") == 1) print substr($i, length(f) + 2) }'
}

# Report a failed check of script $T_NAME (the caller's fail becomes 1).
failed() {
	echo "$T_NAME: $*"
	fail=1
}
