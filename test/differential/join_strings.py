"""Text group keys over joins for the differential test (test/differential/gen.py):
tables of adversarial strings and random aggregates over their joins, grouped by
text, varchar and char(n) columns of either side, aimed at an aggjoin GpuHashAgg
whose string group keys travel to the device as bytes.  gen.py runs these queries
(GPUAGG_DIFF_STRING_QUERIES, numbered after the join queries) through the same
harness (harness.py: forced on, gpuagg off, compared as multisets of row texts, so
a group's spelling is compared byte for byte).

Data.  A fact table js_f (a few thousand rows), a small one js_fs (a few dozen) and
an empty one js_e, all of one shape (id, k, k2, t text, v varchar(12), c char(5),
n), and two dimension tables: js_d1 (k, k2, t, v, c, w), joined on k with
duplicate keys and keys the fact side lacks and the other way round, and js_d2 (k2,
t, c char(3), w), joined on k2 to the fact table (a star) or to js_d1 (a
snowflake).  Every string column draws, with a NULL rate of its own, from one
pool: empty and blank strings, case pairs, 'ab' and 'ab  ' (equal in char(n),
where they are stored padded alike, different in text and varchar), precomposed
and decomposed UTF-8, CJK, a tab, quotes, prefixes of each other, values equal but
for their last byte around 8-byte boundaries, long ones (compressible ones, stored
compressed, and incompressible ones stored out of line by STORAGE EXTERNAL) equal
but for their end, and a generated pool of 3 to 2,000 more per column, so that some
queries have a few groups of many rows and some many groups.

Queries (shape s-aggjoin): an aggregate over the fact table joined to js_d1
(INNER, LEFT, RIGHT, FULL, SEMI as EXISTS or IN, ANTI as NOT EXISTS) on its int
key, on a text key, on both, or on a varchar or char(5) key, sometimes joined on to
js_d2 (INNER, LEFT, RIGHT, FULL), grouped by one to three string columns of any
side in the join (plus an integer now and then), with counts (of rows, of a string
key, DISTINCT of a text column) and sums or minimums of the sides' integers.
Settings: gpuagg.device_host = backend (the session's own device) or service, the
key hash cut to 1 or 2 bits (gpuagg.debug_hash_bits) now and then so that only
the bytes keep groups apart, gpuagg.string_keys = off now and then (dictionaries),
small batches, parallel workers, an injected device failure.  The work is small
(at most tens of thousands of joined rows), so no bound is computed.
"""

import joins

# the fixed part of the pool: (value); varchar(12) and char(n) take its first characters
WORDS = ["", " ", "  ", "a", "a ", "A", "ab", "ab  ", "aB", "é", "É", "e\u0301", "ü", "u\u0308",
         "日本", "日本語", "ß", "ss", "x\ty", "'", '"q"', "back\\slash", "pre", "prefix", "prefix2",
         "0123456", "01234567", "012345678", "01234568", "0123456789abcdef", "0123456789abcdeg"]
