//! Group `draws`, the GPU-timed rows (issue 25): a GPU-driven frame (a compute pass culls
//! instances and writes `VkDrawIndexedIndirectCommand`s plus a count, one
//! `draw_indexed_indirect_count` draws them), an MSAA 4x render resolved with
//! `resolve_into`, and `generate_mips` of a 2048² RGBA8 image; each against raw ash
//! recording the same commands with its own barriers. GPU time between a top-of-pipe and a
//! bottom-of-pipe timestamp around the frame's commands (kiln's leading barrier
//! included), median of the frames; kiln's and raw's results are compared once.

use ash::vk;
use kiln::{Buffer, ColorAttachment, Device, GraphicsPipelineDesc, ImageDesc, RenderingDesc};

use super::draws::{
    barriers, begin_rendering, discard_for_clear, draw_stream, graphics_pipeline, image_barrier,
    pipeline_layout, raw_target, set_layout, DrawFixture, RGBA8, SETS,
};
use super::raw::{Ctx, Raw};
use super::transfer::{ticks, write_ts};
use super::{median, BenchResult, Opts, Row};

use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;

const TOP: vk::PipelineStageFlags = vk::PipelineStageFlags::TOP_OF_PIPE;
const BOTTOM: vk::PipelineStageFlags = vk::PipelineStageFlags::BOTTOM_OF_PIPE;

/// The timestamp pool, the period and the frame count the rows share.
struct Timer<'t> {
    raw: &'t Raw,
    ctx: &'t Ctx,
    pool: vk::QueryPool,
    period: f64,
    frames: usize,
}

impl Timer<'_> {
    /// ns of GPU time of kiln's commands recorded by `f` (between two raw timestamps in
    /// kiln's command buffer).
    fn kiln<'a>(
        &self,
        device: &'a Device,
        f: impl for<'r> FnOnce(&mut kiln::Recorder<'a, 'r>) -> kiln::Result<()>,
    ) -> BenchResult<f64> {
        let (raw, pool) = (self.raw, self.pool);
        device.execute(|rec| {
            // SAFETY: the command buffer is recording inside `execute`, outside a scope;
            // the query pool outlives the call (execute waits).
            let cb = unsafe { rec.raw() };
            // SAFETY: as above; queries 0..2 exist.
            unsafe { raw.d.cmd_reset_query_pool(cb, pool, 0, 2) };
            write_ts(raw, cb, pool, TOP, 0);
            f(rec)?;
            write_ts(raw, cb, pool, BOTTOM, 1);
            Ok(())
        })?;
        Ok(ticks(raw, pool)? as f64 * self.period)
    }

    /// ns of GPU time of the raw commands `f` records.
    fn raw(&self, f: impl FnOnce(vk::CommandBuffer)) -> BenchResult<f64> {
        let (raw, ctx, pool) = (self.raw, self.ctx, self.pool);
        raw.begin(ctx)?;
        // SAFETY: `cb` is recording; queries 0..2 exist.
        unsafe { raw.d.cmd_reset_query_pool(ctx.cb, pool, 0, 2) };
        write_ts(raw, ctx.cb, pool, TOP, 0);
        f(ctx.cb);
        write_ts(raw, ctx.cb, pool, BOTTOM, 1);
        raw.submit_wait(ctx)?;
        Ok(ticks(raw, pool)? as f64 * self.period)
    }

    /// Runs kiln's and raw's frames alternately (`frames` + one warm-up each); medians in µs.
    fn measure(
        &self,
        mut kiln: impl FnMut() -> BenchResult<f64>,
        mut raw: impl FnMut() -> BenchResult<f64>,
    ) -> BenchResult<(f64, f64)> {
        let (mut k, mut r) = (Vec::new(), Vec::new());
        for _ in 0..=self.frames {
            k.push(kiln()? / 1e3);
            r.push(raw()? / 1e3);
        }
        let (k, r) = (median(&mut k[1..]), median(&mut r[1..]));
        if !(k > 0.0 && r > 0.0) {
            return Err(format!("timestamps did not advance ({k} / {r} us)").into());
        }
        Ok((k, r))
    }
}

