#!/bin/bash
# The session's one batched H200 run (2026-12-01, issues 12-17), for the device tool's `run`.
# Everything runs from stripped release binaries in the ignored `.devbin/` (built here from
# one commit of main): kiln (kiln-cli), gemm, trace, stream_overlap (kiln-examples), root
# (`cargo test --release -p kiln-tests --test root --no-run`). Logs go to one folder that is
# packed into ONE file in $OUT as each step ends (the device tool returns only a few files).
# Steps in order of importance, each with a time cap; about 5 minutes in all. Topic steps
# live in scripts/h200/<topic>.sh (sourced at the end, in name order): each may call `step`
# (name, cap in seconds, command) and `rows` (print a bench JSON's rows) and use $B and $W.
cd "$(dirname "$0")/.."
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
W=/tmp/h200; mkdir -p $W; B=.devbin
# Tests that read repo files at run time find them where they were built.
mkdir -p /work; [ -e /work/main ] || ln -sfn "$PWD" /work/main
pack() { tar -czf $OUT/h200-${PART:-all}.tar.gz -C $W . ; }
step() { # name cap command...; SKIP="name ..." skips steps already measured in the lease
  case " ${SKIP:-} " in *" $1 "*) echo "== $1 skipped"; return;; esac
  local n=$1 t=$2; shift 2; local s=$SECONDS
  timeout $t "$@" > $W/$n.out 2> $W/$n.err; local rc=$?
  echo "== $n rc $rc ($((SECONDS - s)) s)"; pack
}
rows() { python3 -c "import json,sys; [print('  %-70s %10.3f %10.3f %s' % (r['name'], r['kiln'], r['raw'], r['unit'])) for r in json.load(open(sys.argv[1]))['rows']]" "$1" 2>/dev/null | head -60; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
# PART=core runs steps 1-4, PART=topics step 5 (two calls within the per-call limit on one
# warm machine); unset: all.
if [ "${PART:-all}" != topics ]; then
export VK_LAYER_ENABLES=VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT
# 1. The GPU tests on NVIDIA under validation (all of root; the 6 GiB buffer required).
# The fuzzer at 3000 programs (10 000 in CI): on the H200 a case costs more (driver, layer).
# errors::allocate_until_the_heap_is_full_then_free_and_continue fills the GPU's heap (143 GB
# here): beside the other tests it makes their allocations fail, so it runs alone after them.
FILL=errors::allocate_until_the_heap_is_full_then_free_and_continue
KILN_VALIDATION=1 KILN_REQUIRE_BIG=1 KILN_FUZZ_PROGRAMS=${KILN_FUZZ_PROGRAMS:-3000} step tests 240 $B/root -q --skip $FILL
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
date -u
fi
if [ "${PART:-all}" != core ]; then
# 5. Topic steps (validation off unless a step asks for it).
export KILN_VALIDATION=0
for t in scripts/h200/*.sh; do [ -f "$t" ] && echo "== topic $t" && source "$t"; done
fi
date -u
