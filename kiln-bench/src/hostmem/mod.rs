//! The host-memory sweep (`KILN_BENCH_ONLY=hostmem`, never part of a plain `kiln bench`):
//! why an upload of 1 GiB from a `HostBuffer` ran at 38 GB/s on the H200 while the same
//! upload from imported memory ran at 49 (issue 12), and which queues copy at the same time.
//!
//! **Memory variants**, each uploaded (host → device, on the first transfer queue) and read
//! back (device → host, on the last transfer queue) `rounds` times, one DMA copy each, the
//! median and the range printed:
//! - `kiln HostBuffer Driver`: kiln's pinned memory in driver memory (gpu-allocator
//!   `GpuToCpu`), kiln's copies; `kiln HostBuffer Imported`: in host pages kiln maps itself
//!   and imports (`HostBufferMemory::Imported`);
//! - `driver type N`: a `vkAllocateMemory` of every host-visible memory type the buffer
//!   allows (exclusive sharing), and the host-cached one again with `CONCURRENT` sharing over
//!   kiln's families (as kiln's buffers are);
//! - `import ...`: memory the bench allocates and imports (`VK_EXT_external_memory_host`):
//!   `std::alloc` with 64 KiB alignment (the `queues` rows' import), `mmap` 2 MiB-aligned
//!   with `MADV_HUGEPAGE` (transparent huge pages), `mmap` with `MADV_NOHUGEPAGE` (4 KiB
//!   pages), `mmap(MAP_HUGETLB)` (the kernel's reserved 2 MiB pages, where configured);
//!   every one first touched by this thread.
//!
//! Each variant's line names its memory type (index, property flags, heap) and, from
//! `/proc/self/smaps` and `/proc/self/numa_maps`, the page size, huge pages and NUMA nodes
//! of its host mapping.
//!
//! **Copy shapes and queues** (on the fastest import and on the driver's host-cached
//! memory): an upload split into 4 and 16 regions of one copy; split in halves over both
//! transfer queues, over a transfer queue and the main queue; and the **duplex** rows: an
//! upload on the first transfer queue at the same time as a readback (of other buffers) on
//! the other transfer queue, the async-compute queue or the main queue, and two uploads or
//! two readbacks at once on the two transfer queues: aggregate GB/s (both copies' bytes /
//! the time until both finished). The duplex figures say which queues' copies really run
//! concurrently (the stream's policy, issue 12 (b)). Then the same bytes copied by a shader
//! (`copy.comp`, on the compute and main queues: the shader cores reading or writing host
//! memory over the bus instead of a copy engine), alone and beside an upload on the first
//! transfer queue.
//!
//! Rows: `kiln` = the variant's GB/s, `raw` = kiln's `HostBuffer` in the same direction and
//! size (so `ratio` is variant / HostBuffer); the shape and duplex rows' `raw` is one copy of
//! the same memory alone (a duplex ratio near 2 means the two copies ran concurrently at
//! full speed, near 1 that they shared one engine).
//! **Split copies** (`split.rs`): one copy from and to kiln's `HostBuffer` against the same
//! copy split in 2–4 parts over queues (`TransferSplit`), kiln interleaved with raw doing
//! the same split, every round printed.
//!
//! **Uploads through the BAR** (`bar.rs`, opt-in): host threads writing `DEVICE_LOCAL |
//! HOST_VISIBLE` memory, alone and beside a DMA readback or upload.
//!
//! **Queue families** (`families.rs`, opt-in): copies on every queue family that can copy,
//! kiln's or not (the video-decode family too), on a `VkDevice` of the group's own: each
//! queue alone, every pair of an upload and a readback at once, two uploads, two readbacks.
//!
//! `KILN_BENCH_HOSTMEM_MIB` (a comma list) sets the sizes (default 256,1024 on GPUs);
//! `KILN_BENCH_HOSTMEM_GROUPS` (a comma list of `memory`, `shapes`, `split`, `families`, `bar`;
//! default `memory,shapes,split`) the groups (`shapes` needs `memory`'s variants).

use std::time::Instant;

use ash::vk;
use kiln::{Buffer, BufferDesc, Device, MemoryLocation, QueueKind};

mod bar;
mod families;
mod memory;
mod shader;
mod sizes;
mod split;

use memory::{describe_type, transfer_buffer};

use super::raw::{Ctx, Raw};
use super::{median, note, BenchResult, Opts, Peer, Row};

/// A queue of the raw side and a context of its family.
struct Lane {
    name: &'static str,
    queue: vk::Queue,
    ctx: Ctx,
}

/// One copy of a duplex set: source, destination, regions; or, with `shader`, the same
/// bytes copied by the copy shader (pipeline, layout, a set naming source and destination,
/// uvec4 count) instead of a copy engine.
struct Copy {
    src: vk::Buffer,
    dst: vk::Buffer,
    regions: Vec<vk::BufferCopy>,
    readback: bool,
    shader: Option<(vk::Pipeline, vk::PipelineLayout, vk::DescriptorSet, u32)>,
}

