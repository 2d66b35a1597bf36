#!/bin/bash
# `cargo xtask gpu-run sync`: alone, or after suite.sh in the same lease (it reads suite's logs
# where they exist). Helpers and binaries: lib.sh.
TOPIC=sync
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export KILN_VALIDATION=0
# Issue 15 (sync): the barrier sweep, `kiln bench` group `barriers` (kiln-bench/src/barriers.rs):
# per dependency form (none, execution-only sync2/sync1, memory barrier sync2 COMPUTE or
# ALL_COMMANDS on both sides or one, COMPUTE -> COMPUTE|TRANSFER, sync1 memory barrier, buffer
# barrier, split barrier with events) and for two
# independent chains (sequential, interleaved with a barrier per dispatch or per level, events,
# none, and kiln's own automatic barriers), GPU and wall µs per dispatch, for 1000 tiny links and
# 100 links over 2^20 floats at workgroup 256 and 1024. One line per variant. Under a minute.
KILN_VALIDATION=0 KILN_BENCH_ONLY=barriers step sync-barriers 120 $B/kiln bench
grep -h "barrier sweep" $W/sync-barriers.err | sed 's/^kiln bench: //' | head -90
grep -h "error\|failed\|expected" $W/sync-barriers.err | head -10
grep -h "done in" $W/sync-barriers.err
# The tracker's last-barrier shortcut A/B from the core batch's dispatch group (same rounds,
# alternating which form runs first): kiln ns per dispatch with and without it, raw.
[ -f $W/bench-dispatch.err ] && grep -h "last-barrier shortcut" $W/bench-dispatch.err | sed 's/^kiln bench: //'
date -u
