#!/usr/bin/env bash
# test/t/003_differential.sh - random tables and random GROUP BY and join queries give the
# same answers (or the same errors) with GpuHashAgg and GpuHashJoin forced and with gpuagg
# off.
#
# test/differential/gen.py creates a scratch database (gpuagg_diff, dropped at the
# end) with tables of 0, 1, a few hundred and ~50,000 rows (NULLs, skew, special
# floats, extreme integers, long text, every supported key type and several
# unsupported ones), generates random queries (keys, aggregates, FILTER, HAVING,
# WHERE, joins, subqueries, CTEs, UNION ALL, correlated and LATERAL subqueries,
# ORDER BY/LIMIT) and runs each with gpuagg.force = on and gpuagg.enabled = off.
# test/differential/joins.py adds tables made for joining (0 to ~20,000 rows; keys of
# every type GpuHashJoin takes, NULL keys, skewed and duplicate keys, values meeting
# across types) and join queries: INNER, LEFT, RIGHT, FULL, SEMI (EXISTS, IN) and ANTI
# (NOT EXISTS, LEFT JOIN ... IS NULL), one to five keys, key expressions, other join
# conditions, filters above outer joins, empty sides, self-joins, three tables, USING,
# partitioned tables, GROUP BY above and below, rescans in correlated and LATERAL
# subqueries; each query's work is bounded (at most ~12,000 candidate pairs).
# test/differential/join_strings.py adds tables of adversarial strings (empty, blanks,
# char(n) padding, multibyte and decomposed UTF-8, long ones compressed and out of line)
# and aggregates over their joins grouped by text, varchar and char(n) columns of either
# side, in the session (gpuagg.device_host = backend) and through the GPU service, with
# the key hash cut to 1 or 2 bits now and then (gpuagg.debug_hash_bits).
# It fails on any difference, when fewer than 30% of the GROUP BY queries had
# GpuHashAgg in their forced plan, or fewer than 30% of the join queries had
# GpuHashJoin, or fewer than 30% of the string queries ran as an aggjoin GpuHashAgg
# (the test would not be testing).
#
# Environment (besides what test/check.sh exports: PG_BINDIR, PGHOST, PGPORT,
# PGUSER, GPUAGG_RUN_USER, GPUAGG_DEVICE):
#   GPUAGG_DIFF_SEED          random seed (default fixed; printed)
#   GPUAGG_DIFF_QUERIES       number of GROUP BY queries (default 3000)
#   GPUAGG_DIFF_JOIN_QUERIES  number of join queries, numbered after those (default 2000)
#   GPUAGG_DIFF_STRING_QUERIES  number of string queries, numbered after those (default 400)
#   GPUAGG_DIFF_ONLY          run only these query numbers (comma-separated), same seed
#                             and counts
#   GPUAGG_DIFF_KEEP=1        keep the scratch database for investigation
#
# A mismatch prints its query, the rows only one side returned, and how to rerun it alone:
#   GPUAGG_DIFF_SEED=S GPUAGG_DIFF_QUERIES=N GPUAGG_DIFF_JOIN_QUERIES=M \
#     GPUAGG_DIFF_STRING_QUERIES=K GPUAGG_DIFF_ONLY=Q bash test/t/003_differential.sh
# and `python3 test/differential/gen.py sql` prints the setup SQL and every query.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
command -v python3 >/dev/null 2>&1 || { echo "003_differential: FAILED: python3 not found"; exit 1; }
if python3 test/differential/gen.py run; then
	echo "003_differential: ok"
else
	echo "003_differential: FAILED"
	exit 1
fi
