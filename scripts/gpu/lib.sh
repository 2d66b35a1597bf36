# Shared by the topic scripts that run kiln's release binaries on an NVIDIA machine
# (suite.sh, gemm.sh, sync.sh, transfers.sh, interop.sh, capture.sh, proof.sh; sourced once). From the repository root:
# the glvnd .debs in .gl (the NVIDIA ICD needs them), the NVIDIA ICD, the binaries in
# $B (.devbin/, `cargo xtask gpu-run <topic> --build-only` makes them), logs in $W, packed
# into ONE file in $OUT as each step ends (the device tool returns only a few files).
#   step NAME CAP COMMAND...   runs COMMAND with a time cap, output in $W/NAME.out|.err;
#                              SKIP="name ..." skips steps already measured in the lease
#   rows FILE.json             prints a `kiln bench --json` output's rows
[ -n "${KILN_GPU_LIB:-}" ] && return 0
KILN_GPU_LIB=1
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" / >/dev/null 2>&1; done; ldconfig 2>/dev/null
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
W=/tmp/gpu-logs; mkdir -p $W; B=.devbin
# Tests that read repo files at run time find them where they were built.
mkdir -p /work; [ -e /work/main ] || ln -sfn "$PWD" /work/main
pack() { tar -czf $OUT/gpu-${TOPIC:-run}.tar.gz -C $W . ; }
step() {
  case " ${SKIP:-} " in *" $1 "*) echo "== $1 skipped"; return;; esac
  local n=$1 t=$2; shift 2; local s=$SECONDS
  timeout $t "$@" > $W/$n.out 2> $W/$n.err; local rc=$?
  echo "== $n rc $rc ($((SECONDS - s)) s)"; pack
}
# Debian 12's RenderDoc and the python3.11 its module is built for, from .gl/rdoc (capture.sh
# lists the packages): unpacked, and only the files the machine lacks copied to /.
renderdoc_from_debs() {
  local u=/tmp/rdoc-unpack; mkdir -p $u
  for f in .gl/rdoc/*.deb; do dpkg -x "$f" $u; done
  cp -rn $u/. / 2>/dev/null; ldconfig
}
rows() { python3 -c "import json,sys; [print('  %-70s %10.3f %10s %s' % (r['name'], r['kiln'], r.get('raw'), r['unit'])) for r in json.load(open(sys.argv[1]))['rows']]" "$1" 2>/dev/null | head -60; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# The host CPU: the recording rows' atomics cost differs by CPU (benchmark log 2026-12-05).
lscpu 2>/dev/null | grep -E "^(Model name|Socket|Core|Thread|CPU\(s\)|CPU max MHz)" | tr -s ' '
date -u
