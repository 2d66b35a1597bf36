//! Bound state: the recorder caches its bound state (set handles, whether push constants were
//! pushed, whether the last dispatch/draw check passed). Every pipeline switch must keep
//! exactly the state its layout is compatible with (Vulkan spec §14.2.2) and drop the rest,
//! so that the next dispatch or draw is refused with `KILN-E254` / `KILN-E255` instead of
//! reaching the driver; and every set a recording binds, however often, is waited for
//! before it is rewritten. A dispatch with a set or the push constants of its layout missing
//! is refused (was a driver crash), and the compute and graphics bind points are tracked
//! apart.

use common::add;
use common::draw::{flat_pipeline, target, RGBA8};
use common::{assert_clean, code, device};
use kiln::{
    vk, Buffer, ColorAttachment, ComputePipeline, ComputePipelineDesc, DescriptorSet, Device,
    GraphicsPipelineDesc, ImageDesc, RenderingDesc, SpecValue, VertexBufferLayout,
};

const N: usize = 100;

/// `state_a` (BIAS 0 and 100: one layout), `state_b` (incompatible set 1, same push
/// constants) and `state_c` (same sets, other push constant ranges: nothing compatible).
struct Fx {
    a: ComputePipeline,
    a100: ComputePipeline,
    b: ComputePipeline,
    c: ComputePipeline,
    src: DescriptorSet,
    add: DescriptorSet,
    _bufs: [Buffer; 2],
}

fn fixture(device: &Device) -> Fx {
    let ma = kiln::include_spirv!("test/state_a.comp").unwrap();
    let spec = |bias: f32| {
        device
            .compute_pipeline_with(
                &ComputePipelineDesc::new(&ma, "main").spec(&[(0, SpecValue::F32(bias))]),
            )
            .unwrap()
    };
    let (a, a100) = (spec(0.0), spec(100.0));
    assert!(std::sync::Arc::ptr_eq(a.layout(), a100.layout()));
    let b = device
        .compute_pipeline(&kiln::include_spirv!("test/state_b.comp").unwrap(), "main")
        .unwrap();
    let c = device
        .compute_pipeline(&kiln::include_spirv!("test/state_c.comp").unwrap(), "main")
        .unwrap();
    assert_eq!(
        a.layout().set_layouts()[0].id(),
        b.layout().set_layouts()[0].id()
    );
    assert_ne!(
        a.layout().set_layouts()[1].id(),
        b.layout().set_layouts()[1].id()
    );
    assert_eq!(
        a.layout().set_layouts()[1].id(),
        c.layout().set_layouts()[1].id()
    );
    assert_ne!(
        a.layout().push_constant_ranges(),
        c.layout().push_constant_ranges()
    );
    let data: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let src_buf = add::storage(device, "src", &data);
    let add_buf = device
        .buffer_from_slice(
            "add",
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            &[10.0f32, 0.0, 0.0, 0.0],
        )
        .unwrap();
    let mut src = a.descriptor_set(1).unwrap();
    src.write_buffer(0, &src_buf).unwrap();
    let mut add = b.descriptor_set(1).unwrap();
    add.write_buffer(0, &add_buf).unwrap();
    Fx {
        a,
        a100,
        b,
        c,
        src,
        add,
        _bufs: [src_buf, add_buf],
    }
}

/// A zeroed output buffer and a set 0 (of `state_a`'s layout) writing it.
fn output(device: &Device, fx: &Fx, label: &str) -> (Buffer, DescriptorSet) {
    let buf = device.storage_buffer::<f32>(label, N).unwrap();
    let mut set = fx.a.descriptor_set(0).unwrap();
    set.write_buffer(0, &buf).unwrap();
    (buf, set)
}

/// `state_a`/`state_b` push constants: scale, n.
fn pc(scale: f32) -> [u32; 2] {
    [scale.to_bits(), N as u32]
}

/// `state_c` push constants: scale, n, extra, pad.
fn pc_c(scale: f32, extra: f32) -> [u32; 4] {
    [scale.to_bits(), N as u32, extra.to_bits(), 0]
}

fn expect(f: impl Fn(f32) -> f32) -> Vec<f32> {
    (0..N).map(|i| f(i as f32)).collect()
}

