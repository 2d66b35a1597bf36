//! Issue 28's hand-off row: a timeline semaphore exported by kiln and imported by CUDA
//! (`cuImportExternalSemaphore`, `TIMELINE_SEMAPHORE_FD`), one round trip
//! Vulkan signal → CUDA wait → CUDA signal → Vulkan wait, against a CUDA-only event round
//! trip between two streams (`cuEventRecord` → `cuStreamWaitEvent` → `cuEventRecord` →
//! `cuStreamWaitEvent` → `cuEventSynchronize`). The CUDA driver (`libcuda.so.1`) is loaded
//! at run time, as `tests/root/interop/cuda.rs` does: without it, or without exportable
//! timeline semaphores, the row is not measured and a note says why
//! (`hand-off latency: not measured: no libcuda (...)`).
//!
//! kiln side, per round: an empty submission on the main queue signalling `2k + 1`; on a
//! CUDA stream a wait for `2k + 1` and a signal of `2k + 2`; an empty submission waiting
//! for `2k + 2`, waited on the host. Wall clock from the first submit to the host wait's
//! return; median of the rounds.

use std::ffi::{c_int, c_uint, c_void};
use std::os::fd::{AsRawFd, IntoRawFd};
use std::time::{Duration, Instant};

use kiln::{Device, ExternalHandle, QueueKind};

use super::raw::Raw;
use super::{median, note, ns_since, BenchResult, Opts, Peer, Row};

type CuResult = c_int;
type Fn0 = unsafe extern "C" fn(c_uint) -> CuResult;

/// `CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC` (cuda.h).
#[repr(C)]
struct ExtSemDesc {
    kind: c_uint,
    handle: [u64; 2],
    flags: c_uint,
    reserved: [c_uint; 16],
}

/// `CUDA_EXTERNAL_SEMAPHORE_{WAIT,SIGNAL}_PARAMS`: the fence value first.
#[repr(C)]
struct SemParams {
    value: u64,
    rest: [u64; 8],
    flags: c_uint,
    reserved: [c_uint; 16],
}

const TIMELINE_SEMAPHORE_FD: c_uint = 9;

type Ptr = *mut c_void;
type SemOp = unsafe extern "C" fn(*const Ptr, *const SemParams, c_uint, Ptr) -> CuResult;

/// The driver API entry points of the row.
struct Cuda {
    _lib: libloading::Library,
    init: Fn0,
    device_get: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult,
    device_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_uuid: unsafe extern "C" fn(*mut [u8; 16], c_int) -> CuResult,
    ctx_retain: unsafe extern "C" fn(*mut Ptr, c_int) -> CuResult,
    ctx_release: unsafe extern "C" fn(c_int) -> CuResult,
    ctx_set: unsafe extern "C" fn(Ptr) -> CuResult,
    stream_create: unsafe extern "C" fn(*mut Ptr, c_uint) -> CuResult,
    stream_destroy: unsafe extern "C" fn(Ptr) -> CuResult,
    stream_sync: unsafe extern "C" fn(Ptr) -> CuResult,
    stream_wait_event: unsafe extern "C" fn(Ptr, Ptr, c_uint) -> CuResult,
    event_create: unsafe extern "C" fn(*mut Ptr, c_uint) -> CuResult,
    event_destroy: unsafe extern "C" fn(Ptr) -> CuResult,
    event_record: unsafe extern "C" fn(Ptr, Ptr) -> CuResult,
    event_sync: unsafe extern "C" fn(Ptr) -> CuResult,
    import_semaphore: unsafe extern "C" fn(*mut Ptr, *const ExtSemDesc) -> CuResult,
    destroy_semaphore: unsafe extern "C" fn(Ptr) -> CuResult,
    wait: SemOp,
    signal: SemOp,
}

impl Cuda {
    fn load() -> Result<Cuda, String> {
        // SAFETY: loading the CUDA driver library runs its initializers, which have no
        // preconditions.
        let lib = unsafe { libloading::Library::new("libcuda.so.1") }.map_err(|e| e.to_string())?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol is the driver API function of that name, whose C
                // signature (cuda.h) the field's type spells.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{}: {e}", $name))?
            };
        }
        Ok(Cuda {
            init: sym!("cuInit"),
            device_get: sym!("cuDeviceGet"),
            device_count: sym!("cuDeviceGetCount"),
            device_uuid: sym!("cuDeviceGetUuid"),
            ctx_retain: sym!("cuDevicePrimaryCtxRetain"),
            ctx_release: sym!("cuDevicePrimaryCtxRelease_v2"),
            ctx_set: sym!("cuCtxSetCurrent"),
            stream_create: sym!("cuStreamCreate"),
            stream_destroy: sym!("cuStreamDestroy_v2"),
            stream_sync: sym!("cuStreamSynchronize"),
            stream_wait_event: sym!("cuStreamWaitEvent"),
            event_create: sym!("cuEventCreate"),
            event_destroy: sym!("cuEventDestroy_v2"),
            event_record: sym!("cuEventRecord"),
            event_sync: sym!("cuEventSynchronize"),
            import_semaphore: sym!("cuImportExternalSemaphore"),
            destroy_semaphore: sym!("cuDestroyExternalSemaphore"),
            wait: sym!("cuWaitExternalSemaphoresAsync"),
            signal: sym!("cuSignalExternalSemaphoresAsync"),
            _lib: lib,
        })
    }
}

