# Issue 12's open target (sourced by scripts/h200-batch.sh; uses step, rows, $B, $W).
# Run F: the stream is bound at ~1.68x by the duplex rate of the queues kiln uses (an upload
# and a readback at once move ~58 GB/s where CUDA moves ~100). Which queues of which
# families copy at the same time, over every family that can copy (the video-decode family
# too)? And does CUDA's duplex rate depend on how its host memory is pinned (cudaHostAlloc,
# 4 KiB pages registered, transparent huge pages registered)?
# About 1.5 minutes in all. Needs .devbin/kiln and .devbin/stream_overlap.
echo "-- transfers: GPU state (PCIe link, clocks, P-state) and topology"
nvidia-smi --query-gpu=pstate,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,clocks.sm,clocks.mem --format=csv 2>&1 | tail -2
nvidia-smi topo -m 2>&1 | head -8
KILN_BENCH_ONLY=hostmem KILN_BENCH_HOSTMEM_GROUPS=bar KILN_BENCH_HOSTMEM_MIB=256 \
  step bar 60 $B/kiln bench --json
echo "-- transfers: uploads by host threads through the BAR, alone and beside DMA copies"
grep -h "hostmem bar\|error\|Error" $W/bar.err | sed 's/^kiln bench: hostmem bar //' | cut -c1-260 | head -20
KILN_BENCH_ONLY=hostmem KILN_BENCH_HOSTMEM_GROUPS=families KILN_BENCH_HOSTMEM_MIB=256 \
  step families 120 $B/kiln bench --json
echo "-- transfers: copies on every queue family (GB/s median (min..max))"
grep -h "families\|error\|Error" $W/families.err | sed 's/^kiln bench: hostmem families //' | cut -c1-200 | head -140
step cuda-duplex-memory 60 python3 scripts/cuda_duplex_memory.py 256
echo "-- transfers: CUDA duplex by host-memory kind"; cat $W/cuda-duplex-memory.out; tail -3 $W/cuda-duplex-memory.err
step stream-1024 40 $B/stream_overlap 1024 64
echo "-- stream_overlap 1024 MiB / 64 chunks: $(grep -h 'one chunk\|serial\|FAILED' $W/stream-1024.out | tr '\n' ' ')"
tail -2 $W/stream-1024.err
