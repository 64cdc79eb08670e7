"""The GROUP BY queries of the differential test (test/differential/gen.py): the scratch
tables they read and a generator of random GROUP BY queries aimed at GpuHashAgg.

Data.  A scratch database (gpuagg_diff, with the extension) holds five
tables of one shape: empty, one row, two of a few hundred rows and one of
about 50,000 rows.  Every column of every table draws its own NULL rate
(0 to 100%) and distribution (a few values, a hot value, Zipf-like skew,
wide, extremes), so that the same query text meets different data.  The
columns cover every key type and aggregate input type gpuagg supports, and
some it does not (those must simply stay native): nm, ivm and bpu hold equal
values spelled differently (1.5 and 1.50, '1 mon' and '30 days', 'a' and
'a ').  60% of the queries use only what GpuHashAgg supports, so that most
reach the device; the others mix in everything.

Exactness.  Sums of floats depend on the order of addition, and the device
adds in another order than PostgreSQL.  So f8 and f4 hold multiples of 1/8
small enough that every partial sum is exact (plus NaN, +-Infinity and -0,
which are order-independent in sums); fw holds arbitrary doubles and a
query that sums or averages it is compared with a relative tolerance;
fbig holds positive huge values whose sum overflows (an error) in any order
or in none.

Errors.  Which of two possible errors a query raises depends on the order
in which rows and expressions are evaluated, which legitimately differs
between plans.  So a query gets at most one expression that can raise an
error ("risky"); then both runs must raise the same SQLSTATE and message,
or neither, except that one risky expression may fail in two ways on two
rows (trunc(x)::int8 of Infinity or of 1e30): two errors about values
(SQLSTATE class 22, or 0A000) count as the same outcome.  Such a query gets
no LIMIT: a plan may stop before the row that raises the error.

Known bugs.  A shape that exposes a known gpuagg bug is left out of the
generation while its KNOWN_BUG_* switch below is True; set it to False to
check a fix (the default seed then hits it).
"""

import math
import os
import re
import uuid

import joins

# KNOWN_BUG_FILTER_ARGUMENT: GpuHashAgg must not evaluate an aggregate's argument for rows
# its FILTER rejects (`sum(10 / x) FILTER (WHERE x <> 0)` must not divide by zero).  While
# True, no FILTER goes on an aggregate whose argument can raise an error.
KNOWN_BUG_FILTER_ARGUMENT = False

# KNOWN_BUG_DISTINCT_FILTER_SPELLED_KEY: `SELECT k, count(DISTINCT k) FILTER (WHERE ...)
# ... GROUP BY k` with k of type bpchar, numeric or interval must not fail ("gpuagg:
# spelling column 1 has no key column before it").  While True, such an aggregate loses
# its FILTER.
KNOWN_BUG_DISTINCT_FILTER_SPELLED_KEY = False

# ---------------------------------------------------------------- columns

# name, SQL type, base type (for choosing operators and aggregates)
COLUMNS = [
    ("id", "int4", "int4"),
    ("i2", "int2", "int2"),
    ("i4", "int4", "int4"),
    ("i8", "int8", "int8"),
    ("f4", "float4", "float4"),
    ("f8", "float8", "float8"),
    ("fw", "float8", "float8"),
    ("fbig", "float8", "float8"),
    ("b", "bool", "bool"),
    ("d", "date", "date"),
    ("ts", "timestamp", "timestamp"),
    ("tz", "timestamptz", "timestamptz"),
    ("tm", "time", "time"),
    ("iv", "interval", "interval"),
    ("t", "text", "text"),
    ("vc", "varchar(20)", "varchar"),
    ("bp", "char(4)", "bpchar"),
    ("n", "numeric(12,3)", "numeric"),
    ("u", "uuid", "uuid"),
    # equal values spelled differently: 1.5 = 1.50, '1 mon' = '30 days', 'a' = 'a ' (bpchar)
    ("nm", "numeric", "numeric"),
    ("ivm", "interval", "interval"),
    ("bpu", "bpchar", "bpchar"),
    ("di", "diff_int", "int4"),
    ("dt", "diff_text", "text"),
]
COLTYPE = {name: base for name, _, base in COLUMNS}

TABLES = [  # name, rows (a range: the size is drawn from it)
    ("t_empty", (0, 0)),
    ("t_one", (1, 1)),
    ("t_small1", (150, 400)),
    ("t_small2", (150, 400)),
    ("t_big", (45000, 55000)),
]
SMALL_TABLES = ["t_empty", "t_one", "t_small1", "t_small2"]

INT_RANGE = {"int2": (-32768, 32767), "int4": (-2**31, 2**31 - 1), "int8": (-2**63, 2**63 - 1)}
NUMERIC_TYPES = ("int2", "int4", "int8", "float4", "float8", "numeric")
INT_TYPES = ("int2", "int4", "int8")
FLOAT_TYPES = ("float4", "float8")
# what GpuHashAgg supports today (hashagg/catalog.c); a "supported" query uses only these
KEY_OK = ("int2", "int4", "int8", "float4", "float8", "bool", "date", "time", "timestamp", "timestamptz",
          "text", "varchar", "bpchar", "numeric", "uuid", "interval")
SUM_OK = ("int2", "int4", "int8", "float4", "float8", "numeric")
# variance and stddev: exact for integers and numerics; floats within a tolerance
VARIANCE_FNS = ("stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop")
VARIANCE_OK = ("int2", "int4", "int8", "numeric", "float4", "float8")
# the aggregates of two float8 arguments (float8_regr_accum); within a tolerance
COVAR_FNS = ("corr", "covar_pop", "covar_samp", "regr_avgx", "regr_avgy", "regr_count",
             "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy")
