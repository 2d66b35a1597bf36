//! Issue 15's rows: dependent chains recorded once and submitted again, kiln (automatic
//! barriers from reflection) against raw ash recording the same dispatches and the same
//! barriers; and, as notes, GPU timestamps of a chain of 2^20-element dispatches under
//! three barrier flavours (none, one global memory barrier, one buffer memory barrier) and
//! three workgroup sizes, so the gap to a CUDA Graph can be analysed (docs/benchmarks/).

use std::time::Instant;

use ash::vk;
use kiln::{ComputePipelineDesc, Device, SpecValue};

use super::raw::Raw;
use super::{best, median, note, ns_since, BenchResult, Opts, Peer, Row};

const TYPES: [vk::DescriptorType; 2] = [vk::DescriptorType::STORAGE_BUFFER; 2];

/// The raw objects of one chain.
pub(super) struct RawChain {
    set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    pub pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
}

impl RawChain {
    pub(super) fn new(
        raw: &Raw,
        words: &[u32],
        wg: u32,
        x: vk::Buffer,
        y: vk::Buffer,
    ) -> BenchResult<Self> {
        let set_layout = raw.set_layout(&TYPES)?;
        let layout = raw.pipeline_layout(set_layout, 4)?;
        let pipeline = raw.pipeline(vk::PipelineCache::null(), layout, words, &[(0, wg)])?;
        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: 2,
        }];
        let pool = raw.pool(&sizes, 1)?;
        let set = raw.alloc_set(pool, set_layout)?;
        raw.write_set(set, &TYPES, &[x, y]);
        Ok(RawChain {
            set_layout,
            layout,
            pipeline,
            pool,
            set,
        })
    }

    pub(super) fn destroy(self, raw: &Raw) {
        // SAFETY: nothing recorded with these objects is pending (every submission was
        // waited on).
        unsafe {
            raw.d.destroy_pipeline(self.pipeline, None);
            raw.d.destroy_descriptor_pool(self.pool, None);
            raw.d.destroy_pipeline_layout(self.layout, None);
            raw.d.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// A barrier flavour between two links.
#[derive(Clone, Copy, PartialEq)]
enum Flavour {
    None,
    Global,
    Buffer,
}

/// Records `links` dispatches of `groups` workgroups into `cb` (begun), with `flavour`
/// between them on `y`, timestamps 0 and 1 around them when `pool` is given, and the
/// device→host barrier at the end (as kiln records).
#[allow(clippy::too_many_arguments)]
fn record_raw(
    raw: &Raw,
    cb: vk::CommandBuffer,
    c: &RawChain,
    n: u32,
    groups: u32,
    links: u32,
    flavour: Flavour,
    y: vk::Buffer,
    pool: Option<vk::QueryPool>,
) {
    use vk::AccessFlags2 as A;
    use vk::PipelineStageFlags2 as S;
    let d = &raw.d;
    let global = [vk::MemoryBarrier2::default()
        .src_stage_mask(S::COMPUTE_SHADER)
        .src_access_mask(A::SHADER_STORAGE_WRITE)
        .dst_stage_mask(S::COMPUTE_SHADER)
        .dst_access_mask(A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE)];
    let buffer = [vk::BufferMemoryBarrier2::default()
        .src_stage_mask(S::COMPUTE_SHADER)
        .src_access_mask(A::SHADER_STORAGE_WRITE)
        .dst_stage_mask(S::COMPUTE_SHADER)
        .dst_access_mask(A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .buffer(y)
        .offset(0)
        .size(vk::WHOLE_SIZE)];
    let host = [vk::MemoryBarrier2::default()
        .src_stage_mask(S::ALL_COMMANDS)
        .src_access_mask(A::MEMORY_WRITE)
        .dst_stage_mask(S::HOST)
        .dst_access_mask(A::HOST_READ | A::HOST_WRITE)];
    // SAFETY: `cb` is recording; pipeline, layout and set are alive and compatible; the
    // query pool (if any) has 2 queries; barriers are locals alive for each call.
    unsafe {
        if let Some(q) = pool {
            d.cmd_reset_query_pool(cb, q, 0, 2);
            d.cmd_write_timestamp2(cb, S::TOP_OF_PIPE, q, 0);
        }
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, c.pipeline);
        d.cmd_bind_descriptor_sets(
            cb,
            vk::PipelineBindPoint::COMPUTE,
            c.layout,
            0,
            &[c.set],
            &[],
        );
        d.cmd_push_constants(
            cb,
            c.layout,
            vk::ShaderStageFlags::COMPUTE,
            0,
            bytemuck::bytes_of(&n),
        );
        for i in 0..links {
            if i > 0 {
                match flavour {
                    Flavour::None => {}
                    Flavour::Global => d.cmd_pipeline_barrier2(
                        cb,
                        &vk::DependencyInfo::default().memory_barriers(&global),
                    ),
                    Flavour::Buffer => d.cmd_pipeline_barrier2(
                        cb,
                        &vk::DependencyInfo::default().buffer_memory_barriers(&buffer),
                    ),
                }
            }
            d.cmd_dispatch(cb, groups, 1, 1);
        }
        if let Some(q) = pool {
            d.cmd_write_timestamp2(cb, S::BOTTOM_OF_PIPE, q, 1);
        }
        d.cmd_pipeline_barrier2(cb, &vk::DependencyInfo::default().memory_barriers(&host));
    }
}

/// A reusable command buffer of its own pool, recorded by `f`.
pub(super) struct Reusable {
    pool: vk::CommandPool,
    cb: vk::CommandBuffer,
    fence: vk::Fence,
}

impl Reusable {
    pub(super) fn new(raw: &Raw, f: impl FnOnce(vk::CommandBuffer)) -> BenchResult<Reusable> {
        let info = vk::CommandPoolCreateInfo::default().queue_family_index(raw.family);
        // SAFETY: plain creates on a live device; destroyed in `destroy`; `cb` is begun
        // fresh and ended after `f` recorded into it.
        unsafe {
            let pool = raw.d.create_command_pool(&info, None)?;
            let alloc = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            let cb = raw.d.allocate_command_buffers(&alloc)?[0];
            let fence = raw.d.create_fence(&vk::FenceCreateInfo::default(), None)?;
            raw.d
                .begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())?;
            f(cb);
            raw.d.end_command_buffer(cb)?;
            Ok(Reusable { pool, cb, fence })
        }
    }

    /// Submits and blocks until done.
    pub(super) fn run(&self, raw: &Raw) -> BenchResult<()> {
        let cbs = [self.cb];
        let submit = vk::SubmitInfo::default().command_buffers(&cbs);
        // SAFETY: `cb` is executable and not pending (waited every time); the queue is used
        // by this thread only while no kiln call is in flight; the fence is unsignaled.
        unsafe {
            raw.d.queue_submit(raw.queue, &[submit], self.fence)?;
            raw.d.wait_for_fences(&[self.fence], true, u64::MAX)?;
            raw.d.reset_fences(&[self.fence])?;
        }
        Ok(())
    }

    pub(super) fn destroy(self, raw: &Raw) {
        // SAFETY: the last submission was waited on.
        unsafe {
            raw.d.destroy_fence(self.fence, None);
            raw.d.destroy_command_pool(self.pool, None);
        }
    }
}

pub(super) fn query_pool(raw: &Raw) -> BenchResult<vk::QueryPool> {
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(2);
    // SAFETY: a plain create on a live device; destroyed by the caller.
    Ok(unsafe { raw.d.create_query_pool(&info, None) }?)
}

pub(super) fn elapsed_ns(raw: &Raw, pool: vk::QueryPool, period: f64) -> BenchResult<f64> {
    let mut t = [0u64; 2];
    // SAFETY: both queries were written by a submission that was waited on.
    unsafe {
        raw.d.get_query_pool_results(
            pool,
            0,
            &mut t,
            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
        )?
    };
    Ok(t[1].saturating_sub(t[0]) as f64 * period)
}

/// The two chain rows, then the barrier-flavour notes.
pub fn rows(
    device: &Device,
    raw: &Raw,
    _peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let module = kiln::include_spirv!("chain.comp")?;
    let rounds = if opts.quick { 3 } else { 30 };
    let mut rows = Vec::new();
    let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let cases = [
        (
            "chain 1000 dependent 1-thread dispatches (recorded once)",
            1u32,
            1000u32,
        ),
        ("chain 100 dependent y += x over 2^20 f32", 1 << 20, 100),
    ];
    for (name, n, links) in cases {
        let wg = 256u32;
        let spec = [(0u32, SpecValue::U32(wg))];
        let p =
            device.compute_pipeline_with(&ComputePipelineDesc::new(&module, "main").spec(&spec))?;
        let x = device.buffer_from_slice("x", storage, &vec![1.0f32; n as usize])?;
        let y = device.buffer_from_slice("y", storage, &vec![0.0f32; n as usize])?;
        let mut set = p.descriptor_set(0)?;
        set.write_buffer(0, &x)?;
        set.write_buffer(1, &y)?;
        let groups = n.div_ceil(wg);
        let mut rec = device.record(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push(0, &n)?;
            for _ in 0..links {
                r.dispatch(groups, 1, 1)?;
            }
            Ok(())
        })?;
        if rec.barrier_count() != links - 1 {
            return Err(format!(
                "{name}: kiln recorded {} barriers, expected {}",
                rec.barrier_count(),
                links - 1
            )
            .into());
        }
        let rc = RawChain::new(raw, module.words(), wg, x.raw(), y.raw())?;
        let r = Reusable::new(raw, |cb| {
            record_raw(
                raw,
                cb,
                &rc,
                n,
                groups,
                links,
                Flavour::Global,
                y.raw(),
                None,
            )
        })?;
        let (mut k, mut w) = (Vec::new(), Vec::new());
        rec.execute()?;
        r.run(raw)?;
        for _ in 0..rounds {
            let t0 = Instant::now();
            rec.execute()?;
            k.push(ns_since(t0) / links as f64 / 1e3);
            let t0 = Instant::now();
            r.run(raw)?;
            w.push(ns_since(t0) / links as f64 / 1e3);
        }
        drop(rec);
        // Every submission added x once per link: the chain really ran dependently.
        let total = (2 + 2 * rounds) as f32 * links as f32;
        let mut got = [0f32; 1];
        y.read_into_at(0, &mut got)?;
        if got[0] != total {
            return Err(format!(
                "{name}: y[0] = {} after the rounds, expected {total}",
                got[0]
            )
            .into());
        }
        r.destroy(raw);
        rc.destroy(raw);
        rows.push(Row::new(name, "us", best(&k), best(&w)));
    }
    flavour_notes(device, raw, &module, opts)?;
    Ok(rows)
}

