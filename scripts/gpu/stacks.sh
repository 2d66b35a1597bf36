#!/bin/bash
# The GPU tests (`root`) on the H200 under two validation stacks, each loader with its own
# layer (issue 24): Debian 12's (loader and layer 1.3.239) and Debian 13's (1.4.309). For
# the device tool's `run`, carrying `.gl` (the stacks' .debs in .gl/d12 and .gl/d13, from
# `apt-get download libvulkan1 vulkan-validationlayers` on each release; glvnd's in .gl) and `.devbin`
# (`root.xz`: `cargo test --release -p kiln-tests --test root --no-run`, stripped, xz).
# STACKS="d12 d13" by default; logs go to $OUT/root-<stack>.log.
cd "$(dirname "$0")/../.."
# The NVIDIA ICD (libGLX_nvidia) needs glvnd: .gl/*.deb (libglvnd0, libgl1, libglx0, …).
# The hot-reload tests run glslc at run time and the device machine has none: Debian 12's
# `glslc` and `libshaderc1` .debs go in .gl too (`apt-get download glslc libshaderc1`); so does
# `spirv-headers` (the grammar `capabilities::capability_table_covers_the_installed_spirv_grammar`
# checks kiln's capability table against; without it that test prints a SKIP line).
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
# Tests that read repo files at run time find them where they were built.
mkdir -p /work; [ -e /work/main ] || ln -sfn "$PWD" /work/main
B=/tmp/devbin; mkdir -p $B; xz -dc .devbin/root.xz > $B/root; chmod +x $B/root
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
command -v glslc >/dev/null && glslc --version | head -1 || echo "no glslc: hot_reload tests will fail (E013)"
FILL=errors::allocate_until_the_heap_is_full_then_free_and_continue
# The real GPU faults (a write through an unmapped address, a shader that spins) run once,
# alone, after everything else: on the H200 (580.159.04, 2026-12-05) the draws and
# dispatches of every later process, under either layer, timed out after them, on the same
# machine for minutes (a fresh machine's first run passed the same draw tests).
FAULTS=post_mortem::
MARKERS=post_mortem::a_scope_inside_a_rendering_scope_is_named_with_buffer_markers
# GPU-AV's out-of-bounds writes run after both stacks' suites, before the faults: a write the
# layer lets through is a real one (on the H200, 2026-12-05, 1.4.309 reported nothing of a write 64 MiB past a buffer; the
# tests now write just past their buffers, inside mapped memory, but a miss stays a miss).
GPUAV=gpu_av::
for s in ${STACKS:-d12 d13}; do
  X=/tmp/stack-$s; mkdir -p $X
  for f in .gl/$s/*.deb; do dpkg -x "$f" $X; done
  stack() {
    env LD_LIBRARY_PATH=$X/usr/lib/x86_64-linux-gnu \
      VK_LAYER_PATH=$X/usr/share/vulkan/explicit_layer.d "$@"
  }
  # As `cargo xtask test` runs them: VK_LAYER_ENABLES only for the layer without
  # VK_EXT_layer_settings (.cargo/config.toml says why).
  extra=()
  [ $s = d12 ] && extra=(VK_LAYER_ENABLES=VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT)
  L=$OUT/root-$s.log
  echo "== $s: $(ls .gl/$s)"
  stack env "${extra[@]}" KILN_VALIDATION=1 KILN_REQUIRE_BIG=1 \
    KILN_FUZZ_PROGRAMS=${KILN_FUZZ_PROGRAMS:-3000} timeout ${CAP:-250} $B/root -q --skip $FILL --skip $FAULTS --skip $GPUAV > $L 2>&1
  echo "root rc $?"
  # It fills the GPU's heap: alone, after the others.
  stack env KILN_VALIDATION=1 timeout 60 $B/root -q --exact $FILL >> $L 2>&1
  grep -o 'test result.*' $L
  awk '/^failures:$/ {state++; if (state == 2) exit; next}
       state == 1 && /^---- .* stdout ----$/ {print "FAIL " $2; n = 0; next}
       state == 1 && n < 3 && NF {print "  " substr($0, 1, 300); n++}' $L | head -40
done
for s in ${STACKS:-d12 d13}; do
  X=/tmp/stack-$s; extra=()
  [ $s = d12 ] && extra=(VK_LAYER_ENABLES=VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT)
  stack env "${extra[@]}" KILN_VALIDATION=1 timeout 60 $B/root $GPUAV --test-threads=1 --nocapture > $OUT/gpuav-$s.log 2>&1
  echo "gpu_av $s rc $?: $(grep -o 'test result.*' $OUT/gpuav-$s.log)"
  grep -h "^gpu_av:\|panicked" $OUT/gpuav-$s.log | cut -c1-300 | head -4
done
# Last: the post-mortems of a real page fault and hang, under the last stack's layer
# (FAULTS_RUN=0 leaves them out, for a lease that runs more topics on the same machine after this).
if [ "${FAULTS_RUN:-1}" = 1 ]; then
  # The in-scope breadcrumbs first: on NVIDIA (580.159.04, H100, 2026-12-05) a killed
  # process's spin (the hang test's child) keeps the GPU for 30 s and more, and another
  # process's draws wait for it.
  L=$OUT/root-faults.log
  stack env KILN_VALIDATION=1 KILN_REQUIRE_BUFFER_MARKER=1 timeout 60 $B/root --exact $MARKERS > $L 2>&1
  echo "post_mortem markers rc $?"
  stack env KILN_VALIDATION=1 timeout 120 $B/root $FAULTS --skip $MARKERS --test-threads=1 >> $L 2>&1
  echo "post_mortem rc $?"; grep -o 'test result.*' $L
  grep -h "^path\|panicked\|KILN-E10[58]" $L | cut -c1-400 | head -20
fi
date -u
