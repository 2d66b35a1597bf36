# CUDA (PyTorch) duplex copies from three kinds of pinned host memory, on the machine where
# kiln's Vulkan copies move at most ~58 GB/s up and down at once (issue 12 (b)): does CUDA's
# ~100 GB/s depend on how its host memory is pinned?
#
# Kinds: `cudaHostAlloc` (torch's pin_memory=True, what scripts/cuda_stream.py measures);
# anonymous mmap with MADV_NOHUGEPAGE (4 KiB pages) pinned by cudaHostRegister; anonymous
# mmap, 2 MiB-aligned, MADV_HUGEPAGE (transparent huge pages) pinned by cudaHostRegister.
# The last two are the host memory of a Vulkan import (VK_EXT_external_memory_host) and of
# the Vulkan driver's own 4 KiB pages. For each: H2D alone, D2H alone, H2D + D2H at once on
# two streams (other buffers): GB/s, median of 5 after a warm-up of half a second.
# One JSON object per line. Usage: python3 scripts/cuda_duplex_memory.py [MiB] (default 256)
import json
import mmap
import statistics
import sys
import time

import torch

size = (int(sys.argv[1]) if len(sys.argv) > 1 else 256) << 20
cudart = torch.cuda.cudart()
HUGE = 2 << 20


def emit(**kw):
    print(json.dumps(kw), flush=True)


def med(f, n=5):
    ts = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        f()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def huge_kib(addr, length):
    """AnonHugePages (KiB) of the mapping holding addr, from /proc/self/smaps."""
    cur = None
    for line in open("/proc/self/smaps"):
        head = line.split()
        if "-" in head[0] and len(head) >= 5:
            lo, hi = (int(x, 16) for x in head[0].split("-"))
            cur = lo <= addr < hi
        elif cur and head[0] == "AnonHugePages:":
            return int(head[1])
    return None


keep = []


def mapped(advice):
    m = mmap.mmap(-1, size + HUGE)
    m.madvise(advice)
    t = torch.frombuffer(m, dtype=torch.uint8)
    off = (-t.data_ptr()) % HUGE
    t = t[off:off + size]
    t.fill_(7)
    err = cudart.cudaHostRegister(t.data_ptr(), size, 0)
    keep.append((m, t))
    return t, int(err) if not isinstance(err, int) else err


kinds = [("cudaHostAlloc (pin_memory)", None),
         ("mmap MADV_NOHUGEPAGE + cudaHostRegister", mmap.MADV_NOHUGEPAGE),
         ("mmap 2 MiB-aligned MADV_HUGEPAGE + cudaHostRegister", mmap.MADV_HUGEPAGE)]
d = [torch.empty(size, dtype=torch.uint8, device="cuda") for _ in range(2)]
s = [torch.cuda.Stream() for _ in range(2)]
warm = time.perf_counter()
while time.perf_counter() - warm < 0.5:
    d[0].copy_(d[1])
    torch.cuda.synchronize()
for name, advice in kinds:
    if advice is None:
        h = [torch.empty(size, dtype=torch.uint8, pin_memory=True).fill_(7) for _ in range(2)]
        errs = [0, 0]
    else:
        pairs = [mapped(advice) for _ in range(2)]
        h, errs = [p[0] for p in pairs], [p[1] for p in pairs]
    pinned = [x.is_pinned() for x in h]

    def up():
        d[0].copy_(h[0], non_blocking=True)

    def down():
        h[1].copy_(d[1], non_blocking=True)

    def both():
        with torch.cuda.stream(s[0]):
            d[0].copy_(h[0], non_blocking=True)
        with torch.cuda.stream(s[1]):
            h[1].copy_(d[1], non_blocking=True)

    w = time.perf_counter()
    while time.perf_counter() - w < 0.5:
        both()
        torch.cuda.synchronize()
    t_up, t_down, t_both = med(up), med(down), med(both)
    emit(name=f"cuda {name} {size >> 20} MiB", register_errors=errs, is_pinned=pinned,
         anon_huge_kib=[huge_kib(x.data_ptr(), size) for x in h],
         h2d_GBps=size / t_up / 1e9, d2h_GBps=size / t_down / 1e9,
         duplex_GBps=2 * size / t_both / 1e9)
    if advice is not None:
        for x in h:
            cudart.cudaHostUnregister(x.data_ptr())
    del h
