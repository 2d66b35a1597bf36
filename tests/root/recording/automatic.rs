//! Automatic barriers and image layouts (issue 15): one recording mixing dispatches, draws,
//! copies and host reads with no manual barrier or transition, checked by value, by the
//! number of barriers kiln recorded and by synchronization validation (on by default).

use common::add::{self, vector_add};
use common::draw::{pixel, quad_vertex_layout, target, RGBA8};
use common::{assert_clean, device};
use kiln::{
    vk, BufferDesc, ColorAttachment, ComputePipelineDesc, Device, Error, GraphicsPipelineDesc,
    Image, ImageDesc, MemoryLocation, RenderingDesc, SamplerDesc, SpecValue,
};

/// `test/add_one.comp`: y[i] += x[i] for i < n.
fn add_one(device: &Device) -> kiln::ComputePipeline {
    device
        .compute_pipeline(&kiln::include_spirv!("test/add_one.comp").unwrap(), "main")
        .unwrap()
}

/// `test/blur.comp`: dst(x) = src(x - 1) + src(x) + src(x + 1) over r32f storage images.
fn blur(device: &Device) -> kiln::ComputePipeline {
    device
        .compute_pipeline(&kiln::include_spirv!("test/blur.comp").unwrap(), "main")
        .unwrap()
}

/// An r32f image `w`×`h` with `usage`.
fn r32f(device: &Device, label: &str, w: u32, h: u32, usage: vk::ImageUsageFlags) -> Image {
    device
        .image(&ImageDesc::texture(label, w, h, vk::Format::R32_SFLOAT).usage(usage))
        .unwrap()
}

/// The host's blur of one row after another.
fn blur_rows(src: &[f32], w: usize) -> Vec<f32> {
    (0..src.len())
        .map(|i| {
            let x = i % w;
            let mut s = src[i];
            if x > 0 {
                s += src[i - 1];
            }
            if x + 1 < w {
                s += src[i + 1];
            }
            s
        })
        .collect()
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// 100 dispatches writing 100 disjoint byte ranges of one buffer (each through its own
/// set) depend on nothing: no barrier; every range holds its sum.
#[test]
fn independent_dispatches_record_no_barrier() {
    let device = device();
    let p = vector_add(&device);
    let n = 256usize;
    let a = add::storage(&device, "a", &(0..n).map(|i| i as f32).collect::<Vec<_>>());
    let b = add::storage(&device, "b", &vec![0.5f32; n]);
    let c = device.storage_buffer::<f32>("c", n * 100).unwrap();
    let sets: Vec<_> = (0..100u64)
        .map(|k| {
            let mut s = p.descriptor_set(0).unwrap();
            s.write_buffer(0, &a).unwrap();
            s.write_buffer(1, &b).unwrap();
            let range = (n * 4) as u64;
            s.write_buffer_range(2, 0, None, &c, k * range, range)
                .unwrap();
            s
        })
        .collect();
    assert_eq!(
        sets[7]
            .buffer_at(2, 0)
            .map(|(b, o, s)| (b.label().to_string(), o, s)),
        Some(("c".to_string(), 7 * 1024, 1024)),
        "the set remembers the buffer and its byte range"
    );
    let barriers = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            for s in &sets {
                r.bind_set(0, s)?;
                r.dispatch_threads(n as u32)?;
            }
            Ok(r.barrier_count())
        })
        .unwrap();
    assert_eq!(barriers, 0);
    let out: Vec<f32> = c.read().unwrap();
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, (i % n) as f32 + 0.5, "element {i}");
    }
    assert_clean(&device);
}

