#!/bin/bash
# The H200 run for issue 12 (queues, transfers at bus speed), for the device tool's `run`:
# kiln's queue rows (pinned, imported, Vec; 256 MiB and 1 GiB; the stream overlapped vs
# serial), the existing transfer rows and the regression rows (round trip, recording,
# SAXPY), the stream_overlap example, the CUDA side (PyTorch cudaMemcpy, pinned and
# pageable), then the multi-queue tests (root test binary, modules queues and transfers) under
# the carried validation layer with submit-time synchronization validation; last, one table.
#
# Writes ONE file to $OUT, h200-queues.tar.gz (every log and JSON; a folder of many files
# does not come back whole), and prints what the output tail needs: the rc of each step, the
# failing tests with the first lines of each failure, and the table. About 60-90 s;
# SWEEP=1 adds the staging sweep (chunk sizes x threads x BAR, about 2 more minutes).
#
# Prepare here, in the repo root, in ignored folders carried with the call:
#   .gl/      the loader, libglvnd and vulkan-validationlayers .debs (as scripts/h200-final.sh)
#   .devbin/  kiln-queues      `cargo build --release -p kiln-cli` (target/release/kiln)
#             stream_overlap   `cargo build --release -p kiln-examples --example stream_overlap`
#                              (target/release/examples/stream_overlap)
#             root-queues      `cargo test --release -p kiln-tests --test root --no-run` (the
#                              binary cargo prints, target/release/deps/root-*), stripped
cd "$(dirname "$0")/.."
W=$(mktemp -d)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
for g in queues transfers dispatch bandwidth; do
  sweep=0; [ $g = queues ] && sweep=${SWEEP:-0}
  KILN_VALIDATION=0 KILN_BENCH_ONLY=$g KILN_BENCH_SWEEP=$sweep timeout 240 .devbin/kiln-queues bench --json \
    > $W/bench-$g.json 2> $W/bench-$g.err
  echo "bench $g rc $? ($(grep -o 'done in [0-9.]* s' $W/bench-$g.err | tail -1))"
done
KILN_VALIDATION=0 timeout 60 .devbin/stream_overlap > $W/stream_overlap.txt 2>&1
echo "stream_overlap rc $?"; tail -4 $W/stream_overlap.txt
timeout 120 python3 scripts/cuda_transfers.py > $W/cuda_transfers.json 2> $W/cuda.err
echo "cuda rc $?"
VK_LAYER_ENABLES=VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT KILN_VALIDATION=1 \
  timeout 180 .devbin/root-queues queues:: transfers:: --show-output > $W/test-queues.txt 2>&1
echo "tests rc $? $(grep -o 'test result.*passed; [0-9]* failed' $W/test-queues.txt | tail -1)"
grep -c "set aside" $W/test-queues.txt | sed 's/^/known layer false positives set aside (tests): /'
# Each failure: its name and the first lines of its panic (the validation messages cut to
# 600 characters each).
awk '/^failures:$/ {state++; if (state == 2) exit; next}
     state == 1 && /^---- .* stdout ----$/ {print "FAIL " $2; n = 0; next}
     state == 1 && n < 6 && NF {print "  " substr($0, 1, 600); n++}' $W/test-queues.txt | head -80
python3 scripts/queues_table.py $W | tee $W/table.txt
date -u
tar -czf $OUT/h200-queues.tar.gz -C $W . && echo "wrote $OUT/h200-queues.tar.gz ($(du -k $OUT/h200-queues.tar.gz | cut -f1) KiB)"
