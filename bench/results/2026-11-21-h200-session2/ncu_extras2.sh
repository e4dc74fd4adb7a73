#!/usr/bin/env bash
# Second call: kernel-level readings, wick against PyTorch, for the elementwise cases
# below PyTorch (where bf16, exp f32/bf16, add bf16, cast f32->bf16) and for softmax;
# softmax's benchmark again (one-chain fold restored) with PyTorch in the same call.
# PyTorch's inputs are made on the host and copied over, so that the only kernels in
# its profile are the ops measured.
# usage: ncu_extras2.sh PREBUILT_DIR   (logs to $OUT)
set -uo pipefail
P=$1
export LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size
NCU=(ncu --clock-control none --metrics $M)
timeout 40 "$P/wick_bench" --benchmark_filter='BM_GpuOpsSoftmax/f32/|BM_GpuD2DCopy/f32' \
  --benchmark_out="$OUT/softmax.json" --benchmark_out_format=json >"$OUT/softmax-bench.log" 2>&1
grep -E "^BM_" "$OUT/softmax-bench.log"
PYTHONUNBUFFERED=1 timeout 40 python3 bench/gpu_ops_compare.py "$OUT/softmax.json" --cases 'Softmax/f32$' 2>&1 | tail -3
timeout 60 "${NCU[@]}" -k regex:'^(where_u8_bf16|uexp_f32|uexp_bf16|badd_bf16|softmax_f32)$' -c 5 "$P/wick_bench" \
  --benchmark_filter='BM_Gpu(Where/bf16|Exp/f32|Exp/bf16|Add/bf16)/|BM_GpuOpsSoftmax/f32/' --benchmark_min_time=0.01 \
  >"$OUT/ncu2-wick.txt" 2>&1
echo "ncu wick: exit $?"
timeout 90 "${NCU[@]}" -c 6 python3 - >"$OUT/ncu2-torch.txt" 2>&1 <<'PY'
import torch
n = 1 << 28
g = torch.Generator().manual_seed(0)
xf = (torch.rand(n, generator=g) * 2 - 1)
c = (torch.rand(n, generator=g) < 0.5).cuda()
xb, yb = xf.bfloat16().cuda(), (torch.rand(n, generator=g) * 2 - 1).bfloat16().cuda()
xf = xf.cuda()
s = (torch.rand(16384, 16384, generator=g) * 8 - 4).cuda()
torch.where(c, xb, yb)      # where bf16
torch.exp(xf)               # exp f32
torch.exp(xb)               # exp bf16
xb + yb                     # add bf16
xf.to(torch.bfloat16)       # cast f32 -> bf16
torch.softmax(s, -1)        # softmax f32
torch.cuda.synchronize()
PY
echo "ncu torch: exit $?"
timeout 40 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
  -k regex:'^softmax_f32$' -c 1 "$P/wick_bench" --benchmark_filter='BM_GpuOpsSoftmax/f32/' --benchmark_min_time=0.01 \
  >"$OUT/ncu2-softmax-sections.txt" 2>&1
echo "ncu softmax sections: exit $?"
for f in "$OUT/ncu2-wick.txt" "$OUT/ncu2-torch.txt"; do
  echo "== $f"
  grep -E "^  [a-zA-Z_].*Context|gpu__time|dram__|warps_active|registers|grid_size|block_size" "$f" | cut -c1-160
done
grep -E "Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Warp Cycles Per Issued|stalled" \
  "$OUT/ncu2-softmax-sections.txt" | head -20
