//! Issue 15's barrier sweep (`KILN_BENCH_ONLY=barriers`, not in the default run): what a
//! dependent chain costs per dispatch under each form of dependency a Vulkan runtime could
//! record, raw ash on kiln's device, so the gap to a CUDA Graph can be split into what a
//! runtime can still change and what the driver's barrier costs.
//!
//! Workloads (`chain.comp`, `y[i] += x[i]`): 1000 links of one 1-thread workgroup (the
//! tiny chain), and 100 links over 2^20 floats at workgroup 256 (the chain row's size) and
//! 1024 (the fastest of the chain flavour notes).
//!
//! Dependencies between two links of one chain:
//! - `none`: no barrier (the floor; a race, not a correct chain);
//! - `exec sync2` / `exec sync1`: an execution-only barrier (`VkMemoryBarrier2` with no
//!   access / `vkCmdPipelineBarrier` with no barrier structs), COMPUTE → COMPUTE: orders the
//!   dispatches but makes no write visible (not a correct read-after-write dependency);
//! - `memory sync2 compute`: `VkMemoryBarrier2` COMPUTE/SHADER_STORAGE_WRITE →
//!   COMPUTE/SHADER_STORAGE_READ|WRITE (what kiln records);
//! - `memory sync2 all-commands`: the same with ALL_COMMANDS and MEMORY_WRITE →
//!   MEMORY_READ|WRITE on both sides;
//! - `memory sync2 all-commands -> compute`, `compute -> all-commands`: one side only
//!   ALL_COMMANDS (which side costs, H200 run A: both sides ALL_COMMANDS cost 2.3x);
//! - `memory sync2 compute -> compute|transfer`: what `Recorder::barrier` records;
//! - `memory sync1 compute`: `vkCmdPipelineBarrier` with one `VkMemoryBarrier`;
//! - `buffer sync2 compute`: one `VkBufferMemoryBarrier2` on `y`, whole size;
//! - `event sync2`: a split barrier, `vkCmdSetEvent2` after link i and `vkCmdWaitEvents2`
//!   before link i+1 (one event per link, reset on the host before each submission), with
//!   the dependency of `memory sync2 compute`.
//!
//! Two independent chains (A and B, each on its own `x`, `y`), 2 × links dispatches:
//! - `two chains sequential`: all of A then all of B, a memory barrier between dependent
//!   links (what kiln records when the user records A then B);
//! - `two chains interleaved, a barrier per dispatch`: A0 B0 | A1 | B1 | A2 ... (what a
//!   tracker that forgets what its last barrier covered records for interleaved work);
//! - `two chains interleaved, a barrier per level`: A0 B0 | A1 B1 | ... (one barrier orders
//!   both chains' previous links: the grouped form);
//! - `two chains interleaved, events`: A_i set(eA_i) B_i set(eB_i) wait(eA_i) A_i+1 ...: a
//!   barrier's drain can overlap the other chain's link;
//! - `two chains interleaved, none`: the floor for two chains.
//!
//! One note per variant: GPU time between two timestamps around the links and wall time of
//! submit + fence wait, both per dispatch, the median of the repetitions; for the correct
//! variants the values of `y` are checked (every link added `x` once) and a mismatch is an
//! error naming what was read.

use std::time::Instant;

use ash::vk;
use kiln::{Buffer, Device};

use super::chain::{elapsed_ns, query_pool, RawChain, Reusable};
use super::raw::Raw;
use super::{median, note, ns_since, BenchResult, Opts, Peer, Row};

use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;

/// The dependency recorded between two links.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Dep {
    None,
    ExecSync2,
    ExecSync1,
    MemSync2,
    MemSync2All,
    MemSync2SrcAll,
    MemSync2DstAll,
    MemSync2DstTransfer,
    MemSync1,
    BufSync2,
    Event,
}

