#!/usr/bin/env python3
"""The GEMM table of the benchmark log (docs/benchmarks/log/) from one H200 batch's logs: every `gemm --bench N`
output (gemm*.out in DIR and DIR/topics: the core step and scripts/gpu/gemm.sh's), `gemm
--peak` output (gemm-peak.out) and scripts/cuda_gemm.py's JSON lines (cuda-gemm.out), all
from the same lease. Prints markdown: one row per GEMM variant timed (the best if several
steps timed it: TFLOP/s, ratio to cuBLAS of the same input type, ok/FAIL), each no-global
variant beside the best streaming variant of its kernel, type and tile, the failures,
the pipeline creation times, then one row per ceiling run. Usage: gemm_table.py DIR."""
import json
import os
import re
import sys

import glob

d = sys.argv[1]


def read(n):
    for base in (d, os.path.join(d, "topics")):
        if os.path.exists(os.path.join(base, n)):
            return open(os.path.join(base, n)).read()
    return ""


bench_text = "".join(
    open(f).read()
    for f in sorted(glob.glob(os.path.join(d, "gemm*.out")) + glob.glob(os.path.join(d, "topics", "gemm*.out")))
    if not f.endswith("gemm-peak.out")
)
cublas = {}
for line in read("cuda-gemm.out").splitlines():
    try:
        r = json.loads(line)
        cublas[r["dtype"]] = r["tflops"]
    except (ValueError, KeyError):
        pass
print("| variant | M N K | TFLOP/s | cuBLAS same type | ratio | check |")
print("| --- | --- | ---: | ---: | ---: | --- |")
bench = re.compile(r"^gemm (.+?)\s+(\d+) (\d+) (\d+): +([\d.]+) TFLOP/s +([\d.]+) ms +max error (\S+).*?(ok|FAIL)(?:\s+[\d.]+x cuBLAS .*)?\s*$")
best = {}
for line in bench_text.splitlines():
    m = bench.match(line)
    if not m:
        continue
    key = (m.group(1).strip(), m.group(2), m.group(3), m.group(4))
    if key not in best or float(m.group(5)) > best[key][0]:
        best[key] = (float(m.group(5)), m.group(8))
for (name, mm, nn, kk), (tf, ok) in best.items():
    dtype = next((t for t in ("bf16", "fp16", "fp32") if t in name), "")
    c = cublas.get(dtype)
    ratio = f"{tf / c:.3f}" if c else "-"
    cs = f"{c:.1f}" if c else "-"
    print(f"| {name} | {mm} {nn} {kk} | {tf:.1f} | {cs} | {ratio} | {ok} |")
# Where the time goes: each no-global variant beside the best streaming variant of the same
# kernel, input type and tile (and subgroup tile; any workgroup order, load placement or clamp mode).
def family(name):
    w = name.replace("-noglobal", "").split()
    return " ".join(w[:4] if len(w) > 3 and w[3].startswith("w") else w[:3])  # kernel, type, tile[, subgroup tile]


pairs = []
for (name, mm, nn, kk), (tf, ok) in best.items():
    if "-noglobal" not in name:
        continue
    fam = family(name)
    streams = [(t, n) for (n, *_), (t, _) in best.items() if "-noglobal" not in n and family(n) == fam]
    if streams:
        st, sn = max(streams)
        pairs.append((fam, sn, st, name, tf))
if pairs:
    print("\n| where the time goes: kernel, type, tile | best GEMM variant | TFLOP/s | no global loads | TFLOP/s | GEMM / no-global |")
    print("| --- | --- | ---: | --- | ---: | ---: |")
    for fam, sn, st, ng, nt in sorted(pairs, key=lambda p: -p[2]):
        print(f"| {fam} | {sn} | {st:.1f} | {ng} | {nt:.1f} | {st / nt:.2f} |")
created = [l for l in bench_text.splitlines() if "pipeline created in" in l or "skipped" in l]
if created:
    print("\nPipelines:\n" + "\n".join("    " + " ".join(l.split()) for l in created[:60]))
fails = [l for l in bench_text.splitlines() if "FAIL" in l]
if fails:
    print("\nFailures:\n" + "\n".join("    " + l for l in fails[:20]))
peak = re.compile(r"^(peak \S+ \S+ acc \S+)\s.*?([\d.]+) TFLOP/s\s+sums (ok|FAIL)")
rows = [peak.match(l) for l in read("gemm-peak.out").splitlines()]
rows = [r for r in rows if r]
if rows:
    print("\n| ceiling (coopMatMulAdd, registers only) | TFLOP/s | cuBLAS same type | ratio | sums |")
    print("| --- | ---: | ---: | ---: | --- |")
    for r in rows:
        name, tf = r.group(1), float(r.group(2))
        c = cublas.get("bf16" if "bf16" in name else "fp16")
        print(f"| {name} | {tf:.1f} | {c or 0:.1f} | {tf / c if c else 0:.3f} | {r.group(3)} |")
