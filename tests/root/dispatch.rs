//! Dispatch helpers: 2-D (and so 3-D) `dispatch_threads`, indirect dispatch with counts a
//! dispatch wrote, the usage and bounds errors of indirect dispatch, and the KILN-E253
//! message that says how to fold a large 1-D count.

use common::{assert_clean, device};
use kiln::{vk, BufferDesc, MemoryLocation, DISPATCH_INDIRECT_SIZE};

#[test]
fn dispatch_threads_2d_covers_width_by_height() {
    let device = device();
    let m = kiln::include_spirv!("test/grid_2d.comp").unwrap();
    let pipeline = device.compute_pipeline(&m, "main").unwrap();
    assert_eq!(pipeline.workgroup_size(), [8, 8, 1]);
    let (w, h) = (37u32, 19u32);
    let n = (w * h) as usize;
    // One element past the grid stays 0.
    let out = device
        .buffer_from_slice(
            "grid",
            vk::BufferUsageFlags::STORAGE_BUFFER,
            &vec![0u32; n + 1],
        )
        .unwrap();
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &set)?;
            r.push(0, &[w, h])?;
            Ok(r.dispatch_threads_2d(w, h)?)
        })
        .unwrap();
    let v: Vec<u32> = out.read().unwrap();
    for (i, x) in v.iter().take(n).enumerate() {
        assert_eq!(*x, i as u32 + 1, "element {i}");
    }
    assert_eq!(v[n], 0, "element past the grid was written");
    assert_clean(&device);
}

#[test]
fn dispatch_indirect_reads_counts_a_dispatch_wrote() {
    let device = device();
    let args_pipe = device
        .compute_pipeline(
            &kiln::include_spirv!("test/indirect_args.comp").unwrap(),
            "main",
        )
        .unwrap();
    let mark = device
        .compute_pipeline(
            &kiln::include_spirv!("test/mark_groups.comp").unwrap(),
            "main",
        )
        .unwrap();
    let args = device
        .buffer(
            &BufferDesc::default()
                .label("args")
                .size(32)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::INDIRECT_BUFFER)
                .location(MemoryLocation::GpuOnly),
        )
        .unwrap();
    args.upload(&[0u32; 8]).unwrap();
    let out = device
        .buffer_from_slice("marks", vk::BufferUsageFlags::STORAGE_BUFFER, &[0u32; 300])
        .unwrap();
    let mut args_set = args_pipe.descriptor_set(0).unwrap();
    args_set.write_buffer(0, &args).unwrap();
    let mut mark_set = mark.descriptor_set(0).unwrap();
    mark_set.write_buffer(0, &out).unwrap();
    // 200 invocations: (4, 1, 1) groups of 64 written at byte 8, then dispatched from there.
    let barriers = device
        .execute(|r| {
            r.bind_pipeline(&args_pipe)?;
            r.bind_set(0, &args_set)?;
            r.push(0, &[200u32, 2])?;
            r.dispatch(1, 1, 1)?;
            r.bind_pipeline(&mark)?;
            r.bind_set(0, &mark_set)?;
            r.dispatch_indirect(&args, 8)?;
            Ok(r.barrier_count())
        })
        .unwrap();
    // Automatic barriers: one, compute → indirect command read (the marks are another
    // buffer, which the first dispatch does not touch).
    assert_eq!(barriers, 1);
    let words: Vec<u32> = args.read().unwrap();
    assert_eq!(words, [0, 0, 4, 1, 1, 0, 0, 0]);
    let marks: Vec<u32> = out.read().unwrap();
    for (i, m) in marks.iter().enumerate() {
        let want = if i < 256 { i as u32 / 64 + 1 } else { 0 };
        assert_eq!(*m, want, "element {i}");
    }
    assert_clean(&device);
}

#[test]
fn dispatch_indirect_checks_usage_and_bounds() {
    let device = device();
    let mark = device
        .compute_pipeline(
            &kiln::include_spirv!("test/mark_groups.comp").unwrap(),
            "main",
        )
        .unwrap();
    let out = device.storage_buffer::<u32>("marks", 64).unwrap();
    let mut set = mark.descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    let indirect = device
        .buffer_from_slice(
            "args",
            vk::BufferUsageFlags::INDIRECT_BUFFER,
            &[1u32, 1, 1, 0, 0],
        )
        .unwrap();
    let plain = device
        .buffer_from_slice("plain", vk::BufferUsageFlags::STORAGE_BUFFER, &[1u32, 1, 1])
        .unwrap();
    let run = |buffer: &kiln::Buffer, offset: u64| {
        device.execute(|r| {
            r.bind_pipeline(&mark)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch_indirect(buffer, offset)?)
        })
    };
    let e = run(&plain, 0).unwrap_err();
    assert_eq!(e.code(), "KILN-E257", "{e}");
    assert!(e.to_string().contains("`plain`"), "{e}");
    // 20 bytes: offsets 0, 4 and 8 fit the 12-byte command; 2 is misaligned, 12 overruns.
    for bad in [2u64, 12, 16, u64::MAX - 3] {
        let e = run(&indirect, bad).unwrap_err();
        assert_eq!(e.code(), "KILN-E258", "offset {bad}: {e}");
        assert!(e.to_string().contains("20 bytes"), "{e}");
    }
    assert_eq!(DISPATCH_INDIRECT_SIZE, 12);
    run(&indirect, 8).unwrap();
    let v: Vec<u32> = out.read().unwrap();
    // Counts (1, 0, 0) at byte 8: a zero-sized dispatch, nothing written.
    assert_eq!(v, vec![0u32; 64]);
    run(&indirect, 0).unwrap();
    let v: Vec<u32> = out.read().unwrap();
    assert_eq!(v, vec![1u32; 64]);
    // Without a pipeline.
    let e = device
        .execute(|r| Ok(r.dispatch_indirect(&indirect, 0)?))
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E252", "{e}");
    assert_clean(&device);
}

#[test]
fn a_one_dimensional_count_beyond_the_limit_says_how_to_fold_it() {
    let device = device();
    let mark = device
        .compute_pipeline(
            &kiln::include_spirv!("test/mark_groups.comp").unwrap(),
            "main",
        )
        .unwrap();
    let out = device.storage_buffer::<u32>("marks", 64).unwrap();
    let mut set = mark.descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    let limit = device.limits().max_compute_work_group_count[0];
    assert!(limit < u32::MAX, "maxComputeWorkGroupCount[0] = {limit}");
    // lavapipe: 65535 groups, so 65536 * 64 threads; a GPU with 2^31 - 1 groups is
    // beyond every u32 thread count, so dispatch one group too many directly.
    let n = u32::try_from((limit as u64 + 1) * 64).ok();
    let e = device
        .execute(|r| {
            r.bind_pipeline(&mark)?;
            r.bind_set(0, &set)?;
            match n {
                Some(n) => Ok(r.dispatch_threads(n)?),
                None => Ok(r.dispatch(limit + 1, 1, 1)?),
            }
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E253", "{e}");
    let msg = e.to_string();
    assert!(msg.contains("dispatch_threads_2d"), "{msg}");
    assert!(msg.contains("gl_GlobalInvocationID.y * width"), "{msg}");
    assert_clean(&device);
}
