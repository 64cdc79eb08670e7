#!/usr/bin/env python3
"""Differential test of GpuHashAgg and GpuHashJoin: random tables, random
GROUP BY queries, random join queries and random aggregates over joins grouped
by strings, each run with gpuagg.force = on and with gpuagg.enabled = off,
compared.

    python3 test/differential/gen.py run     generate, run, compare, report
    python3 test/differential/gen.py sql     print the setup SQL and the queries

Design notes.  This file draws a seed's tables and queries, runs them and
reports; each part has a module of its own, with its own notes:

  groupby.py  the scratch tables of the GROUP BY queries (every key and
              aggregate input type, NULL rates, skew, equal values spelled
              differently, floats whose sums are exact in any order) and a
              generator of random GROUP BY queries aimed at GpuHashAgg, each
              with at most one expression that can raise an error;
  joins.py    tables made for joining (keys of every type GpuHashJoin takes,
              meeting across tables and types) and random join queries
              (GPUAGG_DIFF_JOIN_QUERIES, numbered after the GROUP BY ones):
              INNER, LEFT, RIGHT, FULL, SEMI and ANTI joins in their SQL
              spellings, one to five keys, aggregation above and below,
              rescans;
  join_strings.py  tables of adversarial strings and aggregates over their
              joins grouped by text, varchar and char(n) columns of either
              side (GPUAGG_DIFF_STRING_QUERIES, numbered after the join
              queries), in the session and through the GPU service;
  harness.py  the plpgsql function that runs one query forced and native, and
              the psql sessions that call it, going on after a server crash;
  compare.py  comparing by value where PostgreSQL itself may show any of
              several equal values, and float sums within a tolerance.

Each generator draws from its own random streams, so a seed's GROUP BY
queries do not depend on the number of join queries, nor those on the number
of string queries.  A query counts as a
mismatch when its forced and native runs differ after compare.py's rules, or
raise different errors (two errors about values count as the same outcome).

Everything is standard library only.
"""

import collections
import json
import os
import random
import sys
import time

sys.dont_write_bytecode = True      # no __pycache__ beside the test for its own modules
import compare  # noqa: E402  (test/differential/compare.py)
import groupby  # noqa: E402  (test/differential/groupby.py)
import harness  # noqa: E402  (test/differential/harness.py)
import joins  # noqa: E402  (test/differential/joins.py)
import join_strings  # noqa: E402  (test/differential/join_strings.py)

DEFAULT_SEED = 20261122
DEFAULT_QUERIES = 3000
DEFAULT_JOIN_QUERIES = 2000
DEFAULT_STRING_QUERIES = 400


class Query:
    """A generated query and how to compare it."""

    def __init__(self, qid, sql, ordered, settings, shape, table, outputs, kind="agg"):
        # {output column: type} of the columns compared by value (groupby.Expr.canon)
        self.canon_cols = {i: e.canon for i, e in enumerate(outputs) if e.canon}
        # {output column: type} of the columns where ORDER BY sees equal values that print
        # differently (-0 and 0): the order of such rows is arbitrary
        self.tie_cols = {i: e.type for i, e in enumerate(outputs) if e.type in groupby.SPELLING_FREE}
        # output columns compared with a relative tolerance (float sums in any order)
        self.inexact_cols = {i for i, e in enumerate(outputs) if e.inexact}
        self.qid = qid
        self.sql = sql
        self.ordered = ordered
        self.settings = settings
        self.shape = shape
        self.table = table
        # "agg": a GROUP BY query of groupby.Gen; "join": a join query of joins.JoinGen
        self.kind = kind


def make_queries(seed, sizes, count, strategies):
    """count random queries; deterministic in seed (and the server's strategies)."""
    rng = random.Random("queries-%d" % seed)
    out = []
    for qid in range(1, count + 1):
        g = groupby.Gen(rng, sizes, strategies)
        sql, ordered, shape, table, outputs = g.query()
        if harness.QUOTE_TAG in sql:
            raise RuntimeError("query contains the quote tag: " + sql)
        out.append(Query(qid, sql, ordered, g.settings(), shape, table, outputs))
    return out


