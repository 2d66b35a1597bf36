# GEMM (issue 14), sourced by scripts/h200-batch.sh after its core steps (which already ran
# `$B/gemm --bench 8192 --json`: every variant checked at 512x256x320 then timed at 8192^3,
# and cuda_gemm.py). Here: the cooperative-matrix ceiling (coopMatMulAdd on fragments held
# in registers, every configuration the driver lists, accumulator blocks 2x2..8x2, fp16 and
# bf16; one line each: TFLOP/s, sums ok/FAIL), the GEMM at 4096^3 (scaling), and the GPU
# clocks after. About 1 minute in all.
step gemm-peak 60 $B/gemm --peak; cat $W/gemm-peak.out; tail -3 $W/gemm-peak.err
step gemm-4096 60 $B/gemm --bench 4096; grep " 4096 4096 4096" $W/gemm-4096.out; tail -3 $W/gemm-4096.err
step gemm-clocks 10 nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
cat $W/gemm-clocks.out
