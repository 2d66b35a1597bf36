//! kiln beside CUDA on the same GPU (the H200): CUDA imports kiln's exported buffer and
//! timeline semaphore, a hand-written PTX kernel reads what kiln's dispatch wrote and
//! writes it back, and kiln's next dispatch reads that; only the shared timeline orders
//! the three (no host wait between them); the bytes are checked.
//!
//! The CUDA driver library (`libcuda.so.1`) is loaded at run time (`libloading`): nothing
//! of CUDA is needed to build. Without it (lavapipe machines) the test prints that it ran
//! the Vulkan-only path (kiln's half: the exports CUDA would import, checked), and
//! `KILN_REQUIRE_CUDA=1` makes that a failure, so the H200 runs cannot pass without CUDA.

use std::ffi::{c_int, c_uint, c_void, CStr};
use std::os::fd::IntoRawFd;

use common::{add, assert_clean, device};
use kiln::{vk, BufferDesc, Device, ExternalHandle, MemoryLocation, QueueKind};

const N: usize = 4096;

/// `buf[i] = buf[i] * 2 + 1` over `n` floats (PTX ISA 7.0, JIT-compiled by the driver).
const PTX: &CStr = c".version 7.0
.target sm_70
.address_size 64

.visible .entry twice_plus_one(.param .u64 buf, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<6>;

    ld.param.u64 %rd1, [buf];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    fma.rn.f32 %f2, %f1, 0f40000000, 0f3F800000;
    st.global.f32 [%rd4], %f2;
DONE:
    ret;
}
";

type CuResult = c_int;

/// `CUDA_EXTERNAL_MEMORY_HANDLE_DESC` (cuda.h).
#[repr(C)]
struct ExtMemDesc {
    kind: c_uint,
    handle: [u64; 2],
    size: u64,
    flags: c_uint,
    reserved: [c_uint; 16],
}

/// `CUDA_EXTERNAL_MEMORY_BUFFER_DESC`.
#[repr(C)]
struct ExtBufDesc {
    offset: u64,
    size: u64,
    flags: c_uint,
    reserved: [c_uint; 16],
}

/// `CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC`.
#[repr(C)]
struct ExtSemDesc {
    kind: c_uint,
    handle: [u64; 2],
    flags: c_uint,
    reserved: [c_uint; 16],
}

/// `CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS` and `..._SIGNAL_PARAMS` (the same layout: the
/// fence value first, 72 bytes of parameters, flags, reserved).
#[repr(C)]
struct SemParams {
    value: u64,
    rest: [u64; 8],
    flags: c_uint,
    reserved: [c_uint; 16],
}

const CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD: c_uint = 1;
const CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD: c_uint = 9;
const CUDA_EXTERNAL_MEMORY_DEDICATED: c_uint = 1;

/// The driver API entry points the test calls.
struct Cuda {
    _lib: libloading::Library,
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    device_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult,
    device_uuid: unsafe extern "C" fn(*mut [u8; 16], c_int) -> CuResult,
    ctx_retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> CuResult,
    ctx_release: unsafe extern "C" fn(c_int) -> CuResult,
    ctx_set: unsafe extern "C" fn(*mut c_void) -> CuResult,
    stream_create: unsafe extern "C" fn(*mut *mut c_void, c_uint) -> CuResult,
    stream_sync: unsafe extern "C" fn(*mut c_void) -> CuResult,
    stream_destroy: unsafe extern "C" fn(*mut c_void) -> CuResult,
    module_load: unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> CuResult,
    module_unload: unsafe extern "C" fn(*mut c_void) -> CuResult,
    module_function: unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const i8) -> CuResult,
    #[allow(clippy::type_complexity)]
    launch: unsafe extern "C" fn(
        *mut c_void,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        *mut c_void,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    import_memory: unsafe extern "C" fn(*mut *mut c_void, *const ExtMemDesc) -> CuResult,
    mapped_buffer: unsafe extern "C" fn(*mut u64, *mut c_void, *const ExtBufDesc) -> CuResult,
    destroy_memory: unsafe extern "C" fn(*mut c_void) -> CuResult,
    mem_free: unsafe extern "C" fn(u64) -> CuResult,
    import_semaphore: unsafe extern "C" fn(*mut *mut c_void, *const ExtSemDesc) -> CuResult,
    destroy_semaphore: unsafe extern "C" fn(*mut c_void) -> CuResult,
    wait:
        unsafe extern "C" fn(*const *mut c_void, *const SemParams, c_uint, *mut c_void) -> CuResult,
    signal:
        unsafe extern "C" fn(*const *mut c_void, *const SemParams, c_uint, *mut c_void) -> CuResult,
}

