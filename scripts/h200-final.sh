#!/bin/bash
# The H200 run behind BENCHMARKS.md's "run to quote" (2026-11-30), for the device tool's
# `run` (see DEVELOPERS.md): full bench with the wgpu peer, CUDA references, a second
# rows-1-2 run, then the GPU test binaries (release, stripped) under the carried validation
# layer. Prepare here, in the repo root, in ignored folders carried with the call:
#   .gl/      the loader, libglvnd and vulkan-validationlayers .debs
#   .devbin/  kiln-final-wgpu (`cargo build --release -p kiln-cli --features bench-wgpu`;
#             before the workspace split, `cargo build --release --features bench-wgpu
#             --bin kiln`), corpus/ (a copy of ../shared/corpus) and
#             tests.tar.xz (tests/<name> = stripped `cargo test --workspace --release
#             --no-run` binaries plus tests/kiln-bin, the plain release `kiln` that the cli
#             test binary runs: `kiln bench --quick`, `kiln reflect`)
# Results land in $OUT.
cd "$(dirname "$0")/.."
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /work /work/shared; ln -sfn "$PWD" /work/main; ln -sfn "$PWD/.devbin/corpus" /work/shared/corpus
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
KILN_VALIDATION=0 KILN_CORPUS=$PWD/.devbin/corpus .devbin/kiln-final-wgpu bench --json > $OUT/bench1.json 2> $OUT/bench1.err; echo "bench rc $?"
python3 scripts/cuda_driver.py; python3 scripts/cuda_ref.py | tail -1
KILN_VALIDATION=0 KILN_BENCH_ONLY=dispatch .devbin/kiln-final-wgpu bench > $OUT/bench2.txt 2>&1; echo "bench2 rc $?"
tail -9 $OUT/bench2.txt
tar xJf .devbin/tests.tar.xz -C /tmp; mkdir -p target/release; cp /tmp/tests/kiln-bin target/release/kiln
export KILN_CORPUS=$PWD/.devbin/corpus
for t in /tmp/tests/*; do n=$(basename $t); [ $n = kiln-bin ] && continue; timeout 200 $t -q > $OUT/test-$n.txt 2>&1; echo "$n rc $? $(grep -o 'test result.*passed; [0-9]* failed' $OUT/test-$n.txt | tail -1)"; done
date -u
