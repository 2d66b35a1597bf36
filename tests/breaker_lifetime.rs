//! Breaker: lifetimes across submissions, devices and threads. Every test ends with the
//! validation layer silent and, where the device is dropped, with the device really torn
//! down (`ValidationWatch::torn_down`): nothing leaked it through the graveyard.

use std::sync::{Arc, Barrier};

use common::{assert_clean, assert_watch_clean, device};
use kiln::{vk, BufferDesc, MemoryLocation};

fn vector_add(device: &kiln::Device) -> kiln::ComputePipeline {
    device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap()
}

fn mapped(device: &kiln::Device, label: &str, location: MemoryLocation, n: usize) -> kiln::Buffer {
    device
        .create_buffer(&BufferDesc {
            label,
            size: (n * 4) as u64,
            usage: vk::BufferUsageFlags::STORAGE_BUFFER,
            location,
        })
        .unwrap()
}

/// Objects of one device given to another: was SIGSEGV (allocate_set with a foreign layout,
/// write of a foreign buffer) or VUID-*-commonparent; now `KILN-E109` and both devices clean.
#[test]
fn objects_of_another_device_are_e109() {
    let a = device();
    let b = device();
    let pa = vector_add(&a);
    let pb = vector_add(&b);
    let buf_b = b.storage_buffer::<f32>("b's buffer", 4).unwrap();
    let buf_a = a.storage_buffer::<f32>("a's buffer", 4).unwrap();

    let layout_b = pb.layout().set_layouts()[0].clone();
    let e = a.allocate_set(&layout_b, 0, Arc::default()).unwrap_err();
    assert_eq!(e.code(), "KILN-E109");

    let mut set = pa.new_set(0).unwrap();
    let e = set.write_buffer(0, &buf_b).unwrap_err();
    assert_eq!(e.code(), "KILN-E109");
    assert!(e.to_string().contains("b's buffer"), "{e}");

    let e = a
        .execute(|r| {
            r.copy_buffer(&buf_b, 0, &buf_a, 0, 16);
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E109");
    let e = a
        .execute(|r| {
            r.fill_buffer(&buf_b, 7);
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E109");
    let e = a
        .execute(|r| {
            r.bind_pipeline(&pb);
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E109");

    // Both devices still work.
    for (d, p, buf) in [(&a, &pa, &buf_a), (&b, &pb, &buf_b)] {
        let one = d
            .buffer_from_slice("one", vk::BufferUsageFlags::STORAGE_BUFFER, &[1.0f32; 4])
            .unwrap();
        let mut s = p.new_set(0).unwrap();
        s.write_buffer(0, &one).unwrap();
        s.write_buffer(1, &one).unwrap();
        s.write_buffer(2, buf).unwrap();
        d.execute(|r| {
            r.bind_pipeline(p);
            r.bind_set(0, &s)?;
            r.dispatch_threads(4)
        })
        .unwrap();
        assert_eq!(buf.read::<f32>(d).unwrap(), vec![2.0; 4]);
    }
    assert_eq!(buf_b.read::<f32>(&b).unwrap(), vec![2.0; 4]);
    drop(set);
    assert_clean(&a);
    assert_clean(&b);
}

/// Reading a mapped buffer while a submission that writes it is pending: was a host read
/// racing the device write (no wait; stale zeros). `read` now waits for pending submissions.
#[test]
fn reading_mapped_memory_while_a_submission_writes_it_sees_the_result() {
    let device = device();
    let p = vector_add(&device);
    let n = 1 << 22;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let a = device
        .buffer_from_slice("a", vk::BufferUsageFlags::STORAGE_BUFFER, &input)
        .unwrap();
    for round in 0..3 {
        let out = mapped(&device, "out", MemoryLocation::GpuToCpu, n);
        let mut set = p.new_set(0).unwrap();
        set.write_buffer(0, &a).unwrap();
        set.write_buffer(1, &a).unwrap();
        set.write_buffer(2, &out).unwrap();
        let sub = device
            .submit(|r| {
                r.bind_pipeline(&p);
                r.bind_set(0, &set)?;
                r.dispatch_threads(n as u32)
            })
            .unwrap();
        // No wait on `sub` before reading.
        let got: Vec<f32> = out.read(&device).unwrap();
        let bad = got
            .iter()
            .enumerate()
            .filter(|(i, v)| **v != 2.0 * *i as f32)
            .count();
        assert_eq!(
            bad, 0,
            "round {round}: {bad} of {n} elements not yet written"
        );
        sub.wait().unwrap();
    }
    assert_clean(&device);
}

/// Uploading to mapped memory that a pending submission reads: the upload waits, so the
/// submission sees the old contents (not a torn mix).
#[test]
fn uploading_mapped_memory_while_a_submission_reads_it_waits() {
    let device = device();
    let p = vector_add(&device);
    let n = 1 << 22;
    let a = mapped(&device, "a", MemoryLocation::CpuToGpu, n);
    a.upload(&device, &vec![1.0f32; n]).unwrap();
    let out = device.storage_buffer::<f32>("out", n).unwrap();
    let mut set = p.new_set(0).unwrap();
    set.write_buffer(0, &a).unwrap();
    set.write_buffer(1, &a).unwrap();
    set.write_buffer(2, &out).unwrap();
    let sub = device
        .submit(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &set)?;
            r.dispatch_threads(n as u32)
        })
        .unwrap();
    a.upload(&device, &vec![5.0f32; n]).unwrap();
    sub.wait().unwrap();
    let got: Vec<f32> = out.read(&device).unwrap();
    assert!(
        got.iter().all(|v| *v == 2.0),
        "the dispatch saw the new upload"
    );
    assert_clean(&device);
}

/// Everything (set, pipeline, layouts, buffers, even the `Device`) dropped while the
/// submission runs; the submission is dropped last, on another thread. The device must be
/// destroyed then (no Arc cycle through the graveyard), with no validation message.
#[test]
fn device_dropped_before_its_pending_submission_is_torn_down_after_it() {
    let device = device();
    let watch = device.validation_watch();
    let n = 1 << 20;
    let sub = {
        let p = vector_add(&device);
        let a = device
            .buffer_from_slice("a", vk::BufferUsageFlags::STORAGE_BUFFER, &vec![1.0f32; n])
            .unwrap();
        let out = device.storage_buffer::<f32>("out", n).unwrap();
        let mut set = p.new_set(0).unwrap();
        set.write_buffer(0, &a).unwrap();
        set.write_buffer(1, &a).unwrap();
        set.write_buffer(2, &out).unwrap();
        device
            .submit(|r| {
                r.bind_pipeline(&p);
                r.bind_set(0, &set)?;
                r.dispatch_threads(n as u32)
            })
            .unwrap()
    };
    drop(device);
    assert!(
        !watch.torn_down(),
        "the pending submission must keep the device alive"
    );
    std::thread::spawn(move || drop(sub)).join().unwrap();
    assert_watch_clean(&watch);
}

/// Many threads record, submit and drop everything before waiting, with sets of one
/// interned layout allocated and freed concurrently; afterwards the device tears down.
#[test]
fn threads_submitting_and_dropping_everything_leave_no_leak() {
    let device = device();
    let watch = device.validation_watch();
    let threads = 6;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let device = device.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let p = vector_add(&device);
                for i in 0..20u32 {
                    let v = (t as u32 * 100 + i) as f32;
                    let a = device
                        .buffer_from_slice("a", vk::BufferUsageFlags::STORAGE_BUFFER, &[v; 64])
                        .unwrap();
                    let out = device.storage_buffer::<f32>("out", 64).unwrap();
                    let sub = {
                        let mut set = p.new_set(0).unwrap();
                        set.write_buffer(0, &a).unwrap();
                        set.write_buffer(1, &a).unwrap();
                        set.write_buffer(2, &out).unwrap();
                        device
                            .submit(|r| {
                                r.bind_pipeline(&p);
                                r.bind_set(0, &set)?;
                                r.dispatch_threads(64)
                            })
                            .unwrap()
                    };
                    drop(a);
                    if i % 2 == 0 {
                        sub.wait().unwrap();
                    } else {
                        drop(sub);
                    }
                    assert_eq!(out.read::<f32>(&device).unwrap(), vec![2.0 * v; 64]);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_clean(&device);
    drop(device);
    assert_watch_clean(&watch);
}

/// Interning under concurrency: threads holding equal descriptions at the same time get
/// one id; once every holder dropped, the layout is destroyed and a new one (new id, never
/// a reused one) is made and works.
#[test]
fn interned_layouts_under_concurrency_and_after_being_dropped() {
    let device = device();
    let watch = device.validation_watch();
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let desc = kiln::PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap();
    let threads = 6;
    let mut seen_ids = Vec::new();
    for _round in 0..5 {
        let barrier = Arc::new(Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let device = device.clone();
                let desc = desc.clone();
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    let l = device.pipeline_layout(&desc).unwrap();
                    barrier.wait(); // every thread holds its layout here
                    (l.id(), l.set_layouts()[0].id(), l.raw(), l)
                })
            })
            .collect();
        let got: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let first = (got[0].0, got[0].1, got[0].2);
        assert!(
            got.iter().all(|g| (g.0, g.1, g.2) == first),
            "ids differ in one round"
        );
        assert!(
            !seen_ids.contains(&first.0),
            "pipeline layout id {} reused",
            first.0
        );
        assert!(!seen_ids.contains(&first.1) || seen_ids.is_empty());
        seen_ids.push(first.0);
        drop(got);
        assert_eq!(
            device.set_layout_count(),
            0,
            "layouts outlived every holder"
        );
    }
    drop(device);
    assert_watch_clean(&watch);
}

/// Sets bound in a pending submission are dropped (freed back to the pool) and new ones
/// allocated from the same pools before the submission is waited on.
#[test]
fn sets_freed_while_pending_are_recycled_only_after_the_submission() {
    let device = device();
    let p = vector_add(&device);
    let k = 40;
    let one = device
        .buffer_from_slice("one", vk::BufferUsageFlags::STORAGE_BUFFER, &[1.0f32; 16])
        .unwrap();
    let outs: Vec<kiln::Buffer> = (0..k)
        .map(|_| device.storage_buffer::<f32>("out", 16).unwrap())
        .collect();
    let sets: Vec<kiln::DescriptorSet> = outs
        .iter()
        .map(|o| {
            let mut s = p.new_set(0).unwrap();
            s.write_buffer(0, &one).unwrap();
            s.write_buffer(1, &one).unwrap();
            s.write_buffer(2, o).unwrap();
            s
        })
        .collect();
    let sub = device
        .submit(|r| {
            r.bind_pipeline(&p);
            for s in &sets {
                r.bind_set(0, s)?;
                r.dispatch_threads(16)?;
            }
            Ok(())
        })
        .unwrap();
    drop(sets);
    // New sets while the old ones may still be in use: they must not get the old handles
    // (a write to one would then change a set the GPU is reading).
    let mut again: Vec<kiln::DescriptorSet> = (0..k).map(|_| p.new_set(0).unwrap()).collect();
    let zero = device.storage_buffer::<f32>("zero", 16).unwrap();
    for s in &mut again {
        s.write_buffer(0, &zero).unwrap();
        s.write_buffer(1, &zero).unwrap();
        s.write_buffer(2, &zero).unwrap();
    }
    sub.wait().unwrap();
    for o in &outs {
        assert_eq!(o.read::<f32>(&device).unwrap(), vec![2.0; 16]);
    }
    drop(again);
    assert_clean(&device);
}

/// A panic inside the recording closure: was a leaked command pool, command buffer and
/// fence (VUID-vkDestroyDevice-device-00378 at teardown). The context is now recycled and
/// the device still works and tears down clean.
#[test]
fn a_panic_while_recording_leaks_nothing() {
    let device = device();
    let watch = device.validation_watch();
    for _ in 0..3 {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = device.execute(|r| -> kiln::Result<()> {
                r.full_barrier();
                panic!("user code panics while recording");
            });
        }));
        assert!(r.is_err());
    }
    let b = device
        .buffer_from_slice("b", vk::BufferUsageFlags::STORAGE_BUFFER, &[3u32; 4])
        .unwrap();
    assert_eq!(b.read::<u32>(&device).unwrap(), vec![3; 4]);
    drop(b);
    assert_clean(&device);
    drop(device);
    assert_watch_clean(&watch);
}