/// Two specializations of one shader use set 0 alike: they share its interned access, so
/// a set dispatched with both is compiled once for the recording, and a pipeline that
/// uses the set otherwise (reads it) gets its own entry. The barriers are each pair's
/// (write after write three times, then read after write) and the values exact.
#[test]
fn pipelines_that_use_a_set_alike_share_its_compiled_uses() {
    let device = device();
    let m = kiln::include_spirv!("test/spec_fill.comp").unwrap();
    let fill = |size: u32| {
        let spec = [(0, SpecValue::U32(size))];
        let desc = ComputePipelineDesc::new(&m, "main").spec(&spec);
        device.compute_pipeline_with(&desc).unwrap()
    };
    let (p64, p32) = (fill(64), fill(32));
    let copy = device
        .compute_pipeline(
            &kiln::include_spirv!("test/copy_words.comp").unwrap(),
            "main",
        )
        .unwrap();
    assert_eq!(p64.access(), p32.access());
    assert_ne!(p64.access().set(0), copy.access().set(0));
    let n = 256usize;
    let v = device.storage_buffer::<u32>("v", n).unwrap();
    let o = device.storage_buffer::<u32>("o", n).unwrap();
    let mut set = p64.descriptor_set(0).unwrap();
    set.write_buffer(0, &v).unwrap();
    let mut out = copy.descriptor_set(1).unwrap();
    out.write_buffer(0, &o).unwrap();
    let (barriers, entries) = device
        .execute(|r| {
            for p in [&p64, &p32, &p64, &p32] {
                r.bind_pipeline(p)?;
                r.bind_set(0, &set)?;
                r.dispatch_threads(n as u32)?;
            }
            r.bind_pipeline(&copy)?;
            r.bind_set(0, &set)?;
            r.bind_set(1, &out)?;
            r.dispatch_threads(n as u32)?;
            Ok((r.barrier_count(), r.debug_compiled_set_uses()))
        })
        .unwrap();
    assert_eq!(barriers, 4);
    assert_eq!(
        entries, 3,
        "(set, fill's access), (set, copy's), (out, copy's)"
    );
    let got: Vec<u32> = o.read().unwrap();
    assert_eq!(got, (0..n as u32).collect::<Vec<_>>());
    assert_clean(&device);
}

/// N dispatches each reading what the one before wrote (y += x on one buffer): exactly
/// N − 1 barriers, one-shot and in a reusable recording; the values are exact.
#[test]
fn a_dependent_chain_records_n_minus_one_barriers() {
    let device = device();
    let p = add_one(&device);
    let n = 1000usize;
    let x = add::storage(&device, "x", &(0..n).map(|i| i as f32).collect::<Vec<_>>());
    let y = add::storage(&device, "y", &vec![1.0f32; n]);
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(0, &x).unwrap();
    set.write_buffer(1, &y).unwrap();
    let links = 50u32;
    let barriers = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.push(0, &(n as u32))?;
            for _ in 0..links {
                // A redundant bind changes nothing: still one barrier per link.
                r.bind_set(0, &set)?;
                r.dispatch_threads(n as u32)?;
            }
            Ok(r.barrier_count())
        })
        .unwrap();
    assert_eq!(barriers, links - 1);
    let got: Vec<f32> = y.read().unwrap();
    for (i, v) in got.iter().enumerate() {
        assert_eq!(*v, 1.0 + links as f32 * i as f32, "element {i}");
    }
    let mut rec = device
        .record(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push(0, &(n as u32))?;
            for _ in 0..10 {
                r.dispatch_threads(n as u32)?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(rec.barrier_count(), 9);
    rec.execute().unwrap();
    rec.execute().unwrap();
    drop(rec);
    let got: Vec<f32> = y.read().unwrap();
    for (i, v) in got.iter().enumerate() {
        assert_eq!(*v, 1.0 + (links + 20) as f32 * i as f32, "element {i}");
    }
    assert_clean(&device);
}

/// One recording: a dispatch writes a vertex buffer, a copy reads it, a draw reads it as
/// vertices, the rendered image is copied to a buffer the host reads. Three barriers
/// (compute→transfer; everything → the rendering scope, with the target's transition;
/// the target's transition for the copy), no manual one, zero validation messages.
#[test]
fn compute_copy_draw_and_readback_in_one_recording() {
    let device = device();
    let cs = kiln::include_spirv!("test/triangle_verts.comp").unwrap();
    let fill = device.compute_pipeline(&cs, "main").unwrap();
    let draw = common::draw::flat_pipeline(&device, RGBA8).unwrap();
    let vb = device
        .buffer(
            &BufferDesc::default()
                .label("vertices")
                .size(3 * 8)
                .usage(vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::GpuOnly),
        )
        .unwrap();
    let copy = device.storage_buffer::<f32>("copy", 6).unwrap();
    let (w, h) = (64u32, 64u32);
    let img = target(&device, w, h);
    let pixels = device
        .storage_buffer::<u8>("pixels", (w * h * 4) as usize)
        .unwrap();
    let mut set = fill.descriptor_set(0).unwrap();
    set.write_buffer(0, &vb).unwrap();
    let (barriers, uncovered) = device
        .execute(|r| {
            r.bind_pipeline(&fill)?;
            r.bind_set(0, &set)?;
            r.push(0, &1.0f32)?;
            r.dispatch(1, 1, 1)?;
            r.copy_buffer(&vb, 0, &copy, 0, 24)?;
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img,
                [0.0, 0.0, 0.0, 1.0],
            )]))?;
            r.bind_pipeline(&draw)?;
            r.push(0, &[1.0f32, 0.2, 0.6, 1.0])?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(3, 1, 0, 0)?;
            r.end_rendering()?;
            r.copy_image_to_buffer(&img, 0, &pixels)?;
            Ok((r.barrier_count(), r.debug_uncovered()))
        })
        .unwrap();
    assert_eq!((barriers, uncovered), (3, 0));
    let v: Vec<f32> = copy.read().unwrap();
    assert_eq!(v, vec![-0.5, 0.5, 0.5, 0.5, 0.0, -0.5]);
    let data: Vec<u8> = pixels.read().unwrap();
    assert_eq!(
        pixel(&data, w, 32, 40),
        [255, 51, 153, 255],
        "inside the triangle"
    );
    assert_eq!(pixel(&data, w, 2, 2), [0, 0, 0, 255], "outside");
    assert_eq!(img.layout(), vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
    assert_clean(&device);
}

