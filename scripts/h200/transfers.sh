# Issue 12's two open targets (sourced by scripts/h200-batch.sh; uses step, rows, $B, $W).
# Run E (short: the core steps already have bench-queues with the pinned rows, now after a
# 500 ms warm-up, and the stream rows at 256/16 and 1024/64).
# (a) 1 GiB pinned upload >= 50 GB/s: kiln splits host-buffer copies of >= 64 MiB over up to
#     3 idle queues (TransferSplit). Runs D/D2: 1 part 49.3, 2 parts 50.2, 3 parts 51.0 at
#     1 GiB once warm; the copy rate ramps up over the first ~300 ms of traffic (D2: first
#     three 1 GiB rounds 37.6-43.5 for kiln and raw alike). The split group once more at
#     1 GiB, after its own 500 ms warm-up.
# (b) stream >= 1.7x: D2 gave 1.68x at 1024/64 (CUDA's same stream 1.68x in that lease), the
#     Vulkan duplex rate (~58 GB/s) the bound. The example at 1024/64 once more; CUDA's same.
# About 1 minute in all. Needs .devbin/kiln and .devbin/stream_overlap.
echo "-- transfers: GPU state (PCIe link, clocks, P-state)"
nvidia-smi --query-gpu=pstate,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,clocks.sm,clocks.mem --format=csv 2>&1 | tail -2
KILN_BENCH_ONLY=hostmem KILN_BENCH_HOSTMEM_GROUPS=split KILN_BENCH_HOSTMEM_MIB=1024 \
  step split-e 30 $B/kiln bench --json
echo "-- transfers: split copies at 1 GiB (kiln vs raw, GB/s median (min..max) | every round)"
grep -h "hostmem:.*split\|error\|Error" $W/split-e.err | sed 's/^kiln bench: hostmem: //' | cut -c1-420 | head -12
nvidia-smi --query-gpu=pstate,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tail -1

step stream-1024 40 $B/stream_overlap 1024 64
echo "-- stream_overlap 1024 MiB / 64 chunks: $(grep -h 'one chunk\|serial\|FAILED' $W/stream-1024.out | tr '\n' ' ')"
tail -2 $W/stream-1024.err

echo "-- transfers: CUDA's same 3-stage stream (PyTorch streams, pinned memory), 256/16 and 1024/64"
step cuda-stream 60 python3 scripts/cuda_stream.py --stream-only 256/16 1024/64; cat $W/cuda-stream.out; tail -3 $W/cuda-stream.err