fn ok(r: CuResult, what: &str) -> BenchResult<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(format!("{what} failed: CUresult {r}").into())
    }
}

fn params(value: u64) -> SemParams {
    SemParams {
        value,
        rest: [0; 8],
        flags: 0,
        reserved: [0; 16],
    }
}

/// The CUDA device with `device`'s UUID, or why there is none.
fn cuda_device(cuda: &Cuda, device: &Device) -> BenchResult<Option<c_int>> {
    let uuid = device.info().device_uuid;
    let mut count = 0;
    // SAFETY: cuInit has no preconditions; out pointers to locals.
    unsafe {
        ok((cuda.init)(0), "cuInit")?;
        ok((cuda.device_count)(&mut count), "cuDeviceGetCount")?;
    }
    for i in 0..count {
        let (mut d, mut u) = (0, [0u8; 16]);
        // SAFETY: out pointers to locals; `i` is below the count.
        unsafe {
            ok((cuda.device_get)(&mut d, i), "cuDeviceGet")?;
            ok((cuda.device_uuid)(&mut u, d), "cuDeviceGetUuid")?;
        }
        if u == uuid {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

/// A note: the kiln side of the hand-off without CUDA (an empty submission signalling
/// `2k + 1`, an empty one waiting for it and signalling `2k + 2`, waited on the host), to
/// tell kiln's and the driver's Vulkan share of the row from the cross-API wait's.
fn vulkan_only(device: &Device, rounds: usize, timeout: Duration) -> BenchResult<()> {
    let timeline = device.timeline_semaphore("hand-off, Vulkan only", 0)?;
    let main = device.queue(QueueKind::Main);
    let mut us = Vec::with_capacity(rounds);
    for k in 0..rounds as u64 {
        let t = Instant::now();
        let first = main
            .after(&[])
            .signal(&timeline, 2 * k + 1)
            .submit(|_| Ok(()))?;
        let back = main
            .after(&[])
            .timeline(&timeline, 2 * k + 1)
            .signal(&timeline, 2 * k + 2)
            .submit(|_| Ok(()))?;
        back.wait_for(timeout)?;
        us.push(ns_since(t) / 1e3);
        first.wait()?;
    }
    note(format!(
        "hand-off latency without CUDA (two empty kiln submissions ordered by a timeline, \
         waited on the host): median {:.1} us",
        median(&mut us)
    ));
    Ok(())
}

/// Notes: the hand-off with kiln's waiting submission replaced by a host wait on the
/// timeline (`TimelineSemaphore::wait_for`), and with both kiln submissions replaced by the
/// host (`TimelineSemaphore::signal`, then the host wait): which side of the round trip
/// the time is in. Values from `base + 1` on (the timeline only grows).
///
/// # Safety
///
/// `sem` is CUDA's import of `timeline`, `s1` a stream of the current CUDA context.
unsafe fn host_sides(
    cuda: &Cuda,
    (sem, s1): (Ptr, Ptr),
    device: &Device,
    timeline: &kiln::TimelineSemaphore,
    base: u64,
    rounds: usize,
) -> BenchResult<()> {
    let main = device.queue(QueueKind::Main);
    let timeout = Duration::from_secs(10);
    let mut medians = [0.0; 2];
    for (form, m) in medians.iter_mut().enumerate() {
        let mut us = Vec::with_capacity(rounds);
        for k in 0..rounds as u64 {
            let v = base + 2 * (form as u64 * rounds as u64 + k);
            let t = Instant::now();
            let first = if form == 0 {
                Some(main.after(&[]).signal(timeline, v + 1).submit(|_| Ok(()))?)
            } else {
                timeline.signal(v + 1)?;
                None
            };
            // SAFETY: as the function's contract says; `params` are locals.
            unsafe {
                ok(
                    (cuda.wait)(&sem, &params(v + 1), 1, s1),
                    "cuWaitExternalSemaphoresAsync",
                )?;
                ok(
                    (cuda.signal)(&sem, &params(v + 2), 1, s1),
                    "cuSignalExternalSemaphoresAsync",
                )?;
            }
            timeline.wait_for(v + 2, timeout)?;
            us.push(ns_since(t) / 1e3);
            if let Some(first) = first {
                first.wait()?;
            }
        }
        *m = median(&mut us);
    }
    note(format!(
        "hand-off with a host wait for CUDA's signal: median {:.1} us (a kiln submission \
         signals), {:.1} us (the host signals: no kiln submission)",
        medians[0], medians[1]
    ));
    Ok(())
}

/// The rows, or a note saying why they were not measured.
pub fn rows(
    device: &Device,
    _raw: &Raw,
    _peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let not_measured = |why: String| {
        note(format!("hand-off latency: not measured: {why}"));
        Ok(Vec::new())
    };
    let cuda = match Cuda::load() {
        Ok(c) => c,
        Err(e) => return not_measured(format!("no libcuda ({e})")),
    };
    let Some(cu) = cuda_device(&cuda, device)? else {
        return not_measured(format!("no CUDA device is `{}`", device.info().name));
    };
    let timeline =
        match device.exportable_timeline_semaphore("hand-off", 0, ExternalHandle::OpaqueFd) {
            Ok(t) => t,
            Err(e) => return not_measured(format!("no exportable timeline semaphore ({e})")),
        };
    let rounds = if opts.quick { 100 } else { 2000 };
    let fd = timeline.export()?;
    // SAFETY (the block): driver API calls on handles made here, out pointers to locals,
    // descriptor structs laid out as cuda.h's; the fd is released from Rust only once
    // CUDA's import took it; everything made is destroyed before returning.
    unsafe {
        let mut ctx = std::ptr::null_mut();
        ok((cuda.ctx_retain)(&mut ctx, cu), "cuDevicePrimaryCtxRetain")?;
        ok((cuda.ctx_set)(ctx), "cuCtxSetCurrent")?;
        let (mut s1, mut s2) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok((cuda.stream_create)(&mut s1, 1), "cuStreamCreate")?;
        ok((cuda.stream_create)(&mut s2, 1), "cuStreamCreate")?;
        let mut sem = std::ptr::null_mut();
        let desc = ExtSemDesc {
            kind: TIMELINE_SEMAPHORE_FD,
            handle: [u64::from(fd.as_raw_fd() as u32), 0],
            flags: 0,
            reserved: [0; 16],
        };
        ok(
            (cuda.import_semaphore)(&mut sem, &desc),
            "cuImportExternalSemaphore",
        )?;
        let _owned_by_cuda = fd.into_raw_fd();
        let main = device.queue(QueueKind::Main);
        let timeout = Duration::from_secs(10);
        let mut kiln_us = Vec::with_capacity(rounds);
        for k in 0..rounds as u64 {
            let t = Instant::now();
            let first = main
                .after(&[])
                .signal(&timeline, 2 * k + 1)
                .submit(|_| Ok(()))?;
            ok(
                (cuda.wait)(&sem, &params(2 * k + 1), 1, s1),
                "cuWaitExternalSemaphoresAsync",
            )?;
            ok(
                (cuda.signal)(&sem, &params(2 * k + 2), 1, s1),
                "cuSignalExternalSemaphoresAsync",
            )?;
            let back = main
                .after(&[])
                .timeline(&timeline, 2 * k + 2)
                .submit(|_| Ok(()))?;
            back.wait_for(timeout)?;
            kiln_us.push(ns_since(t) / 1e3);
            first.wait()?;
        }
        host_sides(
            &cuda,
            (sem, s1),
            device,
            &timeline,
            2 * rounds as u64,
            rounds,
        )?;
        vulkan_only(device, rounds, timeout)?;
        let mut events = [std::ptr::null_mut(); 3];
        for e in &mut events {
            // CU_EVENT_DISABLE_TIMING (2): events for ordering only, as the semaphores are.
            ok((cuda.event_create)(e, 2), "cuEventCreate")?;
        }
        let mut cuda_us = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let t = Instant::now();
            ok((cuda.event_record)(events[0], s1), "cuEventRecord")?;
            ok(
                (cuda.stream_wait_event)(s2, events[0], 0),
                "cuStreamWaitEvent",
            )?;
            ok((cuda.event_record)(events[1], s2), "cuEventRecord")?;
            ok(
                (cuda.stream_wait_event)(s1, events[1], 0),
                "cuStreamWaitEvent",
            )?;
            ok((cuda.event_record)(events[2], s1), "cuEventRecord")?;
            ok((cuda.event_sync)(events[2]), "cuEventSynchronize")?;
            cuda_us.push(ns_since(t) / 1e3);
        }
        ok((cuda.stream_sync)(s1), "cuStreamSynchronize")?;
        ok((cuda.stream_sync)(s2), "cuStreamSynchronize")?;
        for e in events {
            ok((cuda.event_destroy)(e), "cuEventDestroy")?;
        }
        ok((cuda.destroy_semaphore)(sem), "cuDestroyExternalSemaphore")?;
        ok((cuda.stream_destroy)(s1), "cuStreamDestroy")?;
        ok((cuda.stream_destroy)(s2), "cuStreamDestroy")?;
        ok((cuda.ctx_release)(cu), "cuDevicePrimaryCtxRelease")?;
        note(format!(
            "hand-off latency: {rounds} rounds; the raw column is a CUDA-only event round \
             trip between two streams"
        ));
        Ok(vec![Row::new(
            "hand-off Vulkan signal -> CUDA wait/signal -> Vulkan wait (median)",
            "us",
            median(&mut kiln_us),
            median(&mut cuda_us),
        )])
    }
}
