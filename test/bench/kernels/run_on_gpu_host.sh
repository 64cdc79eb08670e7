#!/usr/bin/env bash
# test/bench/kernels/run_on_gpu_host.sh OUTDIR
#
# On the GPU host (CUDA 12.1+, an H100, repository as working directory):
#   1. builds gpuagg's GPU device for sm_90 (`make CUDA_ARCHS=90`; without
#      pg_config, the CUDA objects alone with nvcc),
#   2. runs the device conformance test on the GPU under every strategy
#      (auto, perfect, shared, global, partitioned; against the CPU reference),
#   3. builds and runs the kernel benchmark (bench_kernels.cu: every strategy
#      and a plain global-atomics kernel on 2^26 rows already on the GPU,
#      int32/int64 keys, 2^1 .. 2^26 groups, uniform and Zipf, dense and
#      sparse keys),
#   4. writes into OUTDIR: kernels.csv, kernels_meta.json, kernel-benchmarks.md (tables
#      and the kernels' criteria), kernel-benchmarks.png (when python3 has matplotlib),
#      conformance.log, bench.log, build.log,
# then, with TUNING=1 (the default), the launch tuner's check (step 3b): the conformance test's
#      aggregations under extreme launch parameters (--launch), and
#      `bench_kernels --tuning` (defaults, exhaustive search and tuned
#      parameters per shape; tuning.csv, tuning.log, tuning.txt from
#      report.py --tuning), about 5 minutes per card,
# and prints a short summary last.  Exit status: nonzero when the build,
# the conformance test, the benchmark's checksums or the tuner's criteria failed.
#
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc),
# CONFORMANCE_CASES (random cases, default 150), BENCH_BUDGET (seconds for
# the benchmark, default 200), BENCH_ARGS (more bench_kernels options),
# TUNING (0: skip step 3b), TUNING_BUDGET (seconds, default 600), TUNING_ARGS
# (more bench_kernels --tuning options), LAUNCH_CASES (cases of each extreme
# parameter set, default 60; 0 skips them), ONLY=tuning (the build and step
# 3b alone: no conformance test, kernel benchmark or report).
set -euo pipefail