/// The work of one measurement: each lane's copies.
type Work<'l> = Vec<(&'l Lane, Vec<Copy>)>;

/// Records each lane's copies, submits every lane, waits for all; returns seconds.
fn run(raw: &Raw, work: &[(&Lane, Vec<Copy>)]) -> BenchResult<f64> {
    for (lane, copies) in work {
        raw.begin(&lane.ctx)?;
        for c in copies {
            let cb = lane.ctx.cb;
            match c.shader {
                // SAFETY: `cb` is recording; the buffers are alive and hold the regions; no
                // other pending work uses them.
                None => unsafe { raw.d.cmd_copy_buffer(cb, c.src, c.dst, &c.regions) },
                // SAFETY: pipeline, layout and set are alive; the set names live storage
                // buffers of `n` uvec4s; the lane's family has compute.
                Some((pipeline, layout, set, n)) => unsafe {
                    let d = &raw.d;
                    d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
                    d.cmd_bind_descriptor_sets(
                        cb,
                        vk::PipelineBindPoint::COMPUTE,
                        layout,
                        0,
                        &[set],
                        &[],
                    );
                    d.cmd_push_constants(
                        cb,
                        layout,
                        vk::ShaderStageFlags::COMPUTE,
                        0,
                        &n.to_ne_bytes(),
                    );
                    d.cmd_dispatch(cb, n.div_ceil(256).clamp(1, 2048), 1, 1);
                },
            }
        }
        if copies.iter().any(|c| c.readback) {
            raw.barrier(
                lane.ctx.cb,
                vk::AccessFlags2::TRANSFER_WRITE | vk::AccessFlags2::SHADER_WRITE,
                vk::AccessFlags2::HOST_READ,
                vk::PipelineStageFlags2::HOST,
            );
        }
        // SAFETY: the command buffer is recording.
        unsafe { raw.d.end_command_buffer(lane.ctx.cb)? };
    }
    let t = Instant::now();
    for (lane, _) in work {
        let cbs = [lane.ctx.cb];
        let submit = vk::SubmitInfo::default().command_buffers(&cbs);
        // SAFETY: an executable command buffer of the lane's family; the fence is unsignaled;
        // the queue is used by this thread only while no kiln call is in flight.
        unsafe { raw.d.queue_submit(lane.queue, &[submit], lane.ctx.fence)? };
    }
    for (lane, _) in work {
        // SAFETY: the fence was submitted above.
        unsafe { raw.d.wait_for_fences(&[lane.ctx.fence], true, u64::MAX)? };
    }
    let s = t.elapsed().as_secs_f64();
    for (lane, _) in work {
        // SAFETY: waited above.
        unsafe { raw.d.reset_fences(&[lane.ctx.fence])? };
        raw.reset(&lane.ctx)?;
    }
    Ok(s)
}

/// `len` bytes as `parts` regions (offsets equal on both sides, from `at`).
fn regions(at: u64, len: u64, parts: u64) -> Vec<vk::BufferCopy> {
    let step = len / parts;
    (0..parts)
        .map(|i| vk::BufferCopy {
            src_offset: at + i * step,
            dst_offset: at + i * step,
            size: if i + 1 == parts { len - i * step } else { step },
        })
        .collect()
}

fn whole(src: vk::Buffer, dst: vk::Buffer, len: u64, readback: bool) -> Copy {
    Copy {
        src,
        dst,
        regions: regions(0, len, 1),
        readback,
        shader: None,
    }
}

/// Median, min and max GB/s of `rounds` runs of `work` moving `bytes`.
fn rate(
    raw: &Raw,
    work: &[(&Lane, Vec<Copy>)],
    bytes: u64,
    rounds: usize,
) -> BenchResult<[f64; 3]> {
    let mut v = Vec::new();
    for _ in 0..rounds {
        v.push(bytes as f64 / run(raw, work)? / 1e9);
    }
    let (lo, hi) = (super::best(&v), v.iter().copied().fold(0.0, f64::max));
    Ok([median(&mut v), lo, hi])
}

