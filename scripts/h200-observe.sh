#!/bin/bash
# The H200 run for issue 13 (see what the GPU did), for the device tool's `run`, under a
# minute: the trace example (GPU timing scopes of vector_add 1x and 10x over 16 Mi floats,
# calibrated against the CPU clock, and a Chrome-trace JSON of it), then the bench's scope
# rows (scoped dispatch recording, timed round trip, beside the untimed dispatch rows), then
# the observe tests (root test binary, module observe) under the carried validation layer.
# Prepare here, in the repo root, in ignored folders carried with the call:
#   .gl/      the loader, libglvnd and vulkan-validationlayers .debs (as scripts/h200-final.sh)
#   .devbin/  trace          `cargo build --release -p kiln-examples --example trace`
#                            (target/release/examples/trace), stripped
#             kiln-observe   `cargo build --release -p kiln-cli` (target/release/kiln), stripped
#             root-observe   `cargo test --release -p kiln-tests --test root --no-run` (the
#                            binary cargo prints, target/release/deps/root-*), stripped
# Results land in $OUT: trace.txt, trace.json, bench-dispatch.json/.err, test-observe.txt.
cd "$(dirname "$0")/.."
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
KILN_VALIDATION=0 timeout 60 .devbin/trace $OUT/trace.json $((1 << 24)) > $OUT/trace.txt 2>&1
echo "trace rc $?"; cat $OUT/trace.txt
python3 -c "import json,sys; t=json.load(open(sys.argv[1])); e=t['traceEvents']; \
print('trace events', len(e), 'gpu', sum(1 for x in e if x.get('cat')=='gpu'), \
'min dur us', min(x['dur'] for x in e if x.get('ph')=='X'))" $OUT/trace.json
KILN_VALIDATION=0 KILN_BENCH_ONLY=dispatch timeout 120 .devbin/kiln-observe bench --quick --json \
  > $OUT/bench-dispatch.json 2> $OUT/bench-dispatch.err
echo "bench dispatch rc $?"
python3 -c "import json,sys; [print(r['name'], r['kiln'], r['raw'], r['unit']) for r in json.load(open(sys.argv[1]))['rows']]" \
  $OUT/bench-dispatch.json 2>/dev/null || tail -5 $OUT/bench-dispatch.json
VK_LAYER_ENABLES=VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT KILN_VALIDATION=1 \
  timeout 120 .devbin/root-observe observe:: > $OUT/test-observe.txt 2>&1
echo "tests rc $? $(grep -o 'test result.*passed; [0-9]* failed' $OUT/test-observe.txt | tail -1)"
grep -A3 -E "panicked|FAILED" $OUT/test-observe.txt | head -40
date -u