impl Dep {
    fn name(self) -> &'static str {
        match self {
            Dep::None => "none",
            Dep::ExecSync2 => "exec sync2",
            Dep::ExecSync1 => "exec sync1",
            Dep::MemSync2 => "memory sync2 compute",
            Dep::MemSync2All => "memory sync2 all-commands",
            Dep::MemSync2SrcAll => "memory sync2 all-commands -> compute",
            Dep::MemSync2DstAll => "memory sync2 compute -> all-commands",
            Dep::MemSync2DstTransfer => "memory sync2 compute -> compute|transfer",
            Dep::MemSync1 => "memory sync1 compute",
            Dep::BufSync2 => "buffer sync2 compute",
            Dep::Event => "event sync2",
        }
    }

    /// The dependency makes every link's writes visible to the next link.
    fn correct(self) -> bool {
        !matches!(self, Dep::None | Dep::ExecSync2 | Dep::ExecSync1)
    }
}

/// How the links of the chains are ordered in the command buffer.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Order {
    /// One chain.
    Single,
    /// Two chains, A then B.
    Sequential,
    /// Two chains interleaved, a dependency before every link that needs one.
    PerDispatch,
    /// Two chains interleaved, one dependency per level (before A_i, covering B too).
    PerLevel,
}

/// One chain's buffers and raw objects.
struct Chain {
    x: Buffer,
    y: Buffer,
    rc: RawChain,
}

/// The memory dependency of one link on the one before.
fn mem2() -> vk::MemoryBarrier2<'static> {
    vk::MemoryBarrier2::default()
        .src_stage_mask(S::COMPUTE_SHADER)
        .src_access_mask(A::SHADER_STORAGE_WRITE)
        .dst_stage_mask(S::COMPUTE_SHADER)
        .dst_access_mask(A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE)
}

/// Records `dep` between two links; `y` is the buffer the earlier link wrote.
fn record_dep(raw: &Raw, cb: vk::CommandBuffer, dep: Dep, y: vk::Buffer) {
    let d = &raw.d;
    let exec = [vk::MemoryBarrier2::default()
        .src_stage_mask(S::COMPUTE_SHADER)
        .dst_stage_mask(S::COMPUTE_SHADER)];
    let mem = [mem2()];
    let all = [vk::MemoryBarrier2::default()
        .src_stage_mask(S::ALL_COMMANDS)
        .src_access_mask(A::MEMORY_WRITE)
        .dst_stage_mask(S::ALL_COMMANDS)
        .dst_access_mask(A::MEMORY_READ | A::MEMORY_WRITE)];
    let src_all = [mem2().src_stage_mask(S::ALL_COMMANDS)];
    let dst_all = [mem2().dst_stage_mask(S::ALL_COMMANDS)];
    // What `Recorder::barrier` records (dispatches → later dispatches, copies and fills).
    let dst_transfer = [mem2()
        .src_access_mask(A::SHADER_WRITE)
        .dst_stage_mask(S::COMPUTE_SHADER | S::ALL_TRANSFER)
        .dst_access_mask(A::SHADER_READ | A::SHADER_WRITE | A::TRANSFER_READ | A::TRANSFER_WRITE)];
    let buf = [vk::BufferMemoryBarrier2::default()
        .src_stage_mask(S::COMPUTE_SHADER)
        .src_access_mask(A::SHADER_STORAGE_WRITE)
        .dst_stage_mask(S::COMPUTE_SHADER)
        .dst_access_mask(A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .buffer(y)
        .offset(0)
        .size(vk::WHOLE_SIZE)];
    let mem1 = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
        .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)];
    let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
    let none = vk::DependencyFlags::empty();
    // SAFETY: `cb` is recording outside a render pass; the barrier structs are locals alive
    // for each call; synchronization2 is enabled on kiln's device.
    unsafe {
        match dep {
            Dep::None | Dep::Event => {}
            Dep::ExecSync2 => {
                d.cmd_pipeline_barrier2(cb, &vk::DependencyInfo::default().memory_barriers(&exec))
            }
            Dep::ExecSync1 => d.cmd_pipeline_barrier(cb, compute, compute, none, &[], &[], &[]),
            Dep::MemSync2 => {
                d.cmd_pipeline_barrier2(cb, &vk::DependencyInfo::default().memory_barriers(&mem))
            }
            Dep::MemSync2All => {
                d.cmd_pipeline_barrier2(cb, &vk::DependencyInfo::default().memory_barriers(&all))
            }
            Dep::MemSync2SrcAll => d.cmd_pipeline_barrier2(
                cb,
                &vk::DependencyInfo::default().memory_barriers(&src_all),
            ),
            Dep::MemSync2DstAll => d.cmd_pipeline_barrier2(
                cb,
                &vk::DependencyInfo::default().memory_barriers(&dst_all),
            ),
            Dep::MemSync2DstTransfer => d.cmd_pipeline_barrier2(
                cb,
                &vk::DependencyInfo::default().memory_barriers(&dst_transfer),
            ),
            Dep::MemSync1 => d.cmd_pipeline_barrier(cb, compute, compute, none, &mem1, &[], &[]),
            Dep::BufSync2 => d.cmd_pipeline_barrier2(
                cb,
                &vk::DependencyInfo::default().buffer_memory_barriers(&buf),
            ),
        }
    }
}

