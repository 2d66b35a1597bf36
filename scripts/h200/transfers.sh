# Issue 12's two open targets (sourced by scripts/h200-batch.sh; uses step, rows, $B, $W).
# (a) 1 GiB pinned upload >= 50 GB/s: one DMA copy runs at ~38 or ~49 GB/s from one
#     measurement to the next (runs A/B); kiln now splits copies of >= 64 MiB over two queues
#     (TransferSplit). The hostmem sweep's split group measures one copy vs 2, 3, 4 parts,
#     kiln interleaved with raw ash doing the same split, 9 rounds each, every round printed;
#     twice, in two processes (the rate's mode may be fixed per process).
#     The core step bench-queues has the pinned rows with kiln's default policy.
# (b) stream >= 1.7x: the stream example at 256 MiB / 16 chunks, 1 GiB / 64 chunks and
#     2 GiB / 128 chunks (16 MiB chunks all: the ramp's share shrinks), once with chunks split over queues too
#     (KILN_TRANSFER_SPLIT=2:8: 16 MiB chunks in halves); CUDA's same stream, same configs.
#     The core step bench-queues has the bench's stream rows for both configurations.
# About 2.5 minutes in all. Needs .devbin/kiln and .devbin/stream_overlap.
echo "-- transfers: GPU state (PCIe link, clocks, P-state)"
nvidia-smi --query-gpu=pstate,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,clocks.sm,clocks.mem --format=csv 2>&1 | tail -2
for p in a b; do
  KILN_BENCH_ONLY=hostmem KILN_BENCH_HOSTMEM_GROUPS=split KILN_BENCH_HOSTMEM_MIB=256,1024 \
    step split-$p 45 $B/kiln bench --json
  echo "-- transfers: split copies, process $p (kiln vs raw, GB/s median (min..max) | every round)"
  grep -h "hostmem:.*split\|error\|Error" $W/split-$p.err | sed 's/^kiln bench: hostmem: //' | cut -c1-420 | head -24
done

for cfg in 1024/64 2048/128 256/16; do
  m=${cfg%/*}; c=${cfg#*/}
  step stream-$m 60 $B/stream_overlap $m $c
  echo "-- stream_overlap $m MiB / $c chunks: $(grep -h 'one chunk\|serial\|FAILED' $W/stream-$m.out | tr '\n' ' ')"
  tail -2 $W/stream-$m.err
done
KILN_TRANSFER_SPLIT=2:8 step stream-1024-split 60 $B/stream_overlap 1024 64
echo "-- stream_overlap 1024 MiB / 64 chunks, chunks split in halves over queues (KILN_TRANSFER_SPLIT=2:8): $(grep -h 'serial\|FAILED' $W/stream-1024-split.out | tr '\n' ' ')"
tail -2 $W/stream-1024-split.err

echo "-- transfers: CUDA's same 3-stage stream (PyTorch streams, pinned memory), same configurations"
step cuda-stream 120 python3 scripts/cuda_stream.py --stream-only 256/16 1024/64 2048/128; cat $W/cuda-stream.out; tail -3 $W/cuda-stream.err
