# CUDA (PyTorch) reference for kiln's chain rows (issue 15), on the same machine: the same
# dependent chains as `kiln bench` rows "chain 1000 dependent 1-thread dispatches (recorded
# once)" and "chain 100 dependent y += x over 2^20 f32", each kernel reading what the one
# before wrote (y += x on one tensor, one stream: stream order is the dependency), as a CUDA
# Graph (captured once, replayed: the analogue of a recording submitted again) and eagerly
# (one launch per kernel). Per kernel: wall time of a synchronized replay (or eager loop)
# divided by the chain length, median of 20 after warm-up; and the GPU time between CUDA
# events around the replay. One JSON object per line.
import json, statistics, time, torch

def measure(fn, links, reps=20):
    walls, gpus = [], []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    for _ in range(reps):
        t0 = time.perf_counter()
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        walls.append(time.perf_counter() - t0)
        gpus.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(walls) / links * 1e6, statistics.median(gpus) / links * 1e6

for name, n, links in (("chain 1000 dependent 1-thread dispatches", 1, 1000),
                       ("chain 100 dependent y += x over 2^20 f32", 1 << 20, 100)):
    x = torch.ones(n, dtype=torch.float32, device="cuda")
    y = torch.zeros(n, dtype=torch.float32, device="cuda")

    def eager():
        for _ in range(links):
            y.add_(x)

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        eager()  # warm-up on the side stream before capture
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        eager()
    for how, fn in (("CUDA Graph", g.replay), ("eager", eager)):
        wall, gpu = measure(fn, links)
        print(json.dumps({"name": f"cuda {how}: {name}", "how": how, "elements": n,
                          "links": links, "us_per_kernel_wall": wall,
                          "us_per_kernel_gpu": gpu}), flush=True)
    y.zero_()
    g.replay()
    torch.cuda.synchronize()
    assert float(y[0]) == float(links), "the chain is dependent: every link adds x once"
    del g, x, y
    torch.cuda.empty_cache()
