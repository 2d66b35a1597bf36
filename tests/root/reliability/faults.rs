//! Fault injection (issue 17, part 3b): chosen Vulkan calls fail with a chosen `VkResult`
//! at their `n`th call (`kiln::hooks::FaultInjector`, test-only). Each case checks the
//! coded error, that the device is usable afterwards where Vulkan allows it (later work
//! succeeds, with exact values) and reports itself lost where it does not, and that
//! teardown leaks nothing (the validation layer's object tracker stays silent, gpu-allocator
//! reports no leak). The presenter's sites (acquire, present, a frame's submission and
//! fence wait) are injected into a real swapchain in `tests/window.rs`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::add::{self, vector_add};
use common::gate::Gate;
use common::{allocator_warnings, assert_watch_clean, code, faulty_device};
use kiln::hooks::{FaultInjector, FaultSite};
use kiln::{vk, BufferDesc, Device, ImageDesc, MemoryLocation};

/// Faults injected by this module's tests (printed by each).
static INJECTED: AtomicU64 = AtomicU64::new(0);

/// What a case does with the device to reach its site once.
type Action = fn(&Device) -> kiln::Result<()>;

fn buffer(d: &Device) -> kiln::Result<()> {
    d.buffer(
        &BufferDesc::default()
            .label("victim")
            .size(4096)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
            .location(MemoryLocation::GpuOnly),
    )
    .map(drop)
    .map_err(Into::into)
}

fn image(d: &Device) -> kiln::Result<()> {
    d.image(&ImageDesc::texture(
        "victim",
        16,
        16,
        vk::Format::R8G8B8A8_UNORM,
    ))
    .map(drop)
    .map_err(Into::into)
}

fn compute_pipeline(d: &Device) -> kiln::Result<()> {
    let m = kiln::include_spirv!("vector_add.comp")?;
    Ok(d.compute_pipeline(&m, "main").map(drop)?)
}

fn graphics_pipeline(d: &Device) -> kiln::Result<()> {
    common::draw::flat_pipeline(d, vk::Format::R8G8B8A8_UNORM).map(drop)
}

fn descriptor_set(d: &Device) -> kiln::Result<()> {
    let p = vector_add(d);
    let buf = d.storage_buffer::<f32>("b", 4)?;
    let mut set = p.descriptor_set(0)?;
    for b in 0..3 {
        set.write_buffer(b, &buf)?;
    }
    d.execute(|r| add::dispatch(r, &p, &set, 4))?;
    assert_eq!(buf.read::<f32>()?, vec![0.0; 4]);
    Ok(())
}

fn execute(d: &Device) -> kiln::Result<()> {
    let buf = d.storage_buffer::<u32>("filled", 16)?;
    // The fault is armed for the next submission: the fill below, not the zero fill above.
    ARM.with(|a| a.take().map(|f| f()));
    d.execute(|r| Ok(r.fill_buffer(&buf, 9)?))
}

/// A gated submission (so the wait really has to wait), waited for: the wait site.
fn wait(d: &Device) -> kiln::Result<()> {
    let gate = Gate::new(d);
    let sub = gate.submit_on(&d.queue(kiln::QueueKind::Main), |_| Ok(()))?;
    ARM.with(|a| a.take().map(|f| f()));
    let r = sub.wait();
    gate.open();
    Ok(r?)
}

thread_local! {
    /// Arms the fault of a case whose action must reach a point before the site is counted
    /// (`execute`, `wait`): set by `run_case`, taken by the action.
    static ARM: std::cell::Cell<Option<Box<dyn FnOnce()>>> = const { std::cell::Cell::new(None) };
}

struct Case {
    site: FaultSite,
    result: vk::Result,
    action: Action,
    /// The code the action returns (`"ok"`: the fault is absorbed).
    code: &'static str,
    /// Arm inside the action (right before the site) instead of before it.
    late: bool,
}

/// Runs one case on a fresh device: arms the fault, runs the action, checks the code, then
/// that the device works (or is lost), and that teardown is clean.
fn run_case(c: &Case) {
    let faults = Arc::new(FaultInjector::new());
    let device = faulty_device(&faults);
    let watch = device.validation_watch();
    let before = allocator_warnings().len();
    let (site, result) = (c.site, c.result);
    if c.late {
        let f = faults.clone();
        ARM.with(|a| a.set(Some(Box::new(move || f.fail_nth(site, 1, result)))));
    } else {
        faults.fail_nth(site, 1, result);
    }
    let got = code((c.action)(&device));
    ARM.with(|a| a.set(None));
    assert_eq!(got, c.code, "{site:?} failing with {result:?}");
    assert_eq!(faults.injected(), 1, "{site:?}: the fault was not reached");
    assert_eq!(faults.pending(), 0);
    INJECTED.fetch_add(1, Ordering::Relaxed);
    if result == vk::Result::ERROR_DEVICE_LOST {
        // Lost: every later submission and wait says so; objects can still be dropped.
        assert!(device.is_lost(), "{site:?}");
        let err = device.execute(|r| Ok(r.barrier()?)).unwrap_err();
        assert_eq!(err.code(), "KILN-E105");
        assert!(
            err.to_string().contains("device must be recreated"),
            "{err}"
        );
        assert_eq!(code(device.wait_idle()), "KILN-E105");
    } else {
        assert!(!device.is_lost(), "{site:?}");
        // Later work succeeds, through every site again.
        add::still_works(&device);
        buffer(&device).unwrap();
        image(&device).unwrap();
        graphics_pipeline(&device).unwrap();
    }
    drop(device);
    assert_watch_clean(&watch);
    let leaks: Vec<String> = allocator_warnings().split_off(before);
    assert!(
        leaks.is_empty(),
        "{site:?}: gpu-allocator reported {leaks:?}"
    );
}

