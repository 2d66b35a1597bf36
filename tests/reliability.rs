//! Reliability: deferred destruction, failure paths as coded errors, synchronization
//! validation, threads, teardown. Each test checks the specific error and that later work
//! still succeeds on the same device.

use common::{assert_clean, assert_watch_clean, device};
use kiln::{vk, ComputePipelineDesc, SpecValue};

fn vector_add_pipeline(device: &kiln::Device) -> kiln::ComputePipeline {
    device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap()
}

/// Runs c = a + b for n elements and checks it (proves the device still works).
fn still_works(device: &kiln::Device) {
    let p = vector_add_pipeline(device);
    let a = device
        .buffer_from_slice(
            "a",
            vk::BufferUsageFlags::STORAGE_BUFFER,
            &[1.0f32, 2.0, 3.0],
        )
        .unwrap();
    let c = device.storage_buffer::<f32>("c", 3).unwrap();
    let mut set = p.new_set(0).unwrap();
    set.write_buffer(0, &a).unwrap();
    set.write_buffer(1, &a).unwrap();
    set.write_buffer(2, &c).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &set)?;
            r.dispatch_threads(3)
        })
        .unwrap();
    assert_eq!(c.read::<f32>(device).unwrap(), vec![2.0, 4.0, 6.0]);
}

#[test]
fn resources_dropped_right_after_submit_live_until_the_gpu_is_done() {
    let device = device();
    let n = 1 << 20;
    let out = device.storage_buffer::<f32>("out", n).unwrap();
    let submission = {
        let p = vector_add_pipeline(&device);
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let a = device
            .buffer_from_slice("a", vk::BufferUsageFlags::STORAGE_BUFFER, &a)
            .unwrap();
        let mut set = p.new_set(0).unwrap();
        set.write_buffer(0, &a).unwrap();
        set.write_buffer(1, &a).unwrap();
        set.write_buffer(2, &out).unwrap();
        let s = device
            .submit(|r| {
                r.bind_pipeline(&p);
                r.bind_set(0, &set)?;
                r.dispatch_threads(n as u32)
            })
            .unwrap();
        // Pipeline, set, input buffer and (through the pipeline) its layouts are dropped
        // here, while the dispatch may still run. Destroying them now would be
        // VUID-vkDestroyBuffer-buffer-00922 / VUID-vkDestroyPipeline-pipeline-00765.
        s
    };
    submission.wait().unwrap();
    let got: Vec<f32> = out.read(&device).unwrap();
    assert!(got.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32));
    assert_clean(&device);
}

#[test]
fn rewriting_a_set_waits_for_the_submission_using_it() {
    let device = device();
    let p = vector_add_pipeline(&device);
    let one = device
        .buffer_from_slice("one", vk::BufferUsageFlags::STORAGE_BUFFER, &[1.0f32; 64])
        .unwrap();
    let two = device
        .buffer_from_slice("two", vk::BufferUsageFlags::STORAGE_BUFFER, &[2.0f32; 64])
        .unwrap();
    let out = device.storage_buffer::<f32>("out", 64).unwrap();
    let mut set = p.new_set(0).unwrap();
    set.write_buffer(0, &one).unwrap();
    set.write_buffer(1, &one).unwrap();
    set.write_buffer(2, &out).unwrap();
    let s = device
        .submit(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &set)?;
            r.dispatch_threads(64)
        })
        .unwrap();
    // Updating a set in use is VUID-vkUpdateDescriptorSets-None-03047; kiln waits instead.
    set.write_buffer(1, &two).unwrap();
    assert!(s.is_done());
    s.wait().unwrap();
    assert_eq!(out.read::<f32>(&device).unwrap(), vec![2.0; 64]);
    assert_clean(&device);
}