def make_join_queries(seed, tables, count, first_qid):
    """count random join queries (test/differential/joins.py), numbered from first_qid;
    deterministic in seed alone."""
    rng = random.Random("join-queries-%d" % seed)
    out = []
    for i in range(count):
        g = joins.JoinGen(rng, tables)
        sql, ordered, shape, table, outputs = g.query()
        if harness.QUOTE_TAG in sql:
            raise RuntimeError("query contains the quote tag: " + sql)
        out.append(Query(first_qid + i, sql, ordered, g.settings(), shape, table, outputs, kind="join"))
    return out


def make_string_queries(seed, count, first_qid):
    """count random aggregates over joins grouped by strings (test/differential/
    join_strings.py), numbered from first_qid; deterministic in seed alone."""
    rng = random.Random("string-queries-%d" % seed)
    out = []
    for i in range(count):
        g = join_strings.StringGen(rng)
        sql, ordered, shape, table, outputs = g.query()
        if harness.QUOTE_TAG in sql:
            raise RuntimeError("query contains the quote tag: " + sql)
        out.append(Query(first_qid + i, sql, ordered, g.settings(), shape, table, outputs, kind="strings"))
    return out


def env_int(name, default):
    v = os.environ.get(name, "")
    try:
        return int(v) if v else default
    except ValueError:
        sys.exit("gen.py: %s must be an integer, not %r" % (name, v))


def trunc(s, n=700):
    s = str(s)
    return s if len(s) <= n else s[:n] + "... (%d chars)" % len(s)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "run"
    seed = env_int("GPUAGG_DIFF_SEED", DEFAULT_SEED)
    count = env_int("GPUAGG_DIFF_QUERIES", DEFAULT_QUERIES)
    join_count = env_int("GPUAGG_DIFF_JOIN_QUERIES", DEFAULT_JOIN_QUERIES)
    string_count = env_int("GPUAGG_DIFF_STRING_QUERIES", DEFAULT_STRING_QUERIES)
    rng = random.Random(seed)
    setup, sizes = groupby.setup_sql(rng)
    setup += harness.HARNESS + "\n"
    # the join tables and queries draw from their own generators: a seed's GROUP BY queries
    # do not depend on the number of join queries
    join_setup, join_tables = joins.setup_sql(random.Random("join-tables-%d" % seed))
    setup += join_setup
    string_setup, string_sizes = join_strings.setup_sql(random.Random("string-tables-%d" % seed))
    setup += string_setup

    def queries_for(strategies):
        queries = make_queries(seed, sizes, count, strategies)
        queries += make_join_queries(seed, join_tables, join_count, count + 1)
        queries += make_string_queries(seed, string_count, count + join_count + 1)
        only = os.environ.get("GPUAGG_DIFF_ONLY", "")
        if only:
            wanted = {int(x) for x in only.replace(",", " ").split()}
            queries = [q for q in queries if q.qid in wanted]
        return queries

    if mode == "sql":
        queries = queries_for(harness.gpuagg_strategies() if os.environ.get("PGHOST") else [])
        sys.stdout.write(setup)
        sys.stdout.write(harness.SESSION_SQL)
        for q in queries:
            sys.stdout.write(harness.call_sql(q) + "\n")
        return 0
    if mode != "run":
        sys.exit("usage: gen.py [run|sql]")

    queries = queries_for(harness.gpuagg_strategies())
    t0 = time.time()
    print("differential: seed %d (GPUAGG_DIFF_SEED), %d GROUP BY queries (GPUAGG_DIFF_QUERIES), %d join "
          "queries (GPUAGG_DIFF_JOIN_QUERIES, numbered from %d) and %d string queries "
          "(GPUAGG_DIFF_STRING_QUERIES, numbered from %d)%s, device %s"
          % (seed, count, join_count, count + 1, string_count, count + join_count + 1,
             ", running %d of them (GPUAGG_DIFF_ONLY)" % len(queries) if os.environ.get("GPUAGG_DIFF_ONLY") else "",
             os.environ.get("GPUAGG_DEVICE", "(server default)")))
    print("tables: " + ", ".join("%s %d rows" % (t, n) for t, n in sizes.items()) + "; " +
          ", ".join("%s %d rows" % (t, jt.n) for t, jt in join_tables.items()) + "; " +
          ", ".join("%s %d rows" % (t, n) for t, n in string_sizes.items()))
    rc, _, err = harness.psql_simple("postgres", "DROP DATABASE IF EXISTS %s;\nCREATE DATABASE %s;\n"
                                     % (harness.DATABASE, harness.DATABASE))
    if rc != 0:
        sys.exit("gen.py: cannot create the scratch database: " + err)
    try:
        rc, _, err = harness.psql_simple(harness.DATABASE, "CREATE EXTENSION gpuagg;\n" + setup)
        if rc != 0:
            print(err)
            sys.exit("gen.py: setup failed")
        print("setup: %.1fs" % (time.time() - t0))
        t1 = time.time()
        results = harness.run_all(queries)
        print("queries: %.1fs" % (time.time() - t1))
    finally:
        if os.environ.get("GPUAGG_DIFF_KEEP") == "1":
            print("GPUAGG_DIFF_KEEP=1: kept database %s" % harness.DATABASE)
        else:
            harness.psql_simple("postgres", "DROP DATABASE IF EXISTS %s;" % harness.DATABASE,
                                on_error_stop=False)
    return report(queries, results, seed, (count, join_count, string_count), time.time() - t0)


