# Issue 12's two open targets (sourced by scripts/h200-batch.sh; uses step, rows, $B, $W).
# (a) 1 GiB pinned upload >= 50 GB/s. kiln splits host-buffer copies of >= 64 MiB over up to
#     3 idle queues (TransferSplit; run D: 1 part 49.3, 2 parts 50.2, 3 parts 51.0 at 1 GiB,
#     yet the bench row "upload 1 GiB from pinned memory" gave 48.4). Here: the split group
#     again (kiln vs raw doing the same split, 9 rounds, every round printed), then the
#     queues group's transfer rows (with every round and the queues of each copy printed).
# (b) stream >= 1.7x: run D found the 1 GiB / 64-chunk stream bound by Vulkan's duplex DMA
#     rate (~55-61 GB/s up + down; CUDA 87). Here: the duplex shapes at 256 MiB, including
#     an upload by the copy shader (SMs reading host memory) beside a DMA readback; the
#     stream example at 1 GiB / 64 and 2 GiB / 128 chunks, and at 1 GiB from imported host
#     memory (KILN_STREAM_HOST_MEMORY=imported: duplex 61 vs 57 GB/s in run A) and with its
#     uploads by kiln's copy shader (KILN_UPLOAD_QUEUE=compute-shader); CUDA's same
#     stream at 256/16, 1024/64, 2048/128.
# About 3 minutes in all. Needs .devbin/kiln and .devbin/stream_overlap.
echo "-- transfers: GPU state (PCIe link, clocks, P-state)"
nvidia-smi --query-gpu=pstate,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,clocks.sm,clocks.mem --format=csv 2>&1 | tail -2
KILN_BENCH_ONLY=hostmem KILN_BENCH_HOSTMEM_GROUPS=split KILN_BENCH_HOSTMEM_MIB=256,1024 \
  step split-a 45 $B/kiln bench --json
echo "-- transfers: split copies (kiln vs raw, GB/s median (min..max) | every round)"
grep -h "hostmem:.*split\|error\|Error" $W/split-a.err | sed 's/^kiln bench: hostmem: //' | cut -c1-420 | head -24

KILN_BENCH_ONLY=queues KILN_BENCH_STREAM=1024/64 step queues-rows 75 $B/kiln bench --json
echo "-- transfers: queues group rows (kiln, raw), pinned rows' rounds and queues"
rows $W/queues-rows.out
grep -h "pinned\|error\|Error" $W/queues-rows.err | sed 's/^kiln bench: //' | cut -c1-500 | head -8

KILN_BENCH_ONLY=hostmem KILN_BENCH_HOSTMEM_GROUPS=memory,shapes KILN_BENCH_HOSTMEM_MIB=256 \
  step duplex 60 $B/kiln bench --json
echo "-- transfers: duplex shapes at 256 MiB (aggregate GB/s)"
grep -h "duplex\|shader\|halves\|error\|Error" $W/duplex.err | sed 's/^kiln bench: hostmem: //' | cut -c1-220 | head -40

for cfg in 1024/64 2048/128; do
  m=${cfg%/*}; c=${cfg#*/}
  step stream-$m 60 $B/stream_overlap $m $c
  echo "-- stream_overlap $m MiB / $c chunks: $(grep -h 'one chunk\|serial\|FAILED' $W/stream-$m.out | tr '\n' ' ')"
  tail -2 $W/stream-$m.err
done
# Uploads by kiln's copy shader on the main queue (UploadQueue::ComputeShader; the stream's
# dispatches stay on the async-compute queue, readbacks on transfer queue 1).
KILN_UPLOAD_QUEUE=compute-shader step stream-1024-shader-up 60 $B/stream_overlap 1024 64
echo "-- stream_overlap 1024 MiB / 64 chunks, uploads by the copy shader (KILN_UPLOAD_QUEUE=compute-shader): $(grep -h 'overlapped stages\|serial\|FAILED' $W/stream-1024-shader-up.out | tr '\n' ' ')"
tail -2 $W/stream-1024-shader-up.err
KILN_STREAM_HOST_MEMORY=imported step stream-1024-imported 60 $B/stream_overlap 1024 64
echo "-- stream_overlap 1024 MiB / 64 chunks, imported host memory: $(grep -h 'host buffers\|serial\|FAILED' $W/stream-1024-imported.out | tr '\n' ' ')"
tail -2 $W/stream-1024-imported.err

echo "-- transfers: CUDA's same 3-stage stream (PyTorch streams, pinned memory), same configurations"
step cuda-stream 120 python3 scripts/cuda_stream.py --stream-only 256/16 1024/64 2048/128; cat $W/cuda-stream.out; tail -3 $W/cuda-stream.err