/// Binds chain `c` and dispatches one link of it.
fn link(raw: &Raw, cb: vk::CommandBuffer, c: &RawChain, n: u32, groups: u32, bind: bool) {
    let d = &raw.d;
    // SAFETY: `cb` is recording; pipeline, layout and set are alive and compatible.
    unsafe {
        if bind {
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
        }
        d.cmd_dispatch(cb, groups, 1, 1);
    }
}

/// The event dependency: set after a link, waited for before the next one.
fn set_event(raw: &Raw, cb: vk::CommandBuffer, e: vk::Event) {
    let mem = [mem2()];
    let dep = vk::DependencyInfo::default().memory_barriers(&mem);
    // SAFETY: `cb` is recording; the event is alive and unsignaled when the submission
    // starts (reset on the host before it); `dep` is a local.
    unsafe { raw.d.cmd_set_event2(cb, e, &dep) }
}

fn wait_event(raw: &Raw, cb: vk::CommandBuffer, e: vk::Event) {
    let mem = [mem2()];
    let deps = [vk::DependencyInfo::default().memory_barriers(&mem)];
    // SAFETY: as `set_event`; the dependency equals the one the event was set with
    // (VUID-vkCmdWaitEvents2-pEvents-03837).
    unsafe { raw.d.cmd_wait_events2(cb, &[e], &deps) }
}

