"""Join queries for the differential test (test/differential/gen.py): tables made for
joining and a generator of random join queries, with and without aggregation, aimed at
GpuHashJoin.  gen.py creates the tables next to groupby.py's, runs these queries through
the same harness (harness.py: forced on, gpuagg off, compared as multisets of row texts)
and reports how many had GpuHashJoin in their forced plan.

Data.  Six tables of one shape, j_empty (0 rows), j_one (1), j_a and j_b (a few
hundred), j_c (a few dozen) and j_big (about 20,000), and partitioned copies of j_a and
j_b (j_pa, j_pb: three partitions by ranges of id), hold key columns of every type
GpuHashJoin takes: int2, int4, int8, a domain over int4, numeric(10,2), numeric spelled
with any scale (1.5 and 1.50), float8 and float4 (-0, NaN, infinities), text,
varchar(10), char(4) ('a' = 'a '), date, timestamp, timestamptz, bool, uuid, interval
('1 mon' = '30 days'), jsonb ({"k": 1.5} = {"k": 1.50}), int4[] ({1,NULL}), plus payload
columns; a case-insensitive nondeterministic collation (diff_ci, ICU) serves as a key
expression.  Every key value derives from an integer drawn from a small domain, so
values meet across tables and across types (int2 = int8, int4::numeric = numeric,
numeric = float8, text = varchar, date::timestamp = timestamp, int4::text = text).  Each
row draws a base integer and each key column mostly follows it (so several keys of one
join can all match) or draws its own; each column of each table draws its own domain
size (1 to 20,000), distribution (uniform, Zipf-like, one hot value), NULL rate (0 to
100%) and special values (type extremes, NaN, infinities, toasted text).

Queries (JoinGen.query; shape names j-*): INNER (also as a comma join), LEFT, RIGHT,
FULL, SEMI (EXISTS, IN of one or several columns), ANTI (NOT EXISTS, LEFT JOIN ...
WHERE b.<id or key> IS NULL), self-joins (also over one CTE), three tables, GROUP BY
above a join, a grouped subquery as one side, and joins inside correlated scalar,
EXISTS and LATERAL subqueries (parameters in a scan below the join, in its join
condition, in a hash key, in a filter above an outer join) or under a nested loop.
One to five keys: columns, the same expression on both sides, or a cast or function
on one side; ON clauses add conditions between the sides and on one side only; USING;
WHERE filters above outer joins (on the nullable side too, IS NULL, non-strict ones);
ORDER BY every column with LIMIT now and then; whole rows, ctid and tableoid in the
output.  Settings vary batch sizes (16 rows: many probe batches), injected device
failures (gpuagg.debug_fail_at_batch), the native plan type (enable_hashjoin,
enable_mergejoin, enable_nestloop, work_mem), parallel plans and partitionwise joins.
Keys that no pair of rows meets are mostly drawn again, so that few results are empty.

Bounded work.  Python knows every value, so for each generated join it computes the
number of candidate pairs (rows of both sides with equal keys, summed over the hash
keys' equality classes; the least over several keys; times the multiplicity of the
third table's key for three tables; plus the null-extended rows of outer joins), and
while that is over MAX_PAIRS it restricts the largest side to a range of ids
(`(SELECT * FROM j_big WHERE id BETWEEN 1 AND 300) b`).  So no query produces or checks
more than about MAX_PAIRS rows, however skewed; the rescans of a correlated join read at
most RESCAN_ROWS rows together; a nested loop is forbidden (enable_nestloop = off) where
it would compare over a million pairs.

Determinism.  A join's output rows are made of its input rows' own values, so they are
compared as text; only a GROUP BY key of a type whose equal values print differently
(1.5 and 1.50) is compared by value.  No expression here can raise an error, and LIMIT
comes only after an ORDER BY of every output column.
"""

import collections
import datetime
import fractions
import uuid

MAX_PAIRS = 12000
RESCAN_ROWS = 40000     # rows read by all the rescans of a correlated join together
INT64_MIN = -2**63

# KNOWN_BUG_JOIN_INT8_MIN: GpuHashJoin's exact int8 key must keep -9223372036854775808 and
# -9223372036854775807 apart (queries 3409, 3721 and 3801 of the default seed join the two
# where it does not).  While True, int8 key columns hold no -9223372036854775808.
KNOWN_BUG_JOIN_INT8_MIN = False

JTABLES = [  # name, rows (a range)
    ("j_empty", (0, 0)),
    ("j_one", (1, 1)),
    ("j_a", (150, 400)),
    ("j_b", (150, 400)),
    ("j_c", (30, 120)),
    ("j_big", (15000, 25000)),
]

# name, SQL type, base type (groupby.py's names), key group (None: payload only)
JCOLUMNS = [
    ("id", "int4", "int4", "int"),
    ("k2", "int2", "int2", "int"),
    ("k4", "int4", "int4", "int"),
    ("k8", "int8", "int8", "int"),
    ("kn", "numeric(10,2)", "numeric", "num"),
    ("knm", "numeric", "numeric", "num"),
    ("kf", "float8", "float8", "flt"),
    ("kr", "float4", "float4", "flt"),
    ("kt", "text", "text", "txt"),
    ("kv", "varchar(10)", "varchar", "txt"),
    ("kb", "char(4)", "bpchar", "txt"),
    ("kd", "date", "date", "date"),
    ("kts", "timestamp", "timestamp", "ts"),
    ("ktz", "timestamptz", "timestamptz", "tstz"),
    ("kbo", "bool", "bool", "bool"),
    ("ku", "uuid", "uuid", "uuid"),
    ("kiv", "interval", "interval", "iv"),
    ("kdi", "diff_int", "int4", "int"),      # a domain over int4 (groupby.py creates it)
    ("kj", "jsonb", "jsonb", "json"),        # {"k": 1.5} = {"k": 1.50}; hashed as numerics
    ("ka", "int4[]", "int4[]", "arr"),       # {1,NULL} = {1,NULL}
    ("g", "int4", "int4", "int"),
    ("v", "int4", "int4", None),
    ("w", "float8", "float8", None),
    ("s", "text", "text", None),
]
JBASE = {n: b for n, _, b, _ in JCOLUMNS}
JGROUP = {n: g for n, _, _, g in JCOLUMNS}
KEY_COLUMNS = [n for n, _, _, g in JCOLUMNS if g]
# types whose equal values may print differently (groupby.py's SPELLING_FREE)
SPELLING_FREE = ("float4", "float8", "numeric", "interval", "bpchar")

# groups whose values can be compared with `=` (through PostgreSQL's implicit casts)
COMPATIBLE = {
    "int": ("int", "num", "flt"), "num": ("num", "int", "flt"), "flt": ("flt", "int", "num"),
    "txt": ("txt",), "date": ("date",), "ts": ("ts",), "tstz": ("tstz",), "bool": ("bool",),
    "uuid": ("uuid",), "iv": ("iv",), "json": ("json",), "arr": ("arr",),
}

WORDS_J = ["", " ", "a", "a ", "A", "b", "ab", "abc", "é", "É", "日本", "x y", "a,b", "'", '"q"',
           "back\\slash", "tab\there", "NULL", "zz", "m", "(p)", "{x}", "%_"]
EPOCH = datetime.date(2000, 1, 1)
EPOCH_TS = datetime.datetime(2000, 1, 1)
INF, NINF = float("inf"), float("-inf")


