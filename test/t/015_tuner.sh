#!/usr/bin/env bash
# test/t/015_tuner.sh - the launch tuner's logic (cuda/tune.c) with no GPU: builds
# test/tune/tune_test.c with the tuner and runs it on synthetic costs (every family's
# search within its bound, within 1.1 times the best of its space and never slower
# than the defaults by 2%, on long batches and on short noisy ones, where one batch a
# sample misses), the shape classes with their contention level (from synthetic probe
# samples; landscapes whose best differs by level), then the file's round trip and a
# corrupt, foreign or old-format file ignored with a log line. Run by test/check.sh;
# needs only a C compiler.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-tune.XXXXXX")
trap 'rm -rf "$work"' EXIT

"${CC:-cc}" -Wall -Werror -O1 -I"$root/cuda" -o "$work/tune_test" \
	"$root/test/tune/tune_test.c" "$root/cuda/tune.c" -lpthread -lm
mkdir "$work/data"
"$work/tune_test" "$work/data"
