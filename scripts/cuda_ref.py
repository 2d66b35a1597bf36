# CUDA (PyTorch) reference on the same machine: SAXPY bandwidth over 2^28 f32 and
# launch + synchronize of a tiny kernel. Same byte count as kiln's row 3 (read x, read y,
# write y).
import time, statistics, torch
n = 1 << 28
x = torch.rand(n, device="cuda"); y = torch.rand(n, device="cuda")
for _ in range(3):
    y.add_(x, alpha=0.5)
torch.cuda.synchronize()
ms = []
for _ in range(20):
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record(); y.add_(x, alpha=0.5); e.record(); e.synchronize()
    ms.append(s.elapsed_time(e))
med = statistics.median(ms)
print(f"cuda saxpy 2^28: median {med:.4f} ms = {3*4*n/(med*1e-3)/1e9:.0f} GB/s")
t = torch.zeros(1, device="cuda")
for _ in range(200):
    t.add_(1); torch.cuda.synchronize()
us = []
for _ in range(10000):
    t0 = time.perf_counter(); t.add_(1); torch.cuda.synchronize(); us.append((time.perf_counter() - t0) * 1e6)
us.sort()
print(f"cuda launch+sync: median {us[len(us)//2]:.2f} us, p99 {us[int(len(us)*0.99)]:.2f} us")
