# GEMM (issue 14), sourced by scripts/h200-batch.sh after its core steps (which already ran
# `$B/gemm --bench 8192 --json`: every variant checked at 512x256x320 then timed at 8192^3,
# most important first within a 70 s budget, and cuda_gemm.py). Here, each with its own
# time and each bench line's ratio to cuBLAS of the same lease (`--cublas`, from
# cuda-gemm.out): the workgroup-scope kernel with tensor addressing (every tile of
# TENSOR_TILES, row-major and grouped order, clamped layouts, the next step's loads before
# the multiply-add, aligned strides, unrolled; and the KHR-load workgroup-scope kernel
# with aligned strides), the shared-memory kernel (bf16) in grouped workgroup order (8 and 16
# tile rows) and with its global loads two steps ahead, and the GPU clocks after. About 2.5 minutes
# in all (each step capped). (The ceiling, `$B/gemm --peak`, was measured in run A: 602.9
# TFLOP/s fp16, 606.9 bf16; the row-major shared-memory, no-global and KHR-load
# workgroup-scope variants in run B: BENCHMARKS.md.)
CUBLAS=$(python3 -c "import json,sys
r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
print(','.join('%s=%.1f' % (x['dtype'], x['tflops']) for x in r))" $W/cuda-gemm.out 2>/dev/null)
echo "cuBLAS in this lease: ${CUBLAS:-none (cuda-gemm.out missing)}"
step gemm-tensor 90 $B/gemm --bench 8192 --only "coopmat-tensor|coopmat-wg bf16 128x256x32 align" --budget 70 --cublas "$CUBLAS"
cat $W/gemm-tensor.out; tail -5 $W/gemm-tensor.err
step gemm-grouped 55 $B/gemm --bench 8192 --only "w64x64 g|w64x64 a|w64x32 g|w64x32 a" --budget 40 --cublas "$CUBLAS"
cat $W/gemm-grouped.out; tail -3 $W/gemm-grouped.err
step gemm-clocks 10 nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
cat $W/gemm-clocks.out
