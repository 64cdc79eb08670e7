"""Running the differential test's queries (test/differential/gen.py): the plpgsql
harness in the scratch database and the psql sessions that call it.

Running.  A plpgsql function in the scratch database runs one query three
times (EXPLAIN to see whether GpuHashAgg and GpuHashJoin are in the forced
plan, forced, native), catches errors, compares the results as sorted
arrays of row texts (multisets; as sequences when the query orders by every
output column) and prints one JSON line.  One long psql session runs all queries; if the
server crashes, the query in flight is reported and a new session goes on
with the next one.

The psql binary comes from PG_BINDIR and connection settings from PGHOST,
PGPORT, PGUSER.  As root, psql runs as GPUAGG_RUN_USER.
"""

import json
import os
import subprocess
import sys
import threading
import time

DATABASE = "gpuagg_diff"
QUOTE_TAG = "$gq$"

HARNESS = r"""
-- Run one query forced and native; print one JSON line with the verdict.
CREATE FUNCTION diff.run_one(qid int, q text, ordered boolean, settings text[])
RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
    line text;
    setting text;
    on_device boolean := false;
    on_join boolean := false;
    on_aggjoin boolean := false;
    on_chain boolean := false;
    on_anti boolean := false;
    on_filter boolean := false;
    previous text := '';
    wrapped text;
    forced text[];
    native text[];
    forced_err text;
    native_err text;
    verdict text;
    t0 timestamptz := clock_timestamp();
BEGIN
    IF ordered THEN
        wrapped := 'SELECT coalesce(array_agg(r::text), ''{}'') FROM (' || q || ') r';
    ELSE
        wrapped := 'SELECT coalesce(array_agg(r::text ORDER BY r::text COLLATE "C"), ''{}'') FROM ('
                   || q || ') r';
    END IF;
    FOREACH setting IN ARRAY settings LOOP
        PERFORM set_config(split_part(setting, '=', 1), split_part(setting, '=', 2), false);
    END LOOP;
    PERFORM set_config('gpuagg.enabled', 'on', false);
    PERFORM set_config('gpuagg.force', 'on', false);
    BEGIN
        FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || wrapped LOOP
            on_device := on_device OR line LIKE '%GpuHashAgg%';
            on_join := on_join OR line LIKE '%GpuHashJoin%';
            on_aggjoin := on_aggjoin OR line LIKE '%children on the device%';
            on_chain := on_chain OR line LIKE '%joins of its % children on the device%';
            on_anti := on_anti OR (line LIKE '%children on the device%' AND line LIKE '%anti%');
            -- an aggjoin GpuHashAgg's device filter follows its Join Cond
            on_filter := on_filter OR (previous LIKE '%Join Cond:%' AND line LIKE '%Join Filter:%');
            previous := line;
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        on_device := false;
        on_join := false;
    END;
    BEGIN
        EXECUTE wrapped INTO forced;
    EXCEPTION WHEN OTHERS THEN
        forced_err := SQLSTATE || ': ' || SQLERRM;
    END;
    PERFORM set_config('gpuagg.enabled', 'off', false);
    BEGIN
        EXECUTE wrapped INTO native;
    EXCEPTION WHEN OTHERS THEN
        native_err := SQLSTATE || ': ' || SQLERRM;
    END;
    PERFORM set_config('gpuagg.enabled', 'on', false);
    PERFORM set_config('gpuagg.force', 'off', false);
    FOREACH setting IN ARRAY settings LOOP
        EXECUTE 'RESET ' || split_part(setting, '=', 1);
    END LOOP;

    IF forced_err IS NOT NULL OR native_err IS NOT NULL THEN
        verdict := CASE WHEN forced_err IS NOT DISTINCT FROM native_err THEN 'same-error' ELSE 'diff' END;
    ELSE
        verdict := CASE WHEN forced = native THEN 'same' ELSE 'diff' END;
    END IF;
    IF verdict = 'diff' THEN
        RETURN json_build_object('id', qid, 'dev', on_device, 'hj', on_join, 'aj', on_aggjoin, 'jc', on_chain, 'ja', on_anti, 'jl', on_filter, 'v', verdict,
                                 'ms', round(extract(epoch FROM clock_timestamp() - t0) * 1000),
                                 'ferr', forced_err, 'nerr', native_err,
                                 'f', to_json(forced), 'n', to_json(native))::text;
    END IF;
    RETURN json_build_object('id', qid, 'dev', on_device, 'hj', on_join, 'aj', on_aggjoin, 'jc', on_chain, 'ja', on_anti, 'jl', on_filter, 'v', verdict,
                             'ms', round(extract(epoch FROM clock_timestamp() - t0) * 1000),
                             'err', native_err, 'rows', cardinality(native))::text;
END
$fn$;
"""

