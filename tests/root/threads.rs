//! Threads: `Device`, pipelines, sets and layouts are shared by threads that record,
//! submit, transfer and drop at once; the interner returns one handle (and one id) under
//! concurrent requests, and everything still tears down clean.

use std::sync::{Arc, Barrier};

use common::add;
use common::add::vector_add;
use common::{assert_clean, assert_watch_clean, device};
use kiln::{vk, BufferDesc, MemoryLocation};

const N: usize = 1024;

#[test]
fn recording_on_several_threads_at_once() {
    let device = device();
    let p = vector_add(&device);
    std::thread::scope(|scope| {
        for t in 0..4u32 {
            let device = device.clone();
            let p = &p;
            scope.spawn(move || {
                for k in 0..10u32 {
                    let v = (t * 100 + k) as f32;
                    let a = add::storage(&device, "a", &[v; 300]);
                    let c = device.storage_buffer::<f32>("c", 300).unwrap();
                    let set = add::set(p, &a, &a, &c);
                    device.execute(|r| add::dispatch(r, p, &set, 300)).unwrap();
                    assert_eq!(c.read::<f32>().unwrap(), vec![2.0 * v; 300]);
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
                    let a = add::storage(&device, "a", &[v; 64]);
                    let out = device.storage_buffer::<f32>("out", 64).unwrap();
                    let sub = {
                        let set = add::set(&p, &a, &a, &out);
                        device.submit(|r| add::dispatch(r, &p, &set, 64)).unwrap()
                    };
                    drop(a);
                    if i % 2 == 0 {
                        sub.wait().unwrap();
                    } else {
                        drop(sub);
                    }
                    assert_eq!(out.read::<f32>().unwrap(), vec![2.0 * v; 64]);
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
    let mut seen_set_ids = Vec::new();
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
        // Set-layout ids and pipeline-layout ids are two counters: a set layout's id is
        // checked against the set-layout ids of earlier rounds (comparing it with the
        // pipeline-layout ids failed whenever the two counters happened to meet).
        assert!(!seen_set_ids.contains(&first.1) || seen_set_ids.is_empty());
        seen_ids.push(first.0);
        seen_set_ids.push(first.1);
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

/// Two threads, each with its own reusable recording (`acc += 1.5`, then `acc` copied
/// from `c`), submit without waiting, drop submissions unwaited, re-record halfway
/// (dropping the old recording while it runs), and read back through the staging path
/// (forced) after every submission: every read sees exactly the submissions made before
/// it, and the device tears down without a leaked command pool.
#[test]
fn threads_resubmitting_recordings_and_reading_back_see_every_submission() {
    let device = device();
    device.debug_force_staging(true);
    let watch = device.validation_watch();
    let p = vector_add(&device);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::TRANSFER_SRC;
    std::thread::scope(|s| {
        for t in 0..2 {
            let (device, p) = (&device, &p);
            s.spawn(move || {
                let acc = device
                    .buffer_from_slice("acc", usage, &vec![t as f32; N])
                    .unwrap();
                let step = device
                    .buffer_from_slice("step", usage, &vec![1.5f32; N])
                    .unwrap();
                let c = device.storage_buffer::<f32>("c", N).unwrap();
                let set = add::set(p, &acc, &step, &c);
                let record = || {
                    device
                        .record(|r| {
                            r.bind_pipeline(p)?;
                            r.bind_set(0, &set)?;
                            r.dispatch_threads(N as u32)?;
                            r.copy_buffer(&c, 0, &acc, 0, (N * 4) as u64)?;
                            Ok(())
                        })
                        .unwrap()
                };
                let mut rec = record();
                let mut runs = 0u32;
                let mut out = vec![0.0f32; N];
                let mut held = Vec::new();
                for k in 0..40 {
                    let sub = rec.submit().unwrap();
                    runs += 1;
                    match k % 3 {
                        0 => drop(sub),
                        1 => sub.wait().unwrap(),
                        _ => held.push(sub),
                    }
                    if k == 20 {
                        // Dropped while (possibly) running; a fresh recording takes over.
                        rec = record();
                    }
                    acc.read_into(&mut out).unwrap();
                    let want = t as f32 + 1.5 * runs as f32;
                    assert!(
                        out.iter().all(|&x| x == want),
                        "thread {t} run {runs}: {} != {want}",
                        out[0]
                    );
                }
                drop(rec);
                drop(held);
            });
        }
    });
    assert_clean(&device);
    drop((p, device));
    common::assert_watch_clean(&watch);
}

/// Staged transfers (small chunks, so every transfer above 64 KiB alternates two staging
/// buffers) from two threads while a third keeps releasing the idle staging memory: each
/// transfer keeps the buffers it leased, every byte comes back, nothing leaks.
#[test]
fn staged_transfers_survive_concurrent_release_of_staging_memory() {
    let device = device();
    device.debug_force_staging(true);
    device.debug_set_staging_chunk(64 << 10);
    let watch = device.validation_watch();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let (device, stop) = (&device, &stop);
        s.spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                device.release_staging_memory();
                std::thread::yield_now();
            }
        });
        let workers: Vec<_> = (0..2u32)
            .map(|t| {
                s.spawn(move || {
                    let size = 300_000 + 4 * t as usize;
                    let buf = device
                        .buffer(
                            &BufferDesc::default()
                                .label("gpu")
                                .size(size as u64)
                                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                                .location(MemoryLocation::GpuOnly),
                        )
                        .unwrap();
                    let mut out = vec![0u8; size];
                    for k in 0..12u32 {
                        let data: Vec<u8> = (0..size as u32)
                            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 ^ (k * 7 + t) as u8)
                            .collect();
                        buf.upload(&data).unwrap();
                        let at = (k as usize * 4099) % (size / 2);
                        buf.read_into_at(at as u64, &mut out[..size - at]).unwrap();
                        assert!(out[..size - at] == data[at..], "thread {t} round {k}");
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    assert_clean(&device);
    drop(device);
    common::assert_watch_clean(&watch);
}

/// Host transfers of one mapped buffer from several threads (clones of one `Buffer`) are
/// each whole: a read sees one upload's bytes, never a mix of two. Before the buffer's
/// host-access lock, two uploads and a read ran over the mapping at once (a data race
/// through safe code) and a read could see the bytes of both.
#[test]
fn concurrent_direct_uploads_and_reads_of_one_buffer_never_tear() {
    let device = device();
    let n = 1 << 20; // 4 MiB: copies long enough for the threads to interleave
    let buf = device
        .buffer(
            &BufferDesc::default()
                .label("one mapped buffer")
                .size(4 * n as u64)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::CpuToGpu),
        )
        .expect("buffer");
    let (ones, twos) = (vec![1u32; n], vec![2u32; n]);
    buf.upload(&ones).expect("first upload");
    let mut torn = 0;
    std::thread::scope(|s| {
        for v in [&ones, &twos] {
            let buf = buf.clone();
            s.spawn(move || {
                for _ in 0..100 {
                    buf.upload(v).expect("upload");
                }
            });
        }
        let mut got = vec![0u32; n];
        for _ in 0..100 {
            buf.read_into(&mut got).expect("read");
            torn += usize::from(got.iter().any(|&x| x != got[0]));
        }
    });
    assert_eq!(torn, 0, "reads that saw two uploads' bytes");
    assert_clean(&device);
}
