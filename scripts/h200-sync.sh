#!/bin/bash
# The H200 run for issue 15 (synchronization from reflection), for the device tool's `run`:
# kiln's chain rows (1000 dependent 1-thread dispatches recorded once; 100 dependent y += x
# over 2^20 f32; kiln with automatic barriers vs raw ash with the same barriers) with the
# barrier-flavour notes (GPU timestamps of 100 dependent 2^20-element dispatches with no
# barrier, one global memory barrier, one buffer memory barrier between them, at workgroup
# sizes 64, 256 and 1024), the dispatch rows (recording with manual and with automatic
# barriers, round trip), the CUDA side of the same chains (CUDA Graph and eager, PyTorch),
# then the tests of the automatic barriers (root test binary: recording, dispatch,
# device_address, push_descriptors, queues) under the carried validation layer with
# submit-time synchronization validation; last, one summary.
# Prepare here, in the repo root, in ignored folders carried with the call:
#   .gl/      the loader, libglvnd and vulkan-validationlayers .debs (as scripts/h200-final.sh)
#   .devbin/  kiln-sync   `cargo build --release -p kiln-cli` (target/release/kiln), stripped
#             root-sync   `cargo test --release -p kiln-tests --test root --no-run` (the
#                         binary cargo prints, target/release/deps/root-*), stripped
# Results land in $OUT; about 3 minutes.
cd "$(dirname "$0")/.."
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; date -u
for g in chain dispatch; do
  KILN_VALIDATION=0 KILN_BENCH_ONLY=$g timeout 240 .devbin/kiln-sync bench --json \
    > $OUT/bench-$g.json 2> $OUT/bench-$g.err
  echo "bench $g rc $?"
done
timeout 200 python3 scripts/cuda_chain.py > $OUT/cuda_chain.json 2> $OUT/cuda.err
echo "cuda rc $?"
VK_LAYER_ENABLES=VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT KILN_VALIDATION=1 \
  timeout 300 .devbin/root-sync recording:: dispatch:: device_address:: push_descriptors:: queues:: \
  > $OUT/test-sync.txt 2>&1
echo "tests rc $? $(grep -o 'test result.*passed; [0-9]* failed' $OUT/test-sync.txt | tail -1)"
grep -A3 -E "panicked|FAILED" $OUT/test-sync.txt | head -40
python3 - "$OUT" <<'PY' | tee $OUT/table.txt
import json, sys, os
out = sys.argv[1]
for g in ("chain", "dispatch"):
    try:
        doc = json.load(open(os.path.join(out, f"bench-{g}.json")))
    except Exception as e:
        print(f"bench {g}: no JSON ({e})"); continue
    print(f"== {g}: {doc['device']} / {doc['driver']}")
    for r in doc["rows"]:
        print(f"{r['name']:<62} kiln {r['kiln']:10.3f} {r['unit']:<3} raw {r['raw']:10.3f}  kiln/raw {r['ratio']:.2f}")
    for n in doc["notes"]:
        print("  note:", n)
try:
    for line in open(os.path.join(out, "cuda_chain.json")):
        c = json.loads(line)
        print(f"{c['name']:<62} wall {c['us_per_kernel_wall']:.3f} µs  GPU {c['us_per_kernel_gpu']:.3f} µs per kernel")
except Exception as e:
    print(f"cuda: {e}")
PY
date -u
