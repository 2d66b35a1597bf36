//! The memory variants and copy shapes of one size (see the module docs of `hostmem`):
//! kiln's `HostBuffer` first (the baseline of every row), then each raw variant, then the
//! shapes and duplex sets on the fastest import and on the driver's cached memory.

use ash::vk;
use kiln::{Buffer, Device, HostBufferMemory, QueueKind};

use super::memory::{driver, import, mapping, Host, Region};
use super::shader::ShaderCopy;
use super::{
    device_buffer, memory_type_bits, note, pattern, rate, regions, run, size_name, whole, Copy,
    Lane, Work,
};
use crate::raw::Raw;
use crate::{median, BenchResult, Row};

/// What every part of one size's sweep uses: the size, its data, the two device targets,
/// the lanes (transfer0, transfer1, compute, main) and the rounds.
struct Sweep<'l> {
    raw: &'l Raw,
    name: String,
    size: u64,
    data: Vec<u8>,
    dst: vk::Buffer,
    dst2: vk::Buffer,
    t0: &'l Lane,
    t1: &'l Lane,
    compute: &'l Lane,
    main: &'l Lane,
    rounds: usize,
}

/// A measured variant: its label, its memory, and its upload and readback GB/s.
type Measured = (String, Host, f64, f64);

/// The rows of one size (`shapes_too`: with the copy shapes).
pub(super) fn size_rows(
    device: &Device,
    raw: &Raw,
    lanes: &[Lane],
    families: &[u32],
    size: u64,
    rounds: usize,
    shapes_too: bool,
) -> BenchResult<Vec<Row>> {
    let dst = device_buffer(device, "hostmem target", size)?;
    let dst2 = device_buffer(device, "hostmem second target", size)?;
    let s = Sweep {
        raw,
        name: size_name(size),
        size,
        data: pattern(size as usize),
        dst: dst.raw(),
        dst2: dst2.raw(),
        t0: &lanes[0],
        t1: &lanes[1],
        compute: &lanes[2],
        main: &lanes[3],
        rounds,
    };
    let mut rows = Vec::new();
    let base = kiln_host_rows(device, &s, &dst, &mut rows)?;
    let (variants, cached) = variants(device, &s, families)?;
    let mut hosts = Vec::new();
    for (label, v) in variants {
        match v {
            Ok(h) => hosts.push(variant_rows(&s, label, h, base, &mut rows)?),
            Err(e) => note(format!("hostmem: {} {label}: not measured: {e}", s.name)),
        }
    }
    let shader = shader_copy(device, &s)?;
    if shapes_too {
        shape_rows(&s, &hosts, cached, shader.as_ref(), &mut rows)?;
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

/// kiln's `HostBuffer` with kiln's copies: in driver memory, then in host pages kiln maps
/// and imports (`HostBufferMemory::Imported`); returns the driver memory's upload and
/// readback GB/s (the baseline of every row).
fn kiln_host_rows(
    device: &Device,
    s: &Sweep<'_>,
    dst: &Buffer,
    rows: &mut Vec<Row>,
) -> BenchResult<[f64; 2]> {
    let (name, size) = (&s.name, s.size);
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
        let host = device.host_buffer_from_slice("hostmem pinned", &s.data);
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
        for _ in 0..s.rounds {
            let t = std::time::Instant::now();
            up.upload_from_host(&host, 0, dst, 0, size)?.wait()?;
            ku.push(size as f64 / t.elapsed().as_secs_f64() / 1e9);
            let t = std::time::Instant::now();
            down.read_to_host(dst, 0, &mut host, 0, size)?.wait()?;
            kd.push(size as f64 / t.elapsed().as_secs_f64() / 1e9);
        }
        if host.as_slice()? != &s.data[..] {
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
            crate::best(&ku),
            ku.iter().copied().fold(0.0, f64::max),
            r[1],
            crate::best(&kd),
            kd.iter().copied().fold(0.0, f64::max),
            mapping(ptr)
        ));
        for (what, rate, baseline) in [("upload", r[0], base[0]), ("readback", r[1], base[1])] {
            rows.push(Row::new(
                &format!("hostmem {what} {name}, kiln HostBuffer {memory:?}"),
                "GB/s",
                rate,
                baseline,
            ));
        }
        drop(host);
        device.wait_idle()?;
    }
    device.debug_set_transfer_split(policy);
    Ok(base)
}

/// The raw variants: every host-visible memory type the buffer allows, the host-cached one
/// with `CONCURRENT` sharing over `families`, and the imports; with the host-cached type.
#[allow(clippy::type_complexity)]
fn variants(
    device: &Device,
    s: &Sweep<'_>,
    families: &[u32],
) -> BenchResult<(Vec<(String, BenchResult<Host>)>, Option<u32>)> {
    let (raw, len) = (s.raw, s.size as usize);
    let mut variants: Vec<(String, BenchResult<Host>)> = Vec::new();
    let bits = memory_type_bits(raw, s.size, &[])?;
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
    if !device.features().external_memory_host {
        note("hostmem: no VK_EXT_external_memory_host: no import variants".into());
        return Ok((variants, cached));
    }
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
    Ok((variants, cached))
}

