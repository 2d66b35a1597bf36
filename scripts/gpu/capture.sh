#!/bin/bash
# `cargo xtask gpu-run capture`: issue 27's RenderDoc captures on an NVIDIA machine (the
# H200), where RenderDoc passes Vulkan 1.3 through (on lavapipe Debian 12's RenderDoc 1.24
# hides synchronization2 and kiln falls back uncaptured, KILN-W018).
# The device machine (Ubuntu 24.04) has no RenderDoc package and its Python is 3.12, while
# Debian's `python3-renderdoc` is built for 3.11: Debian 12's .debs go in .gl/rdoc
# (`apt-get download librenderdoc python3-renderdoc libstb0 libxcb-keysyms1 libx11-6
# libx11-data libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 python3.11 python3.11-minimal
# libpython3.11-minimal libpython3.11-stdlib`). Each is unpacked and only the files the
# machine lacks are copied to / (`cp -rn`: nothing of the system is replaced).
# Runs the capture tests of the release `root` binary with KILN_REQUIRE_RENDERDOC=1: each
# capture is made, then opened and replayed with RenderDoc's Python module under
# python3.11, which lists the dispatch, the draw and kiln's labels.
TOPIC=capture
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
renderdoc_from_debs
ls -la /usr/lib/librenderdoc.so /usr/bin/python3.11 2>&1 | head -3
/usr/bin/python3.11 -c "import sys; sys.path.append('/usr/lib/python3/dist-packages'); import renderdoc; print('renderdoc module', renderdoc.GetVersionString())"
KILN_REQUIRE_RENDERDOC=1 KILN_RENDERDOC_PYTHON=/usr/bin/python3.11 KILN_VALIDATION=1 \
  step capture-tests 240 $B/root --test-threads=1 --nocapture capture::
grep -h "^test \|PATH\|ACTION\|panicked\|KILN-W0\|test result" $W/capture-tests.out | cut -c1-300 | head -60
date -u
