"""Comparing a query's forced and native results where text alone would be too strict
(test/differential/gen.py).

Equal values that print differently.  Where PostgreSQL itself may show any
of several equal values, depending on the input order, results are compared
by value: a group key shows the spelling of one of its rows (-0 or 0, 1.5 or
1.50), min/max keep the later of two equal values, DISTINCT keeps one of
them, and ORDER BY puts tied rows in any order.  Everything else is
compared as text.

Float sums and averages of arbitrary doubles (fw) are compared within a
relative tolerance; two errors about values (SQLSTATE class 22, or 0A000)
count as the same outcome, since the row evaluated first decides which.
"""

import collections
import decimal
import math
import re

from groupby import FLOAT_TYPES

def parse_record(s):
    """Split a composite's text output '(a,"b c",)' into fields (None for NULL)."""
    assert s[0] == "(" and s[-1] == ")", s
    fields = []
    i, n = 1, len(s) - 1
    while i <= n:
        if i == n:
            fields.append(None)
            break
        if s[i] == '"':
            i += 1
            buf = []
            while True:
                ch = s[i]
                if ch == '"':
                    if i + 1 < n and s[i + 1] == '"':
                        buf.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                if ch == "\\":
                    buf.append(s[i + 1])
                    i += 2
                    continue
                buf.append(ch)
                i += 1
            fields.append("".join(buf))
        else:
            j = s.find(",", i)
            j = n if j < 0 or j > n else j
            fields.append(s[i:j] if j > i else None)
            i = j
        if i < n and s[i] == ",":
            i += 1
            if i == n:
                fields.append(None)
                break
        elif i >= n:
            break
    return fields


def both_data_errors(ferr, nerr):
    """Whether both runs failed on a value (SQLSTATE class 22, or 0A000 for values such
    as infinity that a type cannot hold), so that only the row evaluated first differs."""
    if not ferr or not nerr:
        return False
    return all(e[:2] == "22" or e.startswith("0A000") for e in (ferr, nerr))


def close_rows(forced, native, inexact):
    """Compare two multisets of parsed rows, the fields at positions inexact within a
    relative tolerance: rows with the same exact fields are matched one to one, each
    forced row with a native row whose inexact fields are all close (not by sorting on
    the floats, whose last bits may order two near-equal rows either way)."""
    def exact_key(row):
        return tuple((0, "") if f is None else (1, f) for i, f in enumerate(row) if i not in inexact)

    if len(forced) != len(native):
        return False
    buckets = collections.defaultdict(list)
    for row in native:
        buckets[exact_key(row)].append(row)
    for row in forced:
        candidates = buckets.get(exact_key(row), [])
        for j, other in enumerate(candidates):
            if len(other) == len(row) and all(
                    x == y or (i in inexact and close_floats(x, y))
                    for i, (x, y) in enumerate(zip(row, other))):
                del candidates[j]
                break
        else:
            return False
    return True


def close_floats(a, b):
    """Whether two float fields are equal within a relative tolerance."""
    if a is None or b is None:
        return False
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
        return False
    return abs(x - y) <= 1e-9 * max(abs(x), abs(y)) + 1e-6


def results_match(q, forced, native):
    """Whether results that differ as text are equal after all: the columns where
    PostgreSQL may show any of several equal values compared by value, float sums within
    a tolerance."""
    if len(forced) != len(native) or not (q.canon_cols or q.inexact_cols or q.ordered and q.tie_cols):
        return False

    def normalize(rows, cols):
        out = []
        for row in rows:
            fields = parse_record(row)
            for i, type_ in cols.items():
                if i < len(fields) and fields[i] is not None:
                    fields[i] = canonical(type_, fields[i])
            out.append(fields)
        return out

    def same_multiset(f, n):
        if q.inexact_cols:
            return close_rows(f, n, q.inexact_cols)
        return collections.Counter(tuple(r) for r in f) == collections.Counter(tuple(r) for r in n)

    if q.ordered:
        # in order, reading tied values as equal; and, when no LIMIT cut between ties,
        # the same rows
        cols = dict(q.tie_cols)
        cols.update(q.canon_cols)
        f, n = normalize(forced, cols), normalize(native, cols)
        if not (same_multiset(f, n) if q.inexact_cols else f == n):
            return False
        if " LIMIT " in q.sql:
            return True
    return same_multiset(normalize(forced, q.canon_cols), normalize(native, q.canon_cols))


INTERVAL_UNIT_RE = re.compile(r"([-+]?\d+) (year|mon|day)s?")
INTERVAL_TIME_RE = re.compile(r"([-+]?)(\d+):(\d\d):(\d\d)(?:\.(\d+))?")


def canonical(type_, text):
    """One spelling for equal values of a type (text as PostgreSQL prints it)."""
    if type_ in FLOAT_TYPES:
        return "0" if text == "-0" else text
    if type_ == "bpchar":
        return text.rstrip(" ")
    if type_ == "numeric":
        if text in ("NaN", "Infinity", "-Infinity"):
            return text
        d = decimal.Decimal(text)
        return "0" if d == 0 else str(d.normalize())
    if type_ == "interval":
        # as interval_cmp_value(): a month is 30 days, a day 24 hours
        days = 0
        for n, unit in INTERVAL_UNIT_RE.findall(text):
            days += int(n) * {"year": 360, "mon": 30, "day": 1}[unit]
        usecs = days * 86400 * 10**6
        m = INTERVAL_TIME_RE.search(text)
        if m:
            sign, h, mi, sec, frac = m.groups()
            t = ((int(h) * 60 + int(mi)) * 60 + int(sec)) * 10**6 + int((frac or "").ljust(6, "0")[:6])
            usecs += -t if sign == "-" else t
        return "%d us" % usecs
    return text
