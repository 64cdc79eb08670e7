#!/bin/sh
# Build and run the device conformance test.
#
#   test/conformance/run.sh [--device cpu|gpu|all] [--cases N] [--seed S] [--only I] ...
#
# cuda/device.c, cuda/device_cpu.c, cuda/join_cpu.c, cuda/aggjoin_cpu.c and
# cuda/join_key.c are plain C and are compiled here from source; the GPU
# device comes from the objects a top-level `make` produced: cuda/device_gpu.o,
# cuda/strategy_gpu.o, cuda/batch_gpu.o, cuda/hashagg_kernels.o,
# cuda/hashagg_fused.o, cuda/hashagg_partition.o, cuda/hashagg_chunks.o, cuda/join_gpu.o,
# cuda/hashjoin_kernels.o, cuda/aggjoin_gpu.o, cuda/aggjoin_kernels.o and
# cuda/derived_gpu.o (built
# with nvcc, linked with the static CUDA runtime) or cuda/device_gpu_none.o
# (built without nvcc).
# Suites: --suite agg|join|aggjoin|derived|all (conformance.c's usage tells the rest).
# The program is built in a private directory and then installed as
# test/conformance/conformance, so concurrent runs do not trip over each other.
#
# Environment: CC, CFLAGS, CUDA_HOME (the top-level Makefile finds the CUDA
# runtime the same way it did for the build), SANITIZE=1 (AddressSanitizer + UBSan).
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
fi
src=test/conformance
build=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-conformance.XXXXXX")
trap 'rm -rf "$build"' EXIT

$CC $CFLAGS -Icuda -c cuda/device.c -o "$build/device.o"
$CC $CFLAGS -Icuda -c cuda/device_cpu.c -o "$build/device_cpu.o"
$CC $CFLAGS -Icuda -c cuda/join_cpu.c -o "$build/join_cpu.o"
$CC $CFLAGS -Icuda -c cuda/aggjoin_cpu.c -o "$build/aggjoin_cpu.o"
$CC $CFLAGS -Icuda -c cuda/join_key.c -o "$build/join_key.o"
$CC $CFLAGS -Icuda -c $src/conformance.c -o "$build/conformance.o"
$CC $CFLAGS -Icuda -c $src/join.c -o "$build/join.o"
$CC $CFLAGS -Icuda -c $src/aggjoin.c -o "$build/aggjoin.o"
$CC $CFLAGS -Icuda -c $src/aggjoin_specs.c -o "$build/aggjoin_specs.o"
$CC $CFLAGS -Icuda -c $src/aggjoin_api.c -o "$build/aggjoin_api.o"
$CC $CFLAGS -Icuda -c $src/derived.c -o "$build/derived.o"
$CC $CFLAGS -Icuda -c $src/derived_cases.c -o "$build/derived_cases.o"
$CC $CFLAGS -Icuda -c $src/derived_ref.c -o "$build/derived_ref.o"
$CC $CFLAGS -Icuda -c $src/derived_join.c -o "$build/derived_join.o"
$CC $CFLAGS -Icuda -c $src/derived_api.c -o "$build/derived_api.o"

libs=""
gpu_objs="cuda/device_gpu.o cuda/strategy_gpu.o cuda/batch_gpu.o cuda/hashagg_kernels.o cuda/hashagg_fused.o cuda/hashagg_partition.o cuda/hashagg_chunks.o cuda/join_gpu.o cuda/hashjoin_kernels.o cuda/aggjoin_gpu.o cuda/aggjoin_kernels.o cuda/derived_gpu.o"
have_gpu_objs=1
for o in $gpu_objs; do
	[ -f "$o" ] || have_gpu_objs=0
done
if [ $have_gpu_objs = 1 ] && ! [ cuda/device_gpu_none.o -nt cuda/device_gpu.o ]; then
	cuda_libdir=$(make -s --no-print-directory cuda-libdir 2>/dev/null || true)
	if [ -z "$cuda_libdir" ]; then
		echo "conformance: GPU objects exist but make finds no libcudart_static.a; set CUDA_HOME" >&2
		exit 1
	fi
	libs="-L$cuda_libdir -lcudart_static -lstdc++ -ldl -lrt -lpthread"
	echo "conformance: linking the GPU device ($gpu_objs)"
elif [ -f cuda/device_gpu_none.o ]; then
	gpu_objs=cuda/device_gpu_none.o
	echo "conformance: linking cuda/device_gpu_none.o (a build without the GPU device)"
else
	$CC $CFLAGS -Icuda -c cuda/device_gpu_none.c -o "$build/device_gpu_none.o"
	gpu_objs="$build/device_gpu_none.o"
	echo "conformance: no GPU objects (run make at the top first); built cuda/device_gpu_none.c"
fi

$CC $LDFLAGS -o "$build/conformance" "$build/conformance.o" "$build/join.o" \
	"$build/aggjoin.o" "$build/aggjoin_specs.o" "$build/aggjoin_api.o" \
	"$build/derived.o" "$build/derived_cases.o" "$build/derived_ref.o" "$build/derived_join.o" \
	"$build/derived_api.o" \
	"$build/device.o" \
	"$build/device_cpu.o" "$build/join_cpu.o" "$build/aggjoin_cpu.o" "$build/join_key.o" \
	$gpu_objs $libs -lm
cp "$build/conformance" "$src/conformance.tmp.$$"
mv -f "$src/conformance.tmp.$$" "$src/conformance"
"$build/conformance" "$@"
