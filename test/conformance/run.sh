#!/bin/sh
# Build and run the device conformance test.
#
#   test/conformance/run.sh [--device cpu|gpu|service|all[,...]] [--cases N] [--seed S] ...
#
# The device layer's plain C files (`make device-objs`: the dispatcher and its
# rules in cuda/, the CPU device in cuda/cpu/, the GPU service in
# cuda/service/) are compiled here from source;
# the GPU device comes from the objects a top-level `make` produced
# (`make gpu-objs`, built with nvcc and linked with the static CUDA runtime),
# or cuda/gpu/none.o (a build without nvcc).
# Suites: --suite agg|join|aggjoin|derived|all (conformance.c's usage tells the rest).
# The program is built in a private directory and then installed as
# test/conformance/conformance, so concurrent runs do not trip over each other.
#
# --device service runs the GPU service's devices through a service inside the
# test's process (its arena: GPUAGG_SERVICE_ARENA_MB, default 1024).
#
# Environment: CC, CFLAGS, CUDA_HOME (the top-level Makefile finds the CUDA
# runtime the same way it did for the build), SANITIZE=1 (AddressSanitizer + UBSan)
# or SANITIZE=thread (ThreadSanitizer; slow: give it fewer cases).
set -e

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2 -g -Wall -Wextra -Wno-unused-parameter -Wmissing-prototypes}
LDFLAGS=${LDFLAGS:-}
if [ "${SANITIZE:-0}" = 1 ]; then
	CFLAGS="$CFLAGS -fsanitize=address,undefined -fno-omit-frame-pointer"
	LDFLAGS="$LDFLAGS -fsanitize=address,undefined"
elif [ "${SANITIZE:-0}" = thread ]; then
	CFLAGS="$CFLAGS -fsanitize=thread -fno-omit-frame-pointer"
	LDFLAGS="$LDFLAGS -fsanitize=thread"
fi
src=test/conformance
build=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-conformance.XXXXXX")
trap 'rm -rf "$build"' EXIT

make_list() { make -s --no-print-directory "$1" 2>/dev/null; }
device_objs=""
for o in $(make_list device-objs); do
	c=${o%.o}.c
	obj=$build/$(echo "$c" | tr / _ | sed 's/\.c$/.o/')
	$CC $CFLAGS -Icuda -c "$c" -o "$obj"
	device_objs="$device_objs $obj"
done
[ -n "$device_objs" ] || { echo "conformance: make device-objs listed nothing" >&2; exit 1; }
test_objs=""
for c in $src/*.c; do
	obj=$build/$(basename "$c" .c).o
	$CC $CFLAGS -Icuda -c "$c" -o "$obj"
	test_objs="$test_objs $obj"
done

libs=""
gpu_objs=$(make_list gpu-objs)
have_gpu_objs=1
for o in $gpu_objs; do
	[ -f "$o" ] || have_gpu_objs=0
done
if [ -n "$gpu_objs" ] && [ $have_gpu_objs = 1 ] && ! [ cuda/gpu/none.o -nt cuda/gpu/hashagg.o ]; then
	cuda_libdir=$(make_list cuda-libdir || true)
	if [ -z "$cuda_libdir" ]; then
		echo "conformance: GPU objects exist but make finds no libcudart_static.a; set CUDA_HOME" >&2
		exit 1
	fi
	libs="-L$cuda_libdir -lcudart_static -lstdc++ -ldl -lrt -lpthread"
	echo "conformance: linking the GPU device ($gpu_objs)"
elif [ -f cuda/gpu/none.o ]; then
	gpu_objs=cuda/gpu/none.o
	echo "conformance: linking cuda/gpu/none.o (a build without the GPU device)"
else
	$CC $CFLAGS -Icuda -c cuda/gpu/none.c -o "$build/none.o"
	gpu_objs="$build/none.o"
	echo "conformance: no GPU objects (run make at the top first); built cuda/gpu/none.c"
fi

# shellcheck disable=SC2086  # object lists
$CC $LDFLAGS -o "$build/conformance" $test_objs $device_objs $gpu_objs $libs -lm -lpthread
cp "$build/conformance" "$src/conformance.tmp.$$"
mv -f "$src/conformance.tmp.$$" "$src/conformance"
"$build/conformance" "$@"
