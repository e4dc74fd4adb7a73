#!/bin/bash
# Second device call (issue 5, engineer q): tests (every mat-vec kernel family),
# compute-sanitizer memcheck over the new kernels' tests, benchmarks with the default
# kernels (mmvqf for batch-1 mat-vec, dequantize16) and with WICK_QMV_KERNEL=split,
# ncu kernel times, PyTorch's copy and bf16 GEMM. Run from the repo root with the
# prebuilt carry dir build-q-carry; logs in $OUT/logs.tgz.
set -o pipefail
C=$PWD/build-q-carry
export LD_LIBRARY_PATH=$C
R=/tmp/r; rm -rf $R; mkdir -p $R
cd $C
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv; } > $R/gpu.txt 2>&1
cat $R/gpu.txt
T0=$SECONDS
timeout 70 ./test_gpu_quant --gtest_brief=1 > $R/test_gpu_quant.log 2>&1; echo "test rc=$? ($((SECONDS-T0)) s)"; grep -E "FAILED|Failure|Expected|nmse|PASSED|tests from" $R/test_gpu_quant.log | head -20
T0=$SECONDS
timeout 60 ./wick_bench --benchmark_filter=GpuQuant --benchmark_out=$R/bench.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$? ($((SECONDS-T0)) s)"
grep -E "^BM_" $R/bench.log | sed -E 's/ +/ /g; s/\/iterations:[0-9]+\/manual_time//' | cut -c1-140
T0=$SECONDS
WICK_QMV_KERNEL=split timeout 30 ./wick_bench --benchmark_filter='GpuQuantMatVec' > $R/bench_split.log 2>&1; echo "split rc=$? ($((SECONDS-T0)) s)"
grep -E "^BM_" $R/bench_split.log | sed -E 's/ +/ /g; s/\/iterations:[0-9]+\/manual_time//' | cut -c1-140
T0=$SECONDS
for b in 2 8; do WICK_QMV_FUSED_BPS=$b timeout 20 ./wick_bench --benchmark_filter='GpuQuantMatVec/(q4_0|q4_K|q8_0)_' > $R/bench_fused_bps$b.log 2>&1; echo "fused bps=$b rc=$? ($((SECONDS-T0)) s)"; grep -E "^BM_" $R/bench_fused_bps$b.log | sed -E 's/ +/ /g; s/\/iterations:[0-9]+\/manual_time//' | cut -c1-140; done
T0=$SECONDS
WICK_BENCH_REPEAT=1 timeout 50 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:'mmvq|quantize_q8_1' --csv ./wick_bench --benchmark_filter=GpuQuantMatVec > $R/ncu_matvec.csv 2> $R/ncu_matvec.err; echo "ncu matvec rc=$? ($((SECONDS-T0)) s)"
T0=$SECONDS
WICK_BENCH_REPEAT=1 timeout 30 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:'dequantize' --csv ./wick_bench --benchmark_filter='GpuQuantDequantGemm' > $R/ncu_dequant.csv 2> $R/ncu_dequant.err; echo "ncu dequant rc=$? ($((SECONDS-T0)) s)"
cd $OLDPWD
T0=$SECONDS
PYTHONUNBUFFERED=1 timeout 30 python3 bench/results/2026-11-21-h200-gpu-quant-2/torch_ref.py > $R/torch.log 2>&1; echo "torch rc=$? ($((SECONDS-T0)) s)"; cat $R/torch.log
python3 bench/gpu_quant_report.py $R/bench.json > $R/report.md 2>&1; cat $R/report.md
python3 bench/results/2026-11-21-h200-gpu-quant-2/ncu_summary.py $R/ncu_matvec.csv $R/ncu_dequant.csv > $R/ncu_summary.txt 2>&1; cat $R/ncu_summary.txt
cd $C
T0=$SECONDS
timeout 45 compute-sanitizer --tool memcheck --print-limit 5 ./test_gpu_quant --gtest_brief=1 --gtest_filter='GpuQmatmulKernels.*:*q4_0*:*q8_0*:*q4_K*:*q6_K*' > $R/memcheck.log 2>&1; echo "memcheck rc=$? ($((SECONDS-T0)) s)"; grep -E "ERROR SUMMARY|PASSED|FAILED" $R/memcheck.log | head -5
tar czf $OUT/logs.tgz -C /tmp r; cp $R/bench.json $R/report.md $R/ncu_summary.txt $OUT/ 2>/dev/null; true
