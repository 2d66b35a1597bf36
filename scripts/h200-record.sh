#!/bin/bash
# The recording rows before and after a change, in one lease (BENCHMARKS.md, "seventh
# session"): `KILN_BENCH_ONLY=dispatch kiln bench` (dispatch recording plain and with
# automatic barriers, descriptor set alloc+write+bind, scoped recording, each against raw
# ash in the same run) for two release `kiln` binaries, alternated three times.
# Prepare here, in ignored .devbin/: kiln-base.xz and kiln-new.xz (stripped, xz'd
# `cargo build --release -p kiln-cli` of the two commits), and .gl (libglvnd .debs; d13/:
# Debian 13's libvulkan1). Results land in $OUT.
cd "$(dirname "$0")/.."
# The NVIDIA driver's ICD needs libglvnd (.gl/libglvnd0 … .debs, as h200-stacks.sh);
# the loader is Debian 13's libvulkan1 from .gl/d13 (the machine has none).
for f in .gl/lib*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done; ldconfig
dpkg -x .gl/d13/libvulkan1_*.deb /tmp/loader
export LD_LIBRARY_PATH=/tmp/loader/usr/lib/x86_64-linux-gnu
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
for b in base new; do xz -dc .devbin/kiln-$b.xz > /tmp/kiln-$b; chmod +x /tmp/kiln-$b; done
for i in 1 2 3; do
  for b in base new; do
    KILN_VALIDATION=0 KILN_BENCH_ONLY=dispatch /tmp/kiln-$b bench > $OUT/$b-$i.txt 2>&1
    echo "$b run $i rc $?"
    grep -E "dispatch recording|descriptor set alloc|scoped dispatch" $OUT/$b-$i.txt
  done
done
date -u
