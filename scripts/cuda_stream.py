# CUDA (PyTorch) reference for kiln's stream rows and the hostmem duplex rows (issue 12 (b)),
# on the same machine: what the hardware gives when copies run at the same time.
#
# 1. Duplex: pinned-memory copies of SIZE bytes, H2D alone, D2H alone, then H2D and D2H at
#    once on two CUDA streams (other buffers), and two H2D at once: aggregate GB/s = bytes of
#    both / time until both finished (median of 5 after a warm-up).
# 2. The 3-stage stream of kiln's `stream_overlap` (by default 256 MiB of u32 in 16 chunks and
#    1 GiB in 64 chunks, the example's and the bench's configurations; pinned input and
#    output, a ring of 3 device buffer pairs): upload chunk i on one stream, compute chunk
#    i on a second, read back chunk i on a third, ordered by events (the ring's reuse too), vs
#    the same work on one stream (serial). The compute is k in-place LCG steps (y = y * A + C,
#    int32, two elementwise kernels a step), k chosen so one chunk's compute takes about as
#    long as its upload (as kiln's example calibrates). The output is checked against the
#    closed form of k steps (every element). Times: median of 5 after a warm-up, ms.
# One JSON object per line; a failed check prints FAILED and exits 1.
# Usage: python3 scripts/cuda_stream.py [--stream-only] [MiB/chunks ...]
#   (--stream-only skips part 1; default configurations 256/16 1024/64).
import json, statistics, sys, time
import torch

A, C = 1664525, 1013904223


def med(f, n=5):
    f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        f()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def emit(**kw):
    print(json.dumps(kw), flush=True)


# 0. What the GPU says it has: CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT (40: copy engines
#    usable beside kernels), CONCURRENT_KERNELS (31), PCI bus (33), the CUDA driver's view.
try:
    import ctypes
    cu = ctypes.CDLL("libcuda.so.1")
    cu.cuInit(0)
    v = ctypes.c_int()
    attrs = {}
    for name, a in (("async_engine_count", 40), ("concurrent_kernels", 31), ("pci_bus_id", 33),
                    ("unified_addressing", 41), ("can_use_host_pointer_for_registered_mem", 91)):
        attrs[name] = v.value if cu.cuDeviceGetAttribute(ctypes.byref(v), a, 0) == 0 else None
    emit(name="cuda device attributes", **attrs)
except OSError as e:
    emit(name="cuda device attributes", error=str(e))

args = [a for a in sys.argv[1:] if a != "--stream-only"]
configs = [tuple(int(x) for x in a.split("/")) for a in args] or [(256, 16), (1024, 64)]

# 1. Duplex.
for size in () if "--stream-only" in sys.argv else (256 << 20, 1 << 30):
    h = [torch.empty(size, dtype=torch.uint8, pin_memory=True).fill_(7) for _ in range(2)]
    d = [torch.empty(size, dtype=torch.uint8, device="cuda") for _ in range(2)]
    s = [torch.cuda.Stream() for _ in range(2)]

    def up():
        d[0].copy_(h[0], non_blocking=True)

    def down():
        h[1].copy_(d[1], non_blocking=True)

    def both(second_down=True):
        with torch.cuda.stream(s[0]):
            d[0].copy_(h[0], non_blocking=True)
        with torch.cuda.stream(s[1]):
            if second_down:
                h[1].copy_(d[1], non_blocking=True)
            else:
                d[1].copy_(h[1], non_blocking=True)

    mib = size >> 20
    t_up, t_down = med(up), med(down)
    t_duplex, t_two_up = med(lambda: both(True)), med(lambda: both(False))
    emit(name=f"cuda pinned H2D {mib} MiB alone", GBps=size / t_up / 1e9)
    emit(name=f"cuda pinned D2H {mib} MiB alone", GBps=size / t_down / 1e9)
    emit(name=f"cuda duplex H2D + D2H {mib} MiB on two streams", GBps=2 * size / t_duplex / 1e9,
         speedup_vs_sequential=(t_up + t_down) / t_duplex)
    emit(name=f"cuda two H2D {mib} MiB on two streams", GBps=2 * size / t_two_up / 1e9)
    del h, d
    torch.cuda.empty_cache()

# 2. The stream.
ring = 3
M32 = 0xFFFFFFFF


def mul32(x, a):
    # (x * a) mod 2^32 for int64 tensors x in [0, 2^32) and 0 <= a < 2^32, without overflow.
    lo, hi = a & 0xFFFF, a >> 16
    return (x * lo + (((x * hi) & 0xFFFF) << 16)) & M32