/// One variant's upload and readback (and the upload to the second target and from the
/// second transfer queue, as a note), its readback checked; its rows.
fn variant_rows(
    s: &Sweep<'_>,
    label: String,
    mut h: Host,
    base: [f64; 2],
    rows: &mut Vec<Row>,
) -> BenchResult<Measured> {
    let (raw, name, size, data) = (s.raw, &s.name, s.size, &s.data);
    let (t0, t1, dst) = (s.t0, s.t1, s.dst);
    h.bytes().copy_from_slice(data);
    let u = rate(
        raw,
        &[(t0, vec![whole(h.buf, dst, size, false)])],
        size,
        s.rounds,
    )?;
    let d = rate(
        raw,
        &[(t1, vec![whole(dst, h.buf, size, true)])],
        size,
        s.rounds,
    )?;
    // The same host memory into the second device buffer, and again from transfer
    // queue 1: does the ~38-or-~49 GB/s rate (run A) follow the host memory, the
    // device-side destination or the queue?
    let u2 = rate(
        raw,
        &[(t0, vec![whole(h.buf, s.dst2, size, false)])],
        size,
        s.rounds,
    )?;
    let u3 = rate(
        raw,
        &[(t1, vec![whole(h.buf, dst, size, false)])],
        size,
        s.rounds,
    )?;
    note(format!(
        "hostmem: {name} {label}: upload to the second target {:.2} GB/s ({:.2}..{:.2}); \
         upload on transfer1 {:.2} GB/s ({:.2}..{:.2}); first target on transfer0 {:.2}",
        u2[0], u2[1], u2[2], u3[0], u3[1], u3[2], u[0]
    ));
    h.bytes().fill(0);
    run(raw, &[(t1, vec![whole(dst, h.buf, size, true)])])?;
    // Device-local (BAR) memory is uncached for host reads (a full compare of 1 GiB
    // ran past run A's cap): compare one byte per 4 KiB there.
    let ok = if h.what.contains("DEVICE_LOCAL") {
        let b = h.bytes();
        (0..data.len()).step_by(4096).all(|i| b[i] == data[i])
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
    Ok((label, h, u[0], d[0]))
}

/// The copy shader, where the size fits one storage buffer range and whole uvec4s.
fn shader_copy(device: &Device, s: &Sweep<'_>) -> BenchResult<Option<ShaderCopy>> {
    let max_range = u64::from(device.limits().max_storage_buffer_range);
    let size = s.size;
    if size <= max_range && size.is_multiple_of(16) && size / 16 <= u64::from(u32::MAX) {
        return Ok(Some(ShaderCopy::new(s.raw)?));
    }
    note(format!(
        "hostmem: {}: no shader copies (maxStorageBufferRange {max_range})",
        s.name
    ));
    Ok(None)
}

/// A shape: its name, the work, the bytes it moves and the rate of one copy alone.
type Shape<'l> = (String, Work<'l>, u64, f64);

/// The copy shapes and duplex sets on the fastest-uploading import and on the driver's
/// cached memory (`cached`), each with a second allocation of the same kind for the other
/// direction.
fn shape_rows(
    s: &Sweep<'_>,
    hosts: &[Measured],
    cached: Option<u32>,
    shader: Option<&ShaderCopy>,
    rows: &mut Vec<Row>,
) -> BenchResult<()> {
    let (raw, name, len) = (s.raw, &s.name, s.size as usize);
    let pick = |want: &dyn Fn(&str) -> bool| {
        hosts
            .iter()
            .enumerate()
            .filter(|(_, h)| want(&h.0))
            .max_by(|a, b| a.1 .2.total_cmp(&b.1 .2))
            .map(|(i, _)| i)
    };
    let mut subjects = Vec::new();
    if let Some(i) = pick(&|l: &str| l.starts_with("import")) {
        subjects.push(i);
    }
    if let Some(i) = cached.and_then(|c| pick(&|l: &str| l == format!("driver type {c}"))) {
        subjects.push(i);
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
        let mut shapes = engine_shapes(s, a.buf, b.buf, alone_up, alone_down);
        if let Some(sc) = shader {
            shapes.extend(shader_shapes(s, sc, a.buf, b.buf, alone_up, alone_down)?);
        }
        let short = if label.starts_with("import") {
            "import"
        } else {
            "driver cached"
        };
        for (what, work, bytes, alone) in shapes {
            let r = rate(raw, &work, bytes, s.rounds)?;
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
    Ok(())
}

/// The copy engines' shapes: an upload in 4 and 16 regions, in halves over two queues, a
/// readback in halves, and the duplex sets (`ha`, `hb`: the two host buffers).
fn engine_shapes<'l>(
    s: &Sweep<'l>,
    ha: vk::Buffer,
    hb: vk::Buffer,
    alone_up: f64,
    alone_down: f64,
) -> Vec<Shape<'l>> {
    let (size, da, db) = (s.size, s.dst, s.dst2);
    let (t0, t1, compute, main) = (s.t0, s.t1, s.compute, s.main);
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
    let mut shapes: Vec<Shape<'l>> = Vec::new();
    for parts in [4, 16] {
        let copy = Copy {
            src: ha,
            dst: da,
            regions: regions(0, size, parts),
            readback: false,
            shader: None,
        };
        shapes.push((
            format!("upload in {parts} regions on transfer0"),
            vec![(t0, vec![copy])],
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
    shapes
}

/// The shader cores copying to and from host memory (the copy shader on the compute and
/// main queues), alone and beside an upload or a readback on a transfer queue.
fn shader_shapes<'l>(
    s: &Sweep<'l>,
    sc: &ShaderCopy,
    ha: vk::Buffer,
    hb: vk::Buffer,
    alone_up: f64,
    alone_down: f64,
) -> BenchResult<Vec<Shape<'l>>> {
    let (raw, size, da, db) = (s.raw, s.size, s.dst, s.dst2);
    let (t0, t1, compute, main) = (s.t0, s.t1, s.compute, s.main);
    let mut shapes: Vec<Shape<'l>> = Vec::new();
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
        // The upload by the shader cores (reading host memory over the bus) beside a
        // copy-engine readback: does the pair beat the copy engines' ~61 GB/s?
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
    Ok(shapes)
}
