#!/usr/bin/env python3
"""The GEMM table of BENCHMARKS.md from one H200 batch's logs: `gemm --bench N` output
(gemm.out), `gemm --peak` output (gemm-peak.out) and scripts/cuda_gemm.py's JSON lines
(cuda-gemm.out), all from the same lease. Prints markdown: one row per GEMM variant timed
at N^3 (TFLOP/s, ratio to cuBLAS of the same input type, ok/FAIL), then one row per
ceiling run. Usage: gemm_table.py DIR (the folder holding the three files)."""
import json
import os
import re
import sys

d = sys.argv[1]
read = lambda n: open(os.path.join(d, n)).read() if os.path.exists(os.path.join(d, n)) else ""
cublas = {}
for line in read("cuda-gemm.out").splitlines():
    try:
        r = json.loads(line)
        cublas[r["dtype"]] = r["tflops"]
    except (ValueError, KeyError):
        pass
print("| variant | M N K | TFLOP/s | cuBLAS same type | ratio | check |")
print("| --- | --- | ---: | ---: | ---: | --- |")
bench = re.compile(r"^gemm (.+?)\s+(\d+) (\d+) (\d+): +([\d.]+) TFLOP/s +([\d.]+) ms +max error (\S+).*?(ok|FAIL)\s*$")
for line in read("gemm.out").splitlines():
    m = bench.match(line)
    if not m:
        continue
    name, tf, ok = m.group(1).strip(), float(m.group(5)), m.group(8)
    dtype = next((t for t in ("bf16", "fp16", "fp32") if t in name), "")
    c = cublas.get(dtype)
    ratio = f"{tf / c:.3f}" if c else "-"
    cs = f"{c:.1f}" if c else "-"
    print(f"| {name} | {m.group(2)} {m.group(3)} {m.group(4)} | {tf:.1f} | {cs} | {ratio} | {ok} |")
fails = [l for l in read("gemm.out").splitlines() if "FAIL" in l]
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
