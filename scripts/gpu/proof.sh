#!/bin/bash
# `cargo xtask gpu-run proof`: what issues 26, 27 and 28 still need from the H200 after
# `stacks` (the GPU tests), in one call of under ten minutes: issue 26's dispatch rows
# (automatic and scoped recording, descriptor alloc+write+bind, SAXPY against raw ash),
# issue 28's hand-off and pipeline rows and the PyTorch script beside CUDA, issue 27's
# RenderDoc captures (`capture.sh`'s packages), the hang and the in-scope breadcrumbs, then
# the real page fault alone, last (PAGE_FAULT=0 leaves it out): after a page fault the H200
# and H100 (580.159.04) stalled every later process's GPU work for minutes. JSON rows in
# $OUT/<group>.json, logs in $OUT (lib.sh: the ICD, glvnd, OUT).
TOPIC=proof
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# The binaries come xz-compressed (a call carries at most 64 MiB).
B=/tmp/devbin; mkdir -p $B
for b in root kiln torch_interop_helper; do xz -dc .devbin/$b.xz > $B/$b; chmod +x $B/$b; done
X=/tmp/stack-d13; mkdir -p $X; for f in .gl/d13/*.deb; do dpkg -x "$f" $X; done
stack() { env LD_LIBRARY_PATH=$X/usr/lib/x86_64-linux-gnu VK_LAYER_PATH=$X/usr/share/vulkan/explicit_layer.d "$@"; }
for g in dispatch handoff pipelines; do
  s=$SECONDS
  stack env KILN_VALIDATION=0 KILN_BENCH_ONLY=$g timeout 150 $B/kiln bench --json > $OUT/$g.json 2> $OUT/$g.err
  echo "== $g rc $? ($((SECONDS - s)) s)"; rows $OUT/$g.json; grep -h "not measured\|rror" $OUT/$g.err | head -5
done
s=$SECONDS
stack timeout 120 python3 scripts/torch_interop.py --helper $B/torch_interop_helper > $OUT/torch.txt 2>&1
echo "== torch rc $? ($((SECONDS - s)) s)"; tail -6 $OUT/torch.txt
renderdoc_from_debs
s=$SECONDS
stack env KILN_REQUIRE_RENDERDOC=1 KILN_RENDERDOC_PYTHON=/usr/bin/python3.11 KILN_VALIDATION=1 \
  timeout 150 $B/root --test-threads=1 --nocapture capture:: > $OUT/capture.log 2>&1
echo "== capture rc $? ($((SECONDS - s)) s)"
grep -h "^test \|^path\|panicked\|KILN-W0\|test result" $OUT/capture.log | cut -c1-300 | head -40
# The hang and the breadcrumbs inside a rendering scope (the AMD marker writer) first; the
# real page fault alone, last (PAGE_FAULT=0 leaves it out): on the H100 and H200
# (580.159.04, 2026-12-05) the fault never lost the device and later GPU work stalled.
# The markers before the hang: a killed process's spin keeps the H100 for 30 s and more,
# and another process's draws wait for it (stacks.sh).
s=$SECONDS
stack env KILN_VALIDATION=1 KILN_REQUIRE_BUFFER_MARKER=1 timeout 60 $B/root --exact \
  post_mortem::a_scope_inside_a_rendering_scope_is_named_with_buffer_markers --nocapture > $OUT/hang.log 2>&1
stack env KILN_VALIDATION=1 timeout 60 $B/root post_mortem::a_hung --nocapture >> $OUT/hang.log 2>&1
echo "== markers, then the hang: rc $? ($((SECONDS - s)) s)"
grep -h "^test \|^path\|^spin\|panicked\|POSTMORTEM\|KILN-E10[58]\|test result" $OUT/hang.log | cut -c1-400 | head -30
if [ "${PAGE_FAULT:-1}" = 1 ]; then
  s=$SECONDS
  stack env KILN_VALIDATION=1 KILN_REQUIRE_DEVICE_FAULT=1 timeout 100 $B/root post_mortem::a_page_fault \
    --test-threads=1 --nocapture > $OUT/faults.log 2>&1
  echo "== page fault rc $? ($((SECONDS - s)) s)"
  grep -h "^test \|^path\|panicked\|POSTMORTEM\|KILN-E10[58]\|test result" $OUT/faults.log | cut -c1-400 | head -30
fi
(dmesg 2>&1 | grep -i "xid\|nvrm" | tail -8) || true
date -u