def call_sql(q):
    """The harness call for one query."""
    settings = "ARRAY[%s]::text[]" % ", ".join("'%s'" % s for s in q.settings)
    return "SELECT diff.run_one(%d, %s%s%s, %s, %s);" % (
        q.qid, QUOTE_TAG, q.sql, QUOTE_TAG, "true" if q.ordered else "false", settings)


SESSION_SQL = """SET client_min_messages = warning;
SET search_path = diff, public;
SET TimeZone = 'UTC';
SET statement_timeout = '120s';
"""

# ---------------------------------------------------------------- running


def psql_cmd(db, extra=()):
    """The psql command line (as the server user when we are root)."""
    psql = os.path.join(os.environ.get("PG_BINDIR", ""), "psql") if os.environ.get("PG_BINDIR") else "psql"
    cmd = [psql, "-X", "-q", "-d", db] + list(extra)
    if os.geteuid() == 0:
        user = os.environ.get("GPUAGG_RUN_USER")
        if not user:
            sys.exit("gen.py: running as root needs GPUAGG_RUN_USER")
        cmd = ["runuser", "-u", user, "--"] + cmd
    return cmd


def psql_simple(db, sql, on_error_stop=True):
    """Run SQL through psql; return (rc, stdout, stderr)."""
    extra = ["-At", "-v", "ON_ERROR_STOP=%d" % (1 if on_error_stop else 0)]
    p = subprocess.run(psql_cmd(db, extra), input=sql, text=True, capture_output=True, cwd="/")
    return p.returncode, p.stdout, p.stderr


def wait_for_server(timeout=120):
    """Wait until the server accepts connections again (after a crash)."""
    end = time.time() + timeout
    while time.time() < end:
        rc, out, _ = psql_simple("postgres", "SELECT 1;")
        if rc == 0 and out.strip() == "1":
            return True
        time.sleep(1)
    return False


def run_session(queries, results, progress):
    """Run queries in one psql session; fill results[qid]; return psql's stderr."""
    cmd = psql_cmd(DATABASE, ["-At", "-v", "ON_ERROR_STOP=0"])
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd="/", bufsize=1)

    def feed():
        try:
            p.stdin.write(SESSION_SQL)
            for q in queries:
                p.stdin.write(call_sql(q) + "\n")
            p.stdin.close()
        except BrokenPipeError:
            pass

    err_chunks = []
    writer = threading.Thread(target=feed, daemon=True)
    reader = threading.Thread(target=lambda: err_chunks.append(p.stderr.read()), daemon=True)
    writer.start()
    reader.start()
    for line in p.stdout:
        line = line.strip()
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        results[rec["id"]] = rec
        progress(len(results))
    p.wait()
    writer.join(5)
    reader.join(5)
    return p.returncode, "".join(err_chunks)


def run_all(queries):
    """Run every query, going on with the next one after a crash; return results by id."""
    results = {}
    pending = list(queries)
    t0 = time.time()
    last = [0]

    def progress(n):
        if n - last[0] >= 500:
            last[0] = n
            print("  ... %d/%d queries (%.0fs)" % (n, len(queries), time.time() - t0), flush=True)

    for _attempt in range(20):
        if not pending:
            break
        rc, err = run_session(pending, results, progress)
        missing = [q for q in pending if q.qid not in results]
        if not missing:
            break
        # the statement that was running when the session ended, or a statement that failed
        # outside the harness's exception handling (a timeout, a crash)
        first = missing[0]
        results[first.qid] = {"id": first.qid, "dev": None, "v": "harness",
                              "msg": "psql exit status %d; stderr: %s" % (rc, err.strip()[-1500:])}
        if not wait_for_server():
            for q in missing[1:]:
                results[q.qid] = {"id": q.qid, "dev": None, "v": "harness", "msg": "server did not come back"}
            break
        pending = missing[1:]
    return results


def gpuagg_strategies():
    """The values gpuagg.strategy takes on this server (they change as strategies are added)."""
    rc, out, err = psql_simple("postgres", "SELECT array_to_string(enumvals, ' ') FROM pg_settings "
                                           "WHERE name = 'gpuagg.strategy';")
    if rc != 0:
        sys.exit("gen.py: cannot read gpuagg.strategy's values: " + err)
    return sorted(out.split())
