#!/bin/bash
# The graphics rows of `kiln bench` (issue 25 point 6) on the H200, for the device tool's
# `run`: `KILN_BENCH_ONLY=draws kiln bench` (draw recording with a set bind and push
# constants per draw against raw ash and wgpu; a GPU-driven frame of 100 000 culled
# instances; an MSAA 4x resolve at 1920x1080; generate_mips of a 2048² RGBA8 image; each
# against raw ash in the same process, results compared once): three runs, each one's
# rows printed, then one `--json` run.
# Prepare here, in the repo root, in ignored folders carried with the call:
#   .devbin/kiln-draws.xz  xz of the stripped `target/release/kiln` from
#                          `cargo build --release -p kiln-cli --features bench-wgpu`
#   .gl/lib*.deb           libglvnd (the NVIDIA ICD needs it, as stacks.sh)
#   .gl/d13/libvulkan1_*.deb  Debian 13's Vulkan loader (the machine has none)
# Results land in $OUT (draws-N.txt: the table and the notes; draws-N.json); about 2
# minutes. Validation off: the machine has no layer (the rows run clean under it on
# lavapipe, docs/benchmarks/).
set -u
cd "$(dirname "$0")/../.."
fail() { echo "gpu-run draws: $*"; exit 1; }
[ -f .devbin/kiln-draws.xz ] || fail "no .devbin/kiln-draws.xz (see the header)"
ls .gl/d13/libvulkan1_*.deb >/dev/null 2>&1 || fail "no .gl/d13/libvulkan1_*.deb"
for f in .gl/lib*.deb; do [ -f "$f" ] && dpkg -x "$f" / >/dev/null 2>&1; done; ldconfig
rm -rf /tmp/loader; dpkg -x .gl/d13/libvulkan1_*.deb /tmp/loader || fail "cannot unpack the loader"
export LD_LIBRARY_PATH=/tmp/loader/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$VK_DRIVER_FILES" ] || echo "gpu-run draws: warning: no $VK_DRIVER_FILES"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
xz -dc .devbin/kiln-draws.xz > /tmp/kiln-draws || fail "cannot unpack the binary"
chmod +x /tmp/kiln-draws
/tmp/kiln-draws devices 2>&1 | head -5
ok=0
for i in 1 2 3; do
  KILN_VALIDATION=0 KILN_BENCH_ONLY=draws timeout 180 /tmp/kiln-draws bench \
    > $OUT/draws-$i.txt 2>&1
  rc=$?
  echo "run $i rc $rc"
  if [ $rc -eq 0 ]; then
    ok=$((ok + 1))
    grep -E "^(row|draw recording|GPU-driven|MSAA|generate_mips)" $OUT/draws-$i.txt
  else
    tail -20 $OUT/draws-$i.txt
  fi
done
# The notes once (counts, image comparisons, which indirect form ran, wgpu's adapter).
grep -E "kiln bench: (draw recording|GPU-driven|MSAA|generate_mips|wgpu)" $OUT/draws-1.txt
KILN_VALIDATION=0 KILN_BENCH_ONLY=draws timeout 180 /tmp/kiln-draws bench --json \
  > $OUT/draws.json 2> $OUT/draws-json.err
echo "json run rc $?"
date -u
[ $ok -eq 3 ] || fail "$((3 - ok)) of 3 runs failed"
