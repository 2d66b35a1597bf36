#!/bin/bash
# `cargo xtask gpu-run markers`: issue 27's breadcrumbs inside a rendering scope
# (VK_AMD_buffer_marker) on an NVIDIA machine, alone on a fresh machine, then again after
# the hung child of `a_hung_submission_names_its_scope` (whose spin outlives its killed
# process for up to 20 s), with the GPU's use sampled every 5 s and, 25 s into the second
# run, where the test's threads wait (`/proc/<pid>/task/*/wchan`). On the H100
# (580.159.04, 2026-12-05) the marker test printed nothing for 95 s after the hang test.
TOPIC=markers
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
B=/tmp/devbin; mkdir -p $B; xz -dc .devbin/root.xz > $B/root; chmod +x $B/root
X=/tmp/stack-d13; mkdir -p $X; for f in .gl/d13/*.deb; do dpkg -x "$f" $X; done
stack() { env LD_LIBRARY_PATH=$X/usr/lib/x86_64-linux-gnu VK_LAYER_PATH=$X/usr/share/vulkan/explicit_layer.d "$@"; }
smi() { nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader; }
(while :; do echo "smi $(date +%T) $(smi)"; sleep 5; done) > $OUT/smi.log 2>&1 & M=$!
T=post_mortem::a_scope_inside_a_rendering_scope_is_named_with_buffer_markers
run() { stack env KILN_VALIDATION=1 timeout "$@" --nocapture; }
s=$SECONDS; run 40 $B/root --exact $T > $OUT/alone.log 2>&1
echo "== markers alone rc $? ($((SECONDS - s)) s)"; grep -v "^$" $OUT/alone.log | cut -c1-300 | head -16
s=$SECONDS; run 45 $B/root --exact post_mortem::a_hung_submission_names_its_scope > $OUT/hang.log 2>&1
echo "== hang rc $? ($((SECONDS - s)) s)"; grep "^test \|^path\|panicked" $OUT/hang.log | head -4
s=$SECONDS; run 35 $B/root --exact $T > $OUT/after.log 2>&1 & R=$!
sleep 25; for p in $(pgrep -f "root --exact $T"); do
  for t in /proc/$p/task/*; do echo "$p $(cat $t/comm) $(cat $t/wchan)"; done
done | sort | uniq -c | head -12
wait $R; echo "== markers after the hang rc $? ($((SECONDS - s)) s)"; grep -v "^$" $OUT/after.log | cut -c1-300 | head -16
kill $M; cat $OUT/smi.log; date -u