/// Records one variant: timestamps 0 and 1 around the links, the device→host barrier at
/// the end. Returns the number of dependencies recorded.
#[allow(clippy::too_many_arguments)]
fn record(
    raw: &Raw,
    cb: vk::CommandBuffer,
    chains: &[Chain],
    n: u32,
    groups: u32,
    links: u32,
    dep: Dep,
    order: Order,
    events: &[vk::Event],
    pool: vk::QueryPool,
) -> u32 {
    let d = &raw.d;
    let mut deps = 0u32;
    let counted = u32::from(dep != Dep::None);
    // SAFETY: `cb` is recording; the pool has 2 queries.
    unsafe {
        d.cmd_reset_query_pool(cb, pool, 0, 2);
        d.cmd_write_timestamp2(cb, S::TOP_OF_PIPE, pool, 0);
    }
    let (a, b) = (&chains[0], chains.get(1));
    match (order, b) {
        (Order::Single, _) | (_, None) => {
            link(raw, cb, &a.rc, n, groups, true);
            for &e in &events[1..links as usize] {
                if dep == Dep::Event {
                    set_event(raw, cb, e);
                    wait_event(raw, cb, e);
                    deps += 1;
                } else {
                    record_dep(raw, cb, dep, a.y.raw());
                    deps += counted;
                }
                link(raw, cb, &a.rc, n, groups, false);
            }
        }
        (Order::Sequential, Some(b)) => {
            for c in [a, b] {
                link(raw, cb, &c.rc, n, groups, true);
                for _ in 1..links {
                    record_dep(raw, cb, dep, c.y.raw());
                    deps += counted;
                    link(raw, cb, &c.rc, n, groups, false);
                }
            }
        }
        (Order::PerDispatch | Order::PerLevel, Some(b)) => {
            let l = links as usize;
            for i in 0..l {
                for (k, c) in [a, b].into_iter().enumerate() {
                    if i > 0 {
                        if dep == Dep::Event {
                            wait_event(raw, cb, events[k * l + i - 1]);
                            deps += 1;
                        } else if order == Order::PerDispatch || k == 0 {
                            record_dep(raw, cb, dep, c.y.raw());
                            deps += counted;
                        }
                    }
                    link(raw, cb, &c.rc, n, groups, true);
                    if dep == Dep::Event && i + 1 < l {
                        set_event(raw, cb, events[k * l + i]);
                    }
                }
            }
        }
    }
    let host = [vk::MemoryBarrier2::default()
        .src_stage_mask(S::ALL_COMMANDS)
        .src_access_mask(A::MEMORY_WRITE)
        .dst_stage_mask(S::HOST)
        .dst_access_mask(A::HOST_READ | A::HOST_WRITE)];
    // SAFETY: `cb` is recording; the barrier is a local.
    unsafe {
        d.cmd_write_timestamp2(cb, S::BOTTOM_OF_PIPE, pool, 1);
        d.cmd_pipeline_barrier2(cb, &vk::DependencyInfo::default().memory_barriers(&host));
    }
    deps
}

/// `y[0]` and `y[n - 1]` of a chain.
fn ends(c: &Chain, n: u32) -> BenchResult<[f32; 2]> {
    let (mut first, mut last) = ([0f32], [0f32]);
    c.y.read_into_at(0, &mut first)?;
    c.y.read_into_at(u64::from(n - 1) * 4, &mut last)?;
    Ok([first[0], last[0]])
}

