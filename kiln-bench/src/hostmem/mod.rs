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
use kiln::{Buffer, BufferDesc, Device, HostBufferMemory, MemoryLocation, QueueKind};

mod bar;
mod families;
mod memory;
mod shader;
mod split;

use memory::{describe_type, driver, import, mapping, transfer_buffer, Host, Region};
use shader::ShaderCopy;

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
                rows.extend(size_rows(
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

fn size_rows(
    device: &Device,
    raw: &Raw,
    lanes: &[Lane],
    families: &[u32],
    size: u64,
    rounds: usize,
    shapes_too: bool,
) -> BenchResult<Vec<Row>> {
    let name = size_name(size);
    let len = size as usize;
    let data = pattern(len);
    let dst = device_buffer(device, "hostmem target", size)?;
    let dst2 = device_buffer(device, "hostmem second target", size)?;
    let (t0, t1, compute, main) = (&lanes[0], &lanes[1], &lanes[2], &lanes[3]);
    let mut rows = Vec::new();

    // kiln's HostBuffer, kiln's copies: in driver memory (the baseline of every row), then
    // in host pages kiln maps and imports (`HostBufferMemory::Imported`).
    let up = device.queue(QueueKind::Transfer);
    let down = device
        .queues(QueueKind::Transfer)
        .pop()
        .unwrap_or(up.clone());
    let mut base = [0.0; 2];
    // One copy each (no split over queues): the figures earlier runs compare with.
    let policy = device.transfer_split();
    device.debug_set_transfer_split(kiln::TransferSplit::OFF);
    for memory in [HostBufferMemory::Driver, HostBufferMemory::Imported] {
        if memory == HostBufferMemory::Imported && !device.features().external_memory_host {
            continue;
        }
        device.debug_set_host_buffer_memory(memory);
        let host = device.host_buffer_from_slice("hostmem pinned", &data);
        device.debug_set_host_buffer_memory(HostBufferMemory::Auto);
        let mut host = match host {
            Ok(h) => h,
            Err(e) => {
                note(format!(
                    "hostmem: {name} kiln HostBuffer {memory:?}: not measured: {e}"
                ));
                continue;
            }
        };
        let (mut ku, mut kd) = (vec![], vec![]);
        for _ in 0..rounds {
            let t = Instant::now();
            up.upload_from_host(&host, 0, &dst, 0, size)?.wait()?;
            ku.push(size as f64 / t.elapsed().as_secs_f64() / 1e9);
            let t = Instant::now();
            down.read_to_host(&dst, 0, &mut host, 0, size)?.wait()?;
            kd.push(size as f64 / t.elapsed().as_secs_f64() / 1e9);
        }
        if host.as_slice()? != &data[..] {
            return Err(format!("hostmem: kiln HostBuffer {memory:?} round trip differs").into());
        }
        let ptr = host.as_slice()?.as_ptr();
        let r = [median(&mut ku), median(&mut kd)];
        if memory == HostBufferMemory::Driver {
            base = r;
        }
        note(format!(
            "hostmem: {name} kiln HostBuffer {memory:?} [{:?}]: upload {:.2} GB/s ({:.2}..{:.2}), \
             readback {:.2} GB/s ({:.2}..{:.2}) | {}",
            host.memory_properties(),
            r[0],
            super::best(&ku),
            ku.iter().copied().fold(0.0, f64::max),
            r[1],
            super::best(&kd),
            kd.iter().copied().fold(0.0, f64::max),
            mapping(ptr)
        ));
        rows.push(Row::new(
            &format!("hostmem upload {name}, kiln HostBuffer {memory:?}"),
            "GB/s",
            r[0],
            base[0],
        ));
        rows.push(Row::new(
            &format!("hostmem readback {name}, kiln HostBuffer {memory:?}"),
            "GB/s",
            r[1],
            base[1],
        ));
        drop(host);
        device.wait_idle()?;
    }
    device.debug_set_transfer_split(policy);

    // The variants.
    let mut variants: Vec<(String, BenchResult<Host>)> = Vec::new();
    let bits = memory_type_bits(raw, size, &[])?;
    let props = raw.memory_properties();
    let mut cached = None;
    for i in 0..props.memory_type_count {
        let f = props.memory_types[i as usize].property_flags;
        if bits & (1 << i) == 0 || !f.contains(vk::MemoryPropertyFlags::HOST_VISIBLE) {
            continue;
        }
        if cached.is_none() && f.contains(vk::MemoryPropertyFlags::HOST_CACHED) {
            cached = Some(i);
        }
        variants.push((format!("driver type {i}"), driver(raw, len, i, &[])));
    }
    if let (Some(i), true) = (cached, families.len() > 1) {
        variants.push((
            format!("driver type {i} concurrent"),
            driver(raw, len, i, families),
        ));
    }
    let imports = device.features().external_memory_host;
    if imports {
        variants.push((
            "import std::alloc 64 KiB-aligned".into(),
            Region::alloc(len).and_then(|r| import(raw, r, "import std::alloc 64 KiB-aligned")),
        ));
        variants.push((
            "import mmap MADV_HUGEPAGE".into(),
            Region::mmap(len, libc::MADV_HUGEPAGE, false)
                .and_then(|r| import(raw, r, "import mmap 2 MiB-aligned MADV_HUGEPAGE")),
        ));
        variants.push((
            "import mmap MADV_NOHUGEPAGE".into(),
            Region::mmap(len, libc::MADV_NOHUGEPAGE, false)
                .and_then(|r| import(raw, r, "import mmap MADV_NOHUGEPAGE (4 KiB pages)")),
        ));
        variants.push((
            "import mmap MAP_HUGETLB".into(),
            Region::mmap(len, 0, true)
                .and_then(|r| import(raw, r, "import mmap MAP_HUGETLB (hugetlbfs 2 MiB)")),
        ));
    } else {
        note("hostmem: no VK_EXT_external_memory_host: no import variants".into());
    }
    let mut hosts = Vec::new();
    for (label, v) in variants {
        let mut h = match v {
            Ok(h) => h,
            Err(e) => {
                note(format!("hostmem: {name} {label}: not measured: {e}"));
                continue;
            }
        };
        h.bytes().copy_from_slice(&data);
        let u = rate(
            raw,
            &[(t0, vec![whole(h.buf, dst.raw(), size, false)])],
            size,
            rounds,
        )?;
        let d = rate(
            raw,
            &[(t1, vec![whole(dst.raw(), h.buf, size, true)])],
            size,
            rounds,
        )?;
        // The same host memory into the second device buffer, and again from transfer
        // queue 1: does the ~38-or-~49 GB/s rate (run A) follow the host memory, the
        // device-side destination or the queue?
        let u2 = rate(
            raw,
            &[(t0, vec![whole(h.buf, dst2.raw(), size, false)])],
            size,
            rounds,
        )?;
        let u3 = rate(
            raw,
            &[(t1, vec![whole(h.buf, dst.raw(), size, false)])],
            size,
            rounds,
        )?;
        note(format!(
            "hostmem: {name} {label}: upload to the second target {:.2} GB/s ({:.2}..{:.2}); \
             upload on transfer1 {:.2} GB/s ({:.2}..{:.2}); first target on transfer0 {:.2}",
            u2[0], u2[1], u2[2], u3[0], u3[1], u3[2], u[0]
        ));
        h.bytes().fill(0);
        run(raw, &[(t1, vec![whole(dst.raw(), h.buf, size, true)])])?;
        // Device-local (BAR) memory is uncached for host reads (a full compare of 1 GiB
        // ran past run A's cap): compare one byte per 4 KiB there.
        let ok = if h.what.contains("DEVICE_LOCAL") {
            let b = h.bytes();
            (0..len).step_by(4096).all(|i| b[i] == data[i])
        } else {
            h.bytes() == &data[..]
        };
        note(format!(
            "hostmem: {name} {}: upload {:.2} GB/s ({:.2}..{:.2}), readback {:.2} GB/s \
             ({:.2}..{:.2}){} | {}",
            h.what,
            u[0],
            u[1],
            u[2],
            d[0],
            d[1],
            d[2],
            if ok { "" } else { " READBACK DIFFERS" },
            mapping(h.ptr)
        ));
        if !ok {
            return Err(format!("hostmem: {name} {label}: the readback differs").into());
        }
        rows.push(Row::new(
            &format!("hostmem upload {name}, {label}"),
            "GB/s",
            u[0],
            base[0],
        ));
        rows.push(Row::new(
            &format!("hostmem readback {name}, {label}"),
            "GB/s",
            d[0],
            base[1],
        ));
        hosts.push((label, h, u[0], d[0]));
    }

    // Copy shapes and duplex, on the fastest-uploading import and on the driver's cached
    // memory, each with a second allocation of the same kind for the other direction.
    let pick = |want: &dyn Fn(&str) -> bool| {
        hosts
            .iter()
            .enumerate()
            .filter(|(_, h)| want(&h.0))
            .max_by(|a, b| a.1 .2.total_cmp(&b.1 .2))
            .map(|(i, _)| i)
    };
    let max_range = u64::from(device.limits().max_storage_buffer_range);
    let shader = if size <= max_range && size.is_multiple_of(16) && size / 16 <= u64::from(u32::MAX)
    {
        Some(ShaderCopy::new(raw)?)
    } else {
        note(format!(
            "hostmem: {name}: no shader copies (maxStorageBufferRange {max_range})"
        ));
        None
    };
    let mut subjects = Vec::new();
    if let Some(i) = pick(&|l: &str| l.starts_with("import")) {
        subjects.push(i);
    }
    if let Some(i) = cached.and_then(|c| pick(&|l: &str| l == format!("driver type {c}"))) {
        subjects.push(i);
    }
    if !shapes_too {
        subjects.clear();
    }
    for i in subjects {
        let (label, a, alone_up, alone_down) = (&hosts[i].0, &hosts[i].1, hosts[i].2, hosts[i].3);
        let second = if label.starts_with("import") {
            Region::mmap(len, libc::MADV_HUGEPAGE, false)
                .and_then(|r| import(raw, r, "second import"))
        } else {
            driver(raw, len, cached.unwrap_or(0), &[])
        };
        let b = match second {
            Ok(b) => b,
            Err(e) => {
                note(format!(
                    "hostmem: {name} shapes on {label}: no second buffer: {e}"
                ));
                continue;
            }
        };
        let (ha, hb, da, db) = (a.buf, b.buf, dst.raw(), dst2.raw());
        let half = size / 2;
        let split = |src, dst, readback| {
            [
                Copy {
                    src,
                    dst,
                    regions: regions(0, half, 1),
                    readback,
                    shader: None,
                },
                Copy {
                    src,
                    dst,
                    regions: regions(half, size - half, 1),
                    readback,
                    shader: None,
                },
            ]
        };
        let mut shapes: Vec<(String, Work<'_>, u64, f64)> = Vec::new();
        for parts in [4, 16] {
            shapes.push((
                format!("upload in {parts} regions on transfer0"),
                vec![(
                    t0,
                    vec![Copy {
                        src: ha,
                        dst: da,
                        regions: regions(0, size, parts),
                        readback: false,
                        shader: None,
                    }],
                )],
                size,
                alone_up,
            ));
        }
        for (other, what) in [(t1, "transfer0 + transfer1"), (main, "transfer0 + main")] {
            let [x, y] = split(ha, da, false);
            shapes.push((
                format!("upload in halves over {what}"),
                vec![(t0, vec![x]), (other, vec![y])],
                size,
                alone_up,
            ));
        }
        let [x, y] = split(da, ha, true);
        shapes.push((
            "readback in halves over transfer0 + transfer1".into(),
            vec![(t0, vec![x]), (t1, vec![y])],
            size,
            alone_down,
        ));
        for other in [t1, compute, main] {
            shapes.push((
                format!("duplex: upload on transfer0 + readback on {}", other.name),
                vec![
                    (t0, vec![whole(ha, da, size, false)]),
                    (other, vec![whole(db, hb, size, true)]),
                ],
                2 * size,
                alone_up.max(alone_down),
            ));
        }
        shapes.push((
            "duplex: uploads on transfer0 + transfer1".into(),
            vec![
                (t0, vec![whole(ha, da, size, false)]),
                (t1, vec![whole(hb, db, size, false)]),
            ],
            2 * size,
            alone_up,
        ));
        shapes.push((
            "duplex: readbacks on transfer0 + transfer1".into(),
            vec![
                (t0, vec![whole(da, ha, size, true)]),
                (t1, vec![whole(db, hb, size, true)]),
            ],
            2 * size,
            alone_down,
        ));
        // The shader cores copying to and from host memory (the copy shader on the compute
        // and main queues), alone and beside an upload on the first transfer queue.
        if let Some(sc) = &shader {
            for other in [compute, main] {
                let on = other.name;
                shapes.push((
                    format!("shader readback on {on} (alone)"),
                    vec![(other, vec![sc.copy(raw, db, hb, size, true)?])],
                    size,
                    alone_down,
                ));
                shapes.push((
                    format!("shader upload on {on} (alone)"),
                    vec![(other, vec![sc.copy(raw, hb, db, size, false)?])],
                    size,
                    alone_up,
                ));
                shapes.push((
                    format!("duplex: upload on transfer0 + shader readback on {on}"),
                    vec![
                        (t0, vec![whole(ha, da, size, false)]),
                        (other, vec![sc.copy(raw, db, hb, size, true)?]),
                    ],
                    2 * size,
                    alone_up.max(alone_down),
                ));
                // The upload by the shader cores (reading host memory over the bus) beside
                // a copy-engine readback: does the pair beat the copy engines' ~61 GB/s?
                shapes.push((
                    format!("duplex: shader upload on {on} + readback on transfer1"),
                    vec![
                        (other, vec![sc.copy(raw, hb, db, size, false)?]),
                        (t1, vec![whole(da, ha, size, true)]),
                    ],
                    2 * size,
                    alone_up.max(alone_down),
                ));
            }
            shapes.push((
                "duplex: shader upload on compute + shader readback on main".into(),
                vec![
                    (compute, vec![sc.copy(raw, hb, db, size, false)?]),
                    (main, vec![sc.copy(raw, da, ha, size, true)?]),
                ],
                2 * size,
                alone_up.max(alone_down),
            ));
        }
        let short = if label.starts_with("import") {
            "import"
        } else {
            "driver cached"
        };
        for (what, work, bytes, alone) in shapes {
            let r = rate(raw, &work, bytes, rounds)?;
            note(format!(
                "hostmem: {name} {short} ({label}) {what}: {:.2} GB/s aggregate ({:.2}..{:.2}); \
                 one copy alone {alone:.2}",
                r[0], r[1], r[2]
            ));
            rows.push(Row::new(
                &format!("hostmem {name} {short}: {what}"),
                "GB/s",
                r[0],
                alone,
            ));
        }
        b.drop_in(raw);
    }
    device.wait_idle()?;
    if let Some(sc) = shader {
        sc.destroy(raw);
    }
    for (_, h, _, _) in hosts {
        h.drop_in(raw);
    }
    Ok(rows)
}