/// Two blur passes over storage images with no transition: the fresh images move from
/// UNDEFINED to GENERAL in the dispatches' barriers (one for the first pass, one for the
/// second, which also waits for the first's writes); the uploaded source is GENERAL
/// already. The values are the host's blur of the host's blur.
#[test]
fn storage_image_blur_needs_no_transition() {
    let device = device();
    let p = blur(&device);
    let (w, h) = (16u32, 4u32);
    let storage = vk::ImageUsageFlags::STORAGE;
    let src = r32f(&device, "src", w, h, storage);
    let tmp = r32f(&device, "tmp", w, h, storage);
    let dst = r32f(&device, "dst", w, h, storage);
    let host: Vec<f32> = (0..w * h).map(|i| (i % 7) as f32).collect();
    src.upload(kiln::bytemuck::cast_slice(&host)).unwrap();
    assert_eq!(
        src.layout(),
        vk::ImageLayout::GENERAL,
        "uploads leave storage images GENERAL"
    );
    assert_eq!(tmp.layout(), vk::ImageLayout::UNDEFINED);
    let mut first = p.descriptor_set(0).unwrap();
    first.write_image(0, &src).unwrap();
    first.write_image(1, &tmp).unwrap();
    let mut second = p.descriptor_set(0).unwrap();
    second.write_image(0, &tmp).unwrap();
    second.write_image(1, &dst).unwrap();
    assert_eq!(
        second.image_at(1, 0).map(|i| i.label().to_string()),
        Some("dst".into())
    );
    let barriers = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &first)?;
            r.dispatch(w / 8, h.div_ceil(8), 1)?;
            r.bind_set(0, &second)?;
            r.dispatch(w / 8, h.div_ceil(8), 1)?;
            Ok(r.barrier_count())
        })
        .unwrap();
    assert_eq!(barriers, 2);
    assert_eq!(tmp.layout(), vk::ImageLayout::GENERAL);
    assert_eq!(dst.layout(), vk::ImageLayout::GENERAL);
    let want = blur_rows(&blur_rows(&host, w as usize), w as usize);
    assert_eq!(floats(&dst.read().unwrap()), want);
    assert_clean(&device);
}

/// A reusable recording of a blur into a fresh image: the recording relies on GENERAL from
/// the first use on, kiln moves the image there once when it records, and both submissions
/// give the blur.
#[test]
fn a_reusable_recording_moves_set_images_once() {
    let device = device();
    let p = blur(&device);
    let (w, h) = (8u32, 8u32);
    let storage = vk::ImageUsageFlags::STORAGE;
    let src = r32f(&device, "src", w, h, storage);
    let dst = r32f(&device, "dst", w, h, storage);
    let host: Vec<f32> = (0..w * h).map(|i| (i % 5) as f32).collect();
    src.upload(kiln::bytemuck::cast_slice(&host)).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_image(0, &src).unwrap();
    set.write_image(1, &dst).unwrap();
    let mut rec = device
        .record(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch(1, 1, 1)?)
        })
        .unwrap();
    assert_eq!(dst.layout(), vk::ImageLayout::GENERAL);
    rec.execute().unwrap();
    rec.execute().unwrap();
    drop(rec);
    let read = floats(&dst.read().unwrap());
    assert_eq!(read, blur_rows(&host, w as usize));
    assert_clean(&device);
}