/// The sweep: notes only (see the module docs), no rows.
pub fn rows(
    device: &Device,
    raw: &Raw,
    _peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    if device.limits().timestamp_compute_and_graphics == vk::FALSE {
        note("barrier sweep: no timestamps on this queue (timestampComputeAndGraphics)".into());
        return Ok(Vec::new());
    }
    let module = kiln::include_spirv!("chain.comp")?;
    let period = f64::from(device.limits().timestamp_period);
    let reps: u32 = if opts.quick { 2 } else { 15 };
    let max_wg = device.limits().max_compute_work_group_size[0];
    // (workload, n, links, workgroup size)
    let mut workloads = vec![("tiny 1-thread", 1u32, 1000u32, 256u32)];
    for wg in [256u32, 1024] {
        if wg <= max_wg {
            workloads.push(("2^20 y += x", 1 << 20, 100, wg));
        }
    }
    if opts.quick {
        // CI on a CPU device: short chains, one 2^20 size.
        workloads = vec![
            ("tiny 1-thread", 1, 50, 256),
            ("2^20 y += x", 1 << 20, 5, 256),
        ];
    }
    let pool = query_pool(raw)?;
    let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let out = (|| -> BenchResult<()> {
        for (what, n, links, wg) in workloads {
            let mut chains = Vec::new();
            for _ in 0..2 {
                let x = device.buffer_from_slice("x", storage, &vec![1.0f32; n as usize])?;
                let y = device.buffer_from_slice("y", storage, &vec![0.0f32; n as usize])?;
                let rc = RawChain::new(raw, module.words(), wg, x.raw(), y.raw())?;
                chains.push(Chain { x, y, rc });
            }
            let events = (0..2 * links)
                .map(|_| {
                    // SAFETY: a plain create on a live device; destroyed below.
                    unsafe { raw.d.create_event(&vk::EventCreateInfo::default(), None) }
                })
                .collect::<Result<Vec<_>, _>>()?;
            let single = [
                Dep::None,
                Dep::ExecSync2,
                Dep::ExecSync1,
                Dep::MemSync2,
                Dep::MemSync2All,
                Dep::MemSync2SrcAll,
                Dep::MemSync2DstAll,
                Dep::MemSync2DstTransfer,
                Dep::MemSync1,
                Dep::BufSync2,
                Dep::Event,
            ]
            .map(|d| (Order::Single, d));
            let two = [
                (Order::Sequential, Dep::MemSync2),
                (Order::PerDispatch, Dep::MemSync2),
                (Order::PerLevel, Dep::MemSync2),
                (Order::PerLevel, Dep::Event),
                (Order::PerLevel, Dep::None),
            ];
            let sweep = Sweep {
                raw,
                chains: &chains,
                events: &events,
                pool,
                period,
                reps,
                what,
                n,
                links,
                wg,
            };
            let r = single
                .into_iter()
                .chain(two)
                .try_for_each(|(order, dep)| sweep.measure(order, dep));
            let r = r.and_then(|()| {
                kiln_interleaved(device, &module, &chains, what, n, links, wg, reps)
            });
            device.wait_idle()?;
            for e in events {
                // SAFETY: every submission that used the event was waited on.
                unsafe { raw.d.destroy_event(e, None) };
            }
            for c in chains {
                c.rc.destroy(raw);
                drop((c.x, c.y));
            }
            r?;
        }
        Ok(())
    })();
    // SAFETY: every submission that used the pool was waited on.
    unsafe { raw.d.destroy_query_pool(pool, None) };
    out.map(|()| Vec::new())
}

/// One workload's chains and what every measurement of it uses.
struct Sweep<'a> {
    raw: &'a Raw,
    chains: &'a [Chain],
    events: &'a [vk::Event],
    pool: vk::QueryPool,
    /// ns per timestamp tick.
    period: f64,
    reps: u32,
    what: &'a str,
    /// Elements, links per chain, workgroup size.
    n: u32,
    links: u32,
    wg: u32,
}

impl Sweep<'_> {
    /// Records one or two chains with `dep` between links in `order`, runs the recording
    /// once to warm up and `reps` times, checks the chains' values where `dep` orders them,
    /// and notes the GPU and wall time per dispatch.
    fn measure(&self, order: Order, dep: Dep) -> BenchResult<()> {
        let used = if order == Order::Single { 1 } else { 2 };
        let before = self.chains[..used]
            .iter()
            .map(|c| ends(c, self.n))
            .collect::<BenchResult<Vec<_>>>()?;
        let mut deps = 0;
        let (raw, n, links, reps) = (self.raw, self.n, self.links, self.reps);
        let r = Reusable::new(raw, |cb| {
            deps = record(
                raw,
                cb,
                &self.chains[..used],
                n,
                n.div_ceil(self.wg),
                links,
                dep,
                order,
                self.events,
                self.pool,
            );
        })?;
        let (mut gpu, mut wall) = (Vec::new(), Vec::new());
        let dispatches = f64::from(links) * used as f64;
        let run = |gpu: &mut Vec<f64>, wall: &mut Vec<f64>| -> BenchResult<()> {
            // SAFETY: no submission using the events is pending (each run is
            // waited on).
            unsafe {
                for e in self.events {
                    raw.d.reset_event(*e)?;
                }
            }
            let t0 = Instant::now();
            r.run(raw)?;
            wall.push(ns_since(t0) / dispatches / 1e3);
            gpu.push(elapsed_ns(raw, self.pool, self.period)? / dispatches / 1e3);
            Ok(())
        };
        let mut warm = (Vec::new(), Vec::new());
        let mut out = run(&mut warm.0, &mut warm.1);
        for _ in 0..reps {
            if out.is_ok() {
                out = run(&mut gpu, &mut wall);
            }
        }
        r.destroy(raw);
        out?;
        let label = match order {
            Order::Single => dep.name().to_string(),
            Order::Sequential => format!("two chains sequential, {}", dep.name()),
            Order::PerDispatch => {
                format!("two chains interleaved, {} per dispatch", dep.name())
            }
            Order::PerLevel => {
                format!("two chains interleaved, {} per level", dep.name())
            }
        };
        let mut check = String::new();
        if dep.correct() {
            let added = ((reps + 1) * links) as f32;
            for (c, b) in self.chains[..used].iter().zip(&before) {
                let now = ends(c, n)?;
                let want = [b[0] + added, b[1] + added];
                if now != want {
                    return Err(format!(
                        "barrier sweep {} wg {}, {label}: y[0], y[n-1] = \
                         {now:?} after the runs, expected {want:?} (each link adds 1)",
                        self.what, self.wg
                    )
                    .into());
                }
            }
            check.push_str(", values checked");
        }
        note(format!(
            "barrier sweep {} wg {}, {label}: GPU {:.3} us, wall {:.3} us per dispatch \
             (median of {reps}; {deps} dependencies in {} dispatches{check})",
            self.what,
            self.wg,
            median(&mut gpu),
            median(&mut wall),
            links as usize * used,
        ));
        Ok(())
    }
}