out=${1:?usage: test/bench/kernels/run_on_gpu_host.sh OUTDIR}
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
root=$(pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
export CUDA_MODULE_LOADING=EAGER	# kernel loading must not land in timed work

say() { printf '[%s] %s\n' "$(date +%T)" "$*"; }
fail() { say "FAILED: $*" >&2; exit 1; }

NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || fail "no nvcc (set NVCC=/path/to/nvcc)"
CUDA_HOME=$(cd "$(dirname "$NVCC")/.." && pwd)
export CUDA_HOME
command -v nvidia-smi >/dev/null && nvidia-smi -L || say "nvidia-smi not found; going on"
say "nvcc: $("$NVCC" --version | tail -1)"

# ---- 1. build ---------------------------------------------------------------
say "building the GPU device for sm_90 (log: $out/build.log)"
gpu_cus=$(make -s --no-print-directory gpu-objs | sed 's/\.o\b/.cu/g')	# every GPU object the Makefile builds
built=0
if command -v "${PG_CONFIG:-pg_config}" >/dev/null 2>&1; then
	if make -j8 CUDA_ARCHS=90 NVCC="$NVCC" >"$out/build.log" 2>&1; then
		built=1
	else
		tail -20 "$out/build.log"
		say "make CUDA_ARCHS=90 failed (above); compiling the CUDA objects alone instead"
	fi
else
	say "no pg_config: compiling the CUDA objects only"
fi
if [ "$built" = 0 ]; then
	for cu in $gpu_cus; do
		"$NVCC" -O3 -std=c++17 -Xcompiler -fPIC -gencode arch=compute_90,code=sm_90 \
			-Icuda -Icuda/gpu -c "$cu" -o "${cu%.cu}.o" >>"$out/build.log" 2>&1 ||
			{ tail -30 "$out/build.log"; fail "nvcc $cu"; }
	done
fi
gpu_objs=""
for cu in $gpu_cus; do
	[ -f "${cu%.cu}.o" ] || fail "${cu%.cu}.o was not built"
	gpu_objs="$gpu_objs ${cu%.cu}.o"
done

# ---- 2. conformance on the GPU ---------------------------------------------------
status=0
only=${ONLY:-}
conformance="skipped (ONLY=$only)"
bench="skipped (ONLY=$only)"
if [ "$only" != tuning ]; then
say "conformance test on the GPU, every strategy (log: $out/conformance.log)"
if test/conformance/run.sh --device gpu --cases "${CONFORMANCE_CASES:-150}" --timeout 240 \
	>"$out/conformance.log" 2>&1; then
	conformance="passed"
else
	conformance="FAILED (see conformance.log)"
	status=1
	grep -E "FAIL|TIMED OUT|mismatch|stats:" "$out/conformance.log" | head -20 || true
fi
say "conformance: $(tail -1 "$out/conformance.log")"
fi

# ---- 3. kernel benchmark --------------------------------------------------------
build=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-bench.XXXXXX")
trap 'rm -rf "$build"' EXIT
say "building bench_kernels"
cpu_objs=""
for o in $(make -s --no-print-directory device-objs); do
	obj=$build/$(echo "$o" | tr / _)
	cc -O2 -fPIC -Icuda -c "${o%.o}.c" -o "$obj"
	cpu_objs="$cpu_objs $obj"
done
# shellcheck disable=SC2086
"$NVCC" -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -Icuda -Icuda/gpu \
	test/bench/kernels/bench_kernels.cu $gpu_objs $cpu_objs \
	-o "$build/bench_kernels" -lm -lpthread >>"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; fail "building bench_kernels"; }

if [ "$only" != tuning ]; then
say "running the kernel benchmark (budget ${BENCH_BUDGET:-200} s; log: $out/bench.log)"
# shellcheck disable=SC2086
if "$build/bench_kernels" --budget "${BENCH_BUDGET:-200}" --csv "$out/kernels.csv" \
	--meta "$out/kernels_meta.json" ${BENCH_ARGS:-} 2>"$out/bench.log"; then
	bench="passed (every strategy gave the same groups)"
else
	bench="FAILED (errors or checksum mismatches: see bench.log and the check column)"
	status=1
	grep -E "ERROR|MISMATCH|bench_kernels:" "$out/bench.log" | head -20 || true
fi
tail -2 "$out/bench.log"
fi

# ---- 3b. the launch tuner --------------------------------------------------------
tuning="skipped (TUNING=0)"
if [ "${TUNING:-1}" = 1 ]; then
	say "conformance under extreme launch parameters (log: $out/conformance-launch.log)"
	: >"$out/conformance-launch.log"
	launch_ok=1
	launches="threads=32,blocks_per_sm=1,replicas_max=1,cache_less=-1,part_shift=-8
threads=1024,blocks_per_sm=32,replicas_max=32,cache_less=12,part_shift=8
threads=64,blocks_per_sm=2,replicas_max=2,cache_less=4,part_shift=2"
	if [ "${LAUNCH_CASES:-60}" = 0 ]; then
		echo "skipped (LAUNCH_CASES=0)" >"$out/conformance-launch.log"
		launches=""
	fi
	for launch in $launches; do
		echo "==== --launch $launch" >>"$out/conformance-launch.log"
		test/conformance/run.sh --device gpu --suite agg --cases "${LAUNCH_CASES:-60}" --timeout 240 \
			--launch "$launch" >>"$out/conformance-launch.log" 2>&1 || launch_ok=0
		tail -1 "$out/conformance-launch.log"
	done
	say "the launch tuner's benchmark (budget ${TUNING_BUDGET:-600} s; log: $out/tuning.log)"
	# shellcheck disable=SC2086
	"$build/bench_kernels" --tuning --budget "${TUNING_BUDGET:-600}" \
		--tuning-csv "$out/tuning.csv" --csv /dev/null --meta /dev/null ${TUNING_ARGS:-} \
		2>"$out/tuning.log" || launch_ok=0
	if [ -s "$out/tuning.csv" ] && python3 test/bench/kernels/report.py --tuning "$out/tuning.csv" \
		>"$out/tuning.txt" && [ "$launch_ok" = 1 ]; then
		tuning="met (tuning.txt)"
	else
		tuning="NOT MET or failed (tuning.txt, tuning.log, conformance-launch.log)"
		status=1
	fi
	tail -4 "$out/tuning.txt" 2>/dev/null || true
fi

# ---- 4. report -----------------------------------------------------------------
if [ "$only" = tuning ]; then
	echo
	echo "==== summary ($(basename "$root"), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')) ===="
	echo "launch tuner:           $tuning"
	cat "$out/tuning.txt" 2>/dev/null || true
	exit $status
fi
python=python3
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import matplotlib' 2>/dev/null; then
		python=$p
		break
	fi
done
[ -s "$out/kernels.csv" ] || fail "the benchmark wrote no results"
"$python" test/bench/kernels/report.py "$out/kernels.csv" "$out/kernels_meta.json" "$out" \
	>"$out/summary.txt" || fail "report.py"

echo
echo "==== summary ($(basename "$root"), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')) ===="
echo "conformance on the GPU: $conformance"
echo "kernel benchmark:       $bench"
echo "launch tuner:           $tuning"
echo "files in $out: $(cd "$out" && ls | tr '\n' ' ')"
cat "$out/summary.txt"
exit $status
