# cuBLAS (PyTorch) reference for kiln's GEMM (issue 14), on the same machine: C = A·B at
# N×N×N for bf16, fp16 (fp32 accumulate, as kiln's cooperative-matrix kernels) and fp32
# with TF32 off (as kiln's tiled fp32 kernel), timed like `gemm --bench`: 5 products per
# timed batch after a warm-up, best of 3 batches. One JSON object per line.
import json, sys, time, torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
for name, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp32", torch.float32)):
    a = torch.randint(-4, 5, (n, n), device="cuda").to(dtype)
    b = torch.randint(-4, 5, (n, n), device="cuda").to(dtype)
    c = a @ b
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(5):
            c = a @ b
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / 5)
    exact = bool(torch.equal(c.float(), a.float() @ b.float())) if dtype == torch.float32 else None
    print(json.dumps({"name": f"cublas {name} {n}^3", "dtype": name, "n": n,
                      "ms": best * 1e3, "tflops": 2 * n**3 / best / 1e12,
                      "exact_fp32": exact}), flush=True)
    del a, b, c
    torch.cuda.empty_cache()
