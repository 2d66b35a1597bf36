//! Group `draws` (issue 25): the graphics side. Row 1, here: recording 10 000 draws with
//! per-draw push constants and a per-draw descriptor-set bind (alternating between
//! [`SETS`] sets) inside one dynamic-rendering scope, CPU time from `begin_rendering` to
//! `end_rendering` (median of the frames), kiln against raw ash and (feature `bench-wgpu`)
//! a wgpu render pass doing the same. The GPU-timed rows (a culled GPU-driven frame, an
//! MSAA resolve, mip generation) are in `draws_gpu.rs`; the raw graphics objects both
//! files build are here.
//!
//! The raw side draws into kiln images (kiln allocates them; only raw commands touch
//! them) and leaves each in the layout kiln's tracking says it is in, so kiln's
//! `Image::read` reads what raw rendered for the once-per-row comparison.

use std::time::Instant;

use ash::vk;
use kiln::{
    ColorAttachment, Device, GraphicsPipeline, GraphicsPipelineDesc, Image, ListDraw, RenderingDesc,
};

use super::raw::{Ctx, Raw};
use super::{best, median, ns_since, BenchResult, Opts, Peer, Row};

/// Descriptor sets the draws alternate between.
pub(super) const SETS: usize = 4;
/// The recording row's target: RGBA8, this many pixels square.
pub(super) const TARGET: u32 = 256;
pub(super) const RGBA8: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// `draw.vert`'s push constants: where the triangle goes and its colour.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DrawPush {
    pub rect: [f32; 4],
    pub color: [f32; 4],
}

/// The per-draw push constants of `n` draws: a grid of small triangles over clip space,
/// colours that exercise every channel.
pub fn draw_stream(n: usize) -> Vec<DrawPush> {
    let side = (n as f64).sqrt().ceil().max(1.0) as usize;
    let cell = 2.0 / side as f32;
    (0..n)
        .map(|i| {
            let (x, y) = ((i % side) as f32, (i / side) as f32);
            DrawPush {
                rect: [-1.0 + x * cell, -1.0 + y * cell, cell, cell],
                color: [
                    (i % 7) as f32 / 6.0,
                    (i % 11) as f32 / 10.0,
                    (i % 13) as f32 / 12.0,
                    1.0,
                ],
            }
        })
        .collect()
}

/// The uniform tint of set `s` (one channel dimmed per set, so the binds matter).
pub fn tint(s: usize) -> [f32; 4] {
    let mut t = [1.0f32; 4];
    t[s % 3] = 0.5;
    t
}

/// A raw set layout of one descriptor per type, visible to `stages`.
pub(super) fn set_layout(
    raw: &Raw,
    types: &[vk::DescriptorType],
    stages: vk::ShaderStageFlags,
) -> BenchResult<vk::DescriptorSetLayout> {
    let bindings: Vec<_> = types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(i as u32)
                .descriptor_type(*t)
                .descriptor_count(1)
                .stage_flags(stages)
        })
        .collect();
    let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
    // SAFETY: `info` points at locals alive for the call.
    Ok(unsafe { raw.d.create_descriptor_set_layout(&info, None) }?)
}

/// A raw pipeline layout of one set and `push` bytes of push constants for `stages`.
pub(super) fn pipeline_layout(
    raw: &Raw,
    set: vk::DescriptorSetLayout,
    push: u32,
    stages: vk::ShaderStageFlags,
) -> BenchResult<vk::PipelineLayout> {
    let sets = [set];
    let ranges = [vk::PushConstantRange {
        stage_flags: stages,
        offset: 0,
        size: push,
    }];
    let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&sets);
    if push > 0 {
        info = info.push_constant_ranges(&ranges);
    }
    // SAFETY: `info` points at locals alive for the call.
    Ok(unsafe { raw.d.create_pipeline_layout(&info, None) }?)
}

