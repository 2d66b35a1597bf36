#!/usr/bin/env python3
"""The GEMM kernel statistics table of the benchmark log (docs/benchmarks/log/): `gemm --stats` lines (gemm-stats*.out
in STATS_DIR or its topics/ or t/, from scripts/gpu/gemm.sh) beside each variant's best
8192^3 TFLOP/s from the `gemm --bench` logs of BENCH_DIR (gemm*.out there or in topics/ or t/;
the same names: `Gemm::path`). One row per variant: threads per workgroup, the driver's
register and shared-memory statistics (and spills or NVIDIA's local memory, less its
bit 36), the workgroups per
H200 SM they allow and what limits it, TFLOP/s. Usage: gemm_stats_table.py STATS_DIR
[BENCH_DIR]."""
import glob
import os
import re
import sys


def files(d, pattern):
    return sorted(f for sub in ("", "topics", "t") for f in glob.glob(os.path.join(d, sub, pattern)))


stats_dir = sys.argv[1]
bench_dir = sys.argv[2] if len(sys.argv) > 2 else stats_dir
line_re = re.compile(
    r"^stats (.+?)\s+(\d+) threads, subgroup (\d+): (.*?)\s+\| H200 workgroups/SM (\d+) \[(.*)\]\s*$"
)
bench_re = re.compile(r"^gemm (.+?)\s+8192 8192 8192: +([\d.]+) TFLOP/s")
best = {}
for f in files(bench_dir, "gemm*.out"):
    if "stats" in os.path.basename(f):
        continue
    for line in open(f):
        m = bench_re.match(line)
        if m:
            name, tf = m.group(1).strip(), float(m.group(2))
            best[name] = max(best.get(name, 0.0), tf)
print("| variant | threads | registers | shared memory (B) | spills / local memory | workgroups/SM (limits) | TFLOP/s |")
print("| --- | ---: | ---: | ---: | --- | --- | ---: |")
fails = []
for f in files(stats_dir, "gemm-stats*.out"):
    for line in open(f):
        if line.startswith("stats ") and " FAIL" in line:
            fails.append(line.strip())
            continue
        m = line_re.match(line)
        if not m:
            continue
        name, threads, _sg, stats, wgs, limits = m.groups()
        name = name.strip()
        kv = dict(x.split("=", 1) for x in stats.split() if "=" in x)
        regs = next((v for k, v in kv.items() if "register" in k.lower() and "spill" not in k.lower()), "?")
        smem = next((v for k, v in kv.items() if "shared" in k.lower()), "?")
        spills = ", ".join(f"{k}={v}" for k, v in kv.items() if "spill" in k.lower())
        for k, v in kv.items():
            # NVIDIA's Local_Memory_Size: 2^36 + bytes (run F); `gemm --stats` prints N+2^36.
            if "local" in k.lower():
                n = int(v.split("+")[0]) if "+" in v else int(v) - (1 << 36 if int(v) >= 1 << 36 else 0)
                spills = f"local {n} B"
        spills = spills or "-"
        lim = ", ".join(x.split(" (")[0] for x in limits.split(", "))
        tf = best.get(name)
        print(f"| {name} | {threads} | {regs} | {smem} | {spills} | {wgs} ({lim}) | {f'{tf:.1f}' if tf else '-'} |")
for x in fails:
    print(f"\nFAIL: {x}")
