# GEMM (issue 14), sourced by scripts/h200-batch.sh after its core steps (which already ran
# `$B/gemm --bench 8192 --json`: every variant checked at 512x256x320 then timed at 8192^3,
# and cuda_gemm.py). Here: the workgroup-scope and shared-memory variants at 8192^3 with
# their own time, and the GPU clocks after. About 2.5 minutes in all (each step capped).
# (The ceiling, `$B/gemm --peak`, was measured in run A: 602.9 TFLOP/s fp16, 606.9 bf16.)
# The core step's 90 s did not reach the first GEMM in run A (23:09): creating every
# pipeline first took longer. The example now streams (build, check, time each variant in
# turn, budget 70 s); these give the variants the core step may not reach their own time.
step gemm-wg 50 $B/gemm --bench 8192 --only coopmat-wg --budget 35; cat $W/gemm-wg.out
step gemm-smem 45 $B/gemm --bench 8192 --only "coopmat-smem fp16" --budget 30; cat $W/gemm-smem.out
step gemm-noglobal 45 $B/gemm --bench 8192 --only noglobal --budget 30; cat $W/gemm-noglobal.out
step gemm-clocks 10 nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
cat $W/gemm-clocks.out