/// A raw graphics pipeline for dynamic rendering into one colour attachment of `format`:
/// no vertex input, triangle lists, no culling, no depth, opaque, viewport and scissor
/// dynamic, `samples` per pixel.
pub(super) fn graphics_pipeline(
    raw: &Raw,
    layout: vk::PipelineLayout,
    (vert, frag): (&[u32], &[u32]),
    format: vk::Format,
    samples: vk::SampleCountFlags,
) -> BenchResult<vk::Pipeline> {
    let d = &raw.d;
    // SAFETY: the words are modules kiln's build compiled and kiln checked.
    let vs =
        unsafe { d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(vert), None) }?;
    // SAFETY: as above.
    let fs = match unsafe {
        d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(frag), None)
    } {
        Ok(fs) => fs,
        Err(e) => {
            // SAFETY: `vs` is unused.
            unsafe { d.destroy_shader_module(vs, None) };
            return Err(e.into());
        }
    };
    let stages = [
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::VERTEX)
            .module(vs)
            .name(c"main"),
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::FRAGMENT)
            .module(fs)
            .name(c"main"),
    ];
    let vertex = vk::PipelineVertexInputStateCreateInfo::default();
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
        .topology(vk::PrimitiveTopology::TRIANGLE_LIST);
    let viewport = vk::PipelineViewportStateCreateInfo::default()
        .viewport_count(1)
        .scissor_count(1);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
        .line_width(1.0);
    let multisample =
        vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(samples);
    let blend = [vk::PipelineColorBlendAttachmentState::default()
        .color_write_mask(vk::ColorComponentFlags::RGBA)];
    let blending = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend);
    let dynamic = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic);
    let formats = [format];
    let mut rendering =
        vk::PipelineRenderingCreateInfo::default().color_attachment_formats(&formats);
    let info = vk::GraphicsPipelineCreateInfo::default()
        .stages(&stages)
        .vertex_input_state(&vertex)
        .input_assembly_state(&assembly)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .color_blend_state(&blending)
        .dynamic_state(&dynamic)
        .layout(layout)
        .push_next(&mut rendering);
    // SAFETY: every pointer is a local alive for the call; dynamic rendering is enabled
    // on kiln's Vulkan 1.3 device.
    let made = unsafe { d.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) };
    // SAFETY: the modules are not needed after creation.
    unsafe {
        d.destroy_shader_module(vs, None);
        d.destroy_shader_module(fs, None);
    }
    Ok(made.map_err(|(_, e)| e)?[0])
}

/// One image barrier over `levels` mips from `(old, stage, access)` to `(new, stage, access)`.
pub(super) fn image_barrier(
    image: vk::Image,
    levels: std::ops::Range<u32>,
    (old, src_stage, src_access): (vk::ImageLayout, vk::PipelineStageFlags2, vk::AccessFlags2),
    (new, dst_stage, dst_access): (vk::ImageLayout, vk::PipelineStageFlags2, vk::AccessFlags2),
) -> vk::ImageMemoryBarrier2<'static> {
    vk::ImageMemoryBarrier2::default()
        .src_stage_mask(src_stage)
        .src_access_mask(src_access)
        .dst_stage_mask(dst_stage)
        .dst_access_mask(dst_access)
        .old_layout(old)
        .new_layout(new)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: levels.start,
            level_count: levels.end - levels.start,
            base_array_layer: 0,
            layer_count: 1,
        })
}