/// Two independent chains recorded interleaved through kiln (A0 B0 A1 B1 ...): the
/// barriers kiln's tracker records for them and the wall time per dispatch of the
/// recording submitted again (`Recording::execute`), values checked.
#[allow(clippy::too_many_arguments)]
fn kiln_interleaved(
    device: &Device,
    module: &kiln::ShaderModule,
    chains: &[Chain],
    what: &str,
    n: u32,
    links: u32,
    wg: u32,
    reps: u32,
) -> BenchResult<()> {
    let spec = [(0u32, kiln::SpecValue::U32(wg))];
    let p = device
        .compute_pipeline_with(&kiln::ComputePipelineDesc::new(module, "main").spec(&spec))?;
    let mut sets = Vec::new();
    for c in chains {
        let mut set = p.descriptor_set(0)?;
        set.write_buffer(0, &c.x)?;
        set.write_buffer(1, &c.y)?;
        sets.push(set);
    }
    let groups = n.div_ceil(wg);
    let before = chains
        .iter()
        .map(|c| ends(c, n))
        .collect::<BenchResult<Vec<_>>>()?;
    let mut rec = device.record(|r| {
        r.bind_pipeline(&p)?;
        r.push(0, &n)?;
        for _ in 0..links {
            for set in &sets {
                r.bind_set(0, set)?;
                r.dispatch(groups, 1, 1)?;
            }
        }
        Ok(())
    })?;
    let barriers = rec.barrier_count();
    let mut wall = Vec::new();
    rec.execute()?;
    for _ in 0..reps {
        let t0 = Instant::now();
        rec.execute()?;
        wall.push(ns_since(t0) / f64::from(2 * links) / 1e3);
    }
    drop(rec);
    let added = ((reps + 1) * links) as f32;
    for (c, b) in chains.iter().zip(&before) {
        let now = ends(c, n)?;
        let want = [b[0] + added, b[1] + added];
        if now != want {
            return Err(format!(
                "barrier sweep {what} wg {wg}, kiln two chains interleaved: y[0], y[n-1] = \
                 {now:?}, expected {want:?}"
            )
            .into());
        }
    }
    note(format!(
        "barrier sweep {what} wg {wg}, kiln two chains interleaved (automatic barriers): wall {:.3} us per dispatch \
         (median of {reps}; {barriers} barriers in {} dispatches, values checked)",
        median(&mut wall),
        2 * links
    ));
    Ok(())
}
