# GEMM (issue 14), sourced by scripts/h200-batch.sh after its core steps (the core step
# `$B/gemm --bench 8192 --json` times every variant, most important first, within 70 s, and
# cuda_gemm.py gives cuBLAS). Here, each with its own time, every bench line with its ratio
# to cuBLAS of this lease (`--cublas`, from cuda-gemm.out):
#   gemm-tensor  the workgroup-scope kernel with tensor addressing, aligned strides first
#                (run D: 166.5 TFLOP/s at 128x256x64, 2.6x the unaligned one), clamped or
#                not, each tile with its no-global form; the KHR-load workgroup-scope
#                kernel with aligned strides;
#   gemm-smem    the shared-memory kernel, bf16: row-major shapes, grouped, loads 2 ahead;
#   gemm-where   every no-global variant: the shared-memory loop alone, with its global
#                loads alone (+loads) and with its shared-memory stores alone (+stores);
#                the tensor kernel's loop on two cached slices;
# then the GPU clocks. About 2.75 minutes in all (each step capped). (The register-only
# ceiling, `$B/gemm --peak`, was measured in run A: 602.9 TFLOP/s fp16, 606.9 bf16.)
CUBLAS=$(python3 -c "import json,sys
r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
print(','.join('%s=%.1f' % (x['dtype'], x['tflops']) for x in r))" $W/cuda-gemm.out 2>/dev/null)
echo "cuBLAS in this lease: ${CUBLAS:-none (cuda-gemm.out missing)}"
step gemm-tensor 70 $B/gemm --bench 8192 --only "coopmat-tensor|coopmat-wg bf16 128x256x32 align|coopmat-wg bf16 128x128x32 align" --budget 50 --cublas "$CUBLAS"
cat $W/gemm-tensor.out; tail -5 $W/gemm-tensor.err
step gemm-smem 40 $B/gemm --bench 8192 --only "coopmat-smem bf16" --budget 25 --cublas "$CUBLAS"
cat $W/gemm-smem.out; tail -3 $W/gemm-smem.err
step gemm-where 45 $B/gemm --bench 8192 --only "noglobal" --budget 30 --cublas "$CUBLAS"
cat $W/gemm-where.out; tail -3 $W/gemm-where.err
step gemm-clocks 10 nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
cat $W/gemm-clocks.out