impl Cuda {
    /// Loads `libcuda.so.1` and its entry points; `Err` says why not.
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
            device_count: sym!("cuDeviceGetCount"),
            device_get: sym!("cuDeviceGet"),
            device_uuid: sym!("cuDeviceGetUuid"),
            ctx_retain: sym!("cuDevicePrimaryCtxRetain"),
            ctx_release: sym!("cuDevicePrimaryCtxRelease_v2"),
            ctx_set: sym!("cuCtxSetCurrent"),
            stream_create: sym!("cuStreamCreate"),
            stream_sync: sym!("cuStreamSynchronize"),
            stream_destroy: sym!("cuStreamDestroy_v2"),
            module_load: sym!("cuModuleLoadData"),
            module_unload: sym!("cuModuleUnload"),
            module_function: sym!("cuModuleGetFunction"),
            launch: sym!("cuLaunchKernel"),
            import_memory: sym!("cuImportExternalMemory"),
            mapped_buffer: sym!("cuExternalMemoryGetMappedBuffer"),
            destroy_memory: sym!("cuDestroyExternalMemory"),
            mem_free: sym!("cuMemFree_v2"),
            import_semaphore: sym!("cuImportExternalSemaphore"),
            destroy_semaphore: sym!("cuDestroyExternalSemaphore"),
            wait: sym!("cuWaitExternalSemaphoresAsync"),
            signal: sym!("cuSignalExternalSemaphoresAsync"),
            _lib: lib,
        })
    }
}

#[track_caller]
fn ok(r: CuResult, what: &str) {
    assert_eq!(r, 0, "{what} failed: CUresult {r}");
}

/// The Vulkan device's UUID (`VkPhysicalDeviceIDProperties::deviceUUID`), which CUDA's
/// `cuDeviceGetUuid` reports for the same GPU.
fn vulkan_uuid(device: &Device) -> [u8; 16] {
    let mut id = vk::PhysicalDeviceIDProperties::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
    // SAFETY: a plain query on the device's own instance and physical device.
    unsafe {
        device
            .raw_instance()
            .get_physical_device_properties2(device.raw_physical_device(), &mut props)
    };
    id.device_uuid
}

#[test]
fn cuda_reads_and_writes_kilns_buffer_ordered_by_the_shared_timeline() {
    let required = std::env::var("KILN_REQUIRE_CUDA").as_deref() == Ok("1");
    let device = device();
    let cuda = match Cuda::load() {
        Ok(c) => c,
        Err(why) => {
            assert!(
                !required,
                "KILN_REQUIRE_CUDA=1 but the CUDA driver is missing: {why}"
            );
            vulkan_half_only(&device, &why);
            return;
        }
    };
    // SAFETY: cuInit has no preconditions.
    ok(unsafe { (cuda.init)(0) }, "cuInit");
    let uuid = vulkan_uuid(&device);
    let mut count = 0;
    // SAFETY: out pointer to a local.
    ok(
        unsafe { (cuda.device_count)(&mut count) },
        "cuDeviceGetCount",
    );
    let cu_device = (0..count).find_map(|i| {
        let (mut d, mut u) = (0, [0u8; 16]);
        // SAFETY: out pointers to locals; `i` is below the count.
        unsafe {
            ok((cuda.device_get)(&mut d, i), "cuDeviceGet");
            ok((cuda.device_uuid)(&mut u, d), "cuDeviceGetUuid");
        }
        (u == uuid).then_some(d)
    });
    let Some(cu_device) = cu_device else {
        assert!(
            !required,
            "no CUDA device has the UUID of `{}`",
            device.info().name
        );
        vulkan_half_only(&device, "no CUDA device is kiln's Vulkan device");
        return;
    };
    run_with_cuda(&cuda, cu_device, &device);
    assert_clean(&device);
    println!("path: CUDA imported kiln's buffer and timeline semaphore; bytes checked");
}

