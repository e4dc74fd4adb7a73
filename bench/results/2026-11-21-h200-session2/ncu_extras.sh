#!/usr/bin/env bash
# Kernel-level readings for the targets still missed, after the benchmarks of the
# same call: (1) where bf16 (u8 condition) and exp f32, wick's kernel against
# PyTorch's, by duration and DRAM bytes; (2) the batch-1 mat-vec kernel (mmvqs,
# q4_0 [14336 x 4096]): throughput, occupancy and warp stall reasons.
# usage: ncu_extras.sh PREBUILT_DIR   (logs to $OUT/ncu-*.txt)
set -uo pipefail
P=$1
export LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
NCU=(ncu --clock-control none)
timeout 60 "${NCU[@]}" --metrics $M -k regex:'where_u8_bf16|uexp_f32' -c 4 "$P/wick_bench" \
  --benchmark_filter='BM_Gpu(Where/bf16|Exp/f32)/' --benchmark_min_time=0.01 >"$OUT/ncu-wick-where-exp.txt" 2>&1
echo "ncu wick where/exp: exit $?"
timeout 60 "${NCU[@]}" --metrics $M -k regex:'elementwise|vectorized|where|exp' -c 6 python3 - >"$OUT/ncu-torch-where-exp.txt" 2>&1 <<'PY'
import torch
n = 1 << 28
c = torch.rand(n, device="cuda") < 0.5
x = torch.rand(n, device="cuda").bfloat16()
y = torch.rand(n, device="cuda").bfloat16()
xf = torch.rand(n, device="cuda")
for _ in range(2):
    torch.where(c, x, y)
for _ in range(2):
    torch.exp(xf)
torch.cuda.synchronize()
PY
echo "ncu torch where/exp: exit $?"
WICK_BENCH_REPEAT=1 timeout 60 "${NCU[@]}" --section SpeedOfLight --section Occupancy --section WarpStateStats \
  --section MemoryWorkloadAnalysis -k regex:mmvqs -c 1 "$P/wick_bench" \
  --benchmark_filter='BM_GpuQuantMatVec/q4_0_14336x4096' >"$OUT/ncu-mmvqs-q4_0.txt" 2>&1
echo "ncu mmvqs: exit $?"
for f in "$OUT"/ncu-wick-where-exp.txt "$OUT"/ncu-torch-where-exp.txt; do
  echo "== $f"
  grep -E "^  [a-zA-Z_].*\(|gpu__time_duration|dram__bytes|dram__throughput|warps_active" "$f" | head -40
done
grep -E "Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Registers|Stall|Warp Cycles|L1/TEX Hit|L2 Hit" \
  "$OUT/ncu-mmvqs-q4_0.txt" | head -40
