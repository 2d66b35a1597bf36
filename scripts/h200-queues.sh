#!/bin/bash
# The H200 run for issue 12 (queues, transfers at bus speed), for the device tool's `run`:
# kiln's queue rows (pinned, imported, Vec; 256 MiB and 1 GiB; the stream overlapped vs
# serial; the staging sweep), the existing transfer rows and the regression rows (round trip,
# recording, SAXPY), the stream_overlap example, the CUDA side (PyTorch cudaMemcpy, pinned and
# pageable), then the multi-queue tests (root test binary, modules queues and transfers) under
# the carried validation layer with submit-time synchronization validation; last, one table.
# Prepare here, in the repo root, in ignored folders carried with the call:
#   .gl/      the loader, libglvnd and vulkan-validationlayers .debs (as scripts/h200-final.sh)
#   .devbin/  kiln-queues      `cargo build --release -p kiln-cli` (target/release/kiln)
#             stream_overlap   `cargo build --release -p kiln-examples --example stream_overlap`
#                              (target/release/examples/stream_overlap)
#             root-queues      `cargo test --release -p kiln-tests --test root --no-run` (the
#                              binary cargo prints, target/release/deps/root-*), stripped
# Results land in $OUT; about 3 minutes.
cd "$(dirname "$0")/.."
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
for g in queues transfers dispatch bandwidth; do
  sweep=0; [ $g = queues ] && sweep=1
  KILN_VALIDATION=0 KILN_BENCH_ONLY=$g KILN_BENCH_SWEEP=$sweep timeout 300 .devbin/kiln-queues bench --json \
    > $OUT/bench-$g.json 2> $OUT/bench-$g.err
  echo "bench $g rc $?"
done
KILN_VALIDATION=0 timeout 120 .devbin/stream_overlap > $OUT/stream_overlap.txt 2>&1
echo "stream_overlap rc $?"; cat $OUT/stream_overlap.txt
timeout 300 python3 scripts/cuda_transfers.py > $OUT/cuda_transfers.json 2> $OUT/cuda.err
echo "cuda rc $?"
VK_LAYER_ENABLES=VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT KILN_VALIDATION=1 \
  timeout 300 .devbin/root-queues queues:: transfers:: > $OUT/test-queues.txt 2>&1
echo "tests rc $? $(grep -o 'test result.*passed; [0-9]* failed' $OUT/test-queues.txt | tail -1)"
grep -E "^test .*(FAILED|ok)$" $OUT/test-queues.txt | grep -c ok | sed 's/^/tests ok: /'
grep -A3 -E "panicked|FAILED" $OUT/test-queues.txt | head -40
python3 scripts/queues_table.py $OUT | tee $OUT/table.txt
date -u
