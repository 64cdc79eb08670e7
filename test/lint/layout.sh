#!/usr/bin/env bash
# test/lint/layout.sh - the tree's own rules, checked after a build:
#   - no source file (C, CUDA, Python, shell, SQL) over 1,200 lines;
#   - README.md at most 300 lines;
#   - the tree speaks of the product only: no numbered work sessions or issue
#     numbers in code, comments, docs or tests;
#   - no header name that src/ and cuda/ both have (both are on the include path);
#   - one extension version everywhere (gpuagg.control, src/compat.h, META.json,
#     debian/changelog), its install script and every sql/ script in the Makefile's DATA;
#   - no source files that include or call each other in a circle
#     (test/lint/deps.py, over the objects `make` built).
# Exits nonzero when any rule is broken, after printing every breach.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

MAX_LINES=${GPUAGG_MAX_FILE_LINES:-1200}
MAX_README=300
status=0

# Print a breach and remember the failure.
breach() {
	printf 'layout: %s\n' "$*"
	status=1
}

# The tree's files: git's list in a checkout, else every file but build output.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	tree_files() { git ls-files -- "$@"; }
else
	tree_files() {
		local args=() p
		for p in "$@"; do args+=(-o -name "$p"); done
		find . -path ./.git -prune -o -path ./.gpu -prune -o -type f \( -false "${args[@]}" \) -print |
			sed 's|^\./||'
	}
fi

while IFS= read -r f; do
	n=$(wc -l <"$f")
	if [ "$n" -gt "$MAX_LINES" ]; then breach "$f has $n lines (at most $MAX_LINES)"; fi
done < <(tree_files '*.c' '*.h' '*.cu' '*.cuh' '*.py' '*.sh' '*.sql')

n=$(wc -l <README.md)
if [ "$n" -gt "$MAX_README" ]; then breach "README.md has $n lines (at most $MAX_README)"; fi

# The words are split so that this file does not match itself.
history_re='(sessio''ns?|issu''es?) #?[0-9]'
if hits=$(tree_files '*' | grep -v -x -e CHANGELOG.md -e '.*\.png' -e '.*\.o' -e '.*\.so' |
	xargs -d '\n' grep -n -I -i -E "$history_re" /dev/null); then
	breach "work history in the tree (numbered sessions or issues):"
	printf '%s\n' "$hits" | head -n 40
fi

# src/ and cuda/ are both on the include path: a header name they share
# would make an include mean one file or the other by the flags' order.
shared=$( { (cd src && find . -name '*.h'); (cd cuda && find . -name '*.h'); } |
	sed 's|^\./||' | sort | uniq -d)
if [ -n "$shared" ]; then
	breach "header names in both src/ and cuda/ (an include would be ambiguous): $shared"
fi

version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" gpuagg.control)
for stamp in "src/compat.h:$(sed -n 's/^#define GPUAGG_MODULE_VERSION "\(.*\)"/\1/p' src/compat.h)" \
	"META.json:$(sed -n 's/^   "version": "\(.*\)\.0",$/\1/p' META.json)" \
	"debian/changelog:$(sed -n '1s/^gpuagg (\([^)-]*\).*/\1/p' debian/changelog)"; do
	if [ "${stamp#*:}" != "$version" ]; then
		breach "${stamp%%:*} says version '${stamp#*:}', gpuagg.control '$version'"
	fi
done
if [ ! -f "sql/gpuagg--$version.sql" ]; then breach "no sql/gpuagg--$version.sql for default_version"; fi
for f in sql/gpuagg--*.sql; do
	if ! grep -q "^DATA = .*$f" Makefile; then breach "$f is not in the Makefile's DATA"; fi
done

if ! python3 test/lint/deps.py; then
	breach "source files depend on each other in a circle (above)"
fi

if [ "$status" = 0 ]; then echo "layout: all rules hold"; fi
exit "$status"