/// GPU time per dispatch of 100 dependent `y += x` over 2^20 floats, per barrier flavour
/// and workgroup size (notes: `flavour <f> wg <n>: <µs> per dispatch (GPU)`).
fn flavour_notes(
    device: &Device,
    raw: &Raw,
    module: &kiln::ShaderModule,
    opts: &Opts,
) -> BenchResult<()> {
    if device.limits().timestamp_compute_and_graphics == vk::FALSE {
        note("chain flavours: no timestamps on this queue (timestampComputeAndGraphics)".into());
        return Ok(());
    }
    let period = f64::from(device.limits().timestamp_period);
    let n = 1u32 << 20;
    // --quick (CI, lavapipe): a short chain, once per flavour.
    let links = if opts.quick { 10 } else { 100u32 };
    let reps = if opts.quick { 1 } else { 15 };
    let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let x = device.buffer_from_slice("x", storage, &vec![1.0f32; n as usize])?;
    let y = device.buffer_from_slice("y", storage, &vec![0.0f32; n as usize])?;
    let pool = query_pool(raw)?;
    for wg in [64u32, 256, 1024] {
        if wg > device.limits().max_compute_work_group_size[0] {
            continue;
        }
        let rc = RawChain::new(raw, module.words(), wg, x.raw(), y.raw())?;
        for (flavour, fname) in [
            (Flavour::None, "none"),
            (Flavour::Global, "global memory barrier"),
            (Flavour::Buffer, "buffer memory barrier"),
        ] {
            let groups = n.div_ceil(wg);
            let r = Reusable::new(raw, |cb| {
                record_raw(raw, cb, &rc, n, groups, links, flavour, y.raw(), Some(pool))
            })?;
            let mut gpu = Vec::new();
            for _ in 0..reps {
                r.run(raw)?;
                gpu.push(elapsed_ns(raw, pool, period)? / links as f64 / 1e3);
            }
            r.destroy(raw);
            note(format!(
                "chain flavour {fname}, wg {wg} ({groups} groups): {:.3} µs per 2^20 dispatch (GPU, median of {reps})",
                median(&mut gpu)
            ));
        }
        rc.destroy(raw);
    }
    // SAFETY: every submission that used the pool was waited on.
    unsafe { raw.d.destroy_query_pool(pool, None) };
    Ok(())
}