/// A compute pass writes a storage image that a draw then samples: kiln moves it from
/// GENERAL to SHADER_READ_ONLY_OPTIMAL when the set is bound before the rendering scope,
/// and the scope's barrier orders the compute writes before the fragment shader's reads.
#[test]
fn compute_written_image_sampled_by_a_draw() {
    let device = device();
    let p = blur(&device);
    let (w, h) = (16u32, 4u32);
    let usage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let src = r32f(&device, "src", w, h, usage);
    let out = r32f(&device, "out", w, h, usage);
    let host: Vec<f32> = (0..w * h)
        .map(|i| if i % w == 4 { 1.0 } else { 0.0 })
        .collect();
    src.upload(kiln::bytemuck::cast_slice(&host)).unwrap();
    let mut cset = p.descriptor_set(0).unwrap();
    cset.write_image(0, &src).unwrap();
    cset.write_image(1, &out).unwrap();
    let vs = kiln::include_spirv!("test/textured.vert").unwrap();
    let fs = kiln::include_spirv!("test/textured.frag").unwrap();
    let img = target(&device, w, h);
    let desc = GraphicsPipelineDesc::new(&vs, &fs)
        .vertex_buffer(quad_vertex_layout())
        .targets(&[&img], None);
    let gp = device.graphics_pipeline(&desc).unwrap();
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let mut gset = gp.descriptor_set(0).unwrap();
    gset.write_combined(0, &out, &sampler).unwrap();
    let quad: [[f32; 4]; 6] = [
        [-1.0, -1.0, 0.0, 0.0],
        [1.0, -1.0, 1.0, 0.0],
        [1.0, 1.0, 1.0, 1.0],
        [-1.0, -1.0, 0.0, 0.0],
        [1.0, 1.0, 1.0, 1.0],
        [-1.0, 1.0, 0.0, 1.0],
    ];
    let vb = device
        .buffer_from_slice("quad", vk::BufferUsageFlags::VERTEX_BUFFER, &quad)
        .unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &cset)?;
            r.dispatch(2, 1, 1)?;
            r.bind_pipeline(&gp)?;
            r.bind_set(0, &gset)?;
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img, [0.0; 4],
            )]))?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(6, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    assert_eq!(out.layout(), vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
    let data = img.read().unwrap();
    for x in 0..w {
        let red = if (3..=5).contains(&x) { 255 } else { 0 };
        assert_eq!(pixel(&data, w, x, 1), [red, 0, 0, 255], "pixel {x}");
    }
    assert_clean(&device);
}

/// A set bound inside a rendering scope whose image is in the wrong layout cannot be
/// moved there: `KILN-E286` names the image, the binding and both layouts.
#[test]
fn an_image_in_the_wrong_layout_inside_a_rendering_scope_is_an_error() {
    let device = device();
    let vs = kiln::include_spirv!("test/textured.vert").unwrap();
    let fs = kiln::include_spirv!("test/textured.frag").unwrap();
    let img = target(&device, 4, 4);
    let desc = GraphicsPipelineDesc::new(&vs, &fs)
        .vertex_buffer(quad_vertex_layout())
        .targets(&[&img], None);
    let gp = device.graphics_pipeline(&desc).unwrap();
    let tex = r32f(&device, "fresh", 4, 4, vk::ImageUsageFlags::SAMPLED);
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let mut set = gp.descriptor_set(0).unwrap();
    set.write_combined(0, &tex, &sampler).unwrap();
    let vb = device
        .buffer_from_slice("quad", vk::BufferUsageFlags::VERTEX_BUFFER, &[0f32; 24])
        .unwrap();
    let err = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img, [0.0; 4],
            )]))?;
            r.bind_pipeline(&gp)?;
            r.bind_set(0, &set)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(6, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap_err();
    assert!(
        matches!(err, Error::DescriptorImageLayout { .. }),
        "{err:?}"
    );
    assert_eq!(err.code(), "KILN-E286");
    let msg = err.to_string();
    for part in [
        "`fresh`",
        "set 0, binding 0",
        "UNDEFINED",
        "SHADER_READ_ONLY_OPTIMAL",
        "before begin_rendering",
    ] {
        assert!(msg.contains(part), "{part} in {msg}");
    }
    assert_clean(&device);
}