/// Records `barriers` (synchronization2) in `cb`.
pub(super) fn barriers(
    raw: &Raw,
    cb: vk::CommandBuffer,
    images: &[vk::ImageMemoryBarrier2<'_>],
    memory: &[vk::MemoryBarrier2<'_>],
) {
    let dep = vk::DependencyInfo::default()
        .image_memory_barriers(images)
        .memory_barriers(memory);
    // SAFETY: `cb` is recording outside a rendering scope; the barriers name live images
    // of this device.
    unsafe { raw.d.cmd_pipeline_barrier2(cb, &dep) }
}

/// Before a raw rendering scope that clears `image` (a kiln image kept in
/// COLOR_ATTACHMENT_OPTIMAL): discard it and order the clear after earlier attachment
/// writes, as kiln's `begin_rendering` does for a cleared attachment.
pub(super) fn discard_for_clear(image: vk::Image) -> vk::ImageMemoryBarrier2<'static> {
    let stage = vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT;
    let access = vk::AccessFlags2::COLOR_ATTACHMENT_WRITE;
    image_barrier(
        image,
        0..1,
        (vk::ImageLayout::UNDEFINED, stage, access),
        (
            vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
            stage,
            access | vk::AccessFlags2::COLOR_ATTACHMENT_READ,
        ),
    )
}

/// `vkCmdBeginRendering` over `extent` clearing `view` to `clear` (with a resolve into
/// `resolve` when given), then the full-extent viewport and scissor, as kiln's
/// `begin_rendering` records.
pub(super) fn begin_rendering(
    raw: &Raw,
    cb: vk::CommandBuffer,
    view: vk::ImageView,
    resolve: Option<vk::ImageView>,
    extent: vk::Extent2D,
    clear: [f32; 4],
) {
    let mut color = vk::RenderingAttachmentInfo::default()
        .image_view(view)
        .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .clear_value(vk::ClearValue {
            color: vk::ClearColorValue { float32: clear },
        });
    if let Some(r) = resolve {
        color = color
            .store_op(vk::AttachmentStoreOp::DONT_CARE)
            .resolve_mode(vk::ResolveModeFlags::AVERAGE)
            .resolve_image_view(r)
            .resolve_image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
    }
    let colors = [color];
    let area = vk::Rect2D {
        offset: vk::Offset2D::default(),
        extent,
    };
    let info = vk::RenderingInfo::default()
        .render_area(area)
        .layer_count(1)
        .color_attachments(&colors);
    let viewport = vk::Viewport {
        x: 0.0,
        y: 0.0,
        width: extent.width as f32,
        height: extent.height as f32,
        min_depth: 0.0,
        max_depth: 1.0,
    };
    // SAFETY: `cb` is recording outside a scope; the views are of live colour-attachment
    // images in COLOR_ATTACHMENT_OPTIMAL of `extent`; the resolve target is single-sampled
    // of the same format.
    unsafe {
        raw.d.cmd_begin_rendering(cb, &info);
        raw.d.cmd_set_viewport(cb, 0, &[viewport]);
        raw.d.cmd_set_scissor(cb, 0, &[area]);
    }
}

/// A kiln colour target for the raw side, moved to COLOR_ATTACHMENT_OPTIMAL by kiln (so
/// kiln's tracking matches the layout raw keeps it in).
pub(super) fn raw_target(device: &Device, desc: &kiln::ImageDesc<'_>) -> BenchResult<Image> {
    let img = device.image(desc)?;
    device.execute(|r| Ok(r.transition(&img, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)?))?;
    Ok(img)
}

/// The draw pipeline (`draw.vert` + `draw.frag`) through kiln and raw, with its sets.
pub(super) struct DrawFixture {
    pub pipe: GraphicsPipeline,
    pub sets: Vec<kiln::DescriptorSet>,
    _tints: Vec<kiln::Buffer>,
    pub r_set_layout: vk::DescriptorSetLayout,
    pub r_layout: vk::PipelineLayout,
    pub r_pipe: vk::Pipeline,
    r_pool: vk::DescriptorPool,
    pub r_sets: Vec<vk::DescriptorSet>,
}

impl DrawFixture {
    pub fn new(
        device: &Device,
        raw: &Raw,
        samples: vk::SampleCountFlags,
    ) -> BenchResult<DrawFixture> {
        let vert = kiln::include_spirv!("draw.vert")?;
        let frag = kiln::include_spirv!("draw.frag")?;
        let pipe = device.graphics_pipeline(
            &GraphicsPipelineDesc::new(&vert, &frag)
                .color_formats(vec![RGBA8])
                .samples(samples),
        )?;
        let mut tints = Vec::new();
        let mut sets = Vec::new();
        for s in 0..SETS {
            let b = device.buffer_from_slice(
                "bench tint",
                vk::BufferUsageFlags::UNIFORM_BUFFER,
                &tint(s),
            )?;
            let mut set = pipe.descriptor_set(0)?;
            set.write_buffer(0, &b)?;
            sets.push(set);
            tints.push(b);
        }
        let ty = [vk::DescriptorType::UNIFORM_BUFFER];
        let r_set_layout = set_layout(raw, &ty, vk::ShaderStageFlags::VERTEX)?;
        let r_layout = pipeline_layout(raw, r_set_layout, 32, vk::ShaderStageFlags::VERTEX)?;
        let r_pipe =
            graphics_pipeline(raw, r_layout, (vert.words(), frag.words()), RGBA8, samples)?;
        let sizes = [vk::DescriptorPoolSize {
            ty: ty[0],
            descriptor_count: SETS as u32,
        }];
        let r_pool = raw.pool(&sizes, SETS as u32)?;
        let mut r_sets = Vec::new();
        for b in &tints {
            let set = raw.alloc_set(r_pool, r_set_layout)?;
            raw.write_set(set, &ty, &[b.raw()]);
            r_sets.push(set);
        }
        Ok(DrawFixture {
            pipe,
            sets,
            _tints: tints,
            r_set_layout,
            r_layout,
            r_pipe,
            r_pool,
            r_sets,
        })
    }

    /// Raw: bind set `s` and push `p`, then draw one triangle.
    #[inline]
    pub fn raw_draw(&self, raw: &Raw, cb: vk::CommandBuffer, s: usize, p: &DrawPush) {
        let d = &raw.d;
        // SAFETY: `cb` is recording inside a rendering scope with `r_pipe` bound; the set
        // is of `r_layout`'s set layout and written; 32 bytes of vertex push constants.
        unsafe {
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::GRAPHICS,
                self.r_layout,
                0,
                &[self.r_sets[s]],
                &[],
            );
            d.cmd_push_constants(
                cb,
                self.r_layout,
                vk::ShaderStageFlags::VERTEX,
                0,
                bytemuck::bytes_of(p),
            );
            d.cmd_draw(cb, 3, 1, 0, 0);
        }
    }

    pub fn destroy(self, raw: &Raw) {
        // SAFETY: every submission that used these objects was waited on.
        unsafe {
            raw.d.destroy_pipeline(self.r_pipe, None);
            raw.d.destroy_descriptor_pool(self.r_pool, None);
            raw.d.destroy_pipeline_layout(self.r_layout, None);
            raw.d.destroy_descriptor_set_layout(self.r_set_layout, None);
        }
    }
}

