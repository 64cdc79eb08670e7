#!/usr/bin/env bash
# test/bench/ab_settings.sh - A/B timings of TPC-H queries under settings, in one session
#
#   bash test/bench/ab_settings.sh HOST_DIR PORT "Q3 Q5" "label:SET ...;" ["label:SET ...;" ...]
#
# Runs, against the tpch schema of a cluster kept by test/bench/run.sh (KEEP_CLUSTER=1),
# every query of test/bench/tpch_queries.sql named in the third argument under each
# labelled group of settings in turn, ROUNDS (default 2) times round-robin, so that a
# machine's drift falls on every variant alike; prints one line per run
# ("Q5 filter-off 1 1234.567 ms") and a median per query and variant.  Each run is
# `SELECT * FROM (q) s OFFSET huge`, as the benchmark times queries.
set -euo pipefail
dir=$1 port=$2 queries=$3
shift 3
rounds=${ROUNDS:-2}
here=$(cd "$(dirname "$0")" && pwd)
user=${GPUAGG_USER:-pgrun}
psql=$(pg_config --bindir)/psql
sql=$(mktemp /tmp/gpuagg-ab.XXXXXX.sql)
chmod a+r "$sql"
{
	echo "\\timing on"
	echo "SET search_path = tpch, public;"
	for round in $(seq 1 "$rounds"); do
		for q in $queries; do
			body=$(awk -v id="$q" '
				/^-- Q[0-9]+:/ { on = (substr($2, 1, length($2) - 1) == id); next }
				/^--/ || /^[ \t]*$/ { next }
				on { sub(/;[ \t]*$/, ""); print }' "$here/tpch_queries.sql")
			[ -n "$body" ] || { echo "no query $q" >&2; exit 1; }
			for variant in "$@"; do
				echo "\\echo @@ $q ${variant%%:*} $round"
				echo "RESET ALL; SET search_path = tpch, public; ${variant#*:}"
				printf 'SELECT * FROM (%s) s OFFSET 1000000000;\n' "$body"
			done
		done
	done
} >"$sql"
(cd /tmp && runuser -u "$user" -- "$psql" -X -h "$dir" -p "$port" -d postgres -f "$sql") 2>&1 |
	awk '/^@@ / { label = $2 " " $3 " " $4; pending = 0; next }
		/^\(0 rows\)/ && label != "" { pending = 1; next }
		/^Time: / && pending { printf "%s %s ms\n", label, $2; pending = 0; label = ""; next }
		/ERROR/ { print; bad = 1 }
		END { exit bad }' | tee /tmp/gpuagg-ab.out
rm -f "$sql"
# medians per query and variant
python3 - /tmp/gpuagg-ab.out <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 5 and f[4] == "ms":
        runs.setdefault((f[0], f[1]), []).append(float(f[3]))
for (q, variant), times in sorted(runs.items()):
    print("median %s %s %.1f ms (%d runs)" % (q, variant, statistics.median(times), len(times)))
PY
