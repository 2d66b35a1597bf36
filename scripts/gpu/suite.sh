#!/bin/bash
# The core batch (`cargo xtask gpu-run suite`): the GPU tests (`root`) under validation, the
# bench groups as JSON, GEMM through kiln and cuBLAS, the CUDA references for transfers and
# chains, the stream and trace examples. Binaries in .devbin/ (root, kiln, gemm, trace,
# stream_overlap; `cargo xtask gpu-run suite --build-only`); about 5 minutes; steps in
# order of importance, each with a time cap (lib.sh). The topic scripts (gemm.sh, sync.sh,
# transfers.sh) run after it in the same lease read some of its logs.
TOPIC=suite
. "$(dirname "$0")/lib.sh"
export VK_LAYER_ENABLES=VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT
# 1. The GPU tests on NVIDIA under validation (all of root; the 6 GiB buffer required).
# The fuzzer at 3000 programs (10 000 in CI): on the H200 a case costs more (driver, layer).
# errors::allocate_until_the_heap_is_full_then_free_and_continue fills the GPU's heap (143 GB
# here): beside the other tests it makes their allocations fail, so it runs alone after them.
FILL=errors::allocate_until_the_heap_is_full_then_free_and_continue
# The real GPU faults (post_mortem::) run last, alone: after them the draws and dispatches
# of later processes timed out on the H200 (stacks.sh says more).
FAULTS=post_mortem::
MARKERS=post_mortem::a_scope_inside_a_rendering_scope_is_named_with_buffer_markers
KILN_VALIDATION=1 KILN_REQUIRE_BIG=1 KILN_FUZZ_PROGRAMS=${KILN_FUZZ_PROGRAMS:-3000} step tests 240 $B/root -q --skip $FILL --skip $FAULTS
KILN_VALIDATION=1 step tests-fill 60 $B/root -q --exact $FILL
grep -o 'test result.*' $W/tests-fill.out | tail -1
grep -o 'test result.*' $W/tests.out | tail -1
awk '/^failures:$/ {state++; if (state == 2) exit; next}
     state == 1 && /^---- .* stdout ----$/ {print "FAIL " $2; n = 0; next}
     state == 1 && n < 4 && NF {print "  " substr($0, 1, 400); n++}' $W/tests.out | head -60
unset VK_LAYER_ENABLES
export KILN_VALIDATION=0
# 2. Bench groups (JSON), validation off.
for g in queues dispatch chain transfers bandwidth; do
  KILN_BENCH_ONLY=$g step bench-$g 90 $B/kiln bench --json
  rows $W/bench-$g.out
  grep -h "note\|chain flavour" $W/bench-$g.err | head -20
done
# 3. GEMM through kiln (results checked) and cuBLAS.
step gemm 90 $B/gemm --bench 8192 --json; cat $W/gemm.out; tail -3 $W/gemm.err
step cuda-gemm 60 python3 scripts/cuda_gemm.py 8192; cat $W/cuda-gemm.out
# 4. CUDA references for the transfers and the chains; the stream example; the trace example.
step cuda-transfers 60 python3 scripts/cuda_transfers.py; cat $W/cuda-transfers.out
step cuda-chain 60 python3 scripts/cuda_chain.py; cat $W/cuda-chain.out
step stream 40 $B/stream_overlap; tail -4 $W/stream.out
step trace 30 $B/trace $W/trace.json $((1 << 24)); tail -5 $W/trace.out
# 5. Last: the real page fault and hang (post_mortem::), alone.
# The in-scope breadcrumbs before the hang (stacks.sh says why).
KILN_VALIDATION=1 KILN_REQUIRE_BUFFER_MARKER=1 step tests-markers 60 $B/root --exact $MARKERS
grep -h "^path\|^live\|panicked\|test result" $W/tests-markers.out | cut -c1-300 | head -6
KILN_VALIDATION=1 step tests-faults 120 $B/root $FAULTS --skip $MARKERS --test-threads=1
grep -h "^path\|panicked\|test result" $W/tests-faults.out | cut -c1-300 | head -12
date -u