/// `KILN_BENCH_ONLY=draws`: the recording row, then the GPU-timed rows.
pub fn rows(
    device: &Device,
    raw: &Raw,
    mut peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let fx = DrawFixture::new(device, raw, vk::SampleCountFlags::TYPE_1)?;
    let ctx = raw.ctx()?;
    let out = (|| {
        let mut rows = recording(device, raw, &fx, &ctx, peer.as_deref_mut(), opts)?;
        rows.extend(super::draws_gpu::rows(device, raw, &ctx, opts)?);
        Ok(rows)
    })();
    device.wait_idle()?;
    raw.drop_ctx(ctx);
    fx.destroy(raw);
    out
}

/// Rows 1 and 2: ns per draw (bind set + push + draw) of a frame of `n` draws,
/// `begin_rendering` to `end_rendering` included, median of the frames: kiln's calls one by
/// one, and the same draws as one `draw_list`. Checks once that kiln's (both ways) and
/// raw's images are equal.
fn recording(
    device: &Device,
    raw: &Raw,
    fx: &DrawFixture,
    ctx: &Ctx,
    mut peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let n = if opts.quick { 2_000 } else { 10_000 };
    let frames = if opts.quick { 5 } else { 21 };
    let stream = draw_stream(n);
    let desc = kiln::ImageDesc::color_target("bench draws", TARGET, TARGET, RGBA8);
    let k_img = device.image(&desc)?;
    let l_img = device.image(&desc)?;
    let r_img = raw_target(device, &desc)?;
    let extent = r_img.extent();
    if let Some(p) = peer.as_deref_mut() {
        p.draws_setup(TARGET, &(0..SETS).map(tint).collect::<Vec<_>>())?;
    }
    let (mut k, mut r, mut w, mut l) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let clear = [0.0, 0.0, 0.0, 1.0];
    for _ in 0..=frames {
        let t = kiln_frame(device, fx, &k_img, &stream, Variant::Measured)?;
        k.push(t / n as f64);
        let t = kiln_frame(device, fx, &l_img, &stream, Variant::List)?;
        l.push(t / n as f64);
        raw.begin(ctx)?;
        let t0 = Instant::now();
        barriers(raw, ctx.cb, &[discard_for_clear(r_img.raw())], &[]);
        begin_rendering(raw, ctx.cb, r_img.view(), None, extent, clear);
        // SAFETY: `cb` is recording inside the scope; the pipeline is alive.
        unsafe {
            raw.d
                .cmd_bind_pipeline(ctx.cb, vk::PipelineBindPoint::GRAPHICS, fx.r_pipe)
        };
        for (i, p) in stream.iter().enumerate() {
            fx.raw_draw(raw, ctx.cb, i % SETS, p);
        }
        // SAFETY: the scope begun above is open.
        unsafe { raw.d.cmd_end_rendering(ctx.cb) };
        r.push(ns_since(t0) / n as f64);
        raw.submit_wait(ctx)?;
        if let Some(p) = peer.as_deref_mut() {
            w.push(p.draws_record(&stream)? / n as f64);
        }
    }
    // The first frame of each is a warm-up.
    let skip = w.len().min(1);
    let (k, r, w, l) = (&mut k[1..], &mut r[1..], &mut w[skip..], &mut l[1..]);
    if std::env::var_os("KILN_BENCH_DEBUG").is_some() {
        eprintln!("draw recording frames kiln {k:?}\nraw {r:?}\nwgpu {w:?}");
    }
    let (ki, ri) = (k_img.read()?, r_img.read()?);
    if ki != ri {
        return Err("draw recording: kiln's and raw's images differ".into());
    }
    if l_img.read()? != ri {
        return Err("draw recording: kiln's draw_list image and raw's differ".into());
    }
    let lit = ki.chunks(4).filter(|p| p[..3] != [0, 0, 0]).count();
    if lit == 0 {
        return Err("draw recording: nothing was drawn".into());
    }
    let wgpu_same = match peer {
        Some(p) => {
            // wgpu's clip space has +Y up: its Vulkan backend flips the viewport, so its
            // image is kiln's upside down.
            let row = TARGET as usize * 4;
            let flipped: Vec<u8> = p
                .draws_image()?
                .chunks(row)
                .rev()
                .flatten()
                .copied()
                .collect();
            if flipped == ki {
                ", wgpu's image equal too (upside down: wgpu's +Y is up)"
            } else {
                ", wgpu's image differs"
            }
        }
        None => "",
    };
    super::note(format!(
        "draw recording: {n} draws over {SETS} sets, kiln's and raw's images equal \
         ({lit} of {} pixels lit){wgpu_same}",
        ki.len() / 4,
    ));
    super::note(format!(
        "draw recording, best frames (ns per draw): kiln {:.1}, raw {:.1}{}",
        best(k),
        best(r),
        if w.is_empty() {
            String::new()
        } else {
            format!(", wgpu {:.1}", best(w))
        }
    ));
    variants(device, fx, &k_img, &stream, frames, median(k))?;
    let wgpu = (!w.is_empty()).then(|| median(w));
    let r = median(r);
    Ok(vec![
        Row::new("draw recording, set + push per draw", "ns", median(k), r).with_wgpu(wgpu),
        Row::new("draw recording, one draw_list", "ns", median(l), r).with_wgpu(wgpu),
    ])
}