fn size_name(size: u64) -> String {
    if size >= 1 << 30 && size.is_multiple_of(1 << 30) {
        format!("{} GiB", size >> 30)
    } else {
        format!("{} MiB", size >> 20)
    }
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u64).wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// The sweep (see the module docs).
pub fn rows(
    device: &Device,
    raw: &Raw,
    _peer: Option<&mut Peer>,
    opts: &Opts,
) -> BenchResult<Vec<Row>> {
    let cpu = device.info().device_type == vk::PhysicalDeviceType::CPU;
    let sizes: Vec<u64> = match std::env::var("KILN_BENCH_HOSTMEM_MIB") {
        Ok(list) => list
            .split(',')
            .map(|s| s.trim().parse::<u64>().map(|m| m << 20))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("KILN_BENCH_HOSTMEM_MIB=`{list}`: {e}"))?,
        Err(_) if opts.quick => vec![16 << 20],
        Err(_) if cpu => vec![64 << 20],
        Err(_) => vec![256 << 20, 1 << 30],
    };
    let rounds = if opts.quick { 2 } else { 7 };
    let groups =
        std::env::var("KILN_BENCH_HOSTMEM_GROUPS").unwrap_or_else(|_| "memory,shapes,split".into());
    let groups: Vec<&str> = groups.split(',').map(str::trim).collect();
    for g in &groups {
        if !["memory", "shapes", "split", "families", "bar"].contains(g) {
            return Err(format!(
                "KILN_BENCH_HOSTMEM_GROUPS: `{g}` is not one of memory, shapes, split, families, bar"
            )
            .into());
        }
    }
    let props = raw.memory_properties();
    for i in 0..props.memory_type_count {
        note(format!("hostmem: {}", describe_type(raw, i)));
    }
    note(format!(
        "hostmem: transparent huge pages: {} (defrag {})",
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default()
            .trim(),
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/defrag")
            .unwrap_or_default()
            .trim()
    ));
    let infos = [
        ("transfer0", device.queue(QueueKind::Transfer).info()),
        (
            "transfer1",
            device
                .queues(QueueKind::Transfer)
                .last()
                .map_or(device.queue(QueueKind::Transfer).info(), |q| q.info()),
        ),
        ("compute", device.queue(QueueKind::Compute).info()),
        ("main", device.queue(QueueKind::Main).info()),
    ];
    let mut lanes = Vec::new();
    for (name, info) in infos {
        note(format!(
            "hostmem: lane {name} = kiln queue {} ({:?}, family {} index {}, {:?})",
            info.index, info.kind, info.family, info.queue_index, info.source
        ));
        lanes.push(Lane {
            name,
            queue: raw.queue_of(&info),
            ctx: raw.ctx_for(info.family)?,
        });
    }
    let mut families: Vec<u32> = Vec::new();
    for (_, i) in infos {
        if !families.contains(&i.family) {
            families.push(i.family);
        }
    }
    let r = (|| -> BenchResult<Vec<Row>> {
        let mut rows = Vec::new();
        for &size in &sizes {
            if groups.contains(&"memory") {
                let shapes = groups.contains(&"shapes");
                rows.extend(sizes::size_rows(
                    device, raw, &lanes, &families, size, rounds, shapes,
                )?);
            }
            if groups.contains(&"bar") {
                rows.extend(bar_rows(device, raw, &lanes, &families, size, rounds)?);
            }
            if groups.contains(&"families") {
                rows.extend(families::rows(device, size, rounds)?);
            }
            if groups.contains(&"split") {
                let dst = device_buffer(device, "hostmem split target", size)?;
                rows.extend(split::rows(device, raw, &dst, size, rounds.max(9))?);
            }
        }
        Ok(rows)
    })();
    device.wait_idle()?;
    for l in lanes {
        raw.drop_ctx(l.ctx);
    }
    r
}

/// The memory types a transfer buffer of `size` bytes shared by `families` may use.
fn memory_type_bits(raw: &Raw, size: u64, families: &[u32]) -> BenchResult<u32> {
    let probe = transfer_buffer(raw, size, families, false)?;
    // SAFETY: `probe` is alive; destroyed right after.
    let bits = unsafe { raw.d.get_buffer_memory_requirements(probe) }.memory_type_bits;
    // SAFETY: unused, no memory bound.
    unsafe { raw.d.destroy_buffer(probe, None) };
    Ok(bits)
}

/// The BAR group (`bar.rs`) on the device's BAR and host-cached memory types.
fn bar_rows(
    device: &Device,
    raw: &Raw,
    lanes: &[Lane],
    families: &[u32],
    size: u64,
    rounds: usize,
) -> BenchResult<Vec<Row>> {
    let bits = memory_type_bits(raw, size, families)?;
    let visible = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let found = (
        raw.memory_type(bits, visible | vk::MemoryPropertyFlags::DEVICE_LOCAL),
        raw.memory_type(bits, visible | vk::MemoryPropertyFlags::HOST_CACHED),
    );
    let (Some(bar), Some(cached)) = found else {
        note(format!(
            "hostmem bar: not measured: no DEVICE_LOCAL | HOST_VISIBLE or no HOST_CACHED \
             memory type for transfer buffers ({found:?})"
        ));
        return Ok(vec![]);
    };
    let dst = device_buffer(device, "hostmem bar target", size)?;
    bar::rows(raw, lanes, families, dst.raw(), size, rounds, bar, cached)
}

fn device_buffer(device: &Device, label: &str, size: u64) -> BenchResult<Buffer> {
    Ok(device.buffer(
        &BufferDesc::default()
            .label(label)
            .size(size)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
            .location(MemoryLocation::GpuOnly),
    )?)
}
