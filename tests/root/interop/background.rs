//! Compute pipelines compiled in the background (`Device::compute_pipeline_async`): 24
//! specializations compiled on the pipeline threads at once, each then dispatched and its
//! bytes checked; a pipeline asked for while it compiles (`NotReady::Error`: `KILN-E269`;
//! `NotReady::Wait`: it waits); a failing creation reported through the handle; pipelines
//! dropped before and while compiling (no hang, no leak: the device is torn down clean).

use common::{add, assert_clean, assert_watch_clean, code, device};
use kiln::{ComputePipelineDesc, NotReady, SpecValue};

const N: u32 = 256;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Pc {
    scale: f32,
    n: u32,
}

#[test]
fn specializations_compile_in_parallel_and_each_dispatches() {
    let device = device();
    let module = kiln::include_spirv!("test/state_a.comp").unwrap();
    let specs: Vec<[(u32, SpecValue); 1]> =
        (0..24).map(|k| [(0, SpecValue::F32(k as f32))]).collect();
    let before = device.debug_pipelines_created_async();
    let mut pending: Vec<_> = specs
        .iter()
        .map(|spec| {
            device
                .compute_pipeline_async(&ComputePipelineDesc::new(&module, "main").spec(spec))
                .unwrap()
        })
        .collect();
    let src = add::storage(&device, "src", &vec![1.0f32; N as usize]);
    for (k, p) in pending.iter_mut().enumerate() {
        let pipeline = p.get(NotReady::Wait).unwrap();
        let dst = device.storage_buffer::<f32>("dst", N as usize).unwrap();
        let mut out = pipeline.descriptor_set(0).unwrap();
        out.write_buffer(0, &dst).unwrap();
        let mut inp = pipeline.descriptor_set(1).unwrap();
        inp.write_buffer(0, &src).unwrap();
        device
            .execute(|r| {
                r.bind_pipeline(pipeline)?;
                r.bind_set(0, &out)?;
                r.bind_set(1, &inp)?;
                r.push(0, &Pc { scale: 1.0, n: N })?;
                Ok(r.dispatch_threads(N)?)
            })
            .unwrap();
        assert_eq!(dst.read::<f32>().unwrap(), vec![1.0 + k as f32; N as usize]);
    }
    assert!(pending.iter().all(|p| p.is_ready()));
    assert_eq!(device.debug_pipelines_created_async() - before, 24);
    assert_clean(&device);
}

#[test]
fn a_pipeline_not_ready_waits_or_is_e269_and_dropped_ones_neither_hang_nor_leak() {
    let device = device();
    let watch = device.validation_watch();
    let module = kiln::include_spirv!("vector_add.comp").unwrap();
    let desc = ComputePipelineDesc::new(&module, "main");
    device.debug_hold_pipeline_threads(true);
    let mut held = device.compute_pipeline_async(&desc).unwrap();
    let dropped_before = device.compute_pipeline_async(&desc).unwrap();
    assert!(!held.is_ready());
    let e = held.get(NotReady::Error).unwrap_err();
    assert_eq!(e.code(), "KILN-E269", "{e}");
    assert!(e.to_string().contains("still compiling"), "{e}");
    drop(dropped_before); // cancelled before it started: never created
    let before = device.debug_pipelines_created_async();
    device.debug_hold_pipeline_threads(false);
    held.get(NotReady::Wait).unwrap();
    assert!(held.is_ready());
    add::still_works(&device);
    assert_eq!(device.debug_pipelines_created_async() - before, 1);
    // Dropped while (or before) the driver compiles: the job drops the pipeline.
    for _ in 0..8 {
        drop(device.compute_pipeline_async(&desc).unwrap());
    }
    // A creation that fails is the handle's error, then E269.
    let mut bad = device
        .compute_pipeline_async(&ComputePipelineDesc::new(&module, "no_such_entry"))
        .unwrap();
    assert_eq!(code(bad.get(NotReady::Wait)), "KILN-E050");
    assert_eq!(code(bad.get(NotReady::Wait)), "KILN-E269");
    let p = held.wait().unwrap();
    assert_eq!(p.workgroup_size(), [256, 1, 1]);
    drop(p);
    drop(device);
    // Jobs still running hold the device; it is torn down once they finish (no hang).
    let start = std::time::Instant::now();
    while !watch.torn_down() && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_watch_clean(&watch);
}
