# CUDA (PyTorch) reference for kiln's queue rows (issue 12), on the same machine: host <->
# device copies from pinned (cudaMallocHost) and pageable memory, 256 MiB and 1 GiB, each a
# synchronous cudaMemcpy (Tensor.copy_ with non_blocking=False), timed like kiln's rows:
# wall time of the blocking call, median of 5 after a warm-up. One JSON object per line.
import json, statistics, time, torch

for size in (256 << 20, 1 << 30):
    dev = torch.empty(size, dtype=torch.uint8, device="cuda")
    for kind in ("pinned", "pageable"):
        host = torch.empty(size, dtype=torch.uint8, pin_memory=(kind == "pinned"))
        host.fill_(7)  # touch every page before timing
        for direction in ("H2D", "D2H"):
            times = []
            for _ in range(6):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                if direction == "H2D":
                    dev.copy_(host)
                else:
                    host.copy_(dev)
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
            med = statistics.median(times[1:])
            name = f"cuda {kind} {direction} {size >> 20} MiB"
            print(json.dumps({"name": name, "kind": kind, "direction": direction,
                              "bytes": size, "GBps": size / med / 1e9}), flush=True)
        del host
    del dev
    torch.cuda.empty_cache()
