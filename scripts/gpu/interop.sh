#!/bin/bash
# `cargo xtask gpu-run interop`: issue 28 on an NVIDIA machine (the H200), beside CUDA.
# Helpers and binaries: lib.sh. Under ten minutes.
#  1. the interop tests of the release `root` binary with CUDA required (KILN_REQUIRE_CUDA=1:
#     tests/root/interop/cuda.rs takes its real path or fails), images and buffers by fd,
#     background pipelines, copies between devices (KILN_REQUIRE_GPUS=2 where the machine
#     has two GPUs: nvidia-smi counts them);
#  2. the hand-off row (`kiln bench`, group handoff: Vulkan signal -> CUDA wait -> CUDA
#     signal -> Vulkan wait against a CUDA-only event round trip) and the pipeline rows
#     (24 specializations one after another and in parallel), three runs each;
#  3. scripts/torch_interop.py: PyTorch imports kiln's buffer and timeline semaphore.
TOPIC=interop
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$GPUS" -ge 2 ] && export KILN_REQUIRE_GPUS=2
KILN_REQUIRE_CUDA=1 step interop-tests 300 $B/root --test-threads=4 --nocapture interop::
grep -h "^test \|path\|PATH\|test result" $W/interop-tests.out | head -60
for i in 1 2 3; do
  KILN_VALIDATION=0 KILN_BENCH_ONLY=handoff step bench-handoff-$i 60 $B/kiln bench
  grep -h "hand-off\|not measured" $W/bench-handoff-$i.out $W/bench-handoff-$i.err
  KILN_VALIDATION=0 KILN_BENCH_ONLY=pipelines step bench-pipelines-$i 120 $B/kiln bench
  grep -h "pipeline" $W/bench-pipelines-$i.out
done
KILN_VALIDATION=0 KILN_BENCH_ONLY=handoff step bench-handoff-json 60 $B/kiln bench --json
cp $W/bench-handoff-json.out $OUT/handoff.json 2>/dev/null
step torch-interop 120 python3 scripts/torch_interop.py --helper $B/torch_interop_helper
cat $W/torch-interop.out; tail -5 $W/torch-interop.err
date -u
