#!/bin/bash
# `cargo xtask gpu-run transfers`: alone, or after suite.sh in the same lease (it reads suite's logs
# where they exist). Helpers and binaries: lib.sh.
TOPIC=transfers
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export KILN_VALIDATION=0
# Issue 12's open target.
# Runs F-F3 (docs/benchmarks/log/): DMA up+down at once <= ~58 GB/s over every queue family; host writes
# through the BAR beside the stream's DMA crawl at 5-10 GB/s. The all-DMA stream: 1.66-1.69x
# at 1024/64 (overlapped ~38.5 ms: 37.0 the duplex bound + the fill and drain of ~1 ms). Fewer
# bytes per chunk shrink the fill and drain: 1 GiB in 64, 128, 256 chunks; 2 GiB in 256; and
# CUDA's stream for the same. ~1.5 minutes. Needs .devbin/stream_overlap.
echo "-- transfers: GPU state (PCIe link, clocks, P-state)"
nvidia-smi --query-gpu=pstate,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tail -1
for cfg in 1024/64 1024/128 1024/256 2048/256 1024/64; do
  n=stream-${cfg/\//-}
  step $n 40 $B/stream_overlap ${cfg%/*} ${cfg#*/}
  echo "-- stream_overlap $cfg: $(grep -h 'one chunk\|serial\|FAILED' $W/$n.out | tr '\n' ' ')"
  tail -1 $W/$n.err
done
step cuda-stream 60 python3 scripts/cuda_stream.py --stream-only 1024/64 1024/128 1024/256; cat $W/cuda-stream.out | grep -v calibration; tail -3 $W/cuda-stream.err
date -u
