# CUDA driver API (libcuda through ctypes, no PyTorch): launch one tiny kernel (1 thread,
# x[0] += 1) and cuCtxSynchronize, 10 000 times; median and p99 us. ctypes adds ~1 us of
# Python call overhead per round trip, so this is an upper bound on the driver's own cost.
import ctypes, time
c = ctypes.CDLL("libcuda.so.1")
def ok(r, what):
    if r != 0: raise SystemExit(f"{what} failed: {r}")
ok(c.cuInit(0), "cuInit")
dev = ctypes.c_int(); ok(c.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p(); ok(c.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
ok(c.cuCtxSetCurrent(ctx), "setcurrent")
ptx = b""".version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b64 %rd<3>;
  .reg .f32 %f<3>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.f32 %f1, [%rd2];
  add.f32 %f2, %f1, 0f3F800000;
  st.global.f32 [%rd2], %f2;
  ret;
}
"""
mod = ctypes.c_void_p(); ok(c.cuModuleLoadData(ctypes.byref(mod), ptx), "cuModuleLoadData")
fn = ctypes.c_void_p(); ok(c.cuModuleGetFunction(ctypes.byref(fn), mod, b"k"), "getfunction")
dptr = ctypes.c_uint64(); ok(c.cuMemAlloc_v2(ctypes.byref(dptr), 4), "alloc")
ok(c.cuMemsetD32_v2(dptr, 0, 1), "memset")
args = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(dptr), ctypes.c_void_p))
launch, sync = c.cuLaunchKernel, c.cuCtxSynchronize
def once():
    launch(fn, 1, 1, 1, 1, 1, 1, 0, None, args, None); sync()
for _ in range(200): once()
us = []
for _ in range(10000):
    t0 = time.perf_counter(); once(); us.append((time.perf_counter() - t0) * 1e6)
# ctypes overhead alone: two no-op driver calls
t0 = time.perf_counter()
for _ in range(10000): c.cuCtxGetCurrent(ctypes.byref(ctx)); c.cuCtxGetCurrent(ctypes.byref(ctx))
over = (time.perf_counter() - t0) / 10000 * 1e6
got = ctypes.c_float(); ok(c.cuMemcpyDtoH_v2(ctypes.byref(got), dptr, 4), "dtoh")
us.sort()
print(f"cuda driver launch+cuCtxSynchronize: median {us[len(us)//2]:.2f} us, p99 {us[int(len(us)*0.99)]:.2f} us (two ctypes calls cost {over:.2f} us; x[0] = {got.value:.0f}, want 10200)")
