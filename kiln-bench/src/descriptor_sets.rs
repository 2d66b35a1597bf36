//! Row 6: descriptor set allocate + write + bind, kiln against raw ash, and with
//! VK_KHR_push_descriptor the push-descriptor variant; on the fixture of `dispatch.rs`.

use std::time::Instant;

use ash::vk;
use kiln::{ComputePipelineDesc, Device, PushWrite, SpecValue};

use super::dispatch::{pool_sizes, set_buffers, Fixture, BUFS, TYPES};
use super::raw::{Ctx, Raw};
use super::{best, ns_since, BenchResult, Opts, Row};

/// Row 6: allocate a set, write its 6 bindings, bind it; ns per set. With
/// VK_KHR_push_descriptor also its push-descriptor variant: the 6 buffers given with one
/// `push_descriptor_set` per "set" (no pool, no set object), against the same raw set
/// path.
pub(super) fn rows(
    device: &Device,
    raw: &Raw,
    fx: &Fixture,
    ctx: &Ctx,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let k = if opts.quick { 256 } else { 2_000 };
    let rounds = if opts.quick { 3 } else { 9 };
    let pool = raw.pool(&pool_sizes(k as u32), k as u32)?;
    let (mut kt, mut rt, mut pt) = (Vec::new(), Vec::new(), Vec::new());
    let module = kiln::include_spirv!("six.comp")?;
    let pushed = if device.features().push_descriptor {
        Some(
            device.compute_pipeline_with(
                &ComputePipelineDesc::new(&module, "main")
                    .spec(&[(0, SpecValue::U32(0))])
                    .push_descriptor_set(Some(0)),
            )?,
        )
    } else {
        None
    };
    // The raw push-descriptor path: the same pipeline with a push set layout.
    let raw_push = if pushed.is_some() {
        let set_layout = raw.set_layout_with(
            &TYPES,
            vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR,
        )?;
        let layout = raw.pipeline_layout(set_layout, 16)?;
        let pipe = raw.pipeline(vk::PipelineCache::null(), layout, module.words(), &[(0, 0)])?;
        Some((set_layout, layout, pipe, raw.push_descriptor()))
    } else {
        None
    };
    let mut rpt = Vec::new();
    let result = (|| -> BenchResult<()> {
        for _ in 0..rounds {
            if let Some(rp) = &raw_push {
                rpt.push(raw_push_round(raw, fx, ctx, rp, k)?);
            }
            if let Some(pushed) = &pushed {
                pt.push(kiln_push_round(device, fx, pushed, k)?);
            }
            kt.push(kiln_sets_round(device, fx, k)?);
            rt.push(raw_sets_round(raw, fx, ctx, pool, k)?);
        }
        Ok(())
    })();
    // SAFETY: every submission using the pool's sets and the raw push pipeline was waited on.
    unsafe {
        raw.d.destroy_descriptor_pool(pool, None);
        if let Some((set_layout, layout, pipe, _)) = raw_push {
            raw.d.destroy_pipeline(pipe, None);
            raw.d.destroy_pipeline_layout(layout, None);
            raw.d.destroy_descriptor_set_layout(set_layout, None);
        }
    }
    result?;
    let mut rows = vec![Row::new(
        "descriptor set alloc+write+bind",
        "ns",
        best(&kt),
        best(&rt),
    )];
    if !pt.is_empty() {
        rows.push(Row::new(
            "descriptor set alloc+write+bind (push descriptor)",
            "ns",
            best(&pt),
            best(&rt),
        ));
        rows.push(Row::new(
            "push descriptor set, 6 buffers",
            "ns",
            best(&pt),
            best(&rpt),
        ));
    }
    Ok(rows)
}

/// Raw's push-descriptor path: set layout, pipeline layout, pipeline, the extension's
/// functions.
type RawPush = (
    vk::DescriptorSetLayout,
    vk::PipelineLayout,
    vk::Pipeline,
    ash::khr::push_descriptor::Device,
);

