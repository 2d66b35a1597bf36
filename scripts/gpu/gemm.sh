#!/bin/bash
# `cargo xtask gpu-run gemm`: alone, or after suite.sh in the same lease (it reads suite's logs
# where they exist). Helpers and binaries: lib.sh.
TOPIC=gemm
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export KILN_VALIDATION=0
# GEMM (issue 14), after the suite's core steps (the core step
# `$B/gemm --bench 8192 --json` times every variant, most important first, within 70 s, and
# cuda_gemm.py gives cuBLAS). Every bench line here has its ratio to cuBLAS of this lease
# (`--cublas`, from cuda-gemm.out). Run D2 (02:13) measured the tensor-addressing,
# shared-memory and no-global sweeps (docs/benchmarks/log/); run E keeps to one short step:
#   gemm-where   where the shared-memory kernel's time goes, bf16, for its four best
#                shapes: the no-global loop; + the stores of every step (+stores); + loads
#                from two cached K slices and the stores (+cached: the GEMM's loop minus its
#                HBM/L2 traffic); and the GEMMs with loads two steps ahead;
# then the GPU clocks, then gemm-stats (below). About 2 minutes in all. (The register-only ceiling, `$B/gemm --peak`,
# was measured in run A: 602.9 TFLOP/s fp16, 606.9 bf16.)
CUBLAS=$(python3 -c "import json,sys
r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
print(','.join('%s=%.1f' % (x['dtype'], x['tflops']) for x in r))" $W/cuda-gemm.out 2>/dev/null)
echo "cuBLAS in this lease: ${CUBLAS:-none (cuda-gemm.out missing)}"
step gemm-where 45 $B/gemm --bench 8192 --only "noglobal+cached|noglobal+stores|smem-noglobal bf16|w64x32 a2|256x128x16 w64x64 a2|bf16 128x256x16 w64x64 a2" --budget 30 --cublas "$CUBLAS"
cat $W/gemm-where.out; tail -3 $W/gemm-where.err
step gemm-clocks 10 nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
cat $W/gemm-clocks.out
# gemm-stats: what the driver compiled each kernel into (VK_KHR_pipeline_executable_properties,
# `gemm --stats`, no GEMM is run): per variant, every statistic the driver reports
# (`name=value`: registers, shared memory, spills, ... as the driver names them) and the
# workgroups per SM an H200 fits by them (65536 registers, 228 KiB shared memory, 2048
# threads, 32 workgroups; which statistic each limit used is on the line). Every variant in
# the order of the core step (budget 45 s of pipeline compiles), then the ceiling kernels.
step gemm-stats 75 $B/gemm --stats --budget 45
grep -h "^stats\|FAIL" $W/gemm-stats.out | cut -c1-400; tail -3 $W/gemm-stats.err
step gemm-stats-peak 40 $B/gemm --peak --stats
grep -h "^stats\|FAIL" $W/gemm-stats-peak.out | cut -c1-400; tail -3 $W/gemm-stats-peak.err
# gemm-occupancy (run G): run F's statistics put the best streaming kernel (128x128x32 w64x32
# a2, 170 registers) at one 8-warp workgroup per SM. The 32x32 subgroup tiles
# (gemm::OCCUPANCY_SHAPES: four accumulators, about 100 registers, 16 warps per SM) with
# loads one and two steps ahead, 128x64x32 w64x32 g16 a2, the 512-invocation no-global loop,
# and the best kernel of run E for an A/B in this lease; then their statistics.
step gemm-occupancy 75 $B/gemm --bench 8192 --only "w32x32|128x64x32 w64x32 g16 a2|bf16 128x128x32 w64x32 a2" --budget 50 --cublas "$CUBLAS"
grep -h "8192 8192 8192\|FAIL\|differ" $W/gemm-occupancy.out; tail -3 $W/gemm-occupancy.err
step gemm-occupancy-stats 30 $B/gemm --stats --only "w32x32|128x64x32 w64x32 g16 a2"
grep -h "^stats" $W/gemm-occupancy-stats.out | cut -c1-400
date -u