LONG_COMPRESSIBLE = ["long" * 700 + "1", "long" * 700 + "2"]
LONG_INCOMPRESSIBLE = ["".join("abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7919 + j) % 36] for i in range(3000))
                       for j in (0, 1)]

# table, rows (a range); fact tables first
FACTS = [("js_f", (2000, 6000)), ("js_fs", (20, 80)), ("js_e", (0, 0))]
DIMS = ["js_d1", "js_d2"]     # rows: their key range times 1 to 3 (js_d1) or 1 to 2 (js_d2)

# columns: name, SQL type, kind ("int": a key, "str": a string of at most n characters,
# None: unlimited; "val": a value)
FACT_COLUMNS = [("id", "int", "id", None), ("k", "int", "int", None), ("k2", "int", "int", None),
                ("t", "text", "str", None), ("v", "varchar(12)", "str", 12), ("c", "char(5)", "str", 5),
                ("n", "int", "val", None)]
D1_COLUMNS = [("k", "int", "int", None), ("k2", "int", "int", None), ("t", "text", "str", None),
              ("v", "varchar(12)", "str", 12), ("c", "char(5)", "str", 5), ("w", "int", "val", None)]
D2_COLUMNS = [("k2", "int", "int", None), ("t", "text", "str", None), ("c", "char(3)", "str", 3),
              ("w", "int", "val", None)]
STRING_TYPES = {"t": "text", "v": "varchar", "c": "bpchar"}


class Out:
    """An output column (what gen.py's Query needs of it): compared as text."""

    def __init__(self, sql, type_):
        self.sql = sql
        self.type = type_
        self.canon = None
        self.inexact = False


def draw_string(rng, pool, limit):
    """One value of the pool, cut to limit characters (None: no limit)."""
    x = rng.random()
    if x < 0.5:
        s = rng.choice(WORDS)
    elif x < 0.53:
        s = rng.choice(LONG_COMPRESSIBLE + LONG_INCOMPRESSIBLE)
    else:
        i = rng.randrange(pool)
        s = "w%d" % i + ("é" if i % 3 == 0 else "")
    return s if limit is None else s[:limit]


def table_lines(rng, columns, n, key_range, key2_range):
    """The COPY lines of a table of n rows."""
    cols = []
    for name, _, kind, limit in columns:
        if kind == "id":
            cols.append([str(i) for i in range(1, n + 1)])
        elif kind == "int":
            top = key_range if name == "k" else key2_range
            null_rate = rng.choice([0, 0, 0.05])
            cols.append(["\\N" if rng.random() < null_rate else str(rng.randrange(top)) for _ in range(n)])
        elif kind == "val":
            cols.append(["\\N" if rng.random() < 0.05 else str(rng.randint(-100, 100)) for _ in range(n)])
        else:
            pool = rng.choice([3, 20, 200, 2000])
            null_rate = rng.choice([0, 0.05, 0.3])
            cols.append(["\\N" if rng.random() < null_rate else joins.copy_escape(draw_string(rng, pool, limit))
                         for _ in range(n)])
    return ["\t".join(row) for row in zip(*cols)]


def setup_sql(rng):
    """The SQL that creates and fills the tables; returns (sql, {name: rows})."""
    out = []
    sizes = {}
    d1_keys = rng.choice([10, 100, 300])
    d2_keys = rng.choice([5, 20, 50])
    for name, rows in FACTS + [(d, None) for d in DIMS]:
        if name == "js_d1":
            n = d1_keys * rng.randint(1, 3)
        elif name == "js_d2":
            n = d2_keys * rng.randint(1, 2)
        else:
            n = rng.randint(*rows)
        sizes[name] = n
        columns = D1_COLUMNS if name == "js_d1" else D2_COLUMNS if name == "js_d2" else FACT_COLUMNS
        out.append("CREATE TABLE %s (%s);" % (name, ", ".join("%s %s" % (c, t) for c, t, _, _ in columns)))
        # the fact tables' text out of line, uncompressed; the others' compressed
        if name in ("js_f", "js_fs"):
            out.append("ALTER TABLE %s ALTER COLUMN t SET STORAGE EXTERNAL;" % name)
        if n:
            if name == "js_d1":
                lines = table_lines(rng, columns, n, d1_keys, d2_keys + 2)
            elif name == "js_d2":
                lines = table_lines(rng, columns, n, 1, d2_keys)
            else:
                lines = table_lines(rng, columns, n, d1_keys + d1_keys // 5 + 1, d2_keys + 2)
            out.append("COPY %s FROM stdin;" % name)
            out.extend(lines)
            out.append("\\.")
        out.append("ANALYZE %s;" % name)
    return "\n".join(out) + "\n", sizes


class StringGen:
    """Random aggregates over joins grouped by string columns."""

    def __init__(self, rng):
        self.rng = rng
        self.shape = "s-aggjoin"
        self.parallel = False

    def pick(self, *weighted):
        return joins.pick_weighted(self.rng, weighted)

    def query(self):
        """One query: (sql, ordered, shape, main table, outputs)."""
        r = self.rng
        fact = self.pick((7, "js_f"), (2, "js_fs"), (1, "js_e"))
        jt = self.pick((5, "inner"), (3, "left"), (1, "right"), (1, "full"), (2, "semi"), (2, "anti"))
        cond = self.pick((6, "f.k = d.k"), (2, "f.t = d.t"), (2, "f.k = d.k AND f.t = d.t"),
                         (1, "f.v = d.v"), (1, "f.c = d.c AND f.k = d.k"))
        sides = {"f": FACT_COLUMNS}
        if jt not in ("semi", "anti"):
            sides["d"] = D1_COLUMNS
        chain = None
        if r.random() < 0.4:
            to = "d" if "d" in sides and r.random() < 0.5 else "f"
            chain = (self.pick((3, "inner"), (2, "left"), (1, "right"), (1, "full")), to)
            sides["e"] = D2_COLUMNS
        strings = ["%s.%s" % (s, c) for s, cols in sides.items() for c, _, kind, _ in cols if kind == "str"]
        keys = [Out(x, STRING_TYPES[x[2:]]) for x in r.sample(strings, min(len(strings), self.pick(
            (5, 1), (3, 2), (2, 3))))]
        if r.random() < 0.25:
            keys.insert(r.randrange(len(keys) + 1), Out(r.choice(["f.k", "f.n"]), "int4"))
        aggs = []
        for _ in range(r.randint(1, 3)):
            s = r.choice(list(sides))
            val = "n" if s == "f" else "w"
            fn, t = r.choice([("count(*)", "int8"), ("count({s}.t)", "int8"), ("count({s}.c)", "int8"),
                              ("sum({s}.{v})", "int8"), ("min({s}.{v})", "int4"), ("count({s}.{v})", "int8"),
                              ("count(DISTINCT {s}.t)", "int8"), ("avg({s}.{v})", "numeric")])
            aggs.append(Out(fn.format(s=s, v=val), t))
        outs = keys + aggs
        frm = "%s f" % fact
        if jt in ("semi", "anti"):
            if jt == "semi" and cond == "f.k = d.k" and r.random() < 0.5:
                where = ["f.k IN (SELECT d.k FROM js_d1 d)"]
            else:
                where = ["%sEXISTS (SELECT 1 FROM js_d1 d WHERE %s)" % ("NOT " if jt == "anti" else "", cond)]
        else:
            frm += " %s js_d1 d ON %s" % (joins.JOIN_WORDS[jt], cond)
            where = []
        if chain is not None:
            frm += " %s js_d2 e ON %s.k2 = e.k2" % (joins.JOIN_WORDS[chain[0]], chain[1])
        if r.random() < 0.15:
            where.append(r.choice(["f.n > 0", "f.t <> ''", "f.id % 3 <> 0"]))
        sql = "SELECT %s FROM %s" % (", ".join("%s AS c%d" % (o.sql, i + 1) for i, o in enumerate(outs)), frm)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " GROUP BY " + ", ".join(k.sql for k in keys)
        if r.random() < 0.1:
            sql += " HAVING count(*) > 1"
        return sql, False, self.shape, fact, outs

    def settings(self):
        """Per-query settings (both runs)."""
        r = self.rng
        s = ["gpuagg.device_host=%s" % r.choice(["backend", "service"])]
        if r.random() < 0.25:
            s.append("gpuagg.debug_hash_bits=%d" % r.choice([1, 2]))
        if r.random() < 0.1:
            s.append("gpuagg.string_keys=off")
        if r.random() < 0.25:
            s.append("gpuagg.batch_rows=%d" % r.choice([16, 100, 1000]))
        if r.random() < 0.04:
            s.append("gpuagg.debug_fail_at_batch=%d" % r.choice([1, 2]))
        if r.random() < 0.15:
            s += ["parallel_setup_cost=0", "parallel_tuple_cost=0", "min_parallel_table_scan_size=0"]
        return s
