#!/usr/bin/env python3
"""Check that no source files of gpuagg depend on each other in a circle.

    python3 test/lint/deps.py [--graph]

A unit is a .c or .cu file together with the header of the same name beside
it (hashagg/exec.c with hashagg/exec.h); a header with no such source is a
unit of its own.  Unit A depends on unit B when one of A's files includes one
of B's (quoted includes, resolved as the build resolves them), or when A's
object references a global symbol that B's object defines (nm over the
objects that `make` built).  Every strongly connected group of more than one
unit is a circle; the script prints each with the ties that close it and
exits 1 if there is any.  --graph prints every unit's dependencies too.
"""
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
SOURCE_DIRS = ('src', 'cuda')
INCLUDE_PATH = ('src', 'cuda', 'cuda/gpu')
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def source_files():
    out = []
    for top in SOURCE_DIRS:
        for d, _, names in os.walk(os.path.join(ROOT, top)):
            for n in names:
                if n.endswith(('.c', '.cu', '.h', '.cuh')):
                    out.append(os.path.relpath(os.path.join(d, n), ROOT))
    return sorted(out)


def unit_of(path, files):
    stem, ext = os.path.splitext(path)
    if ext in ('.h', '.cuh'):
        for src_ext in ('.c', '.cu'):
            if stem + src_ext in files:
                return stem + src_ext
    return path


def resolve(inc, includer, files):
    for base in (os.path.dirname(includer),) + INCLUDE_PATH:
        cand = os.path.normpath(os.path.join(base, inc))
        if cand in files:
            return cand
    return None


def symbol_edges(files):
    """Object-level references: unit -> {unit: [symbols]}."""
    defs, uses = {}, collections.defaultdict(set)
    missing = []
    for f in files:
        if not f.endswith(('.c', '.cu')):
            continue
        obj = os.path.join(ROOT, os.path.splitext(f)[0] + '.o')
        if not os.path.exists(obj):
            missing.append(f)
            continue
        res = subprocess.run(['nm', obj], capture_output=True, text=True, check=True)
        for line in res.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in 'TDBRCGSV':
                defs.setdefault(parts[2], f)
            elif len(parts) == 2 and parts[0] == 'U':
                uses[f].add(parts[1])
    edges = collections.defaultdict(lambda: collections.defaultdict(list))
    for f, syms in uses.items():
        for s in syms:
            g = defs.get(s)
            if g is not None and g != f:
                edges[f][g].append(s)
    return edges, missing


def main():
    files = set(source_files())
    deps = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in sorted(files):
        text = open(os.path.join(ROOT, f), encoding='utf-8', errors='replace').read()
        for inc in INCLUDE_RE.findall(text):
            target = resolve(inc, f, files)
            if target is None:
                continue
            a, b = unit_of(f, files), unit_of(target, files)
            if a != b:
                deps[a][b].append('#include "%s"' % inc)
    sym_edges, missing = symbol_edges(files)
    for f, targets in sym_edges.items():
        for g, syms in targets.items():
            a, b = unit_of(f, files), unit_of(g, files)
            if a != b:
                deps[a][b].extend(sorted(syms)[:4])
    if missing:
        print('deps.py: no object for %d source files (run make first): %s'
              % (len(missing), ' '.join(missing[:6]) + (' ...' if len(missing) > 6 else '')))
    if '--graph' in sys.argv:
        for a in sorted(deps):
            print('%s -> %s' % (a, ', '.join(sorted(deps[a]))))
    # Tarjan's strongly connected components
    index, low, stack, on_stack, sccs = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in deps.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    units = sorted({unit_of(f, files) for f in files})
    for u in units:
        if u not in index:
            visit(u)
    if not sccs:
        print('deps.py: %d units, no circles' % len(units))
        return 0
    for comp in sccs:
        members = set(comp)
        print('circle of %d units:' % len(comp))
        for a in comp:
            for b in sorted(deps[a]):
                if b in members:
                    print('  %s -> %s: %s' % (a, b, ', '.join(deps[a][b][:4])))
    print('deps.py: %d circles among %d units' % (len(sccs), len(units)))
    return 1


if __name__ == '__main__':
    sys.exit(main())