/// How a diagnostic frame of the recording row differs from the measured one.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Variant {
    /// Automatic mode, a set bind + push + draw per draw (the row).
    Measured,
    /// The same with `manual_barriers` (no hazard tracking).
    Manual,
    /// Automatic, set 0 bound once: push + draw per draw.
    OneSet,
    /// Automatic, set 0 bound and pushed once: draw alone per draw.
    DrawOnly,
    /// Automatic, the row's draws as one `Recorder::draw_list` (row 2).
    List,
}

/// kiln's frame of the recording row; CPU ns from `begin_rendering` to `end_rendering`.
fn kiln_frame(
    device: &Device,
    fx: &DrawFixture,
    target: &Image,
    stream: &[DrawPush],
    v: Variant,
) -> BenchResult<f64> {
    let list: Vec<ListDraw<'_, DrawPush>> = match v {
        Variant::List => stream
            .iter()
            .enumerate()
            .map(|(i, p)| ListDraw::new(&fx.sets[i % SETS], *p, 3))
            .collect(),
        _ => Vec::new(),
    };
    Ok(device.execute(|rec| {
        if v == Variant::Manual {
            rec.manual_barriers();
        }
        let t0 = Instant::now();
        rec.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
            target,
            [0.0, 0.0, 0.0, 1.0],
        )]))?;
        rec.bind_pipeline(&fx.pipe)?;
        if v == Variant::List {
            rec.draw_list(0, 0, &list)?;
            rec.end_rendering()?;
            return Ok(ns_since(t0));
        }
        let per_draw_set = matches!(v, Variant::Measured | Variant::Manual);
        if !per_draw_set {
            rec.bind_set(0, &fx.sets[0])?;
            rec.push(0, &stream[0])?;
        }
        for (i, p) in stream.iter().enumerate() {
            if per_draw_set {
                rec.bind_set(0, &fx.sets[i % SETS])?;
            }
            if v != Variant::DrawOnly {
                rec.push(0, p)?;
            }
            rec.draw(3, 1, 0, 0)?;
        }
        rec.end_rendering()?;
        Ok(ns_since(t0))
    })?)
}

/// Notes only: where kiln's time per draw goes (manual barriers; no set bind per draw;
/// draws alone), medians of `frames` frames each, beside the row's `measured` figure.
fn variants(
    device: &Device,
    fx: &DrawFixture,
    target: &Image,
    stream: &[DrawPush],
    frames: usize,
    measured: f64,
) -> BenchResult<()> {
    let n = stream.len() as f64;
    let mut parts = Vec::new();
    for v in [Variant::Manual, Variant::OneSet, Variant::DrawOnly] {
        let mut t = Vec::with_capacity(frames);
        for _ in 0..frames {
            t.push(kiln_frame(device, fx, target, stream, v)? / n);
        }
        parts.push(format!("{v:?} {:.1}", median(&mut t)));
    }
    super::note(format!(
        "draw recording, kiln ns per draw: measured (automatic, set + push + draw) \
         {measured:.1}; {}",
        parts.join("; ")
    ));
    Ok(())
}