pub(super) fn rows(device: &Device, raw: &Raw, ctx: &Ctx, opts: &Opts) -> BenchResult<Vec<Row>> {
    if device.limits().timestamp_compute_and_graphics == vk::FALSE {
        return Err(
            "the device does not promise timestamps on graphics and compute queues \
                    (timestampComputeAndGraphics); the draws rows need them"
                .into(),
        );
    }
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(2);
    // SAFETY: plain create; destroyed below.
    let pool = unsafe { raw.d.create_query_pool(&info, None) }?;
    let timer = Timer {
        raw,
        ctx,
        pool,
        period: device.limits().timestamp_period as f64,
        frames: if opts.quick { 5 } else { 21 },
    };
    let out = (|| {
        Ok(vec![
            culled(device, &timer, opts)?,
            msaa(device, &timer, opts)?,
            mips(device, &timer, opts)?,
        ])
    })();
    device.wait_idle()?;
    // SAFETY: no submission using the pool is pending.
    unsafe { raw.d.destroy_query_pool(pool, None) };
    out
}

/// `cull.comp`'s push constants.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CullPush {
    planes: [[f32; 4]; 4],
    count: u32,
}

/// `n` circles (xy centre in clip space, z 0, w radius) from a fixed xorshift stream.
fn instances(n: u32) -> Vec<[f32; 4]> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 24) as f32
    };
    (0..n)
        .map(|_| {
            let (a, b, c) = (next(), next(), next());
            [a * 2.0 - 1.0, b * 2.0 - 1.0, 0.0, 0.002 + 0.008 * c]
        })
        .collect()
}

/// The culling test of `cull.comp` on the host (the planes' coefficients are 0 and ±1,
/// so the dot product is exact and the one rounding is the plane's offset, as on the GPU).
fn visible(planes: &[[f32; 4]; 4], s: &[f32; 4]) -> bool {
    planes
        .iter()
        .all(|p| p[0] * s[0] + p[1] * s[1] + p[2] * s[2] + p[3] >= -s[3])
}

/// Clear colour of the rendering rows.
const BLACK: [f32; 4] = [0.0, 0.0, 0.0, 1.0];
/// Bytes between two `VkDrawIndexedIndirectCommand`s.
const STRIDE: u32 = 20;

/// What one culled frame uses (the raw side's buffers and target).
struct Frame<'f> {
    cmds: &'f Buffer,
    count: &'f Buffer,
    ib: &'f Buffer,
    target: &'f kiln::Image,
    push: CullPush,
    n: u32,
    counted: bool,
}

/// The raw side's culling objects: compute and graphics pipelines, their sets.
struct RawCull {
    cull_set_layout: vk::DescriptorSetLayout,
    cull_layout: vk::PipelineLayout,
    cull: vk::Pipeline,
    draw_set_layout: vk::DescriptorSetLayout,
    draw_layout: vk::PipelineLayout,
    draw: vk::Pipeline,
    pool: vk::DescriptorPool,
    cull_set: vk::DescriptorSet,
    draw_set: vk::DescriptorSet,
}

impl RawCull {
    fn new(raw: &Raw, inst: &Buffer, cmds: &Buffer, count: &Buffer) -> BenchResult<RawCull> {
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let cull_module = kiln::include_spirv!("cull.comp")?;
        let (vert, frag) = (
            kiln::include_spirv!("cull.vert")?,
            kiln::include_spirv!("white.frag")?,
        );
        let compute = vk::ShaderStageFlags::COMPUTE;
        let cull_set_layout = set_layout(raw, &[storage; 3], compute)?;
        let cull_layout = pipeline_layout(raw, cull_set_layout, 68, compute)?;
        let cull = raw.pipeline(
            vk::PipelineCache::null(),
            cull_layout,
            cull_module.words(),
            &[],
        )?;
        let draw_set_layout = set_layout(raw, &[storage], vk::ShaderStageFlags::VERTEX)?;
        let draw_layout = pipeline_layout(raw, draw_set_layout, 0, vk::ShaderStageFlags::VERTEX)?;
        let draw = graphics_pipeline(
            raw,
            draw_layout,
            (vert.words(), frag.words()),
            RGBA8,
            vk::SampleCountFlags::TYPE_1,
        )?;
        let sizes = [vk::DescriptorPoolSize {
            ty: storage,
            descriptor_count: 4,
        }];
        let pool = raw.pool(&sizes, 2)?;
        let cull_set = raw.alloc_set(pool, cull_set_layout)?;
        raw.write_set(
            cull_set,
            &[storage; 3],
            &[inst.raw(), cmds.raw(), count.raw()],
        );
        let draw_set = raw.alloc_set(pool, draw_set_layout)?;
        raw.write_set(draw_set, &[storage], &[inst.raw()]);
        Ok(RawCull {
            cull_set_layout,
            cull_layout,
            cull,
            draw_set_layout,
            draw_layout,
            draw,
            pool,
            cull_set,
            draw_set,
        })
    }