#[test]
fn a_single_allocation_beyond_the_heap_is_an_error_and_the_device_continues() {
    let device = device();
    let heaps = device.heap_usage();
    let biggest = heaps.iter().map(|h| h.1).max().unwrap();
    let err = device
        .create_buffer(&kiln::BufferDesc {
            label: "huge",
            size: biggest + (1 << 20),
            usage: vk::BufferUsageFlags::STORAGE_BUFFER,
            location: kiln::MemoryLocation::GpuOnly,
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E154", "{err}");
    still_works(&device);
    assert_clean(&device);
}

#[test]
fn allocate_until_the_heap_is_full_then_free_and_continue() {
    let device = device();
    let chunk = 256u64 << 20;
    let mut held = Vec::new();
    let err = loop {
        match device.create_buffer(&kiln::BufferDesc {
            label: "filler",
            size: chunk,
            usage: vk::BufferUsageFlags::STORAGE_BUFFER,
            location: kiln::MemoryLocation::GpuOnly,
        }) {
            Ok(b) => held.push(b),
            Err(e) => break e,
        }
        assert!(held.len() < 4096, "the heap never filled up");
    };
    assert!(
        matches!(err.code(), "KILN-E154" | "KILN-E150" | "KILN-E106"),
        "{err}"
    );
    assert!(!held.is_empty());
    held.clear();
    let (used, _) = device.heap_usage()[0];
    assert!(
        used < chunk,
        "memory was not returned: {used} bytes still counted"
    );
    still_works(&device);
    assert_clean(&device);
}

#[test]
fn capability_the_device_lacks_is_refused_before_pipeline_creation() {
    let device = device();
    let m = kiln::include_spirv!("test/image_load_formatted.comp").unwrap();
    assert!(m
        .reflection()
        .capabilities
        .iter()
        .any(|c| c == "StorageImageReadWithoutFormat"));
    match device.compute_pipeline(&m, "main") {
        Ok(_) => assert!(
            device.features().shader_storage_image_read_without_format,
            "pipeline created although the feature is missing"
        ),
        Err(e) => {
            assert_eq!(e.code(), "KILN-E107", "{e}");
            let msg = e.to_string();
            assert!(msg.contains("shaderStorageImageReadWithoutFormat"), "{msg}");
            assert!(msg.contains(&device.info().name), "{msg}");
        }
    }
    still_works(&device);
    assert_clean(&device);
}

#[test]
fn limits_are_errors_not_validation_messages() {
    let device = device();
    let l = *device.limits();
    // Push constants beyond maxPushConstantsSize.
    let big = kiln::include_spirv!("test/big_push.comp").unwrap();
    if l.max_push_constants_size < 256 {
        let e = device.compute_pipeline(&big, "main").unwrap_err();
        assert_eq!(e.code(), "KILN-E053", "{e}");
    }
    // Descriptor counts beyond maxPerStageDescriptorStorageBuffers.
    let many = kiln::include_spirv!("test/many_buffers.comp").unwrap();
    if l.max_per_stage_descriptor_storage_buffers < 40 {
        let e = device.compute_pipeline(&many, "main").unwrap_err();
        assert_eq!(e.code(), "KILN-E057", "{e}");
        assert!(
            e.to_string()
                .contains("maxPerStageDescriptorStorageBuffers"),
            "{e}"
        );
    }
    // Workgroup size (from a specialization constant) beyond the limits.
    let spec = kiln::include_spirv!("test/spec_fill.comp").unwrap();
    let too_big = l.max_compute_work_group_invocations + 1;
    let e = device
        .compute_pipeline_with(&ComputePipelineDesc {
            module: &spec,
            entry: "main",
            spec: &[(0, SpecValue::U32(too_big))],
            layout: None,
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E054", "{e}");
    // The same module with a legal size works, and the size is honoured.
    let p = device
        .compute_pipeline_with(&ComputePipelineDesc {
            module: &spec,
            entry: "main",
            spec: &[(0, SpecValue::U32(48))],
            layout: None,
        })
        .unwrap();
    assert_eq!(p.workgroup_size(), [48, 1, 1]);
    let out = device.storage_buffer::<u32>("v", 100).unwrap();
    let mut set = p.new_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    // Dispatch group count beyond maxComputeWorkGroupCount.
    let e = device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &set)?;
            r.dispatch(l.max_compute_work_group_count[0].saturating_add(1), 1, 1)
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E253", "{e}");
    device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &set)?;
            r.dispatch_threads(100)
        })
        .unwrap();
    assert_eq!(
        out.read::<u32>(&device).unwrap(),
        (0..100).collect::<Vec<u32>>()
    );
    assert_clean(&device);
}

