# Issue 12's open target (sourced by scripts/h200-batch.sh; uses step, rows, $B, $W).
# Run F2 (BENCHMARKS): every pair of DMA copies up and down at once moves at most ~58 GB/s
# (every queue family); CUDA 95-98 from any pinned memory; host threads writing the BAR beside
# a DMA readback: 22.7 + 49.2 GB/s at once. Run F3: the stream with part of every chunk
# written by the host through the BAR got 1.60x at 0.2 (one host thread: below 4 MiB) but
# 0.79x from 0.3 up (8 threads) against 1.69x all-DMA. Now: host threads (KILN_TRANSFER_THREADS
# 1, 4, 8) x ring (3, 6 chunks in flight), the host-write time printed. ~2 minutes.
# Needs .devbin/stream_overlap.
echo "-- transfers: GPU state (PCIe link, clocks, P-state)"
nvidia-smi --query-gpu=pstate,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tail -1
for ring in 3 6; do for th in 1 4 8; do
  KILN_STREAM_RING=$ring KILN_TRANSFER_THREADS=$th KILN_STREAM_HOST_WRITES=0.15,0.3,0.45,0.6 \
    step stream-r$ring-t$th 40 $B/stream_overlap 1024 64
  echo "-- stream_overlap 1024/64, ring $ring, $th host threads:"
  grep -h 'one chunk\|serial\|overlapped with\|FAILED\|no host' $W/stream-r$ring-t$th.out | cut -c1-200
  tail -1 $W/stream-r$ring-t$th.err
done; done
KILN_TRACE=$W/stream-trace.json KILN_STREAM_RING=3 KILN_STREAM_HOST_WRITES=0.3 step stream-trace 40 $B/stream_overlap 256 16
grep -h 'serial\|overlapped with' $W/stream-trace.out; ls -la $W/stream-trace.json 2>&1 | tail -1