    /// Records the raw frame: fill the count (and, without a count, the commands), the
    /// fill→compute barrier, the culling dispatch, the compute→indirect barrier with the
    /// target's, the scope and the indirect draw.
    fn record(&self, raw: &Raw, cb: vk::CommandBuffer, f: &Frame<'_>) {
        let d = &raw.d;
        let filled = vk::MemoryBarrier2::default()
            .src_stage_mask(S::ALL_TRANSFER)
            .src_access_mask(A::TRANSFER_WRITE)
            .dst_stage_mask(S::COMPUTE_SHADER)
            .dst_access_mask(A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE);
        let culled = vk::MemoryBarrier2::default()
            .src_stage_mask(S::COMPUTE_SHADER)
            .src_access_mask(A::SHADER_STORAGE_WRITE)
            .dst_stage_mask(S::DRAW_INDIRECT)
            .dst_access_mask(A::INDIRECT_COMMAND_READ);
        // SAFETY: `cb` is recording outside a scope; the buffers are alive with
        // TRANSFER_DST usage, sizes multiples of 4.
        unsafe {
            d.cmd_fill_buffer(cb, f.count.raw(), 0, vk::WHOLE_SIZE, 0);
            if !f.counted {
                d.cmd_fill_buffer(cb, f.cmds.raw(), 0, vk::WHOLE_SIZE, 0);
            }
        }
        barriers(raw, cb, &[], &[filled]);
        let compute = vk::PipelineBindPoint::COMPUTE;
        let graphics = vk::PipelineBindPoint::GRAPHICS;
        // SAFETY: pipeline, layout and set are alive and compatible; 68 push bytes.
        unsafe {
            d.cmd_bind_pipeline(cb, compute, self.cull);
            d.cmd_bind_descriptor_sets(cb, compute, self.cull_layout, 0, &[self.cull_set], &[]);
            d.cmd_push_constants(
                cb,
                self.cull_layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                bytemuck::bytes_of(&f.push),
            );
            d.cmd_dispatch(cb, f.n.div_ceil(64), 1, 1);
        }
        barriers(raw, cb, &[discard_for_clear(f.target.raw())], &[culled]);
        let extent = f.target.extent();
        begin_rendering(raw, cb, f.target.view(), None, extent, BLACK);
        // SAFETY: inside the scope; the graphics pipeline, its set and the index buffer are
        // alive; drawIndirectCount is enabled where `counted` (kiln's features), else
        // multiDrawIndirect; the commands lie inside the buffer.
        unsafe {
            d.cmd_bind_pipeline(cb, graphics, self.draw);
            d.cmd_bind_descriptor_sets(cb, graphics, self.draw_layout, 0, &[self.draw_set], &[]);
            d.cmd_bind_index_buffer(cb, f.ib.raw(), 0, vk::IndexType::UINT32);
            let (cmds, n) = (f.cmds.raw(), f.n);
            if f.counted {
                d.cmd_draw_indexed_indirect_count(cb, cmds, 0, f.count.raw(), 0, n, STRIDE);
            } else {
                d.cmd_draw_indexed_indirect(cb, cmds, 0, n, STRIDE);
            }
            d.cmd_end_rendering(cb);
        }
    }

    fn destroy(self, raw: &Raw) {
        // SAFETY: every submission that used these objects was waited on.
        unsafe {
            raw.d.destroy_pipeline(self.cull, None);
            raw.d.destroy_pipeline(self.draw, None);
            raw.d.destroy_descriptor_pool(self.pool, None);
            raw.d.destroy_pipeline_layout(self.cull_layout, None);
            raw.d.destroy_pipeline_layout(self.draw_layout, None);
            raw.d
                .destroy_descriptor_set_layout(self.cull_set_layout, None);
            raw.d
                .destroy_descriptor_set_layout(self.draw_set_layout, None);
        }
    }
}

/// The culling planes of the GPU-driven frame (x and y within ±0.6).
const CULL_PLANES: [[f32; 4]; 4] = [
    [1.0, 0.0, 0.0, 0.6],
    [-1.0, 0.0, 0.0, 0.6],
    [0.0, 1.0, 0.0, 0.6],
    [0.0, -1.0, 0.0, 0.6],
];

