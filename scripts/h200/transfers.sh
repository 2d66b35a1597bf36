# Issue 12's open target (sourced by scripts/h200-batch.sh; uses step, rows, $B, $W).
# Run F (03:2x, BENCHMARKS): every pair of DMA copies up and down at once, over every queue
# family, moves at most ~58 GB/s; CUDA 95-98 from any pinned memory; host threads writing the
# BAR (~28 GB/s alone) beside a DMA readback: 22.7 + 49.2 GB/s at once. So the stream's
# overlapped run splits every chunk's upload: a fraction written by host threads through the
# BAR, the rest by DMA (KILN_STREAM_HOST_WRITES). Sweep the fraction at 1 GiB / 64 chunks and
# 256 MiB / 16 chunks; CUDA's same stream for the lease. About 1.5 minutes.
# Needs .devbin/kiln and .devbin/stream_overlap.
echo "-- transfers: GPU state (PCIe link, clocks, P-state)"
nvidia-smi --query-gpu=pstate,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tail -1
KILN_STREAM_HOST_WRITES=0.2,0.3,0.4,0.5,0.6 step stream-1024 60 $B/stream_overlap 1024 64
echo "-- stream_overlap 1024 MiB / 64 chunks:"; grep -h 'one chunk\|serial\|overlapped with\|best\|FAILED\|no host' $W/stream-1024.out
tail -2 $W/stream-1024.err
KILN_STREAM_HOST_WRITES=0.3,0.4,0.5 step stream-256 40 $B/stream_overlap 256 16
echo "-- stream_overlap 256 MiB / 16 chunks:"; grep -h 'one chunk\|serial\|overlapped with\|best\|FAILED\|no host' $W/stream-256.out
KILN_STREAM_HOST_WRITES=0.3,0.4,0.5 step stream-2048 60 $B/stream_overlap 2048 128
echo "-- stream_overlap 2048 MiB / 128 chunks:"; grep -h 'one chunk\|serial\|overlapped with\|best\|FAILED\|no host' $W/stream-2048.out
KILN_STREAM_HOST_MEMORY=imported KILN_STREAM_HOST_WRITES=0.4,0.5 step stream-1024-imported 60 $B/stream_overlap 1024 64
echo "-- stream_overlap 1024 MiB / 64 chunks, imported host memory:"; grep -h 'one chunk\|serial\|overlapped with\|best\|FAILED\|no host' $W/stream-1024-imported.out
echo "-- transfers: CUDA's same 3-stage stream (PyTorch streams, pinned memory), 256/16 and 1024/64"
step cuda-stream 60 python3 scripts/cuda_stream.py --stream-only 256/16 1024/64; cat $W/cuda-stream.out; tail -3 $W/cuda-stream.err