/// Manual mode keeps the explicit barriers: a chain with `barrier()` between the links
/// counts exactly those, gives the same values, and validation stays silent.
#[test]
fn manual_mode_keeps_explicit_barriers() {
    let device = device();
    let p = add_one(&device);
    let n = 512usize;
    let x = add::storage(&device, "x", &vec![2.0f32; n]);
    let y = add::storage(&device, "y", &vec![0.0f32; n]);
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(0, &x).unwrap();
    set.write_buffer(1, &y).unwrap();
    let barriers = device
        .execute(|r| {
            r.manual_barriers();
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push(0, &(n as u32))?;
            for i in 0..8 {
                if i > 0 {
                    r.barrier()?;
                }
                r.dispatch_threads(n as u32)?;
            }
            Ok(r.barrier_count())
        })
        .unwrap();
    assert_eq!(barriers, 7);
    assert_eq!(y.read::<f32>().unwrap(), vec![16.0; n]);
    assert_clean(&device);
}

/// A fill, a dispatch reading it and a copy of the result: transfer→compute, then
/// compute→transfer (two barriers), the copied values exact.
#[test]
fn fill_dispatch_copy_chain() {
    let device = device();
    let p = vector_add(&device);
    let n = 1024usize;
    let a = device.storage_buffer::<f32>("a", n).unwrap();
    let b = add::storage(&device, "b", &vec![0.25f32; n]);
    let c = device.storage_buffer::<f32>("c", n).unwrap();
    let d = device.storage_buffer::<f32>("d", n).unwrap();
    let set = add::set(&p, &a, &b, &c);
    let barriers = device
        .execute(|r| {
            r.fill_buffer(&a, 2.0f32.to_bits())?;
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.dispatch_threads(n as u32)?;
            r.copy_buffer(&c, 0, &d, 0, (n * 4) as u64)?;
            Ok(r.barrier_count())
        })
        .unwrap();
    assert_eq!(barriers, 2);
    assert_eq!(d.read::<f32>().unwrap(), vec![2.25; n]);
    assert_clean(&device);
}

/// Cross-queue waits follow the reflected access: two queues' dispatches that both read
/// `a` through a readonly storage binding (and write buffers of their own) do not wait for
/// each other; a third that writes what the first wrote does (emulated queues: their own
/// timelines on lavapipe's one `VkQueue`).
#[test]
fn cross_queue_waits_follow_the_reflected_access() {
    let device = common::emulated_device();
    let p = vector_add(&device);
    let n = 1024usize;
    // Plain buffers: `storage_buffer` would zero them on the main queue first.
    let gpu = |label| {
        device
            .buffer(
                &BufferDesc::default()
                    .label(label)
                    .size(n as u64 * 4)
                    .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                    .location(MemoryLocation::GpuOnly),
            )
            .unwrap()
    };
    let (a, c1, c2) = (gpu("a"), gpu("c1"), gpu("c2"));
    let s1 = add::set(&p, &a, &a, &c1);
    let s2 = add::set(&p, &a, &a, &c2);
    let main = device.queue(kiln::QueueKind::Main);
    let compute = device.queue(kiln::QueueKind::Compute);
    assert_ne!(main, compute, "emulated compute queue");
    // `a` is last written on the compute queue: its readers there never wait for it.
    compute
        .execute(|r| Ok(r.fill_buffer(&a, 1.0f32.to_bits())?))
        .unwrap();
    let first = main
        .submit(|r| add::dispatch(r, &p, &s1, n as u32))
        .unwrap();
    // Before automatic barriers the readonly bindings counted as written: `second` waited
    // for `first`.
    let before = device.debug_cross_queue_waits();
    let second = compute
        .submit(|r| add::dispatch(r, &p, &s2, n as u32))
        .unwrap();
    assert_eq!(
        device.debug_cross_queue_waits(),
        before,
        "both only read `a`: no wait"
    );
    let third = compute
        .submit(|r| add::dispatch(r, &p, &s1, n as u32))
        .unwrap();
    assert_eq!(
        device.debug_cross_queue_waits(),
        before + 1,
        "writes `c1`, which the first wrote"
    );
    for s in [first, second, third] {
        s.wait().unwrap();
    }
    assert_eq!(c1.read::<f32>().unwrap(), vec![2.0; n]);
    assert_eq!(c2.read::<f32>().unwrap(), vec![2.0; n]);
    assert_clean(&device);
}