/// One round of raw's push-descriptor path: ns per set of 6 buffers pushed.
fn raw_push_round(raw: &Raw, fx: &Fixture, ctx: &Ctx, rp: &RawPush, k: usize) -> BenchResult<f64> {
    let (_, layout, pipe, push) = rp;
    raw.begin(ctx)?;
    let d = &raw.d;
    // SAFETY: `cb` is recording; the pipeline is alive.
    unsafe { d.cmd_bind_pipeline(ctx.cb, vk::PipelineBindPoint::COMPUTE, *pipe) };
    let t0 = Instant::now();
    for i in 0..k {
        let bufs = set_buffers(&fx.bufs, i);
        let infos: [vk::DescriptorBufferInfo; 6] =
            std::array::from_fn(|j| vk::DescriptorBufferInfo {
                buffer: bufs[j],
                offset: 0,
                range: vk::WHOLE_SIZE,
            });
        let writes: [vk::WriteDescriptorSet<'_>; 6] = std::array::from_fn(|j| {
            vk::WriteDescriptorSet::default()
                .dst_binding(j as u32)
                .descriptor_type(TYPES[j])
                .buffer_info(std::slice::from_ref(&infos[j]))
        });
        // SAFETY: `cb` is recording with a pipeline of `layout` bound; set 0
        // is its push set; every binding is written with a live buffer.
        unsafe {
            push.cmd_push_descriptor_set(
                ctx.cb,
                vk::PipelineBindPoint::COMPUTE,
                *layout,
                0,
                &writes,
            )
        };
    }
    let t = ns_since(t0) / k as f64;
    raw.submit_wait(ctx)?;
    Ok(t)
}

/// One round of kiln's push-descriptor path: ns per `push_descriptor_set` of 6 buffers.
fn kiln_push_round(
    device: &Device,
    fx: &Fixture,
    pushed: &kiln::ComputePipeline,
    k: usize,
) -> BenchResult<f64> {
    let t = device.execute(|r| {
        r.bind_pipeline(pushed)?;
        let t0 = Instant::now();
        for i in 0..k {
            let b = |j: usize| &fx.bufs[(i + j) % BUFS];
            r.push_descriptor_set(
                0,
                &[
                    PushWrite::buffer(0, b(0)),
                    PushWrite::buffer(1, b(1)),
                    PushWrite::buffer(2, b(2)),
                    PushWrite::buffer(3, b(3)),
                    PushWrite::buffer(4, b(4)),
                    PushWrite::buffer(5, b(5)),
                ],
            )?;
        }
        Ok(ns_since(t0))
    })?;
    Ok(t / k as f64)
}

/// One round of kiln's sets: allocate and write `k` sets, then bind each; ns per set.
fn kiln_sets_round(device: &Device, fx: &Fixture, k: usize) -> BenchResult<f64> {
    let t0 = Instant::now();
    let mut sets = Vec::with_capacity(k);
    for i in 0..k {
        let mut s = fx.pipes[0].descriptor_set(0)?;
        crate::write_six(&mut s, &fx.bufs, i)?;
        sets.push(s);
    }
    let alloc = ns_since(t0);
    let bind = device.execute(|r| {
        r.bind_pipeline(&fx.pipes[0])?;
        let t0 = Instant::now();
        for s in &sets {
            r.bind_set(0, s)?;
        }
        Ok(ns_since(t0))
    })?;
    drop(sets);
    Ok((alloc + bind) / k as f64)
}

/// One round of raw's sets from `pool` (reset first): allocate and write `k` sets, then
/// bind each; ns per set.
fn raw_sets_round(
    raw: &Raw,
    fx: &Fixture,
    ctx: &Ctx,
    pool: vk::DescriptorPool,
    k: usize,
) -> BenchResult<f64> {
    // SAFETY: no set of the pool is in use (the last submission was waited on).
    unsafe {
        raw.d
            .reset_descriptor_pool(pool, vk::DescriptorPoolResetFlags::empty())?
    };
    let t0 = Instant::now();
    let mut sets = Vec::with_capacity(k);
    for i in 0..k {
        let s = raw.alloc_set(pool, fx.r_set_layout)?;
        raw.write_set(s, &TYPES, &set_buffers(&fx.bufs, i));
        sets.push(s);
    }
    let alloc = ns_since(t0);
    raw.begin(ctx)?;
    let d = &raw.d;
    // SAFETY: `cb` is recording; the pipeline is alive.
    unsafe { d.cmd_bind_pipeline(ctx.cb, vk::PipelineBindPoint::COMPUTE, fx.r_pipes[0]) };
    let t0 = Instant::now();
    for s in &sets {
        // SAFETY: `cb` is recording; each set is fully written and compatible.
        unsafe {
            d.cmd_bind_descriptor_sets(
                ctx.cb,
                vk::PipelineBindPoint::COMPUTE,
                fx.r_layout,
                0,
                &[*s],
                &[],
            )
        };
    }
    let bind = ns_since(t0);
    raw.submit_wait(ctx)?;
    Ok((alloc + bind) / k as f64)
}
