#!/bin/bash
# One device call (issue 5, engineer q): tests, benchmarks of both mat-vec kernel
# families, ncu kernel times, PyTorch's copy and bf16 GEMM figures. Run from the repo
# root with the prebuilt carry dir build-q-carry; logs go to $OUT (one tarball + summary).
# usage: bench/results/2026-11-21-h200-gpu-quant-2/run.sh [tag]
set -o pipefail
C=$PWD/build-q-carry
export LD_LIBRARY_PATH=$C
R=/tmp/r; rm -rf $R; mkdir -p $R
cd $C
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv; } > $R/gpu.txt 2>&1
cat $R/gpu.txt
T0=$SECONDS
timeout 70 ./test_gpu_quant --gtest_brief=1 > $R/test_gpu_quant.log 2>&1; echo "test rc=$? ($((SECONDS-T0)) s)"; tail -4 $R/test_gpu_quant.log
T0=$SECONDS
timeout 60 ./wick_bench --benchmark_filter=GpuQuant --benchmark_out=$R/bench.json --benchmark_out_format=json > $R/bench.log 2>&1; echo "bench rc=$? ($((SECONDS-T0)) s)"
grep -E "^BM_" $R/bench.log | sed -E 's/ +/ /g' | cut -c1-150
T0=$SECONDS
WICK_QMV_KERNEL=generic timeout 30 ./wick_bench --benchmark_filter='GpuQuantMatVec/(q4_0|q4_K)' > $R/bench_generic.log 2>&1; echo "generic rc=$? ($((SECONDS-T0)) s)"
grep -E "^BM_" $R/bench_generic.log | sed -E 's/ +/ /g' | cut -c1-150
T0=$SECONDS
WICK_BENCH_REPEAT=1 timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:'mmvq|quantize_q8_1' --csv ./wick_bench --benchmark_filter=GpuQuantMatVec > $R/ncu_matvec.csv 2> $R/ncu_matvec.err; echo "ncu matvec rc=$? ($((SECONDS-T0)) s)"
T0=$SECONDS
WICK_QMV_KERNEL=generic WICK_BENCH_REPEAT=1 timeout 30 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:'mmvq|quantize_q8_1' --csv ./wick_bench --benchmark_filter='GpuQuantMatVec/(q4_0|q4_K)_14336' > $R/ncu_matvec_generic.csv 2> $R/ncu_matvec_generic.err; echo "ncu generic rc=$? ($((SECONDS-T0)) s)"
T0=$SECONDS
WICK_BENCH_REPEAT=1 timeout 40 ncu --clock-control none --metrics gpu__time_duration.sum --csv ./wick_bench --benchmark_filter='GpuQuant(DequantGemm|Bf16Gemm)' > $R/ncu_gemm.csv 2> $R/ncu_gemm.err; echo "ncu gemm rc=$? ($((SECONDS-T0)) s)"
T0=$SECONDS
timeout 20 cuobjdump --dump-sass --function mmvqs_q4_0_b1 quantized_sm90.cubin > $R/sass_mmvqs_q4_0_b1.txt 2>&1
timeout 10 cuobjdump --dump-sass --function mmvqs_q4_K_b1 quantized_sm90.cubin > $R/sass_mmvqs_q4_K_b1.txt 2>&1
cd $OLDPWD
PYTHONUNBUFFERED=1 timeout 40 python3 bench/results/2026-11-21-h200-gpu-quant-2/torch_ref.py > $R/torch.log 2>&1; echo "torch rc=$? ($((SECONDS-T0)) s)"; cat $R/torch.log
python3 bench/gpu_quant_report.py $R/bench.json > $R/report.md 2>&1; cat $R/report.md
python3 bench/results/2026-11-21-h200-gpu-quant-2/ncu_summary.py $R/ncu_matvec.csv $R/ncu_matvec_generic.csv $R/ncu_gemm.csv > $R/ncu_summary.txt 2>&1; cat $R/ncu_summary.txt
tar czf $OUT/logs.tgz -C /tmp r; cp $R/bench.json $R/report.md $R/ncu_summary.txt $OUT/ 2>/dev/null; true