/// Without CUDA: kiln's half (the buffer and semaphore CUDA would import, exported), so
/// the test still checks something and says which path ran.
fn vulkan_half_only(device: &Device, why: &str) {
    println!("path: no CUDA ({why}); Vulkan-only path: exports checked, no CUDA import");
    let f = device.features();
    let desc = BufferDesc::default()
        .label("for cuda")
        .size((N * 4) as u64)
        .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
        .location(MemoryLocation::GpuOnly);
    match device.exportable_buffer(&desc, ExternalHandle::OpaqueFd) {
        Ok(b) => {
            let (fd, m) = b.export_memory().unwrap();
            assert!(m.allocation_size >= desc.size);
            let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
            assert!(std::fs::metadata(path).is_ok(), "the exported fd is open");
            let t = device.exportable_timeline_semaphore("for cuda", 0, ExternalHandle::OpaqueFd);
            match t {
                Ok(t) => drop(t.export().unwrap()),
                Err(e) => assert_eq!(e.code(), "KILN-E163", "{e}"),
            }
        }
        Err(e) => assert!(!f.external_memory_fd && e.code() == "KILN-E163", "{e}"),
    }
    assert_clean(device);
}

fn run_with_cuda(cuda: &Cuda, cu_device: c_int, device: &Device) {
    let desc = BufferDesc::default()
        .label("shared with cuda")
        .size((N * 4) as u64)
        .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
        .location(MemoryLocation::GpuOnly);
    let shared = device
        .exportable_buffer(&desc, ExternalHandle::OpaqueFd)
        .unwrap();
    let timeline = device
        .exportable_timeline_semaphore("kiln-cuda", 0, ExternalHandle::OpaqueFd)
        .unwrap();
    let (mem_fd, memory) = shared.export_memory().unwrap();
    let sem_fd = timeline.export().unwrap();
    // kiln: shared = a + b = i + 0.5; later out = shared + shared.
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let pipeline = add::vector_add(device);
    let (a_buf, b_buf) = (
        add::storage(device, "a", &a),
        add::storage(device, "b", &vec![0.5f32; N]),
    );
    let out = device.storage_buffer::<f32>("out", N).unwrap();
    let first = add::set(&pipeline, &a_buf, &b_buf, &shared);
    let second = add::set(&pipeline, &shared, &shared, &out);
    // SAFETY (the block): driver API calls with live handles made above, out pointers to
    // locals, descriptor structs laid out as cuda.h's; each fd handed to CUDA is released
    // from Rust ownership only once its import succeeded (CUDA owns it then).
    unsafe {
        let mut ctx = std::ptr::null_mut();
        ok(
            (cuda.ctx_retain)(&mut ctx, cu_device),
            "cuDevicePrimaryCtxRetain",
        );
        ok((cuda.ctx_set)(ctx), "cuCtxSetCurrent");
        let mut stream = std::ptr::null_mut();
        ok((cuda.stream_create)(&mut stream, 1), "cuStreamCreate");
        let mut module = std::ptr::null_mut();
        ok(
            (cuda.module_load)(&mut module, PTX.as_ptr().cast()),
            "cuModuleLoadData",
        );
        let mut function = std::ptr::null_mut();
        ok(
            (cuda.module_function)(&mut function, module, c"twice_plus_one".as_ptr()),
            "cuModuleGetFunction",
        );
        let mut ext_mem = std::ptr::null_mut();
        let mem_desc = ExtMemDesc {
            kind: CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD,
            handle: [
                u64::from(std::os::fd::AsRawFd::as_raw_fd(&mem_fd) as u32),
                0,
            ],
            size: memory.allocation_size,
            flags: CUDA_EXTERNAL_MEMORY_DEDICATED,
            reserved: [0; 16],
        };
        ok(
            (cuda.import_memory)(&mut ext_mem, &mem_desc),
            "cuImportExternalMemory",
        );
        let _owned_by_cuda = mem_fd.into_raw_fd();
        let mut ptr = 0u64;
        let buf_desc = ExtBufDesc {
            offset: 0,
            size: desc.size,
            flags: 0,
            reserved: [0; 16],
        };
        ok(
            (cuda.mapped_buffer)(&mut ptr, ext_mem, &buf_desc),
            "cuExternalMemoryGetMappedBuffer",
        );
        let mut ext_sem = std::ptr::null_mut();
        let sem_desc = ExtSemDesc {
            kind: CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD,
            handle: [
                u64::from(std::os::fd::AsRawFd::as_raw_fd(&sem_fd) as u32),
                0,
            ],
            flags: 0,
            reserved: [0; 16],
        };
        ok(
            (cuda.import_semaphore)(&mut ext_sem, &sem_desc),
            "cuImportExternalSemaphore",
        );
        let _owned_by_cuda = sem_fd.into_raw_fd();
        let main = device.queue(QueueKind::Main);
        // kiln → 1 → CUDA → 2 → kiln, all enqueued before any host wait.
        let write = main
            .after(&[])
            .signal(&timeline, 1)
            .submit(|r| add::dispatch(r, &pipeline, &first, N as u32))
            .unwrap();
        let params = |value| SemParams {
            value,
            rest: [0; 8],
            flags: 0,
            reserved: [0; 16],
        };
        ok(
            (cuda.wait)(&ext_sem, &params(1), 1, stream),
            "cuWaitExternalSemaphoresAsync",
        );
        let mut n = N as c_uint;
        let mut args = [
            (&mut ptr as *mut u64).cast::<c_void>(),
            (&mut n as *mut c_uint).cast::<c_void>(),
        ];
        let blocks = (N as c_uint).div_ceil(256);
        ok(
            (cuda.launch)(
                function,
                blocks,
                1,
                1,
                256,
                1,
                1,
                0,
                stream,
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            ),
            "cuLaunchKernel",
        );
        ok(
            (cuda.signal)(&ext_sem, &params(2), 1, stream),
            "cuSignalExternalSemaphoresAsync",
        );
        let read = main
            .after(&[])
            .timeline(&timeline, 2)
            .submit(|r| add::dispatch(r, &pipeline, &second, N as u32))
            .unwrap();
        read.wait().unwrap();
        write.wait().unwrap();
        ok((cuda.stream_sync)(stream), "cuStreamSynchronize");
        assert_eq!(timeline.value().unwrap(), 2);
        // CUDA: (i + 0.5) * 2 + 1 = 2i + 2; kiln: twice that.
        let got = out.read::<f32>().unwrap();
        for (i, v) in got.iter().enumerate() {
            assert_eq!(*v, 4.0 * i as f32 + 4.0, "element {i}");
        }
        ok(
            (cuda.destroy_semaphore)(ext_sem),
            "cuDestroyExternalSemaphore",
        );
        ok((cuda.mem_free)(ptr), "cuMemFree");
        ok((cuda.destroy_memory)(ext_mem), "cuDestroyExternalMemory");
        ok((cuda.module_unload)(module), "cuModuleUnload");
        ok((cuda.stream_destroy)(stream), "cuStreamDestroy");
        ok((cuda.ctx_release)(cu_device), "cuDevicePrimaryCtxRelease");
    }
}