#[test]
fn synchronization_validation_is_on_and_kiln_barriers_keep_it_quiet() {
    let device = device();
    let p = vector_add_pipeline(&device);
    let a = device
        .buffer_from_slice("a", vk::BufferUsageFlags::STORAGE_BUFFER, &[1.0f32; 256])
        .unwrap();
    let c = device.storage_buffer::<f32>("c", 256).unwrap();
    let mut set = p.new_set(0).unwrap();
    set.write_buffer(0, &a).unwrap();
    set.write_buffer(1, &a).unwrap();
    set.write_buffer(2, &c).unwrap();
    // Two dispatches writing the same buffer: kiln's automatic barrier orders them.
    device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &set)?;
            r.dispatch_threads(256)?;
            r.dispatch_threads(256)
        })
        .unwrap();
    assert_clean(&device);
    // Without a barrier, synchronization validation reports the write-after-write hazard:
    // proof that it is enabled, so the silence above means something. (Recorded through the
    // unchecked path: two fills of one buffer with no barrier between them.)
    device
        .execute(|r| {
            // SAFETY (test): valid commands on a live buffer; only the ordering is missing.
            unsafe {
                let raw = device.raw();
                raw.cmd_fill_buffer(r.raw(), c.raw(), 0, vk::WHOLE_SIZE, 1);
                raw.cmd_fill_buffer(r.raw(), c.raw(), 0, vk::WHOLE_SIZE, 2);
            }
            Ok(())
        })
        .unwrap();
    let report = device.validation_report();
    assert!(
        report
            .messages
            .iter()
            .any(|m| m.contains("SYNC-HAZARD-WRITE-AFTER-WRITE")),
        "{report:?}"
    );
}

#[test]
fn recording_on_several_threads_at_once() {
    let device = device();
    let p = vector_add_pipeline(&device);
    std::thread::scope(|scope| {
        for t in 0..4u32 {
            let device = device.clone();
            let p = &p;
            scope.spawn(move || {
                for k in 0..10u32 {
                    let v = (t * 100 + k) as f32;
                    let a = device
                        .buffer_from_slice("a", vk::BufferUsageFlags::STORAGE_BUFFER, &[v; 300])
                        .unwrap();
                    let c = device.storage_buffer::<f32>("c", 300).unwrap();
                    let mut set = p.new_set(0).unwrap();
                    set.write_buffer(0, &a).unwrap();
                    set.write_buffer(1, &a).unwrap();
                    set.write_buffer(2, &c).unwrap();
                    device
                        .execute(|r| {
                            r.bind_pipeline(p);
                            r.bind_set(0, &set)?;
                            r.dispatch_threads(300)
                        })
                        .unwrap();
                    assert_eq!(c.read::<f32>(&device).unwrap(), vec![2.0 * v; 300]);
                }
            });
        }
    });
    assert_clean(&device);
}

#[test]
fn the_layout_interner_returns_one_handle_under_concurrent_requests() {
    let device = device();
    let m = kiln::include_spirv!("test/scale_order_a.comp").unwrap();
    let handles: Vec<(vk::DescriptorSetLayout, u64, kiln::ComputePipeline)> =
        std::thread::scope(|scope| {
            let joins: Vec<_> = (0..8)
                .map(|_| {
                    let device = device.clone();
                    let m = &m;
                    scope.spawn(move || {
                        let p = device.compute_pipeline(m, "main").unwrap();
                        let l = &p.layout().set_layouts()[0];
                        (l.raw(), l.id(), p)
                    })
                })
                .collect();
            joins.into_iter().map(|j| j.join().unwrap()).collect()
        });
    assert!(handles
        .iter()
        .all(|h| h.0 == handles[0].0 && h.1 == handles[0].1));
    drop(handles);
    assert_clean(&device);
}

#[test]
fn teardown_frees_every_allocation_and_object() {
    let device = device();
    let watch = device.validation_watch();
    still_works(&device);
    // Staged transfers keep their staging buffers for reuse; freeing them leaves nothing.
    let (_, staging_bytes) = device.staging_usage();
    assert_eq!(device.release_staging_memory(), staging_bytes);
    assert_eq!(device.staging_usage(), (0, 0));
    let (allocations, bytes, _) = device.memory_report();
    assert_eq!(
        (allocations, bytes),
        (0, 0),
        "gpu-allocator still holds memory"
    );
    assert!(device.heap_usage().iter().all(|(used, _)| *used == 0));
    drop(device);
    assert_watch_clean(&watch);
}