/// Whether the frame draws with `drawIndirectCount` (else every command slot through
/// multiDrawIndirect). `KILN_BENCH_NO_INDIRECT_COUNT=1` takes the fallback on a device with
/// the feature (to check that path). Errors: the device has neither.
fn counted_draws(device: &Device) -> BenchResult<bool> {
    let features = device.features();
    let counted =
        features.draw_indirect_count && std::env::var_os("KILN_BENCH_NO_INDIRECT_COUNT").is_none();
    if !counted && !features.multi_draw_indirect {
        return Err(
            "the device has neither drawIndirectCount nor multiDrawIndirect: \
                    the GPU-driven frame needs one"
                .into(),
        );
    }
    Ok(counted)
}

/// Row 2: the GPU-driven frame of `n` instances (100 000; 10 000 with `--quick`).
fn culled(device: &Device, timer: &Timer<'_>, opts: &Opts) -> BenchResult<Row> {
    let raw = timer.raw;
    let (n, side) = if opts.quick {
        (10_000u32, 256)
    } else {
        (100_000u32, 1024)
    };
    let counted = counted_draws(device)?;
    let planes = CULL_PLANES;
    let data = instances(n);
    let expected = data.iter().filter(|s| visible(&planes, s)).count() as u32;
    let push = CullPush { planes, count: n };
    let groups = n.div_ceil(64);
    let inst = device.buffer_from_slice(
        "bench instances",
        vk::BufferUsageFlags::STORAGE_BUFFER,
        &data,
    )?;
    let ib = device.buffer_from_slice(
        "bench quad indices",
        vk::BufferUsageFlags::INDEX_BUFFER,
        &[0u32, 1, 2, 2, 1, 3],
    )?;
    let indirect = vk::BufferUsageFlags::INDIRECT_BUFFER;
    let make = |who: &str| -> BenchResult<(Buffer, Buffer)> {
        Ok((
            device.storage_buffer_with::<[u32; 5]>(
                &format!("bench {who} draw commands"),
                n as usize,
                indirect,
            )?,
            device.storage_buffer_with::<u32>(&format!("bench {who} draw count"), 1, indirect)?,
        ))
    };
    let ((k_cmds, k_count), (r_cmds, r_count)) = (make("kiln")?, make("raw")?);
    let cull = device.compute_pipeline(&kiln::include_spirv!("cull.comp")?, "main")?;
    let mut cull_set = cull.descriptor_set(0)?;
    cull_set.write_buffers(&[(0, &inst), (1, &k_cmds), (2, &k_count)])?;
    let (vert, frag) = (
        kiln::include_spirv!("cull.vert")?,
        kiln::include_spirv!("white.frag")?,
    );
    let draw = device
        .graphics_pipeline(&GraphicsPipelineDesc::new(&vert, &frag).color_formats(vec![RGBA8]))?;
    let mut draw_set = draw.descriptor_set(0)?;
    draw_set.write_buffer(0, &inst)?;
    let desc = ImageDesc::color_target("bench culled", side, side, RGBA8);
    let k_img = device.image(&desc)?;
    let r_img = raw_target(device, &desc)?;
    let rc = RawCull::new(raw, &inst, &r_cmds, &r_count)?;
    let kiln_frame = || {
        timer.kiln(device, |rec| {
            rec.fill_buffer(&k_count, 0)?;
            if !counted {
                rec.fill_buffer(&k_cmds, 0)?;
            }
            rec.bind_pipeline(&cull)?;
            rec.bind_set(0, &cull_set)?;
            rec.push(0, &push)?;
            rec.dispatch(groups, 1, 1)?;
            rec.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &k_img, BLACK,
            )]))?;
            rec.bind_pipeline(&draw)?;
            rec.bind_set(0, &draw_set)?;
            rec.bind_index_buffer(&ib, 0, vk::IndexType::UINT32)?;
            if counted {
                rec.draw_indexed_indirect_count(&k_cmds, 0, &k_count, 0, n, STRIDE)?;
            } else {
                rec.draw_indexed_indirect(&k_cmds, 0, n, STRIDE)?;
            }
            Ok(rec.end_rendering()?)
        })
    };
    let frame = Frame {
        cmds: &r_cmds,
        count: &r_count,
        ib: &ib,
        target: &r_img,
        push,
        n,
        counted,
    };
    let raw_frame = || timer.raw(|cb| rc.record(raw, cb, &frame));
    let out = timer.measure(kiln_frame, raw_frame);
    device.wait_idle()?;
    rc.destroy(raw);
    let (k, r) = out?;
    check_culled((&k_count, &k_img), &frame, expected)?;
    let name = if counted {
        format!("GPU-driven frame, {}k culled", n / 1000)
    } else {
        format!("GPU-driven frame, {}k culled (no count)", n / 1000)
    };
    Ok(Row::new(&name, "us", k, r))
}