#[test]
fn same_layout_switch_keeps_sets_and_push_constants() {
    let device = device();
    let fx = fixture(&device);
    let (d1, s1) = output(&device, &fx, "d1");
    let (d2, s2) = output(&device, &fx, "d2");
    device
        .execute(|r| {
            r.bind_pipeline(&fx.a)?;
            r.bind_set(0, &s1)?;
            r.bind_set(1, &fx.src)?;
            r.push(0, &pc(2.0))?;
            r.dispatch_threads(N as u32)?;
            // Same layout: set 1 and the push constants stay; only set 0 changes.
            r.bind_pipeline(&fx.a100)?;
            r.bind_set(0, &s2)?;
            Ok(r.dispatch_threads(N as u32)?)
        })
        .unwrap();
    assert_eq!(d1.read::<f32>().unwrap(), expect(|i| 2.0 * i));
    assert_eq!(d2.read::<f32>().unwrap(), expect(|i| 2.0 * i + 100.0));
    assert_clean(&device);
}

#[test]
fn an_incompatible_set_is_dropped_refused_and_really_rebound() {
    let device = device();
    let fx = fixture(&device);
    let (d, s0) = output(&device, &fx, "d");
    // A dispatch passed the check (cached), then a layout with another set 1: refused.
    let e = device
        .execute(|r| {
            r.bind_pipeline(&fx.a)?;
            r.bind_set(0, &s0)?;
            r.bind_set(1, &fx.src)?;
            r.push(0, &pc(2.0))?;
            r.dispatch_threads(N as u32)?;
            r.bind_pipeline(&fx.b)?;
            Ok(r.dispatch_threads(N as u32)?)
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E254", "{e}");
    assert!(matches!(e, kiln::Error::SetNotBound { set: 1 }), "{e}");
    // b's own set 1 bound, then back to a: a's set 1 was disturbed by b's.
    let e = device
        .execute(|r| {
            r.bind_pipeline(&fx.a)?;
            r.bind_set(0, &s0)?;
            r.bind_set(1, &fx.src)?;
            r.push(0, &pc(2.0))?;
            r.dispatch_threads(N as u32)?;
            r.bind_pipeline(&fx.b)?;
            r.bind_set(1, &fx.add)?;
            r.dispatch_threads(N as u32)?;
            r.bind_pipeline(&fx.a)?;
            Ok(r.dispatch_threads(N as u32)?)
        })
        .unwrap_err();
    assert!(matches!(e, kiln::Error::SetNotBound { set: 1 }), "{e}");
    // Binding a's set 1 again must reach Vulkan (not be elided as "already bound"): the
    // validation layer reports an incompatible set 1 otherwise. Set 0 and the push
    // constants survive both switches (same set 0 layout, same ranges).
    device
        .execute(|r| {
            r.bind_pipeline(&fx.a)?;
            r.bind_set(0, &s0)?;
            r.bind_set(1, &fx.src)?;
            r.push(0, &pc(2.0))?;
            r.dispatch_threads(N as u32)?;
            r.bind_pipeline(&fx.b)?;
            r.bind_set(1, &fx.add)?;
            r.dispatch_threads(N as u32)?;
            r.bind_pipeline(&fx.a)?;
            r.bind_set(0, &s0)?;
            r.bind_set(1, &fx.src)?;
            Ok(r.dispatch_threads(N as u32)?)
        })
        .unwrap();
    // 2i, + 10 * 2, + 2i.
    assert_eq!(d.read::<f32>().unwrap(), expect(|i| 4.0 * i + 20.0));
    assert_clean(&device);
}

/// `state_a` with output `s0`, its source, scale 2, one dispatch.
fn record_a<'a>(
    r: &mut kiln::Recorder<'a, '_>,
    fx: &'a Fx,
    s0: &'a DescriptorSet,
) -> kiln::Result<()> {
    r.bind_pipeline(&fx.a)?;
    r.bind_set(0, s0)?;
    r.bind_set(1, &fx.src)?;
    r.push(0, &pc(2.0))?;
    Ok(r.dispatch_threads(N as u32)?)
}

#[test]
fn other_push_constant_ranges_drop_every_set_and_the_push_constants() {
    let device = device();
    let fx = fixture(&device);
    let (d, s0) = output(&device, &fx, "d");
    let e = device
        .execute(|r| {
            record_a(r, &fx, &s0)?;
            r.bind_pipeline(&fx.c)?;
            Ok(r.dispatch_threads(N as u32)?)
        })
        .unwrap_err();
    assert!(matches!(e, kiln::Error::SetNotBound { set: 0 }), "{e}");
    // The same set handles bound again (not elided), but nothing pushed for c's ranges.
    let r = device.execute(|r| {
        record_a(r, &fx, &s0)?;
        r.bind_pipeline(&fx.c)?;
        r.bind_set(0, &s0)?;
        r.bind_set(1, &fx.src)?;
        Ok(r.dispatch_threads(N as u32)?)
    });
    assert_eq!(code(r), "KILN-E255");
    // And back from c to a: a's push constants must be pushed again.
    let r = device.execute(|r| {
        record_a(r, &fx, &s0)?;
        r.bind_pipeline(&fx.c)?;
        r.bind_set(0, &s0)?;
        r.bind_set(1, &fx.src)?;
        r.push(0, &pc_c(1.0, 1000.0))?;
        r.dispatch_threads(N as u32)?;
        r.bind_pipeline(&fx.a)?;
        r.bind_set(0, &s0)?;
        r.bind_set(1, &fx.src)?;
        Ok(r.dispatch_threads(N as u32)?)
    });
    assert_eq!(code(r), "KILN-E255");
    device
        .execute(|r| {
            record_a(r, &fx, &s0)?;
            r.bind_pipeline(&fx.c)?;
            r.bind_set(0, &s0)?;
            r.bind_set(1, &fx.src)?;
            r.push(0, &pc_c(1.0, 1000.0))?;
            r.dispatch_threads(N as u32)?;
            r.bind_pipeline(&fx.a)?;
            r.bind_set(0, &s0)?;
            r.bind_set(1, &fx.src)?;
            r.push(0, &pc(3.0))?;
            Ok(r.dispatch_threads(N as u32)?)
        })
        .unwrap();
    // 2i, + i + 1000, + 3i.
    assert_eq!(d.read::<f32>().unwrap(), expect(|i| 6.0 * i + 1000.0));
    assert_clean(&device);
}

#[test]
fn a_failed_check_is_not_cached() {
    let device = device();
    let fx = fixture(&device);
    let (d, s0) = output(&device, &fx, "d");
    device
        .execute(|r| {
            r.bind_pipeline(&fx.a)?;
            r.bind_set(0, &s0)?;
            assert_eq!(code(r.dispatch_threads(N as u32)), "KILN-E254");
            r.bind_set(1, &fx.src)?;
            assert_eq!(code(r.dispatch_threads(N as u32)), "KILN-E255");
            r.push(0, &pc(5.0))?;
            Ok(r.dispatch_threads(N as u32)?)
        })
        .unwrap();
    assert_eq!(d.read::<f32>().unwrap(), expect(|i| 5.0 * i));
    assert_clean(&device);
}

#[test]
fn every_set_bound_is_waited_for_before_a_rewrite() {
    let device = device();
    let fx = fixture(&device);
    let (d1, s1) = output(&device, &fx, "d1");
    let (d2, s2) = output(&device, &fx, "d2");
    let (d3, s3) = output(&device, &fx, "d3");
    // Sets bound again and again in one recording (each listed once for its stamp), and the
    // source set bound by two recordings in flight together.
    let first = device
        .submit(|r| {
            r.bind_pipeline(&fx.a)?;
            r.bind_set(1, &fx.src)?;
            r.push(0, &pc(1.0))?;
            for _ in 0..50 {
                for s in [&s1, &s2, &s1] {
                    r.bind_set(0, s)?;
                    r.dispatch_threads(N as u32)?;
                }
            }
            Ok(())
        })
        .unwrap();
    let second = device
        .submit(|r| {
            r.bind_pipeline(&fx.a)?;
            r.bind_set(0, &s3)?;
            r.bind_set(1, &fx.src)?;
            r.push(0, &pc(1.0))?;
            Ok(r.dispatch_threads(N as u32)?)
        })
        .unwrap();
    // Rewriting a set in use is VUID-vkUpdateDescriptorSets-None-03047: kiln waits for the
    // last submission that bound it.
    let mut s2 = s2;
    s2.write_buffer(0, &d2).unwrap();
    assert!(first.is_done());
    let mut src = fx.src;
    src.write_buffer(0, &d3).unwrap();
    assert!(second.is_done());
    first.wait().unwrap();
    second.wait().unwrap();
    assert_eq!(d1.read::<f32>().unwrap(), expect(|i| 100.0 * i));
    assert_eq!(d2.read::<f32>().unwrap(), expect(|i| 50.0 * i));
    assert_eq!(d3.read::<f32>().unwrap(), expect(|i| i));
    drop((s1, s3, src));
    assert_clean(&device);
}

#[test]
fn draws_follow_push_constant_range_changes() {
    let device = device();
    let img = device
        .image(&ImageDesc::color_target(
            "target",
            8,
            8,
            vk::Format::R8G8B8A8_UNORM,
        ))
        .unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let pipeline = |vs: &kiln::ShaderModule| {
        let desc = GraphicsPipelineDesc::new(vs, &fs)
            .vertex_buffer(VertexBufferLayout::packed(&[(
                0,
                vk::Format::R32G32_SFLOAT,
            )]))
            .targets(&[&img], None);
        device.graphics_pipeline(&desc).unwrap()
    };
    // flat: [0,16) FRAGMENT; transform: [0,64) VERTEX and [0,16) FRAGMENT.
    let flat = pipeline(&kiln::include_spirv!("test/flat.vert").unwrap());
    let transform = pipeline(&kiln::include_spirv!("test/pc_transform.vert").unwrap());
    let verts: [[f32; 2]; 3] = [[-1.0, -1.0], [3.0, -1.0], [-1.0, 3.0]];
    let vb = device
        .buffer_from_slice("tri", vk::BufferUsageFlags::VERTEX_BUFFER, &verts)
        .unwrap();
    // Identity mvp: its column 0 is also the fragment colour (1, 0, 0, 0).
    let mut mvp = [0.0f32; 16];
    for i in 0..4 {
        mvp[i * 5] = 1.0;
    }
    let color = [ColorAttachment::clear(&img, [0.0; 4])];
    let rendering = RenderingDesc::new(&color);
    // A passed draw check, then a layout with other ranges: nothing pushed for it.
    let r = device.execute(|r| {
        r.begin_rendering(&rendering)?;
        r.bind_vertex_buffer(0, &vb, 0)?;
        r.bind_pipeline(&flat)?;
        r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
        r.draw(3, 1, 0, 0)?;
        r.bind_pipeline(&transform)?;
        Ok(r.draw(3, 1, 0, 0)?)
    });
    assert_eq!(code(r), "KILN-E255");
    // Pushed for transform, then back to flat: flat's range must be pushed again.
    let r = device.execute(|r| {
        r.begin_rendering(&rendering)?;
        r.bind_vertex_buffer(0, &vb, 0)?;
        r.bind_pipeline(&flat)?;
        r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
        r.draw(3, 1, 0, 0)?;
        r.bind_pipeline(&transform)?;
        r.push(0, &mvp)?;
        r.draw(3, 1, 0, 0)?;
        r.bind_pipeline(&flat)?;
        Ok(r.draw(3, 1, 0, 0)?)
    });
    assert_eq!(code(r), "KILN-E255");
    device
        .execute(|r| {
            r.begin_rendering(&rendering)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.bind_pipeline(&flat)?;
            r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
            r.draw(3, 1, 0, 0)?;
            r.bind_pipeline(&transform)?;
            r.push(0, &mvp)?;
            r.draw(3, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    let data = img.read().unwrap();
    assert!(
        data.chunks(4).all(|p| p == [255, 0, 0, 0]),
        "{:?}",
        &data[..8]
    );
    assert_clean(&device);
}

/// Was: SIGSEGV in the driver from safe code (bind a pipeline, dispatch without binding
/// its set). Now `KILN-E254`; also after a pipeline with an incompatible layout disturbed
/// the set, and `KILN-E255` for push constants never pushed.
#[test]
fn dispatch_checks_sets_and_push_constants_are_bound() {
    let device = device();
    let va = add::vector_add(&device);
    let saxpy = device
        .compute_pipeline(&kiln::include_spirv!("saxpy.comp").unwrap(), "main")
        .unwrap();
    let r = device.execute(|r| {
        r.bind_pipeline(&va)?;
        Ok(r.dispatch(1, 1, 1)?)
    });
    assert_eq!(code(r), "KILN-E254");

    let x = add::storage(&device, "x", &[1.0f32; 4]);
    let y = add::storage(&device, "y", &[1.0f32; 4]);
    let mut va_set = va.descriptor_set(0).unwrap();
    for b in 0..3 {
        va_set.write_buffer(b, &x).unwrap();
    }
    let mut sx_set = saxpy.descriptor_set(0).unwrap();
    sx_set.write_buffer(0, &x).unwrap();
    sx_set.write_buffer(1, &y).unwrap();
    // saxpy's set bound, then vector_add (different set 0 layout and no push constants)
    // disturbs it: binding saxpy again needs its set again.
    let r = device.execute(|r| {
        r.bind_pipeline(&saxpy)?;
        r.bind_set(0, &sx_set)?;
        r.push(0, &[2.0f32.to_bits(), 4])?;
        r.bind_pipeline(&va)?;
        r.bind_set(0, &va_set)?;
        r.bind_pipeline(&saxpy)?;
        Ok(r.dispatch(1, 1, 1)?)
    });
    assert_eq!(code(r), "KILN-E254");
    let r = device.execute(|r| {
        r.bind_pipeline(&saxpy)?;
        r.bind_set(0, &sx_set)?;
        Ok(r.dispatch(1, 1, 1)?)
    });
    assert_eq!(code(r), "KILN-E255");
    // The complete sequence works: y = 2 * 1 + 1.
    device
        .execute(|r| {
            r.bind_pipeline(&va)?;
            r.bind_set(0, &va_set)?;
            r.bind_pipeline(&saxpy)?;
            r.bind_set(0, &sx_set)?;
            r.push(0, &[2.0f32.to_bits(), 4])?;
            Ok(r.dispatch(1, 1, 1)?)
        })
        .unwrap();
    assert_eq!(y.read::<f32>().unwrap(), vec![3.0; 4]);
    assert_clean(&device);
}

#[test]
fn compute_and_graphics_bind_points_are_tracked_apart() {
    let device = device();
    let compute = add::vector_add(&device);
    let graphics = flat_pipeline(&device, RGBA8).unwrap();
    let n = 256usize;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let a = device
        .buffer_from_slice("a", usage, &vec![1.5f32; n])
        .unwrap();
    let b = device
        .buffer_from_slice("b", usage, &vec![2.0f32; n])
        .unwrap();
    let c = device.storage_buffer::<f32>("c", n).unwrap();
    let set = add::set(&compute, &a, &b, &c);
    let verts: [[f32; 2]; 3] = [[-1.0, -1.0], [3.0, -1.0], [-1.0, 3.0]];
    let vb = device
        .buffer_from_slice("big triangle", vk::BufferUsageFlags::VERTEX_BUFFER, &verts)
        .unwrap();
    let img = target(&device, 4, 4);
    device
        .execute(|r| {
            r.bind_pipeline(&compute)?;
            r.bind_set(0, &set)?;
            r.dispatch_threads(n as u32)?;
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img, [0.0; 4],
            )]))?;
            r.bind_pipeline(&graphics)?;
            r.push(0, &[0.2f32, 0.4, 0.6, 1.0])?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(3, 1, 0, 0)?;
            r.end_rendering()?;
            // Back to compute: set 0 is still bound at the compute bind point (binding it
            // again is elided), and dispatch sees it — the validation layer would say so
            // otherwise.
            r.bind_pipeline(&compute)?;
            r.bind_set(0, &set)?;
            r.barrier()?;
            Ok(r.dispatch_threads(n as u32)?)
        })
        .unwrap();
    assert_eq!(c.read::<f32>().unwrap(), vec![3.5f32; n]);
    assert_eq!(&img.read().unwrap()[..4], &[51, 102, 153, 255]);
    assert_clean(&device);
}