MINMAX_OK = SUM_OK + ("date", "timestamp", "timestamptz", "time")
# types whose equal values can print differently (-0 and 0, 1.5 and 1.50, ...); where
# PostgreSQL itself may show either spelling, results are compared by value (canonical())
SPELLING_FREE = ("float4", "float8", "numeric", "interval", "bpchar")
ORDERED_TYPES = ("int2", "int4", "int8", "float4", "float8", "numeric", "date", "timestamp",
                 "timestamptz", "time", "interval", "text", "varchar", "bpchar")

WORDS = ["a", "b", "ab", "abc", "A", "B", "Ab", "zz", "x y", "", " ", "a ", "mid", "m",
         "é", "É", "日本", "ü", "a,b", "(p)", '"q"', "back\\slash", "NULL", "tab\there",
         "new\nline", "{x}", "%_", "'", "z" * 19]


def pg_text_escape(s):
    """Escape a value for COPY's text format."""
    return (s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r"))


def fmt_float(x):
    """A float as PostgreSQL input."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


class ColumnData:
    """The values of one column of one table: a pool and a way to draw from it."""

    def __init__(self, rng, name, base, nrows):
        self.rng = rng
        self.name = name
        self.base = base
        self.null_rate = rng.choice([0, 0, 0, 0.02, 0.1, 0.3, 0.5, 0.9, 1.0])
        self.dist = rng.choice(["few", "hot", "zipf", "zipf", "wide", "wide"])
        self.specials = rng.random() < 0.4
        self.extremes = rng.random() < 0.3
        if self.dist == "few":
            size = rng.choice([1, 2, 3, 7])
        elif self.dist == "wide":
            size = max(1, nrows)
        else:
            size = rng.choice([50, 500, 5000])
        self.pool = [self.value(i) for i in range(size)]
        self.pool += self.special_values()
        rng.shuffle(self.pool)
        n = len(self.pool)
        if self.dist == "zipf":
            s = rng.choice([1.0, 1.3, 2.0])
            weights = [1.0 / (i + 1) ** s for i in range(n)]
        elif self.dist == "hot":
            weights = [0.05 / max(1, n - 1)] * n
            weights[0] = 0.95
        else:
            weights = [1.0] * n
        self.cum = []
        acc = 0.0
        for w in weights:
            acc += w
            self.cum.append(acc)

    def draw(self, k):
        """k values (COPY text, \\N for NULL)."""
        vals = self.rng.choices(self.pool, cum_weights=self.cum, k=k)
        if self.base == "text" and self.specials:
            # a few toasted values, rare enough to keep the big table small
            longs = [self.long_text() for _ in range(3)]
            p = min(0.05, 20.0 / max(1, k))
            r = self.rng.random
            vals = [self.rng.choice(longs) if r() < p else v for v in vals]
        if self.null_rate:
            r = self.rng.random
            vals = ["\\N" if r() < self.null_rate else v for v in vals]
        return vals

    def special_values(self):
        """Edge values of the type, when this column has them."""
        b = self.base
        out = []
        if b in INT_TYPES and self.extremes:
            lo, hi = INT_RANGE[b]
            out += [str(lo), str(hi), str(lo + 1), str(hi - 1), "0", "-1"]
        if self.name in ("f8", "f4") and self.specials:
            out += ["NaN", "Infinity", "-Infinity", "-0", "0"]
        if self.name == "fw" and self.specials:
            out += ["NaN", "Infinity", "-Infinity", "-0", "0", "5e-324", "2.2250738585072014e-308",
                    "-1e-310", "1e-45", "123456789.123456789"]
        if b in ("date", "timestamp", "timestamptz") and self.specials:
            out += ["infinity", "-infinity"]
        if b == "date" and self.extremes:
            out += ["4713-01-01 BC", "5874897-12-31"]
        if b in ("timestamp", "timestamptz") and self.extremes:
            out += ["4713-01-01 00:00:00 BC", "294276-12-31 23:59:59.999999"]
        if b == "time" and self.specials:
            out += ["00:00:00", "24:00:00"]
        if b == "numeric" and self.specials:
            out += ["NaN", "0.000", "-999999999.999", "999999999.999"]
            if self.name == "nm":
                out += ["Infinity", "-Infinity", "0", "0.0", "-0.00"]
        if b == "text" and self.specials:
            out += WORDS
        if b == "bool":
            out = []
        return [pg_text_escape(v) for v in out]

    def long_text(self):
        """A text long enough to be toasted (compressible or not)."""
        r = self.rng
        if r.random() < 0.5:
            return "long" * r.randint(600, 3000)
        return "".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(r.randint(2500, 6000)))

    def value(self, i):
        """The i-th ordinary value of the pool (COPY text)."""
        r = self.rng
        b = self.base
        if self.name == "fw":
            choice = r.random()
            if choice < 0.7:
                return repr(r.uniform(-1000, 1000))
            if choice < 0.9:
                return repr(r.uniform(-1, 1) * 10 ** r.randint(-30, 2))
            return repr(float(r.randint(-50, 50)))
        if self.name == "nm":
            k = r.randint(-400, 400)
            if r.random() < 0.05:
                return "%d%s" % (r.randint(10**25, 10**26), r.choice(["", ".5", ".50"]))
            # k/4 needs two decimals unless it is whole; spell it with 0 to 3 more zeros
            whole, frac = divmod(abs(k), 4)
            sign = "-" if k < 0 else ""
            digits = {0: "", 1: "25", 2: "5", 3: "75"}[frac]
            digits += "0" * r.randint(0, 3)
            return "%s%d%s" % (sign, whole, "." + digits if digits else "")
        if self.name == "ivm":
            # months, days and hours spelled as they are or carried into the next unit down
            mons, days, hours = r.randint(-2, 2), r.randint(-40, 40), r.randint(-30, 30)
            if r.random() < 0.5:
                days, mons = days + 30 * mons, 0
            if r.random() < 0.5:
                hours, days = hours + 24 * days, 0
            return "%d mons %d days %d hours" % (mons, days, hours)
        if self.name == "bpu":
            return r.choice(["a", "a ", "a  ", "ab", "ab ", "", " ", "b", "é", "é "])
        if self.name == "fbig":
            return r.choice(["1e308", "2.5e307", "1.5", "3.25", "1e300"])
        if self.name == "f4":
            return fmt_float(r.randint(-128, 128) / 8.0)
        if self.name == "f8":
            return fmt_float(r.randint(-80000, 80000) / 8.0)
        if self.name == "id":
            return str(i)
        if b in INT_TYPES:
            lo, hi = INT_RANGE[b]
            if self.extremes and r.random() < 0.3:
                return str(r.randint(lo, hi))
            span = {"int2": 1000, "int4": 100000, "int8": 10**12}[b]
            return str(r.randint(-span, span))
        if b == "bool":
            return r.choice(["t", "f"])
        if b == "date":
            return "%04d-%02d-%02d" % (r.randint(1990, 2030), r.randint(1, 12), r.randint(1, 28))
        if b in ("timestamp", "timestamptz"):
            v = "%04d-%02d-%02d %02d:%02d:%02d" % (r.randint(1990, 2030), r.randint(1, 12), r.randint(1, 28),
                                                   r.randint(0, 23), r.randint(0, 59), r.randint(0, 59))
            if r.random() < 0.2:
                v += ".%06d" % r.randint(0, 999999)
            if b == "timestamptz":
                v += r.choice(["+00", "+05:30", "-08"])
            return v
        if b == "time":
            return "%02d:%02d:%02d.%03d" % (r.randint(0, 23), r.randint(0, 59), r.randint(0, 59), r.randint(0, 999))
        if b == "interval":
            # seconds only: equal intervals then print the same ('1 day' = '24 hours' otherwise)
            return "%d seconds" % r.randint(-10**6, 10**6)
        if b == "numeric":
            return "%d.%03d" % (r.randint(-10**6, 10**6), r.randint(0, 999))
        if b == "uuid":
            return str(uuid.UUID(int=r.getrandbits(128)))
        if b in ("text", "varchar", "bpchar"):
            maxlen = {"text": 12, "varchar": 20, "bpchar": 4}[b]
            alphabet = "abcxyzABé日 "
            s = "".join(r.choice(alphabet) for _ in range(r.randint(0, min(maxlen, 6))))
            if b == "text" and r.random() < 0.1:
                s = r.choice(WORDS)
            if b == "bpchar":
                s = s.rstrip(" ")[:4]
            return pg_text_escape(s)
        raise ValueError(b)


def setup_sql(rng):
    """The SQL that creates the GROUP BY queries' tables (run in the scratch database),
    and their sizes."""
    out = []
    w = out.append
    w("SET client_min_messages = warning;")
    w("SET TimeZone = 'UTC';")
    w("CREATE SCHEMA diff;")
    w("SET search_path = diff, public;")
    w("CREATE DOMAIN diff_int AS int4;")
    w("CREATE DOMAIN diff_text AS text;")
    coldefs = ", ".join("%s %s" % (n, t) for n, t, _ in COLUMNS)
    sizes = {}
    for table, (lo, hi) in TABLES:
        nrows = rng.randint(lo, hi)
        sizes[table] = nrows
        w("CREATE TABLE %s (%s, PRIMARY KEY (id));" % (table, coldefs))
        if nrows == 0:
            continue
        columns = []
        for name, _, base in COLUMNS:
            if name == "id":
                columns.append([str(i) for i in range(1, nrows + 1)])
                continue
            columns.append(ColumnData(rng, name, base, nrows).draw(nrows))
        w("COPY %s FROM stdin;" % table)
        for row in zip(*columns):
            w("\t".join(row))
        w("\\.")
    for table, _ in TABLES:
        w("ANALYZE %s;" % table)
    return "\n".join(out) + "\n", sizes


# ---------------------------------------------------------------- queries


class Expr:
    """A generated SQL expression with its type and what it may do."""

    __slots__ = ("sql", "type", "risky", "inexact", "canon")

    def __init__(self, sql, type_, risky=False, inexact=False):
        self.sql = sql
        self.type = type_
        self.risky = risky
        self.inexact = inexact
        # the type by which to compare this output column where PostgreSQL itself may show
        # any of several equal values depending on the input order (None: compare as text):
        # a group key shows one of the equal values of its group (-0 or 0, 1.5 or 1.50), and
        # min/max keep the later of two equal values
        self.canon = None


# Aggregate result types (None: the argument's type).
def agg_result_type(fn, argtype):
    if fn == "count":
        return "int8"
    if fn == "sum":
        return {"int2": "int8", "int4": "int8", "int8": "numeric", "float4": "float4",
                "float8": "float8", "numeric": "numeric", "interval": "interval"}[argtype]
    if fn == "avg":
        return {"int2": "numeric", "int4": "numeric", "int8": "numeric", "float4": "float8",
                "float8": "float8", "numeric": "numeric", "interval": "interval"}[argtype]
    if fn in ("min", "max"):
        return "text" if argtype == "varchar" else argtype
    if fn in ("bool_and", "bool_or", "every"):
        return "bool"
    if fn in VARIANCE_FNS:
        return "float8" if argtype in ("float4", "float8") else "numeric"
    if fn == "string_agg":
        return "text"
    raise ValueError(fn)


class Gen:
    """Random query generator over the scratch tables."""

    def __init__(self, rng, sizes, strategies):
        self.rng = rng
        self.sizes = sizes
        self.strategies = strategies
        self.risky_used = False
        # most queries use only what GpuHashAgg supports, so that most reach the device;
        # the others mix in everything (and must stay native where unsupported)
        self.supported = rng.random() < 0.6

    # -- small helpers
    def pick(self, *weighted):
        """Pick among (weight, value) pairs."""
        return joins.pick_weighted(self.rng, weighted)

    def may_risk(self):
        """Whether this query may still get an expression that can raise an error."""
        return not self.risky_used and self.rng.random() < 0.5

    def use(self, e):
        """Account for an expression that goes into the query."""
        if e.risky:
            self.risky_used = True
        return e

    def column(self, aliases, types=None, exclude=()):
        """A column reference of one of types (any when None)."""
        cands = [n for n, _, b in COLUMNS if (types is None or b in types) and n not in exclude]
        name = self.rng.choice(cands)
        return Expr("%s.%s" % (self.rng.choice(aliases), name), COLTYPE[name]), name

    # -- group keys
    def key(self, aliases):
        """A group key expression."""
        c, _ = self.column(aliases)
        t = c.type
        s = c.sql
        risky = self.may_risk()
        forms = [(6, Expr(s, t))]
        if t in INT_TYPES:
            forms += [(3, Expr("%s %% 7" % s, t)), (1, Expr("%s / 10" % s, t)),
                      (1, Expr("(%s > 0)" % s, "bool")), (1, Expr("coalesce(%s, 0)" % s, t)),
                      (1, Expr("%s::int8" % s, "int8")), (1, Expr("%s::text" % s, "text"))]
            if risky:
                forms += [(1, Expr("abs(%s)" % s, t, risky=True)), (1, Expr("%s + 1" % s, t, risky=True))]
        elif t == "float8":
            forms += [(2, Expr("floor(%s)" % s, t)), (1, Expr("round(%s)" % s, t)),
                      (1, Expr("(%s < 0)" % s, "bool")), (1, Expr("%s::text" % s, "text"))]
            if not s.endswith("fbig"):
                forms += [(1, Expr("%s * 2" % s, t))]
            if risky:
                # NaN, infinities, huge or tiny values raise errors
                forms += [(1, Expr("%s::int4" % s, "int4", risky=True)),
                          (1, Expr("%s::float4" % s, "float4", risky=True))]
        elif t == "float4":
            forms += [(3, Expr("%s::float8" % s, "float8"))]
        elif t == "bool":
            forms += [(1, Expr("(NOT %s)" % s, t)), (1, Expr("(%s IS NULL)" % s, t)),
                      (1, Expr("coalesce(%s, false)" % s, t))]
        elif t == "date":
            forms += [(2, Expr("date_trunc('month', %s::timestamp)" % s, "timestamp")),
                      (1, Expr("%s::timestamp" % s, "timestamp"))]
            if risky:
                forms += [(1, Expr("%s + 1" % s, "date", risky=True))]
        elif t == "timestamp":
            forms += [(3, Expr("date_trunc('day', %s)" % s, t)), (1, Expr("%s::date" % s, "date"))]
            if risky:
                forms += [(1, Expr("%s + interval '1 hour'" % s, t, risky=True))]
        elif t == "timestamptz":
            forms += [(1, Expr("%s::timestamp" % s, "timestamp")), (1, Expr("date_trunc('day', %s)" % s, t))]
        elif t == "text":
            forms += [(2, Expr("upper(%s)" % s, t)), (1, Expr("lower(%s)" % s, t)),
                      (2, Expr("substr(%s, 1, 2)" % s, t)), (1, Expr("length(%s)" % s, "int4")),
                      (1, Expr("%s || 'x'" % s, t)), (1, Expr("coalesce(%s, '')" % s, t)),
                      (1, Expr("left(%s, 1)" % s, t)), (1, Expr("%s::varchar(3)" % s, "varchar"))]
        elif t == "varchar":
            forms += [(1, Expr("upper(%s)" % s, "text")), (1, Expr("%s::text" % s, "text"))]
        elif t == "bpchar":
            forms += [(2, Expr("%s::text" % s, "text")), (1, Expr("rtrim(%s)" % s, "text"))]
        elif t == "numeric":
            forms += [(1, Expr("round(%s)" % s, t))]
            if risky:
                forms += [(2, Expr("trunc(%s)::int8" % s, "int8", risky=True))]   # NaN
        elif t == "uuid":
            forms += [(2, Expr("%s::text" % s, "text"))]
        elif t == "time":
            forms += [(1, Expr("%s::text" % s, "text"))]
        elif t == "interval":
            forms += [(1, Expr("%s::text" % s, "text"))]
        if self.supported:
            forms = [(w, e) for w, e in forms if e.type in KEY_OK] or [(1, Expr("%s.i4" % aliases[0], "int4"))]
        e = self.pick(*forms)
        e.canon = spelling(e.type)
        return self.use(e)

    # -- aggregate arguments
    def arg(self, aliases, types, fn):
        """An aggregate argument of one of types; None if none fits."""
        cands = [n for n, _, b in COLUMNS if b in types]
        if fn == "avg" or fn in VARIANCE_FNS or fn in COVAR_FNS:
            # avg(float8) of values near 1e308: PostgreSQL's sum of squares overflows (an error),
            # gpuagg keeps none (a documented difference: docs/design/numeric.md, "Known differences")
            cands = [n for n in cands if n != "fbig"]
        if not cands:
            return None
        name = self.rng.choice(cands)
        a = self.rng.choice(aliases)
        s = "%s.%s" % (a, name)
        t = COLTYPE[name]
        risky_ok = self.may_risk()
        forms = [(8, Expr(s, t))]
        if t in INT_TYPES:
            forms += [(1, Expr("%s %% 5" % s, t)), (1, Expr("coalesce(%s, 0)" % s, t)),
                      (1, Expr("CASE WHEN %s.b THEN %s END" % (a, s), t)),
                      (1, Expr("%s::int8" % s, "int8"))]
            if t != "int8":
                forms += [(1, Expr("%s::float8" % s, "float8"))]
            if risky_ok:
                forms += [(1, Expr("%s * 2" % s, t, risky=True)), (1, Expr("%s + %s" % (s, s), t, risky=True))]
        elif name == "f8":
            forms += [(1, Expr("%s * 2" % s, t)), (1, Expr("%s / 4" % s, t)), (1, Expr("-%s" % s, t)),
                      (1, Expr("abs(%s)" % s, t)), (1, Expr("CASE WHEN %s.b THEN %s ELSE 0.5 END" % (a, s), t))]
        elif name == "f4":
            forms += [(1, Expr("-%s" % s, t)), (1, Expr("abs(%s)" % s, t)), (1, Expr("%s::float8" % s, "float8"))]
        elif name == "fw" and fn in ("min", "max", "count") and risky_ok:
            forms += [(1, Expr("%s::float4" % s, "float4", risky=True))]   # underflow, overflow
        elif t == "bool":
            forms += [(1, Expr("(NOT %s)" % s, t)), (1, Expr("(%s IS NULL)" % s, t))]
        elif t == "numeric":
            forms += [(1, Expr("%s * 2" % s, t))]
            # more digits: numeric(12, 3) squared and cubed (24 and 36 digits) travel as limbs
            forms += [(1, Expr("%s * %s" % (s, s), t)), (1, Expr("%s * %s * %s" % (s, s, s), t))]
            # (the device computes these from the operand: scales aligned, a constant, a sign)
            forms += [(1, Expr("(%s - 1.25) * (2 - %s)" % (s, s), t)), (1, Expr("-%s * 0.5" % s, t))]
        elif t in ("date",) and risky_ok:
            forms += [(1, Expr("%s + 1" % s, t, risky=True))]
        e = self.pick(*forms)
        if e.type not in types:
            e = Expr(s, t)
        if name == "fw" and (fn in ("sum", "avg") or fn in VARIANCE_FNS or fn in COVAR_FNS):
            e.inexact = True
        if name == "fbig" and fn == "sum":
            # positive huge values: the sum overflows in every order or in none; mixing
            # magnitudes, it rounds differently in different orders
            e.risky = True
            e.inexact = True
            if self.risky_used:
                return None
        return e

    def aggregate(self, aliases):
        """An aggregate call (maybe with FILTER)."""
        r = self.rng
        if self.supported:
            fn = self.pick((10, "count(*)"), (10, "count"), (22, "sum"), (12, "avg"), (12, "min"),
                           (12, "max"), (2, "bool_and"), (1, "bool_or"), (1, "every"), (2, "guarded"),
                           (2, "count_distinct"), (1, "sum_distinct"), (1, "avg_distinct"),
                           *[(1, f) for f in VARIANCE_FNS], (3, "covar"))
        else:
            fn = self.pick((10, "count(*)"), (10, "count"), (22, "sum"), (12, "avg"), (12, "min"),
                           (12, "max"), (2, "bool_and"), (1, "bool_or"), (1, "every"),
                           *[(1, f) for f in VARIANCE_FNS], (2, "count_distinct"), (1, "sum_distinct"),
                           (1, "avg_distinct"), (1, "string_agg"), (2, "guarded"), (2, "covar"))
        filt = ""
        if r.random() < 0.15:
            filt = " FILTER (WHERE %s)" % self.condition(aliases, allow_subquery=False)
        if fn == "count(*)":
            return Expr("count(*)" + filt, "int8")
        e = self.aggregate_call(aliases, fn, filt)
        if filt and e.risky and KNOWN_BUG_FILTER_ARGUMENT:
            e = self.aggregate_call(aliases, fn, "")   # drawn again, without FILTER
        return e

    def aggregate_call(self, aliases, fn, filt):
        """An aggregate call of kind fn (not count(*)) with the FILTER clause filt."""
        r = self.rng
        if fn == "guarded":
            # the FILTER guards the argument: PostgreSQL never evaluates it where the filter is false
            c, _ = self.column(aliases, INT_TYPES)
            if self.risky_used or KNOWN_BUG_FILTER_ARGUMENT:
                return Expr("count(*)" + filt, "int8")
            self.risky_used = True
            agg = r.choice(["sum", "count", "max"])
            return Expr("%s(100 / %s) FILTER (WHERE %s <> 0)" % (agg, c.sql, c.sql),
                        "int8" if agg != "max" else c.type, risky=True)
        if fn == "count":
            e = self.arg(aliases, ORDERED_TYPES + ("bool", "uuid"), "count")
            return Expr("count(%s)%s" % (e.sql, filt), "int8", e.risky, False) if e else Expr("count(*)", "int8")
        if fn == "count_distinct":
            e = self.arg(aliases, ORDERED_TYPES + ("bool", "uuid"), "count")
            return Expr("count(DISTINCT %s)%s" % (e.sql, filt), "int8", e.risky) if e else Expr("count(*)", "int8")
        if fn in ("sum", "avg", "sum_distinct", "avg_distinct"):
            base = fn.replace("_distinct", "")
            # not avg(DISTINCT interval): which of two equal intervals ('1 mon', '30 days')
            # DISTINCT keeps changes how the division rounds, even between native plans
            e = self.arg(aliases, SUM_OK if self.supported or fn == "avg_distinct"
                         else NUMERIC_TYPES + ("interval",), base)
            if e is None:
                return Expr("count(*)", "int8")
            distinct = "DISTINCT " if fn.endswith("_distinct") else ""
            out = Expr("%s(%s%s)%s" % (base, distinct, e.sql, filt), agg_result_type(base, e.type),
                       e.risky, e.inexact)
            # DISTINCT keeps one of -0 and 0, of 1.5 and 1.50
            out.canon = spelling(e.type) if distinct else None
            return out
        if fn in ("min", "max"):
            e = self.arg(aliases, MINMAX_OK if self.supported else ORDERED_TYPES, fn)
            out = Expr("%s(%s)%s" % (fn, e.sql, filt), agg_result_type(fn, e.type), e.risky, e.inexact)
            out.canon = spelling(e.type)
            return out
        if fn in ("bool_and", "bool_or", "every"):
            e = self.arg(aliases, ("bool",), fn)
            return Expr("%s(%s)%s" % (fn, e.sql, filt), "bool")
        if fn in VARIANCE_FNS:
            e = self.arg(aliases, VARIANCE_OK if self.supported else NUMERIC_TYPES, fn)
            columns = set(re.findall(r"\b[a-z]\.[a-z0-9_]+", e.sql)) if e else set()
            if e is None or (e.type in FLOAT_TYPES and
                             any(c in k.sql for c in columns for k in getattr(self, "group_keys", []))):
                # (not a float column that is a group key: its groups' values are all
                # equal, where gpuagg has exactly zero spread and PostgreSQL's running
                # updates a rounding residue, docs/design/numeric.md, "Known differences")
                e = Expr("%s.i4" % aliases[0], "int4")
            # of floats: rounds differently in different input orders (also between
            # PostgreSQL's own plans), so compared within a tolerance
            return Expr("%s(%s)%s" % (fn, e.sql, filt), agg_result_type(fn, e.type), e.risky,
                        e.inexact or e.type in FLOAT_TYPES)
        if fn == "covar":
            # corr(y, x) and its family over float8 arguments (integers cast, f8, fw, f4)
            # (not over a group key's column: in a group of equal values PostgreSQL's
            # Youngs-Cramer updates may leave a rounding residue in Sxx where gpuagg
            # has exactly 0, so that regr_slope is 1 on one side and NULL on the other)
            fn = r.choice(COVAR_FNS)
            keys = getattr(self, "group_keys", [])
            args = []
            for _ in range(2):
                e = self.arg(aliases, ("float8",), fn)
                columns = set(re.findall(r"\b[a-z]\.[a-z0-9_]+", e.sql)) if e else set()
                if e is None or e.risky or any(c in k.sql for c in columns for k in keys):
                    e = Expr("%s.i4::float8" % r.choice(aliases), "float8")
                if fn in ("corr", "regr_slope", "regr_intercept", "regr_r2"):
                    # these are NULL (or 1) when a group's values are all equal: gpuagg sees
                    # exactly zero spread there, PostgreSQL's Youngs-Cramer updates may leave
                    # a rounding residue (and its parallel plans may not): docs/design/numeric.md, "Known
                    # differences".  Adding the row's unique id keeps the values apart.
                    refs = re.findall(r"\b([a-z])\.[a-z0-9_]+", e.sql)
                    e = Expr("(%s + %s.id)" % (e.sql, refs[0] if refs else aliases[0]), "float8")
                args.append(e)
            return Expr("%s(%s, %s)%s" % (fn, args[0].sql, args[1].sql, filt),
                        "int8" if fn == "regr_count" else "float8",
                        False, fn != "regr_count")
        if fn == "string_agg":
            c, _ = self.column(aliases, ("text",))
            return Expr("string_agg(%s, ',' ORDER BY %s COLLATE \"C\")" % (c.sql, c.sql), "text")
        raise ValueError(fn)

    def over_aggregate(self, agg):
        """Maybe an expression over an aggregate in the output."""
        r = self.rng
        if r.random() > 0.15 or agg.inexact:
            return agg
        t = agg.type
        if t in ("int2", "int4", "int8", "numeric", "float8"):
            forms = [Expr("coalesce(%s, 0)" % agg.sql, t), Expr("(%s > 0)" % agg.sql, "bool"),
                     Expr("(%s)::text" % agg.sql, "text")]
            if agg.sql.startswith("count("):
                forms.append(Expr("%s * 2 + 1" % agg.sql, t))
        elif t in ("date", "timestamp", "text"):
            forms = [Expr("(%s IS NULL)" % agg.sql, "bool")]
        else:
            return agg
        e = r.choice(forms)
        e.risky = agg.risky
        e.canon = agg.canon if e.type in SPELLING_FREE + ("text",) else None
        return e

    # -- conditions
    def condition(self, aliases, allow_subquery=True):
        """A boolean condition that cannot raise an error."""
        r = self.rng
        c, name = self.column(aliases)
        t = c.type
        s = c.sql
        forms = ["%s IS NULL" % s, "%s IS NOT NULL" % s]
        if t in INT_TYPES:
            v = r.randint(-100, 100) * r.choice([1, 1, 100])
            forms += ["%s > %d" % (s, v), "%s %% 3 = 0" % s, "%s BETWEEN %d AND %d" % (s, v, v + 500),
                      "%s <> 0" % s]
        elif t in ("float4", "float8"):
            forms += ["%s > 0" % s, "%s < 1.5" % s, "%s = 'NaN'" % s, "%s <> 'Infinity'" % s]
        elif t == "bool":
            forms += [s, "NOT %s" % s, "%s IS NOT TRUE" % s]
        elif t in ("date", "timestamp", "timestamptz"):
            forms += ["%s > '2010-06-01'" % s, "%s <= '2000-01-01'" % s]
        elif t in ("text", "varchar", "bpchar"):
            forms += ["%s LIKE 'a%%'" % s, "%s > 'm'" % s, "%s COLLATE \"C\" < 'b'" % s, "%s = ''" % s]
        elif t == "numeric":
            forms += ["%s > 0" % s, "%s < 100.5" % s]
        if name == "id":
            forms += ["%s %% 10 = 0" % s, "%s <= %d" % (s, r.choice([1, 5, 100, 10000]))]
        cond = r.choice(forms)
        x = r.random()
        if x < 0.05:
            cond = "false"
        elif x < 0.2:
            cond = "(%s %s %s)" % (cond, r.choice(["AND", "OR"]), self.condition(aliases, allow_subquery=False))
        elif x < 0.25 and allow_subquery:
            cond = ("%s.i2 IN (SELECT x.i2 FROM %s x GROUP BY x.i2 HAVING count(*) > %d)"
                    % (aliases[0], r.choice(SMALL_TABLES), r.randint(0, 3)))
        return cond

    # -- FROM
    def from_clause(self):
        """A FROM clause; returns (sql, aliases, main table, shape)."""
        r = self.rng
        t = self.table()
        x = r.random()
        if x < 0.62:
            return "%s a" % t, ["a"], t, "table"
        if x < 0.75:
            # (joins of every kind are test/differential/joins.py's; these feed the aggregation)
            t2 = r.choice(SMALL_TABLES)
            if t == "t_big" or r.random() < 0.5:
                # each row of b meets at most one row of a
                on = r.choice(["a.id = b.id", "a.id = b.id", "a.id = b.id AND a.i4 > b.i4", "a.id = b.id + 1",
                               "a.id = b.i2", "a.id = b.di", "a.id = b.id AND a.t = b.t"])
            else:
                # equal values of small tables; a few values repeated hundreds of times are
                # spread over id % 10 (or 20) so that the join stays small
                on = r.choice(["a.i2 = b.i2", "a.b = b.b AND a.id % 20 = b.id % 20", "a.t = b.t",
                               "a.bpu = b.bpu AND a.id % 20 = b.id % 20", "a.nm = b.nm AND a.id % 10 = b.id % 10",
                               "a.f4 = b.f4 AND a.id % 10 = b.id % 10", "a.dt = b.t AND a.id % 10 = b.id % 10",
                               "a.ivm = b.ivm AND a.id % 10 = b.id % 10", "a.d = b.d AND a.id % 10 = b.id % 10",
                               "a.u = b.u AND a.id % 10 = b.id % 10"])
            join = r.choice(["JOIN", "JOIN", "LEFT JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
            return "%s a %s %s b ON %s" % (t, join, t2, on), ["a", "b"], t, "join"
        if x < 0.85:
            if r.random() < 0.5:
                t2 = r.choice(SMALL_TABLES)
                return "(SELECT * FROM %s UNION ALL SELECT * FROM %s) a" % (t, t2), ["a"], t, "union-below"
            return ("(SELECT * FROM %s s WHERE %s) a" % (t, self.condition(["s"], allow_subquery=False)),
                    ["a"], t, "subquery")
        mat = r.choice(["", "MATERIALIZED ", "NOT MATERIALIZED "])
        return ("WITH c AS %s(SELECT * FROM %s) SELECT" % (mat, t)), ["a"], t, "cte"

    def table(self):
        return self.pick((6, "t_empty"), (6, "t_one"), (30, "t_small1"), (30, "t_small2"), (14, "t_big"))

    # -- whole queries
    def grouping(self, aliases, nkeys=None, naggs=None):
        """Select list, GROUP BY and HAVING parts: (select items, group by, having)."""
        r = self.rng
        if nkeys is None:
            nkeys = self.pick((18, 0), (35, 1), (27, 2), (12, 3), (8, 4))
        if naggs is None:
            naggs = self.pick((3, 0), (25, 1), (25, 2), (20, 3), (12, 4), (8, 5), (7, 6))
            if nkeys == 0 and naggs == 0:
                naggs = 1
        keys = [self.key(aliases) for _ in range(nkeys)]
        items = []
        for k in keys:
            if r.random() < 0.85:
                items.append(k)
        self.group_keys = keys
        aggs = [self.use(self.over_aggregate(self.aggregate(aliases))) for _ in range(naggs)]
        self.group_keys = []
        if KNOWN_BUG_DISTINCT_FILTER_SPELLED_KEY:
            spelled = {k.sql for k in keys if k.type in ("bpchar", "numeric", "interval")}
            for a in aggs:
                m = re.search(r"\(DISTINCT (.*?)\) FILTER \(WHERE ", a.sql)
                if m and m.group(1) in spelled:
                    a.sql = without_filter(a.sql, m.end(0) - len(" FILTER (WHERE "))
        items += aggs
        if r.random() < 0.4:
            r.shuffle(items)
        if not items:
            items = [Expr("count(*)", "int8")]
        if r.random() < 0.05 and nkeys:
            items.append(Expr("sum(count(*)) OVER ()", "numeric"))
        having = ""
        if r.random() < 0.2:
            having = self.having(aliases, keys)
        group_by = ""
        if keys:
            x = r.random()
            if self.supported:
                group_by = "GROUP BY " + ", ".join(k.sql for k in keys)
            elif x < 0.03:
                group_by = "GROUP BY ROLLUP (%s)" % ", ".join(k.sql for k in keys)
            elif x < 0.08 and len(keys) > 1:
                group_by = "GROUP BY GROUPING SETS ((%s), ())" % ", ".join(k.sql for k in keys)
            else:
                group_by = "GROUP BY " + ", ".join(k.sql for k in keys)
        return items, group_by, having

    def having(self, aliases, keys):
        """A HAVING clause over aggregates (maybe not in the output) or keys."""
        r = self.rng
        forms = ["count(*) > %d" % r.choice([0, 1, 2, 5]), "count(*) = 1"]
        e = self.arg(aliases, INT_TYPES, "sum")
        if e is not None and not e.risky:
            forms += ["sum(%s) > 0" % e.sql, "max(%s) IS NOT NULL" % e.sql, "min(%s) < 0" % e.sql]
        if keys and keys[0].type in INT_TYPES:
            forms.append("%s > 0" % keys[0].sql)
        c = r.choice(forms)
        if r.random() < 0.2:
            c += " OR avg(%s.f8) > 0" % aliases[0]
        return "HAVING " + c

    def select(self, items):
        return ", ".join("%s AS c%d" % (e.sql, i + 1) for i, e in enumerate(items))

    def simple(self):
        """SELECT ... FROM ... [WHERE] [GROUP BY] [HAVING] [ORDER BY all LIMIT]."""
        r = self.rng
        frm, aliases, table, shape = self.from_clause()
        items, group_by, having = self.grouping(aliases)
        where = ""
        if r.random() < 0.4:
            where = "WHERE " + self.condition(aliases)
        ordered = False
        tail = ""
        if r.random() < 0.2:
            ordered = True
            tail = "ORDER BY " + ", ".join(str(i + 1) for i in range(len(items)))
            # not where an error is possible: a plan may stop before the row that raises it
            # (GroupAggregate under Incremental Sort and Limit computes only the groups it returns)
            # nor where a column is compared within a tolerance: its last bits decide
            # which rows come first
            if r.random() < 0.7 and not self.risky_used and not any(e.inexact for e in items):
                tail += " LIMIT %d" % r.choice([1, 3, 10, 100])
                if r.random() < 0.3:
                    tail += " OFFSET %d" % r.choice([1, 5])
        if shape == "cte":
            head = frm
            body = "%s FROM c a" % self.select(items)
            sql = " ".join(p for p in [head, body, where, group_by, having, tail] if p)
        else:
            sql = " ".join(p for p in ["SELECT " + self.select(items), "FROM " + frm, where,
                                       group_by, having, tail] if p)
        return sql, ordered, shape, table, items

    def query(self):
        """One random query: (sql, ordered, shape, table, its output columns as Exprs)."""
        r = self.rng
        x = r.random()
        if x < 0.80:
            sql, ordered, shape, table, items = self.simple()
            return sql, ordered, shape, table, items
        if x < 0.87:
            # the same grouping over two inputs
            t1, t2 = self.table(), self.table()
            items, group_by, having = self.grouping(["a"])
            parts = []
            for t in (t1, t2):
                parts.append(" ".join(p for p in ["SELECT " + self.select(items), "FROM %s a" % t,
                                                  group_by, having] if p))
            return "(%s) UNION ALL (%s)" % tuple(parts), False, "union-above", t1, items
        if x < 0.93:
            # aggregation over an aggregation
            sql, _, shape, table, items = self.simple()
            if " LIMIT " in sql:
                sql = sql[:sql.rindex(" ORDER BY ")]
            outer = [Expr("count(*)", "int8")]
            key = None
            for i, e in enumerate(items):
                col = "s.c%d" % (i + 1)
                if e.type in INT_TYPES + ("float8",) and not e.inexact and key is None and r.random() < 0.5:
                    key = Expr(col, e.type)
                    key.canon = e.canon or spelling(e.type)
                elif e.type in ("int2", "int4", "int8", "numeric") and not e.inexact:
                    outer.append(Expr(r.choice(["sum(%s)", "max(%s)", "count(%s)", "avg(%s)"]) % col, e.type))
                    if not outer[-1].sql.startswith("count"):
                        outer[-1].canon = e.canon   # 1.5 or 1.50 in, 3.0 or 3.00 out
                    if outer[-1].sql.startswith("max") and e.type == "numeric":
                        # max of equal values of different scales (avg 3.0 and 3.00 of two
                        # groups) is whichever comes last: the order of the groups decides
                        outer[-1].canon = spelling(e.type)
                elif e.type in ("date", "timestamp", "float8") and not e.inexact:
                    outer.append(Expr(r.choice(["min(%s)", "max(%s)"]) % col, e.type))
                    outer[-1].canon = spelling(e.type)
            if key:
                return ("SELECT %s, %s FROM (%s) s GROUP BY %s"
                        % (key.sql, ", ".join(o.sql for o in outer), sql, key.sql),
                        False, "nested", table, [key] + outer)
            return ("SELECT %s FROM (%s) s" % (", ".join(o.sql for o in outer), sql), False, "nested",
                    table, outer)
        # correlated subquery or LATERAL: the inner aggregation is rescanned
        outer_t = r.choice(["t_one", "t_small1", "t_small2", "t_empty"])
        inner_t = self.table()
        corr = r.choice(["b.i2 = a.i2", "b.b = a.b", "b.t = a.t", "b.id <= a.id % 50"])
        if inner_t == "t_big":
            # a few rescans of the big table, not hundreds
            outer_t = "(SELECT * FROM %s WHERE id <= 3)" % outer_t
        if r.random() < 0.5:
            agg = self.use(self.aggregate(["b"]))
            return ("SELECT a.id AS c0, (SELECT %s FROM %s b WHERE %s) AS c1 FROM %s a"
                    % (agg.sql, inner_t, corr, outer_t), False, "correlated", inner_t,
                    [Expr("a.id", "int4"), agg])
        items, group_by, having = self.grouping(["b"])
        return ("SELECT a.id AS c0, l.* FROM %s a CROSS JOIN LATERAL (SELECT %s FROM %s b WHERE %s %s %s) l"
                % (outer_t, self.select(items), inner_t, corr, group_by, having),
                False, "lateral", inner_t, [Expr("a.id", "int4")] + items)

    def settings(self):
        """Per-query settings (applied to both runs)."""
        r = self.rng
        s = []
        x = r.random()
        if x < 0.15:
            s.append("gpuagg.batch_rows=16")
            # a third of those with only 1 to 3 bits of every key hash: keys collide
            if x < 0.05:
                s.append("gpuagg.debug_hash_bits=%d" % (1 + int(x * 1000) % 3))
        elif x < 0.3:
            s.append("gpuagg.batch_rows=%d" % r.choice([100, 1000, 4096]))
        if r.random() < 0.2 and self.strategies:
            s.append("gpuagg.strategy=%s" % r.choice(self.strategies))
        if r.random() < 0.2:
            s += ["parallel_setup_cost=0", "parallel_tuple_cost=0", "min_parallel_table_scan_size=0"]
        if r.random() < 0.1:
            s.append("enable_hashagg=off")
        # the CPU device in the session's own process takes heap pages (gpuagg.page_scan)
        if r.random() < 0.3 and os.environ.get("GPUAGG_DEVICE", "cpu") == "cpu":
            s += ["gpuagg.device_host=backend", "gpuagg.page_scan=on"]
        return s


def without_filter(sql, at):
    """sql without the FILTER (WHERE ...) clause that starts at sql[at:]."""
    depth = 0
    for i in range(at + len(" FILTER "), len(sql)):
        depth += {"(": 1, ")": -1}.get(sql[i], 0)
        if depth == 0:
            return sql[:at] + sql[i + 1:]
    raise ValueError(sql)


def spelling(type_):
    """The canonical() type of a value of this SQL type, or None."""
    return type_ if type_ in SPELLING_FREE else None
