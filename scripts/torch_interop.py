#!/usr/bin/env python3
# kiln and PyTorch on one GPU, sharing a buffer and a timeline semaphore by fd (issue 28).
#
#   python3 scripts/torch_interop.py [--helper PATH] [--n N]
#
# Starts kiln's half, `torch_interop_helper` (examples/torch_interop_helper.rs; default
# .devbin/torch_interop_helper, else target/release/examples/torch_interop_helper), on the
# Vulkan device with the UUID of torch's current CUDA device (KILN_DEVICE=uuid:...), and
# receives from it over a Unix socket (SCM_RIGHTS) the opaque fds of an exported buffer of
# N floats and of a timeline semaphore. CUDA (libcuda through ctypes) imports both:
# cuImportExternalMemory + cuExternalMemoryGetMappedBuffer (a device pointer, wrapped as a
# torch tensor through __cuda_array_interface__), cuImportExternalSemaphore
# (TIMELINE_SEMAPHORE_FD). Then, ordered only by the timeline on the GPU:
#   kiln:  shared[i] = i + 0.5,             signals 1
#   torch: waits 1, shared = shared*2 + 1,  signals 2   (on torch's current stream)
#   kiln:  waits 2, out = shared + shared,  signals 3   (the helper checks out[i] == 4i + 4)
#   torch: waits 3, copies shared to the host and checks shared[i] == 2i + 2.
# Exit status 0 and "torch: ok" when both sides saw the right bytes. Every wait is bounded
# (60 s): a stuck stream is reported and the process exits without waiting for it.
import argparse, ctypes, json, os, socket, subprocess, sys, time

p = argparse.ArgumentParser()
p.add_argument("--helper", default=None)
p.add_argument("--n", type=int, default=1 << 20)
a = p.parse_args()

import torch  # noqa: E402

helper = a.helper or next(
    (h for h in (".devbin/torch_interop_helper", "target/release/examples/torch_interop_helper")
     if os.path.exists(h)), None)
if helper is None:
    sys.exit("no helper: build it with `cargo build --release -p kiln-examples "
             "--example torch_interop_helper` or pass --helper")

cu = ctypes.CDLL("libcuda.so.1")
def ok(r, what):
    if r != 0:
        sys.exit(f"{what} failed: CUresult {r}")