/// Checks the culled frame once: both draw counts equal the host's `expected`, kiln's and
/// raw's images are equal.
fn check_culled(
    (k_count, k_img): (&Buffer, &kiln::Image),
    f: &Frame<'_>,
    expected: u32,
) -> BenchResult<()> {
    let (kc, rc) = (k_count.read::<u32>()?[0], f.count.read::<u32>()?[0]);
    let n = f.n;
    if kc != expected || rc != expected {
        return Err(format!(
            "GPU-driven frame: draw counts kiln {kc}, raw {rc}, expected {expected} of {n}"
        )
        .into());
    }
    if k_img.read()? != f.target.read()? {
        return Err("GPU-driven frame: kiln's and raw's images differ".into());
    }
    let how = if f.counted {
        "draw_indexed_indirect_count"
    } else {
        "no drawIndirectCount: draw_indexed_indirect of every slot, zeroed each frame"
    };
    super::note(format!(
        "GPU-driven frame: {n} instances, {expected} visible (kiln and raw counts equal the \
         host's), images equal; {how}"
    ));
    Ok(())
}

/// Row 3a: an MSAA 4x render of 64 triangles at 1920×1080 (640×360 with `--quick`)
/// resolved into a single-sampled image by the rendering scope.
fn msaa(device: &Device, timer: &Timer<'_>, opts: &Opts) -> BenchResult<Row> {
    let raw = timer.raw;
    let four = vk::SampleCountFlags::TYPE_4;
    if !device
        .limits()
        .framebuffer_color_sample_counts
        .contains(four)
    {
        return Err(
            "the device cannot render 4 samples per pixel (framebufferColorSampleCounts)".into(),
        );
    }
    let (w, h) = if opts.quick { (640, 360) } else { (1920, 1080) };
    let fx = DrawFixture::new(device, raw, four)?;
    let stream = draw_stream(64);
    let ms = ImageDesc::color_target("bench msaa", w, h, RGBA8)
        .samples(four)
        .usage(vk::ImageUsageFlags::COLOR_ATTACHMENT);
    let (k_ms, r_ms) = (device.image(&ms)?, device.image(&ms)?);
    let res = ImageDesc::color_target("bench resolved", w, h, RGBA8);
    let k_res = device.image(&res)?;
    let r_res = raw_target(device, &res)?;
    let kiln_frame = || {
        timer.kiln(device, |rec| {
            rec.begin_rendering(&RenderingDesc::new(&[
                ColorAttachment::clear(&k_ms, BLACK).resolve_into(&k_res)
            ]))?;
            rec.bind_pipeline(&fx.pipe)?;
            for (i, p) in stream.iter().enumerate() {
                rec.bind_set(0, &fx.sets[i % SETS])?;
                rec.push(0, p)?;
                rec.draw(3, 1, 0, 0)?;
            }
            Ok(rec.end_rendering()?)
        })
    };
    let extent = r_res.extent();
    let raw_frame = || {
        timer.raw(|cb| {
            let targets = [
                discard_for_clear(r_ms.raw()),
                discard_for_clear(r_res.raw()),
            ];
            barriers(raw, cb, &targets, &[]);
            begin_rendering(raw, cb, r_ms.view(), Some(r_res.view()), extent, BLACK);
            // SAFETY: inside the scope; the pipeline is alive.
            unsafe {
                raw.d
                    .cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, fx.r_pipe)
            };
            for (i, p) in stream.iter().enumerate() {
                fx.raw_draw(raw, cb, i % SETS, p);
            }
            // SAFETY: the scope begun above is open.
            unsafe { raw.d.cmd_end_rendering(cb) };
        })
    };
    let out = timer.measure(kiln_frame, raw_frame);
    device.wait_idle()?;
    fx.destroy(raw);
    let (k, r) = out?;
    let (ki, ri) = (k_res.read()?, r_res.read()?);
    if ki != ri {
        return Err("MSAA resolve: kiln's and raw's resolved images differ".into());
    }
    let lit = ki.chunks(4).filter(|p| p[..3] != [0, 0, 0]).count();
    if lit == 0 {
        return Err("MSAA resolve: nothing was drawn".into());
    }
    super::note(format!(
        "MSAA 4x resolve {w}x{h}: resolved images equal ({lit} of {} pixels lit)",
        w * h
    ));
    Ok(Row::new(&format!("MSAA 4x resolve {w}x{h}"), "us", k, r))
}

