#!/usr/bin/env bash
# test/bench/kernels/profile_on_gpu_host.sh OUTDIR
#
# A quick look at a few kernel-benchmark points on the GPU host, for tuning
# between full runs of run_on_gpu_host.sh:
#   1. builds gpuagg's GPU objects for sm_90 (`make CUDA_ARCHS=90`, so
#      PostgreSQL's pg_config must be on PATH) and bench_kernels,
#   2. runs bench_kernels over the points chosen below at ROWS rows and at
#      4 * ROWS rows in one batch (fixed costs per aggregation show as the
#      difference), printing each point's phases,
#   3. when Nsight Compute (ncu) is there, profiles the same points once at
#      ROWS rows: each kernel's duration, grid, block and shared memory.
# Files in OUTDIR: build.log, points-ROWS.csv, points-4ROWS.csv, ncu.csv.
#
# Environment: ROWS (default 2^26), SIZES_4X (set but empty: ROWS only),
# GMIN/GMAX (log2 groups, default 9/13), KEYS
# (int32,int64; default int32), DISTS (default uniform), LAYOUTS (default dense),
# STRATEGIES (default perfect), KERNELS (ncu's kernel-name regex, default
# "narrow|direct|fused|probe|gather|accumulate|assign"), NCU_DETAIL (a kernel-name
# regex: also write ncu-detail.txt, Nsight Compute's speed-of-light, memory,
# warp-state and occupancy sections for the first NCU_DETAIL_COUNT (default 6)
# launches of those kernels).
set -euo pipefail

out=${1:?usage: test/bench/kernels/profile_on_gpu_host.sh OUTDIR}
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
mkdir -p "$out"
out=$(cd "$out" && pwd)
export CUDA_MODULE_LOADING=EAGER

NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
ROWS=${ROWS:-67108864}
points=(--gmin "${GMIN:-9}" --gmax "${GMAX:-13}" --keys "${KEYS:-int32}"
	--dists "${DISTS:-uniform}" --layouts "${LAYOUTS:-dense}"
	--strategies "${STRATEGIES:-perfect}")

make -j16 CUDA_ARCHS=90 NVCC="$NVCC" >"$out/build.log" 2>&1 ||
	{ tail -20 "$out/build.log"; echo "make failed (is pg_config on PATH?)" >&2; exit 1; }
build=$(mktemp -d "${TMPDIR:-/tmp}/gpuagg-profile.XXXXXX")
trap 'rm -rf "$build"' EXIT
cpu_objs=""
for o in $(make -s --no-print-directory device-objs); do
	obj=$build/$(echo "$o" | tr / _)
	cc -O2 -fPIC -Icuda -c "${o%.o}.c" -o "$obj"
	cpu_objs="$cpu_objs $obj"
done
gpu_objs=$(make -s --no-print-directory gpu-objs)
# shellcheck disable=SC2086
"$NVCC" -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -Icuda -Icuda/gpu \
	test/bench/kernels/bench_kernels.cu $gpu_objs $cpu_objs -o "$build/bench" -lm -lpthread \
	>>"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }

for rows in "$ROWS" ${SIZES_4X-$((4 * ROWS))}; do
	"$build/bench" --rows "$rows" --batch "$rows" "${points[@]}" --reps 3 \
		--csv "$out/points-$rows.csv" --meta "$out/meta.json" 2>"$out/bench-$rows.log"
	python3 - "$out/points-$rows.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{r['rows']} rows  {r['key_type']} {r['dist']} {r['layout']} g=2^{r['log2_groups']} "
          f"{r['strategy']:<11} ran {r['ran']:<11} {float(r['grows_device']):7.1f} G rows/s  "
          f"probe {r['probe_ms']} ids {r['ids_ms']} aggregate {r['aggregate_ms']} "
          f"finish {r['finish_ms']} ms")
PY
done

NCU=$(command -v ncu 2>/dev/null || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
if [ -z "$NCU" ]; then
	echo "no ncu: skipping the per-kernel profile"
	exit 0
fi
"$NCU" --kernel-name "regex:${KERNELS:-narrow|direct|fused|probe|gather|accumulate|assign}" \
	--metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic,dram__throughput.avg.pct_of_peak_sustained_elapsed \
	--csv "$build/bench" --rows "$ROWS" "${points[@]}" --reps 1 --no-verify \
	--csv "$build/x.csv" --meta "$build/x.json" >"$out/ncu.csv" 2>/dev/null || true
python3 - "$out/ncu.csv" <<'PY'
import csv, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
if not lines:
    sys.exit("ncu wrote nothing (see ncu.csv)")
rows = list(csv.reader(lines))
h = rows[0]
ki, mi, vi, ii = (h.index(c) for c in ("Kernel Name", "Metric Name", "Metric Value", "ID"))
kernels = {}
for r in rows[1:]:
    kernels.setdefault(r[ii], [r[ki][:60], {}])[1][r[mi]] = r[vi]
for i, (name, m) in kernels.items():
    print(f"{i:>4} {m.get('gpu__time_duration.sum', '?'):>10} ns  grid {m.get('launch__grid_size', '?'):>6} "
          f"block {m.get('launch__block_size', '?'):>5} smem {m.get('launch__shared_mem_per_block_dynamic', '?'):>7} "
          f"dram {m.get('dram__throughput.avg.pct_of_peak_sustained_elapsed', '?'):>6}%  {name}")
PY

if [ -n "${NCU_DETAIL:-}" ]; then
	"$NCU" --kernel-name "regex:$NCU_DETAIL" --launch-count "${NCU_DETAIL_COUNT:-6}" \
		--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
		--section Occupancy --section LaunchStats \
		"$build/bench" --rows "$ROWS" "${points[@]}" --reps 1 --no-verify \
		--csv "$build/y.csv" --meta "$build/y.json" >"$out/ncu-detail.txt" 2>&1 || true
	grep -E "^  [a-z_]+.*\(|Duration|Memory Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Stall|Warp Cycles Per Issued" \
		"$out/ncu-detail.txt" | head -150
fi