def report(queries, results, seed, counts, secs):
    """Print the summary and the mismatches; return the exit status."""
    count, join_count, string_count = counts
    mismatches = []
    errors = collections.Counter()
    tolerated = 0
    # shape -> [queries, on GpuHashAgg, on GpuHashJoin]
    by_shape = collections.defaultdict(lambda: [0, 0, 0])
    kinds = collections.defaultdict(lambda: [0, 0, 0])     # kind -> the same
    join_shapes = set()
    for q in queries:
        rec = results.get(q.qid, {"v": "harness", "msg": "no result", "dev": None})
        for row in (by_shape[q.shape], kinds[q.kind]):
            row[0] += 1
            row[1] += 1 if rec.get("dev") else 0
            row[2] += 1 if rec.get("hj") else 0
        if q.kind == "join" or rec.get("hj"):
            join_shapes.add(q.shape)
        v = rec["v"]
        if v == "diff" and rec.get("ferr") is None and rec.get("nerr") is None \
                and compare.results_match(q, rec["f"], rec["n"]):
            tolerated += 1
            v = "same"
        if v == "diff" and compare.both_data_errors(rec.get("ferr"), rec.get("nerr")):
            # one risky expression can fail in two ways (trunc(x)::int8 of Infinity or of
            # 1e30): which row the plan evaluates first decides the error
            tolerated += 1
            v = "same"
        if v == "same-error":
            errors[rec["err"].split(":")[0] + " " + rec["err"].split(": ", 1)[1][:60]] += 1
        elif v in ("diff", "harness"):
            mismatches.append((q, rec))
    n = len(queries)

    def pct(a, b):
        return 100.0 * a / b if b else 0.0

    n_agg, agg_dev, _ = kinds["agg"]
    n_join, _, join_hj = kinds["join"]
    all_hj = sum(row[2] for row in kinds.values())
    all_dev = sum(row[1] for row in kinds.values())
    print("seed %d: %d queries: %d GROUP BY queries, %d on GpuHashAgg (%.1f%%); %d join queries, %d on "
          "GpuHashJoin (%.1f%%); in all %d on GpuHashAgg and %d on GpuHashJoin; %d errored the same way on "
          "both sides, %d equal as values (-0 = 0, 1.5 = 1.50, '1 mon' = '30 days', 'a' = 'a ', float sums "
          "within 1e-9), %d mismatches (%.0fs)"
          % (seed, n, n_agg, agg_dev, pct(agg_dev, n_agg), n_join, join_hj, pct(join_hj, n_join), all_dev,
             all_hj, sum(errors.values()), tolerated, len(mismatches), secs))
    slow = sorted((rec.get("ms", 0), qid) for qid, rec in results.items())[-3:]
    rows = sorted(results.get(q.qid, {}).get("rows") or 0 for q in queries if q.kind == "join")
    if rows:
        print("join queries' result rows: %d empty, median %d, max %d"
              % (sum(1 for x in rows if x == 0), rows[len(rows) // 2], rows[-1]))
    print("slowest queries (both runs and EXPLAIN): " + ", ".join("%d: %d ms" % (qid, ms) for ms, qid in reversed(slow)))
    print("aggjoin (GpuHashAgg joining both sides on the device): %d queries, %d over a chain of joins, %d with an ANTI join, %d with the device's join filter"
          % (sum(1 for rec in results.values() if rec.get("aj")),
             sum(1 for rec in results.values() if rec.get("jc")),
             sum(1 for rec in results.values() if rec.get("ja")),
             sum(1 for rec in results.values() if rec.get("jl"))))
    n_str = kinds["strings"][0]
    str_aj = sum(1 for q in queries if q.kind == "strings" and results.get(q.qid, {}).get("aj"))
    print("string group keys over joins: %d queries, %d on GpuHashAgg, %d of them an aggjoin (%.1f%%)"
          % (n_str, kinds["strings"][1], str_aj, pct(str_aj, n_str)))
    print("on GpuHashAgg by shape: " + ", ".join(
        "%s %d/%d" % (s, d, t) for s, (t, d, _) in sorted(by_shape.items()) if not s.startswith("j-") or d))
    print("on GpuHashJoin by shape: " + ", ".join(
        "%s %d/%d" % (s, hj, t) for s, (t, _, hj) in sorted(by_shape.items()) if s in join_shapes))
    for e, k in errors.most_common(10):
        print("  same error x%d: %s" % (k, e))
    for q, rec in mismatches[:20]:
        print("---- MISMATCH query %d (%s, in the forced plan: GpuHashAgg %s, GpuHashJoin %s; settings: %s)"
              % (q.qid, q.shape, rec.get("dev"), rec.get("hj"), " ".join(q.settings) or "none"))
        print("  " + q.sql)
        if rec["v"] == "harness":
            print("  harness: " + trunc(rec.get("msg")))
            continue
        print("  forced: " + trunc(rec.get("ferr") or json.dumps(rec.get("f"))))
        print("  native: " + trunc(rec.get("nerr") or json.dumps(rec.get("n"))))
        if rec.get("f") is not None and rec.get("n") is not None:
            f, nat = collections.Counter(rec["f"]), collections.Counter(rec["n"])
            print("  %d rows forced, %d native; only forced: %s; only native: %s"
                  % (len(rec["f"]), len(rec["n"]), trunc(json.dumps(sorted((f - nat).elements())), 400),
                     trunc(json.dumps(sorted((nat - f).elements())), 400)))
    if len(mismatches) > 20:
        print("... and %d more mismatches" % (len(mismatches) - 20))
    status = 0
    if mismatches:
        print("rerun one: GPUAGG_DIFF_SEED=%d GPUAGG_DIFF_QUERIES=%d GPUAGG_DIFF_JOIN_QUERIES=%d "
              "GPUAGG_DIFF_STRING_QUERIES=%d GPUAGG_DIFF_ONLY=%d bash test/t/003_differential.sh"
              % (seed, count, join_count, string_count, mismatches[0][0].qid))
        print("(mismatching: %s)" % ",".join(str(q.qid) for q, _ in mismatches))
        status = 1
    if n_agg >= 50 and pct(agg_dev, n_agg) < 30:
        print("coverage too low: only %.1f%% of the GROUP BY queries ran on GpuHashAgg (at least 30%% expected)"
              % pct(agg_dev, n_agg))
        status = 1
    if n_join >= 50 and pct(join_hj, n_join) < 30:
        print("coverage too low: only %.1f%% of the join queries ran on GpuHashJoin (at least 30%% expected)"
              % pct(join_hj, n_join))
        status = 1
    if n_str >= 50 and pct(str_aj, n_str) < 30:
        print("coverage too low: only %.1f%% of the string queries ran as an aggjoin GpuHashAgg (at least 30%% "
              "expected)" % pct(str_aj, n_str))
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())