/// Row 3b: `generate_mips` of a 2048² RGBA8 image (512² with `--quick`), every level from
/// the one above by linear blits, against raw ash's blit chain.
fn mips(device: &Device, timer: &Timer<'_>, opts: &Opts) -> BenchResult<Row> {
    let raw = timer.raw;
    let size = if opts.quick { 512 } else { 2048 };
    // Transfer usage only: generate_mips leaves every level in TRANSFER_DST_OPTIMAL, and
    // the raw chain does too.
    let desc = ImageDesc::texture("bench mips", size, size, RGBA8)
        .full_mip_chain()
        .usage(vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST);
    let (k_img, r_img) = (device.image(&desc)?, device.image(&desc)?);
    let levels = k_img.mip_levels();
    let texels: Vec<u8> = (0..size * size)
        .flat_map(|i| {
            let (x, y) = (i % size, i / size);
            [(x * 7) as u8, (y * 5) as u8, ((x ^ y) * 3) as u8, 255]
        })
        .collect();
    k_img.upload(&texels)?;
    r_img.upload(&texels)?;
    // An upload moves only level 0 (kiln tracks layouts per mip): the raw chain starts
    // with every level in TRANSFER_DST_OPTIMAL, as it leaves them.
    device.execute(|r| Ok(r.transition(&r_img, vk::ImageLayout::TRANSFER_DST_OPTIMAL)?))?;
    let kiln_frame = || timer.kiln(device, |rec| Ok(rec.generate_mips(&k_img)?));
    let image = r_img.raw();
    let dst = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
    let src = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
    let raw_frame = || {
        timer.raw(|cb| {
            for l in 1..levels {
                let b = image_barrier(
                    image,
                    l - 1..l,
                    (dst, S::ALL_TRANSFER, A::TRANSFER_WRITE),
                    (src, S::BLIT, A::TRANSFER_READ),
                );
                barriers(raw, cb, &[b], &[]);
                let extent = |l: u32| vk::Offset3D {
                    x: (size >> l).max(1) as i32,
                    y: (size >> l).max(1) as i32,
                    z: 1,
                };
                let layers = |l| vk::ImageSubresourceLayers {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: l,
                    base_array_layer: 0,
                    layer_count: 1,
                };
                let region = [vk::ImageBlit2::default()
                    .src_subresource(layers(l - 1))
                    .src_offsets([vk::Offset3D::default(), extent(l - 1)])
                    .dst_subresource(layers(l))
                    .dst_offsets([vk::Offset3D::default(), extent(l)])];
                let blit = vk::BlitImageInfo2::default()
                    .src_image(image)
                    .src_image_layout(src)
                    .dst_image(image)
                    .dst_image_layout(dst)
                    .regions(&region)
                    .filter(vk::Filter::LINEAR);
                // SAFETY: level l - 1 is in TRANSFER_SRC_OPTIMAL, level l in
                // TRANSFER_DST_OPTIMAL; RGBA8 has linear-filtered blits (kiln's
                // generate_mips checked the same format); the regions lie inside.
                unsafe { raw.d.cmd_blit_image2(cb, &blit) };
            }
            // Every level back to TRANSFER_DST_OPTIMAL (the last one never left it).
            let back = image_barrier(
                image,
                0..levels - 1,
                (src, S::BLIT, A::NONE),
                (dst, S::ALL_TRANSFER, A::NONE),
            );
            barriers(raw, cb, &[back], &[]);
        })
    };
    let out = timer.measure(kiln_frame, raw_frame);
    device.wait_idle()?;
    let (k, r) = out?;
    for l in [1, levels / 2, levels - 1] {
        if k_img.read_level(l)? != r_img.read_level(l)? {
            return Err(format!("generate_mips: kiln's and raw's level {l} differ").into());
        }
    }
    super::note(format!(
        "generate_mips {size}x{size} RGBA8: {levels} levels, levels 1, {}, {} equal",
        levels / 2,
        levels - 1
    ));
    Ok(Row::new(
        &format!("generate_mips {size}x{size} RGBA8"),
        "us",
        k,
        r,
    ))
}