def copy_escape(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def word(x):
    """A text for the integer x: a word for small ones (so that int4::text = text can match)."""
    return WORDS_J[x] if 0 <= x < len(WORDS_J) else str(x)


def decimal_text(q, places):
    """A Fraction with a finite decimal expansion, written with places decimals."""
    sign = "-" if q < 0 else ""
    q = abs(q)
    scaled = q * 10 ** places
    assert scaled.denominator == 1, (q, places)
    digits = str(scaled.numerator).rjust(places + 1, "0")
    if places == 0:
        return sign + digits
    return "%s%s.%s" % (sign, digits[:-places], digits[-places:])


def min_places(q):
    """The fewest decimals that write the Fraction q exactly (q = x/4)."""
    for p in range(0, 3):
        if (q * 10 ** p).denominator == 1:
            return p
    raise ValueError(q)


def value_for(name, x, rng):
    """(COPY text, canonical value) of key column name for the integer x.  Canonical
    values of equal SQL values are equal Python values (1 == Fraction(1) == 1.0); text
    values are compared without trailing spaces, which merges at least what char(n)
    merges (so pair counts are upper bounds)."""
    if name in ("k2", "k4", "k8", "kdi", "g"):
        return str(x), x
    if name == "kj":
        q = fractions.Fraction(x, 4)
        return '{"k": %s}' % decimal_text(q, min_places(q) + rng.randint(0, 2)), q
    if name == "ka":
        r = rng.random()
        if r < 0.5:
            return "{%d}" % x, (x,)
        if r < 0.8:
            return "{%d,%d}" % (x, x % 3), (x, x % 3)
        if r < 0.9:
            return "{%d,NULL}" % x, (x, None)
        return "{}", ()
    if name == "kn":
        q = fractions.Fraction(x, 4)
        return decimal_text(q, 2), q
    if name == "knm":
        q = fractions.Fraction(x, 4)
        return decimal_text(q, min_places(q) + rng.randint(0, 2)), q
    if name in ("kf", "kr"):
        if x == 0 and rng.random() < 0.5:
            return "-0", 0.0
        return repr(x / 2.0), x / 2.0
    if name == "kt":
        return word(x), word(x).rstrip(" ")
    if name == "kv":
        return word(x)[:10], word(x)[:10].rstrip(" ")
    if name == "kb":
        return word(x)[:4], word(x)[:4].rstrip(" ")
    if name == "kd":
        d = EPOCH + datetime.timedelta(days=x)
        return d.isoformat(), d
    if name in ("kts", "ktz"):
        t = EPOCH_TS + datetime.timedelta(days=x, hours=8 * (abs(x) % 3))
        return t.isoformat(" ") + ("+00" if name == "ktz" else ""), t
    if name == "kbo":
        return ("t" if x % 2 == 0 else "f"), x % 2 == 0
    if name == "ku":
        u = str(uuid.UUID(int=(x * 0x9E3779B97F4A7C15 + 12345) % 2**128))
        return u, u
    if name == "kiv":
        r = rng.random()
        if r < 0.4:
            return "%d days" % x, x
        if r < 0.7:
            return "%d hours" % (24 * x), x
        mons = int(x / 30)
        return "%d mons %d days" % (mons, x - 30 * mons), x
    raise ValueError(name)


def special_values(name):
    """Edge values of a key column: (COPY text, canonical value)."""
    if name == "k2":
        return [("-32768", -32768), ("32767", 32767)]
    if name == "k4":
        return [("-2147483648", -2**31), ("2147483647", 2**31 - 1), ("-32768", -32768)]
    if name == "k8":
        out = [("-9223372036854775807", INT64_MIN + 1), ("9223372036854775807", 2**63 - 1),
               ("1099511627776", 2**40), ("-2147483648", -2**31)]
        if not KNOWN_BUG_JOIN_INT8_MIN:
            out.append(("-9223372036854775808", INT64_MIN))
        return out
    if name == "kn":
        return [("NaN", "NaN"), ("-0.00", 0), ("99999999.99", fractions.Fraction(9999999999, 100))]
    if name == "knm":
        return [("NaN", "NaN"), ("Infinity", INF), ("-Infinity", NINF), ("-0.000", 0),
                ("0.00000000000000000001", fractions.Fraction(1, 10**20)),
                ("123456789012345678901234567890.5", fractions.Fraction(1234567890123456789012345678901, 10))]
    if name == "kf":
        return [("NaN", "NaN"), ("-0", 0.0), ("Infinity", INF), ("-Infinity", NINF), ("1e308", 1e308),
                ("5e-324", 5e-324)]
    if name == "kr":
        return [("NaN", "NaN"), ("-0", 0.0), ("Infinity", INF), ("-Infinity", NINF)]
    if name == "kt":
        # toasted: compressible (inline compressed) and not (external), equal but for the end
        long1 = "long" * 700
        long2 = "".join("abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7919) % 36] for i in range(3000))
        return [(long1 + "1", long1 + "1"), (long1 + "2", long1 + "2"), (long2, long2),
                ("", ""), ("日本", "日本")]
    if name == "kv":
        return [("", ""), ("abcdefghij", "abcdefghij"), ("  ", "")]
    if name == "kb":
        return [("", ""), ("    ", ""), ("é", "é")]
    if name == "kd":
        return [("infinity", INF), ("-infinity", NINF)]
    if name in ("kts", "ktz"):
        return [("infinity", INF), ("-infinity", NINF)]
    if name == "ku":
        return [("00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"),
                ("ffffffff-ffff-ffff-ffff-ffffffffffff", "ffffffff-ffff-ffff-ffff-ffffffffffff")]
    if name == "kiv":
        return [("0", 0), ("1 mon -30 days", 0), ("-1 days", -1), ("1 year", 360)]
    if name == "kdi":
        return [("-2147483648", -2**31), ("2147483647", 2**31 - 1)]
    if name == "kj":
        # JSON null (not SQL NULL), an empty object, an array, a string
        return [("null", "jnull"), ("{}", "jobject"), ("[1, 2]", "jarray"), ('{"k": "1"}', "jstring")]
    if name == "ka":
        return [("{NULL}", (None,)), ("{-2147483648}", (-2**31,))]
    return []


def draw_ints(rng, n, dom, dist):
    """n integers of a domain of dom values (some negative) in distribution dist."""
    vals = list(range(dom))
    rng.shuffle(vals)
    if dist == "zipf":
        s = rng.choice([1.0, 1.5])
        weights = [1.0 / (i + 1) ** s for i in range(dom)]
    elif dist == "hot":
        hot = rng.choice([0.3, 0.6, 0.9])
        weights = [(1 - hot) / max(1, dom - 1)] * dom
        weights[0] = hot
    else:
        weights = [1.0] * dom
    shift = dom // 4
    return [v - shift for v in rng.choices(vals, weights=weights, k=n)]


def pick_weighted(rng, weighted):
    """Pick among (weight, value) pairs with probability proportional to the weight
    (one rng.random() draw; groupby.py's generator uses it too)."""
    total = sum(w for w, _ in weighted)
    x = rng.random() * total
    for w, v in weighted:
        x -= w
        if x < 0:
            return v
    return weighted[-1][1]


def pick_domain(rng, n):
    return rng.choice([1, 3, 10, 10, 40, 40, 200] + ([2000, 20000] if n > 1000 else [100]))


class JTable:
    """One join table: its values (canonical, per column; None for NULL) and COPY lines."""

    def __init__(self, rng, name, n):
        self.name = name
        self.n = n
        self.cols = {}
        texts = {}
        base = draw_ints(rng, n, pick_domain(rng, n), rng.choice(["uniform", "zipf", "hot"]))
        for cname, _, _, group in JCOLUMNS:
            if cname == "id":
                texts[cname] = [str(i) for i in range(1, n + 1)]
                self.cols[cname] = list(range(1, n + 1))
                continue
            if cname == "g":
                ints = [rng.randint(0, 9) for _ in range(n)]
                pairs = [(str(x), x) for x in ints]
            elif cname == "v":
                pairs = [(str(x), x) for x in (rng.randint(-100, 100) for _ in range(n))]
                pairs = [("\\N", None) if rng.random() < 0.1 else p for p in pairs]
            elif cname == "w":
                pairs = [(repr(x / 8.0), x / 8.0) for x in (rng.randint(-800, 800) for _ in range(n))]
                pairs = [("\\N", None) if rng.random() < 0.05 else p for p in pairs]
            elif cname == "s":
                pairs = [(copy_escape(rng.choice(WORDS_J)), None) for _ in range(n)]
                pairs = [("\\N", None) if rng.random() < 0.1 else p for p in pairs]
            else:
                if rng.random() < 0.7:
                    ints = base
                else:
                    ints = draw_ints(rng, n, pick_domain(rng, n), rng.choice(["uniform", "zipf", "hot"]))
                pairs = [value_for(cname, x, rng) for x in ints]
                specials = special_values(cname)
                if specials and rng.random() < 0.5:
                    rate = rng.choice([0.02, 0.1])
                    pairs = [rng.choice(specials) if rng.random() < rate else p for p in pairs]
                null_rate = rng.choice([0] * 10 + [0.05] * 5 + [0.2] * 4 + [0.5] * 3 + [1.0])
                if null_rate:
                    pairs = [("\\N", None) if rng.random() < null_rate else p for p in pairs]
                pairs = [(p[0] if p[0] == "\\N" else copy_escape(p[0]), p[1]) for p in pairs]
            texts[cname] = [p[0] for p in pairs]
            self.cols[cname] = [p[1] for p in pairs]
        self.lines = ["\t".join(row) for row in zip(*(texts[c] for c, _, _, _ in JCOLUMNS))]


class PartitionedCopy:
    """A partitioned copy of a join table (the same rows)."""

    def __init__(self, name, base):
        self.name = name
        self.n = base.n
        self.cols = base.cols


# partitioned copies: name, table copied; partitions by ranges of id (the same for both, so
# that a join on id can be partitionwise)
PARTITIONED = [("j_pa", "j_a"), ("j_pb", "j_b")]


def setup_sql(rng):
    """The SQL that creates and fills the join tables; returns (sql, {name: JTable})."""
    # a case-insensitive collation (ICU); without ICU, one equal to "C"
    out = ["DO $$ BEGIN CREATE COLLATION diff_ci (provider = icu, locale = 'und-u-ks-level2', "
           "deterministic = false); EXCEPTION WHEN OTHERS THEN CREATE COLLATION diff_ci FROM \"C\"; END $$;"]
    tables = {}
    coldefs = ", ".join("%s %s" % (n, t) for n, t, _, _ in JCOLUMNS)
    for name, (lo, hi) in JTABLES:
        t = JTable(rng, name, rng.randint(lo, hi))
        tables[name] = t
        out.append("CREATE TABLE %s (%s, PRIMARY KEY (id));" % (name, coldefs))
        if t.n:
            out.append("COPY %s FROM stdin;" % name)
            out.extend(t.lines)
            out.append("\\.")
        out.append("ANALYZE %s;" % name)
    for name, base in PARTITIONED:
        tables[name] = PartitionedCopy(name, tables[base])
        out.append("CREATE TABLE %s (%s) PARTITION BY RANGE (id);" % (name, coldefs))
        out.append("CREATE TABLE %s_1 PARTITION OF %s FOR VALUES FROM (MINVALUE) TO (101);" % (name, name))
        out.append("CREATE TABLE %s_2 PARTITION OF %s FOR VALUES FROM (101) TO (201);" % (name, name))
        out.append("CREATE TABLE %s_3 PARTITION OF %s DEFAULT;" % (name, name))
        out.append("INSERT INTO %s SELECT * FROM %s;" % (name, base))
        out.append("ANALYZE %s;" % name)
    return "\n".join(out) + "\n", tables


# ---------------------------------------------------------------- key expressions

def _num(f):
    """Apply f to a finite number; NaN, infinities and None pass through."""
    def g(c):
        if c is None or isinstance(c, str) or c in (INF, NINF):
            return c
        return f(c)
    return g


def _trunc_div(c, d):
    return c // d if c >= 0 else -((-c) // d)


def _trunc_mod(c, d):
    return c % d if c >= 0 else -((-c) % d)


def _round_half_away(c):
    c = fractions.Fraction(c)
    return int(c + fractions.Fraction(1, 2)) if c >= 0 else -int(-c + fractions.Fraction(1, 2))


def _to_ts(c):
    if c is None or c in (INF, NINF):
        return c
    return datetime.datetime(c.year, c.month, c.day)


def _day(c):
    if c is None or c in (INF, NINF):
        return c
    return datetime.datetime(c.year, c.month, c.day)


def _txt(f):
    return lambda c: None if c is None else f(c)


# group -> [(template, result group, result base type or None for the same, canonical map)]
TRANSFORMS = {
    "int": [("({} % 7)", "int", None, _num(lambda c: _trunc_mod(c, 7))),
            ("({} / 4)", "int", None, _num(lambda c: _trunc_div(c, 4))),
            ("{}::int8", "int", "int8", lambda c: c),
            ("{}::numeric", "num", "numeric", lambda c: c),
            ("{}::float8", "flt", "float8", _num(float)),
            ("coalesce({}, 0)", "int", None, lambda c: 0 if c is None else c),
            ("{}::text", "txt", "text", _txt(str))],
    "num": [("round({})", "num", "numeric", _num(_round_half_away)),
            ("trunc({})", "num", "numeric", _num(int)),
            ("{}::float8", "flt", "float8", _num(float)),
            ("({} * 2)", "num", "numeric", _num(lambda c: c * 2)),
            ("abs({})", "num", "numeric", _num(abs))],
    "flt": [("floor({})", "flt", "float8", _num(lambda c: float(int(c // 1)))),
            ("(-{})", "flt", None, _num(lambda c: -c)),
            ("abs({})", "flt", None, _num(abs)),
            ("{}::numeric", "num", "numeric", _num(fractions.Fraction))],
    "txt": [("lower({})", "txt", "text", _txt(str.lower)),
            ("upper({})", "txt", "text", _txt(str.upper)),
            ("({} || 'x')", "txt", "text", _txt(lambda c: c + "x")),
            ("substr({}, 1, 1)", "txt", "text", _txt(lambda c: c[:1])),
            ("coalesce({}, '')", "txt", "text", lambda c: "" if c is None else c),
            ("rtrim({})", "txt", "text", _txt(lambda c: c)),
            # case-insensitive: hashed and rechecked under a nondeterministic collation
            ("({} COLLATE diff_ci)", "txt", None, _txt(str.lower))],
    "date": [("{}::timestamp", "ts", "timestamp", _to_ts),
             ("({} + 1)", "date", None, lambda c: c if c is None or c in (INF, NINF)
              else c + datetime.timedelta(days=1))],
    "ts": [("date_trunc('day', {})", "ts", None, _day),
           ("{}::date", "date", "date", lambda c: c if c is None or c in (INF, NINF) else c.date())],
    "tstz": [("{}::timestamp", "ts", "timestamp", lambda c: c),
             ("date_trunc('day', {})", "tstz", None, _day)],
    "bool": [("(NOT {})", "bool", None, lambda c: None if c is None else not c),
             ("coalesce({}, false)", "bool", None, lambda c: bool(c))],
    "uuid": [("{}::text", "txt", "text", lambda c: c)],
    "iv": [("justify_days({})", "iv", None, lambda c: c),
           ("({} * 2)", "iv", None, lambda c: None if c is None else 2 * c)],
    "json": [("({} -> 'k')", "json", None, lambda c: c if isinstance(c, fractions.Fraction) else None)],
    "arr": [("{}[1]", "int", "int4", lambda c: c[0] if c else None),
            ("array_length({}, 1)", "int", "int4", lambda c: len(c) if c else None)],
}


class KeyExpr:
    """A key expression: a column of a side, maybe under a transform."""

    def __init__(self, side, col, transform=None):
        self.side = side
        self.col = col
        self.transform = transform
        self.group = transform[1] if transform else side.group(col)
        self.type = (transform[2] or side.type(col)) if transform else side.type(col)

    def sql(self):
        ref = "%s.%s" % (self.side.alias, self.col)
        return self.transform[0].format(ref) if self.transform else ref

    def counter(self):
        s = self.side
        k = (s.table.name, s.lo, s.hi, bool(s.grouped), self.col, self.transform and self.transform[0])
        if k not in COUNTERS:
            vals = s.values(self.col)
            if self.transform:
                f = self.transform[3]
                vals = [f(c) for c in vals]
            COUNTERS[k] = collections.Counter(c for c in vals if c is not None)
        return COUNTERS[k]


# (table, rows, grouped, column, transform) -> Counter of the key's canonical values
COUNTERS = {}


def key_pairs(left, right):
    """Rows of the two sides with equal keys: sum over the equality classes."""
    cl, cr = left.counter(), right.counter()
    if len(cl) > len(cr):
        cl, cr = cr, cl
    return sum(k * cr.get(c, 0) for c, k in cl.items())


def max_mult(e):
    c = e.counter()
    return max(c.values()) if c else 0


# ---------------------------------------------------------------- FROM items


class Side:
    """One input of a join: a join table (maybe restricted to a range of ids) or a
    grouped subquery over one."""

    def __init__(self, table, alias, grouped=None):
        self.table = table
        self.alias = alias
        self.lo, self.hi = 0, table.n          # rows lo .. hi-1 (ids lo+1 .. hi)
        self.grouped = grouped                  # (group column, where) for a grouped subquery
        self.cte = None                         # read from this CTE instead

    @property
    def n(self):
        if self.grouped:
            return len(set(self.table.cols[self.grouped[0]][self.lo:self.hi]))
        return self.hi - self.lo

    def columns(self):
        if self.grouped:
            return [self.grouped[0], "cnt", "sv"]
        return [c for c, _, _, _ in JCOLUMNS]

    def key_columns(self):
        if self.grouped:
            return [self.grouped[0]]
        return KEY_COLUMNS

    def group(self, col):
        return JGROUP.get(col) if col not in ("cnt", "sv") else None

    def type(self, col):
        return {"cnt": "int8", "sv": "int8"}.get(col) or JBASE[col]

    def values(self, col):
        vals = self.table.cols[col][self.lo:self.hi]
        if self.grouped:
            assert col == self.grouped[0]
            return list(set(vals))
        return vals

    def plain_table(self):
        """Whether the FROM item is the table itself (which has ctid and tableoid)."""
        return not self.grouped and not self.cte and self.lo == 0 and self.hi == self.table.n

    def shrink(self, rng):
        """Restrict to a range of a third of the rows (at least one)."""
        m = max(1, (self.hi - self.lo) // 3)
        self.lo = rng.randint(self.lo, self.hi - m)
        self.hi = self.lo + m

    def from_sql(self, rng):
        if self.cte:
            return "%s %s" % (self.cte, self.alias)
        t = self.table.name
        full = self.lo == 0 and self.hi == self.table.n
        if full:
            cond = ""
        elif self.lo == 0 and rng.random() < 0.5:
            cond = "id <= %d" % self.hi
        else:
            cond = "id BETWEEN %d AND %d" % (self.lo + 1, self.hi)
        if self.grouped:
            col = self.grouped[0]
            where = " AND ".join(c for c in (cond,) if c)
            return ("(SELECT %s, count(*) AS cnt, sum(v) AS sv FROM %s%s GROUP BY %s) %s"
                    % (col, t, " WHERE " + where if where else "", col, self.alias))
        if full:
            return "%s %s" % (t, self.alias)
        return "(SELECT * FROM %s WHERE %s) %s" % (t, cond, self.alias)


class Out:
    """An output column (what gen.py's Query needs of it)."""

    def __init__(self, sql, type_, canon=None):
        self.sql = sql
        self.type = type_
        self.canon = canon
        self.inexact = False


# ---------------------------------------------------------------- the generator


SHAPES = [  # weight, shape
    (14, "inner"), (11, "left"), (7, "right"), (7, "full"), (6, "semi-exists"), (5, "semi-in"),
    (5, "anti-notexists"), (5, "anti-isnull"), (6, "self"), (8, "three"), (12, "agg"), (5, "aggbelow"),
    (8, "rescan"), (10, "aggjoin"),
]
JOIN_WORDS = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN"}


class JoinGen:
    """Random join queries over the join tables."""

    def __init__(self, rng, tables):
        self.rng = rng
        self.tables = tables
        self.cross = 0
        self.shape = None
        self.sql = ""

    def pick(self, *weighted):
        """Pick among (weight, value) pairs."""
        return pick_weighted(self.rng, weighted)

    def table(self):
        name = self.pick((4, "j_empty"), (4, "j_one"), (27, "j_a"), (27, "j_b"), (14, "j_c"), (17, "j_big"),
                         (3, "j_pa"), (3, "j_pb"))
        return self.tables[name]

    # -- keys
    def key(self, a, b):
        """One equality between a and b: (KeyExpr of a, KeyExpr of b)."""
        r = self.rng
        cols = a.key_columns()
        if b.grouped:
            # a column of a that compares with b's only column
            cols = [c for c in cols if a.group(c) in COMPATIBLE[b.group(b.grouped[0])]]
        for _ in range(50):
            ca = r.choice(cols)
            ga = a.group(ca)
            x = r.random()
            if x < 0.35 and ca in b.key_columns():
                # the same column on both sides
                return KeyExpr(a, ca), KeyExpr(b, ca)
            if x < 0.68:
                # columns of one group (int2 = int8, text = char(4), numeric = numeric), or of
                # groups PostgreSQL compares through an implicit cast (int4 = numeric)
                same = [c for c in b.key_columns() if b.group(c) == ga]
                cands = same if same and r.random() < 0.8 else \
                    [c for c in b.key_columns() if b.group(c) in COMPATIBLE[ga]]
                if cands:
                    return KeyExpr(a, ca), KeyExpr(b, r.choice(cands))
            elif x < 0.85:
                # the same expression on both sides
                same = [c for c in b.key_columns() if b.group(c) == ga]
                if same:
                    t = r.choice(TRANSFORMS[ga])
                    return KeyExpr(a, ca, t), KeyExpr(b, r.choice(same), t)
            else:
                # an expression on one side that makes it comparable with a column of the
                # other (date::timestamp = timestamp, int4::text = text, numeric::float8 = float4)
                ea = KeyExpr(a, ca, r.choice(TRANSFORMS[ga]))
                cands = [c for c in b.key_columns() if b.group(c) in COMPATIBLE[ea.group]]
                if cands:
                    eb = KeyExpr(b, r.choice(cands))
                    return (ea, eb) if r.random() < 0.5 else (KeyExpr(a, ca) if eb.group in COMPATIBLE[ga]
                                                              else ea, eb)
        return KeyExpr(a, cols[0]), KeyExpr(b, b.key_columns()[0])

    def keys(self, a, b):
        """One or more equalities between a and b; mostly ones that some rows meet."""
        for _ in range(4):
            keys = self.some_keys(a, b)
            if a.n == 0 or b.n == 0 or self.rng.random() < 0.25 or \
                    min(key_pairs(ea, eb) for ea, eb in keys) > 0:
                break
        return keys

    def some_keys(self, a, b):
        n = self.pick((55, 1), (25, 2), (12, 3), (8, 5))
        if a.grouped or b.grouped:
            n = 1
        keys = [self.key(a, b)]
        for _ in range(n - 1):
            # mostly the same column on both sides: key columns mostly follow their row's
            # base value, so several such keys of two rows match together
            col = self.rng.choice(KEY_COLUMNS)
            keys.append((KeyExpr(a, col), KeyExpr(b, col)) if self.rng.random() < 0.6 else self.key(a, b))
        return keys

    def equality(self, ea, eb):
        if self.rng.random() < 0.3:
            return "%s = %s" % (eb.sql(), ea.sql())
        return "%s = %s" % (ea.sql(), eb.sql())

    # -- other conditions
    def cross_condition(self, a, b):
        """A condition between the two sides that is not a hashable equality."""
        x, y = a.alias, b.alias
        forms = ["{x}.v < {y}.v", "{x}.v <> {y}.v", "{x}.v + {y}.v > 0", "{x}.id <> {y}.id",
                 "{x}.w <= {y}.w", "{x}.kt < {y}.kt", "({x}.g = {y}.g OR {y}.v IS NULL)",
                 "{x}.kd = {y}.kts", "{x}.kts < {y}.ktz", "{x}.kts = {y}.ktz", "NOT ({x}.kbo AND {y}.kbo)",
                 "{x}.k4 % 3 = {y}.k2 % 3", "{x}.kt LIKE {y}.kb || '%'", "{x}.kiv <= {y}.kiv",
                 "{x}.id % 2 = 0 OR {y}.id % 3 = 0",
                 # comparisons an aggjoin GpuHashAgg's device filter takes (aggjoin/filter.c)
                 "{x}.k8 >= {y}.k2", "{x}.kd < {y}.kd", "{x}.kf <= {y}.kr", "{x}.kts <> {y}.kts",
                 "({x}.v > {y}.v OR {x}.g < {y}.g)", "NOT ({x}.g = {y}.g)",
                 "({x}.v IS NULL OR {x}.v <> {y}.g)", "({x}.kbo OR {y}.kf > {x}.kf)",
                 # = and <> of dictionary types, as ids of one dictionary (aggjoin/filter.c)
                 "{x}.kt <> {y}.kt", "{x}.kn <> {y}.knm", "({x}.kb = {y}.kb OR {x}.g < {y}.g)",
                 "NOT ({x}.kv = {y}.kv AND {x}.ku = {y}.ku)", "{x}.kiv <> {y}.kiv"]
        return "(%s)" % self.rng.choice(forms).format(x=x, y=y)

    def side_condition(self, s):
        """A condition on one side."""
        forms = ["{s}.g > 4", "{s}.g <> 3", "{s}.v IS NOT NULL", "{s}.v > 0", "{s}.kt LIKE 'a%'",
                 "{s}.kbo", "{s}.id % 2 = 0", "{s}.kf > 0", "{s}.kn IS NULL", "{s}.kd > '2000-01-01'",
                 "{s}.w < 10"]
        return self.rng.choice(forms).format(s=s.alias)

    def where_above(self, a, b, jt):
        """A WHERE condition above a join (on the nullable side of an outer join too)."""
        x, y = a.alias, b.alias
        forms = ["{x}.g <> 3", "{x}.v > 0", "{y}.v > 0", "{y}.v IS NULL", "coalesce({y}.v, 0) >= 0",
                 "({y}.v IS NULL OR {y}.v > {x}.v)", "{y}.kt IS DISTINCT FROM {x}.kt",
                 "coalesce({x}.g, {y}.g) < 5", "{y}.kbo IS NOT TRUE", "{x}.kf IS NOT NULL"]
        if jt != "inner":
            # which rows were null-extended
            forms += ["{y}.id IS NOT NULL", "{x}.id IS NULL", "{y}.id IS NULL"]
        return self.rng.choice(forms).format(x=x, y=y)

    # -- bounding the work
    def bound(self, joins):
        """Candidate pairs and output rows of a join chain: joins is a list of
        (jointype, left sides, right side, keys)."""
        total = 0
        rows = None
        for jt, lefts, right, keys in joins:
            if rows is None:
                # two sides: candidates = pairs with equal keys (the least over the keys)
                pairs = min(key_pairs(ea, eb) for ea, eb in keys)
                rows = pairs + (lefts[0].n if jt in ("left", "full") else 0) + (right.n if jt in ("right", "full") else 0)
                total += pairs + rows
            else:
                # a third side: every row so far times the most rows one key value has there
                m = min(max_mult(eb) for _, eb in keys)
                pairs = rows * m
                rows = pairs + (rows if jt in ("left", "full") else 0) + (right.n if jt in ("right", "full") else 0)
                total += pairs + rows
        return total

    def fit(self, sides, joins, limit=MAX_PAIRS):
        """Restrict the largest sides until the work is bounded."""
        for _ in range(60):
            self.last_bound = self.bound(joins)
            if self.last_bound <= limit:
                break
            big = max(sides, key=lambda s: (s.hi - s.lo, self.rng.random()))
            if big.hi - big.lo <= 1:
                break
            big.shrink(self.rng)
        # every row with every row: what a nested loop compares
        self.cross = 1
        for s in sides:
            self.cross *= max(1, s.n)

    # -- select lists
    def outputs(self, sides, nmin=1, nmax=4):
        r = self.rng
        outs = [Out("%s.id" % s.alias, "int4") for s in sides if not s.grouped]
        for s in sides:
            if s.grouped:
                outs += [Out("%s.%s" % (s.alias, c), s.type(c)) for c in s.columns()]
        for _ in range(r.randint(nmin, nmax)):
            s = r.choice(sides)
            c = r.choice(s.columns())
            outs.append(Out("%s.%s" % (s.alias, c), s.type(c)))
        if len(sides) > 1 and r.random() < 0.3:
            x, y = r.sample(sides, 2)
            if not (x.grouped or y.grouped):
                outs.append(r.choice([Out("coalesce(%s.v, %s.v)" % (x.alias, y.alias), "int4"),
                                      Out("%s.kt || '/' || %s.kt" % (x.alias, y.alias), "text"),
                                      Out("(%s.id IS NULL)" % y.alias, "bool")]))
        if r.random() < 0.1 and not any(s.grouped for s in sides):
            # whole rows
            outs.append(Out(r.choice(sides).alias, "record"))
        if r.random() < 0.05:
            # system columns
            s = r.choice(sides)
            if s.plain_table():
                outs.append(r.choice([Out("%s.ctid" % s.alias, "tid"),
                                      Out("%s.tableoid::regclass" % s.alias, "regclass")]))
        return outs

    def select(self, outs):
        return ", ".join("%s AS c%d" % (o.sql, i + 1) for i, o in enumerate(outs))

    def tail(self, outs):
        """Maybe ORDER BY every output column and LIMIT: (sql, ordered)."""
        r = self.rng
        if r.random() < 0.1 and all(o.type != "record" for o in outs):
            t = "ORDER BY " + ", ".join(str(i + 1) for i in range(len(outs)))
            if r.random() < 0.7:
                t += " LIMIT %d" % r.choice([1, 5, 50])
            return t, True
        return "", False

    # -- shapes
    def two_sides(self, self_join=False):
        a = Side(self.table(), "a")
        b = Side(a.table if self_join else self.table(), "b")
        return a, b

    def join_clause(self, jt, a, b, keys):
        """The ON clause: the keys, maybe other conditions."""
        r = self.rng
        conds = [self.equality(ea, eb) for ea, eb in keys]
        if r.random() < 0.3:
            conds.append(self.cross_condition(a, b))
        if r.random() < 0.2:
            conds.append(self.side_condition(r.choice([a, b])))
        r.shuffle(conds)
        return " AND ".join(conds)

    def plain(self, jt, self_join=False):
        r = self.rng
        a, b = self.two_sides(self_join)
        keys = self.keys(a, b)
        self.fit([a, b], [(jt, [a], b, keys)])
        head = ""
        if self_join and a.plain_table() and b.plain_table() and r.random() < 0.3:
            # both sides read one CTE
            head = "WITH s AS MATERIALIZED (SELECT * FROM %s) " % a.table.name
            a.cte = b.cte = "s"
        on = self.join_clause(jt, a, b, keys)
        outs = self.outputs([a, b])
        ea, eb = keys[0]
        if len(keys) == 1 and not ea.transform and not eb.transform and ea.col == eb.col and r.random() < 0.3:
            # USING: the merged column is a's, b's or (FULL JOIN) coalesce(a's, b's)
            frm = "%s %s %s USING (%s)" % (a.from_sql(r), JOIN_WORDS[jt], b.from_sql(r), ea.col)
            outs.append(Out(ea.col, ea.type))
            where = []
        elif jt == "inner" and r.random() < 0.2:
            frm = "%s, %s" % (a.from_sql(r), b.from_sql(r))
            where = [on]
        else:
            frm = "%s %s %s ON %s" % (a.from_sql(r), JOIN_WORDS[jt], b.from_sql(r), on)
            where = []
        if r.random() < 0.35:
            where.append(self.where_above(a, b, jt) if r.random() < 0.7 else self.where_above(b, a, jt))
        tail, ordered = self.tail(outs)
        sql = head + " ".join(p for p in ["SELECT " + self.select(outs), "FROM " + frm,
                                          "WHERE " + " AND ".join(where) if where else "", tail] if p)
        return sql, ordered, outs, a.table.name

    def semi_anti(self, kind):
        r = self.rng
        a, b = self.two_sides()
        keys = self.keys(a, b)
        # (counted as a left join: the output is at most every row of a)
        self.fit([a, b], [("left", [a], b, keys)])
        outs = self.outputs([a], 0, 3)
        where = []
        if kind in ("semi-exists", "anti-notexists"):
            conds = [self.equality(ea, eb) for ea, eb in keys]
            if r.random() < 0.35:
                conds.append(self.cross_condition(a, b) if r.random() < 0.5 else self.cross_condition(b, a))
            if r.random() < 0.25:
                conds.append(self.side_condition(b))
            r.shuffle(conds)
            where.append("%sEXISTS (SELECT 1 FROM %s WHERE %s)"
                         % ("NOT " if kind == "anti-notexists" else "", b.from_sql(r), " AND ".join(conds)))
        elif kind == "semi-in":
            inner_where = " WHERE " + self.side_condition(b) if r.random() < 0.3 else ""
            if len(keys) == 1:
                where.append("%s IN (SELECT %s FROM %s%s)" % (keys[0][0].sql(), keys[0][1].sql(), b.from_sql(r),
                                                             inner_where))
            else:
                where.append("(%s) IN (SELECT %s FROM %s%s)"
                             % (", ".join(ea.sql() for ea, _ in keys), ", ".join(eb.sql() for _, eb in keys),
                                b.from_sql(r), inner_where))
        else:
            # anti join written as an outer join whose right side must be missing
            on = self.join_clause("left", a, b, keys)
            col = "id" if r.random() < 0.5 else keys[0][1].col
            frm_extra = "LEFT JOIN %s ON %s" % (b.from_sql(r), on)
            where.append("b.%s IS NULL" % col)
            if r.random() < 0.2:
                outs.append(Out("b.id", "int4"))
            if r.random() < 0.3:
                where.append(self.side_condition(a))
            tail, ordered = self.tail(outs)
            sql = " ".join(p for p in ["SELECT " + self.select(outs), "FROM " + a.from_sql(r), frm_extra,
                                       "WHERE " + " AND ".join(where), tail] if p)
            return sql, ordered, outs, a.table.name
        if r.random() < 0.3:
            where.append(self.side_condition(a))
        tail, ordered = self.tail(outs)
        sql = " ".join(p for p in ["SELECT " + self.select(outs), "FROM " + a.from_sql(r),
                                   "WHERE " + " AND ".join(where), tail] if p)
        return sql, ordered, outs, a.table.name

    def three(self):
        r = self.rng
        a, b = self.two_sides(self_join=r.random() < 0.15)
        c = Side(self.table(), "c")
        jt1 = self.pick((5, "inner"), (3, "left"), (2, "right"), (2, "full"))
        jt2 = self.pick((5, "inner"), (3, "left"), (2, "right"), (2, "full"))
        keys1 = self.keys(a, b)
        other = a if r.random() < 0.5 else b
        keys2 = [self.key(other, c) for _ in range(self.pick((75, 1), (25, 2)))]
        self.fit([a, b, c], [(jt1, [a], b, keys1), (jt2, [a, b], c, keys2)])
        on1 = self.join_clause(jt1, a, b, keys1)
        on2 = self.join_clause(jt2, other, c, keys2)
        outs = self.outputs([a, b, c])
        frm = "%s %s %s ON %s %s %s ON %s" % (a.from_sql(r), JOIN_WORDS[jt1], b.from_sql(r), on1,
                                              JOIN_WORDS[jt2], c.from_sql(r), on2)
        where = ""
        if r.random() < 0.3:
            where = "WHERE " + self.where_above(a, c, jt2)
        tail, ordered = self.tail(outs)
        sql = " ".join(p for p in ["SELECT " + self.select(outs), "FROM " + frm, where, tail] if p)
        return sql, ordered, outs, a.table.name

    def aggregated(self):
        """GROUP BY (or a plain aggregate) over a join of two or three tables."""
        r = self.rng
        a, b = self.two_sides(self_join=r.random() < 0.1)
        jt = self.pick((5, "inner"), (3, "left"), (2, "right"), (2, "full"))
        keys = self.keys(a, b)
        sides = [a, b]
        joins = [(jt, [a], b, keys)]
        c = None
        if r.random() < 0.25:
            c = Side(self.table(), "c")
            jt2 = self.pick((5, "inner"), (3, "left"))
            other = r.choice([a, b])
            keys2 = [self.key(other, c)]
            sides.append(c)
            joins.append((jt2, [a, b], c, keys2))
        self.fit(sides, joins)
        frm = "%s %s %s ON %s" % (a.from_sql(r), JOIN_WORDS[jt], b.from_sql(r), self.join_clause(jt, a, b, keys))
        if c is not None:
            frm += " %s %s ON %s" % (JOIN_WORDS[joins[1][0]], c.from_sql(r),
                                     self.join_clause(joins[1][0], other, c, keys2))
        group_cols = ["g", "kt", "kbo", "kd", "k4", "kn", "kb", "kiv", "kf", "ku"]
        keys_out = []
        for _ in range(self.pick((20, 0), (50, 1), (30, 2))):
            s = r.choice(sides)
            col = r.choice(group_cols)
            t = JBASE[col]
            expr = "%s.%s" % (s.alias, col)
            if r.random() < 0.2:
                expr, t = "coalesce(%s.g, -1)" % s.alias, "int4"
            keys_out.append(Out(expr, t, t if t in SPELLING_FREE else None))
        aggs = []
        for _ in range(r.randint(1, 4)):
            s = r.choice(sides)
            x = s.alias
            fn, t = r.choice([("count(*)", "int8"), ("count({x}.id)", "int8"), ("count({x}.kt)", "int8"),
                              ("sum({x}.v)", "int8"), ("sum({x}.k4)", "int8"), ("avg({x}.v)", "numeric"),
                              ("min({x}.kt)", "text"), ("max({x}.kd)", "date"), ("max({x}.kts)", "timestamp"),
                              ("max({x}.id)", "int4"), ("sum({x}.w)", "float8"), ("bool_and({x}.kbo)", "bool"),
                              ("count(DISTINCT {x}.k2)", "int8"), ("sum({x}.kn)", "numeric"),
                              ("sum({x}.k8)", "numeric"), ("min({x}.v)", "int4")])
            aggs.append(Out(fn.format(x=x), t))
        outs = keys_out + aggs
        sql = "SELECT %s FROM %s" % (self.select(outs), frm)
        if r.random() < 0.3:
            sql += " WHERE " + self.where_above(a, b, jt)
        if keys_out:
            sql += " GROUP BY " + ", ".join(k.sql for k in keys_out)
            if r.random() < 0.2:
                sql += " HAVING count(*) > 1"
        return sql, False, outs, a.table.name

    def chain_key(self, a, b):
        """A key of a join above the first in a chain: mostly one exact column (the
        device joins a whole chain on exact keys), sometimes any key."""
        if self.rng.random() < 0.7:
            col = self.rng.choice(["k4", "k8", "g", "kd", "k2", "kts"])
            return (KeyExpr(a, col), KeyExpr(b, col))
        return self.key(a, b)

    def aggjoin(self):
        """An aggregate over joins of the kind an aggjoin GpuHashAgg takes over (the
        device joins every side itself): INNER, LEFT, RIGHT, FULL, SEMI or ANTI on one to six keys;
        two in five over a chain: a third table joined (INNER, LEFT, RIGHT or FULL) to the
        first or (a snowflake) to the second, sometimes a fourth joined to the first; group keys and aggregate
        arguments plain columns of one side each."""
        r = self.rng
        a, b = self.two_sides(self_join=r.random() < 0.1)
        jt = self.pick((5, "inner"), (3, "left"), (2, "semi"), (2, "anti"), (1, "right"), (1, "full"))
        keys = [self.key(a, b)]
        if r.random() < 0.25:
            # a second key: int2/int4 pairs travel as one exact key
            col = r.choice(["k2", "k4", "g"])
            keys.append((KeyExpr(a, col), KeyExpr(b, col)))
            if r.random() < 0.3:
                # more than four keys in all: hashed together and rechecked on the device
                for col in r.sample(["k8", "kd", "kt", "g", "k2", "k4"], r.randint(2, 4)):
                    keys.append((KeyExpr(a, col), KeyExpr(b, col)))
        # (SEMI and ANTI are counted as a left join: at most every row of a)
        joins = [("left" if jt in ("semi", "anti") else jt, [a], b, keys)]
        extra = []      # (jointype, side, keys) of the tables joined after b
        # (after a RIGHT or FULL join too: its unmatched rows go through the joins above)
        if r.random() < 0.4:
            c = Side(self.table(), "c")
            # a snowflake: c joined to b's columns (b's columns exist above the join)
            to = b if jt not in ("semi", "anti") and r.random() < 0.4 else a
            extra.append((self.pick((3, "inner"), (3, "left"), (1, "right"), (1, "full")), c,
                          [self.chain_key(to, c)]))
            if r.random() < 0.3:
                d = Side(self.table(), "d")
                extra.append((self.pick((3, "inner"), (1, "left")), d, [self.chain_key(a, d)]))
        for jt_x, x, keys_x in extra:
            joins.append((jt_x, [a], x, keys_x))
        self.fit([a, b] + [x for _, x, _ in extra], joins)
        sides = ([a] if jt in ("semi", "anti") else [a, b]) + [x for _, x, _ in extra]
        keys_out = []
        for _ in range(self.pick((25, 0), (50, 1), (25, 2))):
            s = r.choice(sides)
            col = r.choice(["g", "kt", "k4", "k2", "kd", "kbo"])
            t = JBASE[col]
            keys_out.append(Out("%s.%s" % (s.alias, col), t, t if t in SPELLING_FREE else None))
        aggs = []
        for _ in range(r.randint(1, 4)):
            x = r.choice(sides).alias
            y = r.choice(sides).alias
            # (numeric arithmetic over two sides: the device computes it after the joins)
            fn, t = r.choice([("count(*)", "int8"), ("count({x}.id)", "int8"), ("count({x}.kt)", "int8"),
                              ("sum({x}.v)", "int8"), ("sum({x}.k4)", "int8"), ("avg({x}.v)", "numeric"),
                              ("max({x}.kd)", "date"), ("max({x}.id)", "int4"), ("sum({x}.w)", "float8"),
                              ("min({x}.v)", "int4"), ("sum({x}.k8)", "numeric"),
                              ("count(*) FILTER (WHERE {x}.v > 0)", "int8"),
                              ("sum({x}.kn * (1 - {y}.kn))", "numeric"), ("avg({x}.kn * {y}.v)", "numeric"),
                              ("min({x}.kn - {y}.kn)", "numeric")])
            aggs.append(Out(fn.format(x=x, y=y), t))
        outs = keys_out + aggs
        conds = " AND ".join(self.equality(ea, eb) for ea, eb in keys)
        frm = a.from_sql(r)
        if jt not in ("semi", "anti"):
            frm += " %s %s ON %s" % (JOIN_WORDS[jt], b.from_sql(r), conds)
        for jt_x, x, keys_x in extra:
            frm += " %s %s ON %s" % (JOIN_WORDS[jt_x], x.from_sql(r),
                                     " AND ".join(self.equality(ea, eb) for ea, eb in keys_x))
        if jt in ("semi", "anti"):
            frm += " WHERE %sEXISTS (SELECT 1 FROM %s WHERE %s)" % ("NOT " if jt == "anti" else "",
                                                                  b.from_sql(r), conds)
        sql = "SELECT %s FROM %s" % (self.select(outs), frm)
        if keys_out:
            sql += " GROUP BY " + ", ".join(k.sql for k in keys_out)
        return sql, False, outs, a.table.name

    def aggregated_below(self):
        """A join with a grouped subquery (GpuHashAgg under GpuHashJoin)."""
        r = self.rng
        a = Side(self.table(), "a")
        col = r.choice(["k4", "k2", "kt", "kd", "ku", "kbo", "g"])
        b = Side(self.table(), "b", grouped=(col, None))
        jt = self.pick((5, "inner"), (3, "left"), (2, "right"), (2, "full"))
        keys = [self.key(a, b)]
        self.fit([a, b], [(jt, [a], b, keys)])
        on = self.equality(*keys[0])
        if r.random() < 0.3:
            on += " AND " + r.choice(["b.cnt > 1", "a.v < b.sv", "(a.g = b.cnt OR b.sv IS NULL)", "a.g > 4"])
        outs = self.outputs([a, b], 0, 2)
        sql = "SELECT %s FROM %s %s %s ON %s" % (self.select(outs), a.from_sql(r), JOIN_WORDS[jt],
                                                 b.from_sql(r), on)
        if r.random() < 0.3:
            sql += " WHERE " + self.side_condition(a)
        return sql, False, outs, a.table.name

    def rescan(self):
        """A join in a correlated subquery or LATERAL: GpuHashJoin rescanned with other
        parameters (in a scan below it, in its join condition, in a hash key)."""
        r = self.rng
        a = Side(self.table(), "a")
        if a.n > 12:
            m = r.randint(1, 12)
            a.lo = r.randint(0, a.n - m)
            a.hi = a.lo + m
        b, c = Side(self.table(), "b"), Side(self.table(), "c")
        keys = self.keys(b, c)
        jt = self.pick((6, "inner"), (2, "left"), (1, "right"), (1, "full"))
        self.fit([b, c], [(jt, [b], c, keys)], MAX_PAIRS // max(1, a.n))
        # every rescan reads both inputs again
        while a.n * (b.n + c.n) > RESCAN_ROWS:
            if a.n > 1:
                a.hi = a.lo + a.n // 2
            else:
                max(b, c, key=lambda s: s.n).shrink(r)
        on = [self.equality(eb, ec) for eb, ec in keys]
        where = []
        form = r.choice(["scalar", "lateral", "lateral", "exists", "nestloop"])
        if form == "nestloop":
            # no parameter: a join whose only condition is no equality makes a nested loop
            # with the GpuHashJoin of b and c on one side, maybe rescanned as it is
            if r.random() < 0.2:
                on.append(self.cross_condition(b, c))
            cond = r.choice(["a.v < b.v", "a.g <> c.g", "a.kt < c.kt", "(a.v + c.v) % 3 = 0", "a.id <= b.g"])
            inner = "%s %s %s ON %s" % (b.from_sql(r), JOIN_WORDS[jt], c.from_sql(r), " AND ".join(on))
            if r.random() < 0.6:
                # OFFSET 0 keeps the join of b and c together below the nested loop
                inner = "(SELECT b.id AS bid, b.v, b.g, c.id AS cid, c.kt, c.v AS cv, c.g AS cg FROM %s OFFSET 0) s" % inner
                cond = cond.replace("b.id", "s.bid").replace("b.", "s.").replace("c.v", "s.cv") \
                    .replace("c.g", "s.cg").replace("c.", "s.")
                outs = [Out("a.id", "int4"), Out("s.bid", "int4"), Out("s.cid", "int4"), Out("s.kt", "text")]
            else:
                inner = "(%s)" % inner
                outs = [Out("a.id", "int4"), Out("b.id", "int4"), Out("c.id", "int4"), Out("c.kt", "text")]
            sql = "SELECT %s FROM %s %s %s ON %s" % (
                self.select(outs), a.from_sql(r), r.choice(["JOIN", "JOIN", "LEFT JOIN"]), inner, cond)
            return sql, False, outs, b.table.name
        corr = r.choice(["b.g = a.g", "c.kt = a.kt", "c.v > a.v", "b.g = c.g + a.g", "b.k4 % 5 = a.g",
                         "(c.id + a.id) % 3 = 0", "coalesce(c.v, 0) > a.v", "(b.id IS NULL OR b.g <> a.g)"])
        (where if r.random() < 0.5 else on).append(corr)
        if r.random() < 0.2:
            on.append(self.cross_condition(b, c))
        inner = "FROM %s %s %s ON %s" % (b.from_sql(r), JOIN_WORDS[jt], c.from_sql(r), " AND ".join(on))
        if where:
            inner += " WHERE " + " AND ".join(where)
        outs = [Out("a.id", "int4")]
        if form == "scalar":
            agg, t = r.choice([("count(*)", "int8"), ("sum(b.v)", "int8"), ("max(c.kt)", "text"),
                               ("count(DISTINCT c.k4)", "int8"), ("min(b.id)", "int4"), ("count(c.id)", "int8")])
            outs.append(Out("(SELECT %s %s)" % (agg, inner), t))
            sql = "SELECT %s FROM %s" % (self.select(outs), a.from_sql(r))
        elif form == "lateral":
            items = "b.id AS bid, c.id AS cid, %s AS x" % r.choice(["c.kt", "b.v", "c.kn", "b.kd", "c.ku"])
            offset = " OFFSET 0" if r.random() < 0.5 else ""   # OFFSET 0: not pulled up
            outs += [Out("l.bid", "int4"), Out("l.cid", "int4"), Out("l.x", "text")]
            how = r.choice(["CROSS JOIN LATERAL (SELECT %s %s%s) l", "LEFT JOIN LATERAL (SELECT %s %s%s) l ON true"])
            sql = "SELECT %s FROM %s %s" % (self.select(outs), a.from_sql(r), how % (items, inner, offset))
        else:
            outs.append(Out("a.kt", "text"))
            sql = "SELECT %s FROM %s WHERE %sEXISTS (SELECT 1 %s)" % (self.select(outs), a.from_sql(r),
                                                                    r.choice(["", "NOT "]), inner)
        return sql, False, outs, b.table.name

    def query(self):
        """One join query: (sql, ordered, shape, main table, outputs)."""
        shape = self.shape = self.pick(*SHAPES)
        if shape in JOIN_WORDS:
            sql, ordered, outs, table = self.plain(shape)
        elif shape == "self":
            sql, ordered, outs, table = self.plain(self.pick((5, "inner"), (3, "left"), (2, "full")), True)
        elif shape in ("semi-exists", "semi-in", "anti-notexists", "anti-isnull"):
            sql, ordered, outs, table = self.semi_anti(shape)
        elif shape == "three":
            sql, ordered, outs, table = self.three()
        elif shape == "rescan":
            sql, ordered, outs, table = self.rescan()
        elif shape == "agg":
            sql, ordered, outs, table = self.aggregated()
        elif shape == "aggjoin":
            sql, ordered, outs, table = self.aggjoin()
        else:
            sql, ordered, outs, table = self.aggregated_below()
        self.sql = sql
        return sql, ordered, "j-" + shape, table, outs

    def settings(self):
        """Per-query settings (both runs)."""
        r = self.rng
        s = []
        x = r.random()
        if x < 0.2:
            s.append("gpuagg.batch_rows=16")
        elif x < 0.35:
            s.append("gpuagg.batch_rows=%d" % r.choice([100, 1000, 4096]))
        if r.random() < 0.05:
            s.append("gpuagg.debug_fail_at_batch=%d" % r.choice([1, 2, 3]))
        # (not under rescans: a Gather there starts its workers again for every outer row)
        parallel = r.random() < 0.1 and self.shape != "rescan"
        y = r.random()
        if y < 0.1 and not parallel:
            s.append("enable_hashjoin=off")
        elif y < 0.17 and self.cross <= 100000 and not parallel:
            # native: a nested loop (not over a Gather: that would start workers per outer row)
            s += ["enable_hashjoin=off", "enable_mergejoin=off"]
        elif y < 0.22 or self.cross > 1000000:
            # (where a nested loop would compare too many pairs: PostgreSQL picks one under
            # ORDER BY ... LIMIT, or when it expects few rows)
            s.append("enable_nestloop=off")
        if r.random() < 0.08:
            s.append("work_mem=64kB")
        if self.shape == "rescan" and r.random() < 0.4:
            # no Materialize above a rescanned join
            s.append("enable_material=off")
        if parallel:
            s += ["parallel_setup_cost=0", "parallel_tuple_cost=0", "min_parallel_table_scan_size=0"]
        if "j_pa" in self.sql or "j_pb" in self.sql:
            if r.random() < 0.5:
                s.append("enable_partitionwise_join=on")
            if r.random() < 0.3:
                s.append("enable_partitionwise_aggregate=on")
        if any(x.startswith("enable_") and x.endswith("=off") for x in s):
            # a disabled plan type costs 1e10, which would JIT-compile every such query
            s.append("jit=off")
        return s