torch.cuda.init()
torch.zeros(1, device="cuda")  # makes torch's primary context current on this thread
ordinal = torch.cuda.current_device()
dev = ctypes.c_int()
ok(cu.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
uuid = (ctypes.c_ubyte * 16)()
ok(cu.cuDeviceGetUuid(uuid, dev), "cuDeviceGetUuid")
uuid_hex = bytes(uuid).hex()
print(f"torch: {torch.cuda.get_device_name(ordinal)} uuid {uuid_hex}", flush=True)

parent, child = socket.socketpair()
env = dict(os.environ, KILN_DEVICE=f"uuid:{uuid_hex}")
proc = subprocess.Popen([helper, str(child.fileno()), str(a.n)], pass_fds=[child.fileno()], env=env)
child.close()
parent.settimeout(60)
msg, fds, _, _ = socket.recv_fds(parent, 4096, 2)
if len(fds) != 2:
    proc.kill()
    sys.exit(f"the helper sent {len(fds)} fds: {msg!r}")
info = json.loads(msg.decode().strip())
mem_fd, sem_fd = fds
n = info["n"]

class ExtMemDesc(ctypes.Structure):  # CUDA_EXTERNAL_MEMORY_HANDLE_DESC
    _fields_ = [("type", ctypes.c_uint), ("pad0", ctypes.c_uint), ("fd", ctypes.c_int),
                ("pad", ctypes.c_int), ("handle_rest", ctypes.c_uint64), ("size", ctypes.c_uint64),
                ("flags", ctypes.c_uint), ("reserved", ctypes.c_uint * 16)]
class ExtBufDesc(ctypes.Structure):  # CUDA_EXTERNAL_MEMORY_BUFFER_DESC
    _fields_ = [("offset", ctypes.c_uint64), ("size", ctypes.c_uint64),
                ("flags", ctypes.c_uint), ("reserved", ctypes.c_uint * 16)]
class ExtSemDesc(ctypes.Structure):  # CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC
    _fields_ = [("type", ctypes.c_uint), ("pad0", ctypes.c_uint), ("fd", ctypes.c_int),
                ("pad", ctypes.c_int), ("handle_rest", ctypes.c_uint64), ("flags", ctypes.c_uint),
                ("reserved", ctypes.c_uint * 16)]
class SemParams(ctypes.Structure):  # CUDA_EXTERNAL_SEMAPHORE_{WAIT,SIGNAL}_PARAMS
    _fields_ = [("value", ctypes.c_uint64), ("rest", ctypes.c_uint64 * 8),
                ("flags", ctypes.c_uint), ("reserved", ctypes.c_uint * 16)]
assert ctypes.sizeof(ExtMemDesc) == 104 and ctypes.sizeof(ExtSemDesc) == 96
OPAQUE_FD, TIMELINE_FD, DEDICATED = 1, 9, 1

ext_mem = ctypes.c_void_p()
md = ExtMemDesc(type=OPAQUE_FD, fd=mem_fd, size=info["allocation_size"], flags=DEDICATED)
ok(cu.cuImportExternalMemory(ctypes.byref(ext_mem), ctypes.byref(md)), "cuImportExternalMemory")
# CUDA owns mem_fd now (it is closed with the external memory).
ptr = ctypes.c_uint64()
bd = ExtBufDesc(offset=0, size=info["size"])
ok(cu.cuExternalMemoryGetMappedBuffer(ctypes.byref(ptr), ext_mem, ctypes.byref(bd)),
   "cuExternalMemoryGetMappedBuffer")
ext_sem = ctypes.c_void_p()
sd = ExtSemDesc(type=TIMELINE_FD, fd=sem_fd)
ok(cu.cuImportExternalSemaphore(ctypes.byref(ext_sem), ctypes.byref(sd)), "cuImportExternalSemaphore")

class Shared:  # the imported buffer as a CUDA array (version 2: no stream synchronization)
    __cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (ptr.value, False),
                                "strides": None, "version": 2}
stream = torch.cuda.current_stream()
raw_stream = ctypes.c_void_p(stream.cuda_stream)
def wait(v):
    ok(cu.cuWaitExternalSemaphoresAsync(ctypes.byref(ext_sem), ctypes.byref(SemParams(value=v)),
                                        1, raw_stream), "cuWaitExternalSemaphoresAsync")
def signal(v):
    ok(cu.cuSignalExternalSemaphoresAsync(ctypes.byref(ext_sem),
                                          ctypes.byref(SemParams(value=v)), 1, raw_stream),
       "cuSignalExternalSemaphoresAsync")

t = torch.as_tensor(Shared(), device="cuda")
t0 = time.perf_counter()
wait(1)
t.mul_(2).add_(1)  # torch's op, on its current stream, after kiln's write
signal(2)
wait(3)            # kiln read it and wrote `out`
host = torch.empty(n, dtype=torch.float32, pin_memory=True)
host.copy_(t, non_blocking=True)
done = torch.cuda.Event()
done.record(stream)
deadline = time.monotonic() + 60
while not done.query():
    if time.monotonic() > deadline or proc.poll() not in (None, 0):
        proc.kill()
        print("torch: the stream did not reach timeline value 3 in 60 s "
              f"(helper status {proc.poll()})", flush=True)
        os._exit(1)
    time.sleep(0.001)
ms = (time.perf_counter() - t0) * 1e3
expected = torch.arange(n, dtype=torch.float32) * 2 + 2
bad = (host != expected).nonzero()
status = proc.wait(timeout=60)
del t
ok(cu.cuDestroyExternalSemaphore(ext_sem), "cuDestroyExternalSemaphore")
ok(cu.cuMemFree_v2(ptr), "cuMemFree")
ok(cu.cuDestroyExternalMemory(ext_mem), "cuDestroyExternalMemory")
if len(bad):
    i = int(bad[0])
    sys.exit(f"torch: shared[{i}] = {float(host[i])}, expected {float(expected[i])}")
if status != 0:
    sys.exit(f"torch: the helper failed (status {status})")
print(f"torch: ok ({n} floats, kiln -> torch -> kiln in {ms:.2f} ms, ordered by one timeline)")