def to_i32(u):  # [0, 2^32) int64 -> int32 with the same bits
    return torch.where(u >= 1 << 31, u - (1 << 32), u).to(torch.int32)


def stream(total, chunks):
    n = total // 4 // chunks
    idx = torch.arange(total // 4, dtype=torch.int64, device="cuda")
    inp = mul32(idx, 2654435761) ^ 0x5BD1E995  # kiln's input_value(i), as u32 in int64
    host_in = to_i32(inp).cpu().pin_memory()
    host_out = torch.zeros(total // 4, dtype=torch.int32).pin_memory()
    xs = [torch.empty(n, dtype=torch.int32, device="cuda") for _ in range(ring)]
    ys = [torch.empty(n, dtype=torch.int32, device="cuda") for _ in range(ring)]


    def compute(x, y, k):
        y.copy_(x)
        for _ in range(k):
            y.mul_(A).add_(C)


    def closed_form(k):
        a, c, ba, bc = 1, 0, A, C
        while k:
            if k & 1:
                a, c = (ba * a) & 0xFFFFFFFF, (ba * c + bc) & 0xFFFFFFFF
            ba, bc = (ba * ba) & 0xFFFFFFFF, (ba * bc + bc) & 0xFFFFFFFF
            k >>= 1
        return a, c


    def gpu_ms(f):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        best = float("inf")
        for _ in range(3):
            e0.record()
            f()
            e1.record()
            torch.cuda.synchronize()
            best = min(best, e0.elapsed_time(e1))
        return best


    t_up = gpu_ms(lambda: xs[0].copy_(host_in[:n], non_blocking=True))
    k = 1
    for _ in range(3):
        t_k = gpu_ms(lambda: compute(xs[0], ys[0], k))
        k = max(1, int(round(k * t_up / max(t_k, 1e-6))))
    t_k = gpu_ms(lambda: compute(xs[0], ys[0], k))
    emit(name=f"cuda stream calibration ({total >> 20} MiB in {chunks} chunks)", chunk_MiB=n * 4 >> 20, upload_ms=t_up, compute_ms=t_k,
         steps=k)

    streams = [torch.cuda.Stream() for _ in range(3)]


    def run(overlapped):
        up_s, comp_s, down_s = streams if overlapped else [torch.cuda.current_stream()] * 3
        uploaded, computed, read = [], [], []
        for i in range(chunks):
            slot, lo = i % ring, i * n
            with torch.cuda.stream(up_s):
                if i >= ring:
                    up_s.wait_event(computed[i - ring])  # x slot read by compute i - ring
                xs[slot].copy_(host_in[lo:lo + n], non_blocking=True)
                e = torch.cuda.Event(); e.record(up_s); uploaded.append(e)
            with torch.cuda.stream(comp_s):
                comp_s.wait_event(uploaded[i])
                if i >= ring:
                    comp_s.wait_event(read[i - ring])  # y slot read back by readback i - ring
                compute(xs[slot], ys[slot], k)
                e = torch.cuda.Event(); e.record(comp_s); computed.append(e)
            with torch.cuda.stream(down_s):
                down_s.wait_event(computed[i])
                host_out[lo:lo + n].copy_(ys[slot], non_blocking=True)
                e = torch.cuda.Event(); e.record(down_s); read.append(e)
        torch.cuda.synchronize()


    a, c = closed_form(k)
    want = (mul32(inp, a) + c) & M32
    res = {}
    for overlapped in (False, True):
        host_out.zero_()
        t = med(lambda: run(overlapped)) * 1e3
        got = host_out.to("cuda").to(torch.int64) & M32
        bad = torch.nonzero(got != want).flatten()
        if bad.numel():
            b = bad[0].item()
            print(f"FAILED: cuda stream (overlapped={overlapped}): element {b} is {got[b].item()}, "
                  f"want {want[b].item()} ({bad.numel()} differ)", flush=True)
            sys.exit(1)
        res[overlapped] = t
    emit(name=f"cuda stream {total >> 20} MiB in {chunks} chunks", serial_ms=res[False], overlapped_ms=res[True],
         speedup=res[False] / res[True], checked="every element")
    del host_in, host_out, xs, ys, idx, inp, want, got
    torch.cuda.empty_cache()


for mib, chunks in configs:
    stream(mib << 20, chunks)