#[test]
fn every_fault_site_returns_its_code_and_leaks_nothing() {
    use vk::Result as R;
    use FaultSite as S;
    let case = |site, result, action: Action, code| Case {
        site,
        result,
        action,
        code,
        late: false,
    };
    let late = |site, result, action: Action, code| Case {
        late: true,
        ..case(site, result, action, code)
    };
    let cases = [
        case(
            S::AllocateMemory,
            R::ERROR_OUT_OF_DEVICE_MEMORY,
            buffer,
            "KILN-E150",
        ),
        case(
            S::AllocateMemory,
            R::ERROR_OUT_OF_HOST_MEMORY,
            image,
            "KILN-E150",
        ),
        case(
            S::CreateBuffer,
            R::ERROR_OUT_OF_DEVICE_MEMORY,
            buffer,
            "KILN-E106",
        ),
        case(
            S::CreateBuffer,
            R::ERROR_OUT_OF_HOST_MEMORY,
            buffer,
            "KILN-E106",
        ),
        case(
            S::CreateImage,
            R::ERROR_OUT_OF_DEVICE_MEMORY,
            image,
            "KILN-E106",
        ),
        case(
            S::CreatePipeline,
            R::ERROR_OUT_OF_HOST_MEMORY,
            compute_pipeline,
            "KILN-E106",
        ),
        case(
            S::CreatePipeline,
            R::ERROR_OUT_OF_DEVICE_MEMORY,
            graphics_pipeline,
            "KILN-E106",
        ),
        // A full pool is not an error: kiln makes a new pool and the set works.
        case(
            S::AllocateDescriptorSets,
            R::ERROR_OUT_OF_POOL_MEMORY,
            descriptor_set,
            "ok",
        ),
        case(
            S::AllocateDescriptorSets,
            R::ERROR_OUT_OF_HOST_MEMORY,
            descriptor_set,
            "KILN-E106",
        ),
        late(
            S::QueueSubmit,
            R::ERROR_OUT_OF_HOST_MEMORY,
            execute,
            "KILN-E106",
        ),
        late(
            S::QueueSubmit,
            R::ERROR_OUT_OF_DEVICE_MEMORY,
            execute,
            "KILN-E106",
        ),
        late(S::QueueSubmit, R::ERROR_DEVICE_LOST, execute, "KILN-E105"),
        late(S::Wait, R::ERROR_OUT_OF_DEVICE_MEMORY, wait, "KILN-E106"),
        late(S::Wait, R::ERROR_DEVICE_LOST, wait, "KILN-E105"),
    ];
    for c in &cases {
        run_case(c);
    }
    println!(
        "fault injection: {} faults injected over {} cases, {} sites",
        INJECTED.load(Ordering::Relaxed),
        cases.len(),
        FaultSite::ALL.len()
    );
}

/// A reusable recording whose submission fails stays usable: nothing was stamped or
/// committed, and the next submission runs it with the right results.
#[test]
fn a_recording_whose_submission_fails_runs_next_time() {
    let faults = Arc::new(FaultInjector::new());
    let device = faulty_device(&faults);
    let watch = device.validation_watch();
    let p = vector_add(&device);
    let a = add::storage(&device, "a", &[1.0f32, 2.0, 3.0]);
    let c = device.storage_buffer::<f32>("c", 3).unwrap();
    let set = add::set(&p, &a, &a, &c);
    let mut rec = device.record(|r| add::dispatch(r, &p, &set, 3)).unwrap();
    faults.fail_nth(
        FaultSite::QueueSubmit,
        1,
        vk::Result::ERROR_OUT_OF_HOST_MEMORY,
    );
    assert_eq!(code(rec.submit()), "KILN-E106");
    assert_eq!(c.read::<f32>().unwrap(), vec![0.0; 3], "nothing ran");
    rec.execute().unwrap();
    assert_eq!(c.read::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
    assert_eq!(faults.injected(), 1);
    drop(rec);
    drop((set, c, a, p, device));
    assert_watch_clean(&watch);
}

/// A staged (chunked) upload whose `n`th chunk submission fails returns the error, gives
/// its staging buffers back, and the same upload succeeds afterwards.
#[test]
fn a_staged_transfer_whose_chunk_submission_fails_recovers() {
    let faults = Arc::new(FaultInjector::new());
    let device = faulty_device(&faults);
    let watch = device.validation_watch();
    device.debug_force_staging(true);
    // Six chunks of the smallest size (1 MiB).
    device.debug_set_staging_chunk(1 << 20);
    let data: Vec<u32> = (0..6 << 18).map(|i| i * 3 + 1).collect();
    let buf = device
        .buffer(
            &BufferDesc::default()
                .label("staged")
                .size(4 * data.len() as u64)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::GpuOnly),
        )
        .unwrap();
    for nth in [1, 2, 5] {
        faults.fail_nth(
            FaultSite::QueueSubmit,
            nth,
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
        );
        assert_eq!(code(buf.upload(&data)), "KILN-E106", "chunk {nth}");
        assert_eq!(faults.pending(), 0, "chunk {nth} was not submitted");
        buf.upload(&data).unwrap();
        assert_eq!(buf.read::<u32>().unwrap(), data, "after chunk {nth} failed");
        faults.fail_nth(
            FaultSite::QueueSubmit,
            nth,
            vk::Result::ERROR_OUT_OF_HOST_MEMORY,
        );
        assert_eq!(code(buf.read::<u32>()), "KILN-E106", "readback chunk {nth}");
        assert_eq!(buf.read::<u32>().unwrap(), data);
    }
    assert_eq!(faults.injected(), 6);
    INJECTED.fetch_add(6, Ordering::Relaxed);
    drop(buf);
    drop(device);
    assert_watch_clean(&watch);
}
