//! The split group of the host-memory sweep (`KILN_BENCH_HOSTMEM_GROUPS=split`): one
//! pinned-memory copy against the same copy split in 2, 3 and 4 parts over queues, kiln
//! (`TransferSplit`, set per variant with `Device::debug_set_transfer_split`) interleaved
//! with raw `ash` doing the same split on the same `VkQueue`s (the parts and queues of
//! kiln's policy, `TransferSplit::plan`), round by round.
//!
//! kiln copies between its `HostBuffer` (driver memory, `HostBufferMemory::Auto`) and a
//! device buffer; raw between a host-cached `vkAllocateMemory` buffer (`CONCURRENT` over
//! kiln's families, as kiln's are) and the same device buffer: one command buffer per part,
//! submitted to each part's queue, waited for together, after half a second of raw copies
//! (the H200's copy rate ramps up over the first few hundred ms of traffic). Each variant's
//! line prints the median, min and max GB/s and every round's figure.

use std::time::Instant;

use ash::vk;
use kiln::{Buffer, Device, QueueKind, TransferSplit};

use super::memory::{driver, transfer_buffer};
use super::{pattern, run, size_name, Copy, Lane};
use crate::raw::Raw;
use crate::{median, note, BenchResult, Row};

/// One measured variant: direction and parts.
struct Variant {
    upload: bool,
    parts: u32,
    kiln: Vec<f64>,
    raw: Vec<f64>,
    queues: Vec<usize>,
}

fn stats(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    (
        median(&mut s),
        crate::best(v),
        v.iter().copied().fold(0.0, f64::max),
    )
}

fn list(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.1}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The split rows of one size (see the module docs).
pub(super) fn rows(
    device: &Device,
    raw: &Raw,
    dst: &Buffer,
    size: u64,
    rounds: usize,
) -> BenchResult<Vec<Row>> {
    let name = size_name(size);
    let len = size as usize;
    let data = pattern(len);
    let infos = device.queue_infos();
    let kinds: Vec<QueueKind> = infos.iter().map(|q| q.kind).collect();
    let mut families: Vec<u32> = infos.iter().map(|q| q.family).collect();
    families.sort_unstable();
    families.dedup();
    // Raw lanes, one per kiln queue (by kiln queue index).
    let mut lanes = Vec::new();
    for info in &infos {
        lanes.push(Lane {
            name: "split",
            queue: raw.queue_of(info),
            ctx: raw.ctx_for(info.family)?,
        });
    }
    let r = measure(
        device, raw, dst, size, rounds, &lanes, &families, &kinds, &data,
    );
    device.wait_idle()?;
    for l in lanes {
        raw.drop_ctx(l.ctx);
    }
    let variants = r?;
    let mut rows = Vec::new();
    let policy = device.transfer_split();
    for v in &variants {
        let dir = if v.upload { "upload" } else { "readback" };
        let (km, klo, khi) = stats(&v.kiln);
        let (rm, rlo, rhi) = stats(&v.raw);
        let queues: Vec<String> = v
            .queues
            .iter()
            .map(|&q| format!("{q} {:?}", kinds[q]))
            .collect();
        let default = policy.plan(&kinds, v.queues[0], v.upload, size).len() == v.queues.len()
            && v.parts == policy.max_parts.min(v.queues.len() as u32).max(1);
        note(format!(
            "hostmem: {name} split: {dir} in {} part(s) over kiln queues [{}]{}: kiln {km:.2} GB/s \
             ({klo:.2}..{khi:.2}), raw {rm:.2} GB/s ({rlo:.2}..{rhi:.2}) | kiln rounds {} | raw \
             rounds {}",
            v.queues.len(),
            queues.join(", "),
            if default { " (kiln's default policy)" } else { "" },
            list(&v.kiln),
            list(&v.raw),
        ));
        rows.push(Row::new(
            &format!(
                "hostmem {name} split: {dir} in {} part(s) over [{}]",
                v.queues.len(),
                queues.join(", ")
            ),
            "GB/s",
            km,
            rm,
        ));
    }
    Ok(rows)
}

#[allow(clippy::too_many_arguments)]
fn measure(
    device: &Device,
    raw: &Raw,
    dst: &Buffer,
    size: u64,
    rounds: usize,
    lanes: &[Lane],
    families: &[u32],
    kinds: &[QueueKind],
    data: &[u8],
) -> BenchResult<Vec<Variant>> {
    let len = size as usize;
    let up = device.upload_queue();
    let down = device.readback_queue();
    let mut host = device.host_buffer_from_slice("hostmem split pinned", data)?;
    let cached = host_cached_type(raw, size)?;
    let sharing: &[u32] = if families.len() > 1 { families } else { &[] };
    let mut theirs = driver(raw, len, cached, sharing)?;
    theirs.bytes().copy_from_slice(data);
    warm_up(raw, &lanes[up.info().index], dst.raw(), theirs.buf, size)?;
    let before = device.transfer_split();
    let mut variants = Vec::new();
    for upload in [true, false] {
        for parts in 1..=4u32.min(kinds.len() as u32) {
            variants.push(Variant {
                upload,
                parts,
                kiln: Vec::new(),
                raw: Vec::new(),
                queues: Vec::new(),
            });
        }
    }
    let result = (|| -> BenchResult<()> {
        for _ in 0..rounds {
            for v in variants.iter_mut() {
                let split = TransferSplit::new(0, v.parts);
                device.debug_set_transfer_split(split);
                let q = if v.upload { &up } else { &down };
                let t = Instant::now();
                let transfer = if v.upload {
                    q.upload_from_host(&host, 0, dst, 0, size)?
                } else {
                    q.read_to_host(dst, 0, &mut host, 0, size)?
                };
                let queues: Vec<usize> = transfer.parts().iter().map(|p| p.0).collect();
                transfer.wait()?;
                v.kiln.push(size as f64 / t.elapsed().as_secs_f64() / 1e9);
                let plan = split.plan(kinds, q.info().index, v.upload, size);
                let planned: Vec<usize> = plan.iter().map(|p| p.queue).collect();
                if queues != planned {
                    return Err(format!(
                        "hostmem split: kiln's {} parts {queues:?} are not the plan {planned:?}",
                        v.parts
                    )
                    .into());
                }
                v.queues = queues;
                let work: Vec<(&Lane, Vec<Copy>)> = plan
                    .iter()
                    .map(|p| {
                        let (src, dst) = if v.upload {
                            (theirs.buf, dst.raw())
                        } else {
                            (dst.raw(), theirs.buf)
                        };
                        (
                            &lanes[p.queue],
                            vec![Copy {
                                src,
                                dst,
                                regions: vec![vk::BufferCopy {
                                    src_offset: p.offset,
                                    dst_offset: p.offset,
                                    size: p.len,
                                }],
                                readback: !v.upload,
                                shader: None,
                            }],
                        )
                    })
                    .collect();
                v.raw.push(size as f64 / run(raw, &work)? / 1e9);
            }
        }
        Ok(())
    })();
    device.debug_set_transfer_split(before);
    let ok = result.and_then(|()| {
        if host.as_slice()? != data || theirs.bytes() != data {
            return Err("hostmem split: a split readback differs from the upload".into());
        }
        Ok(())
    });
    device.wait_idle()?;
    theirs.drop_in(raw);
    ok.map(|()| variants)
}

/// The raw side's host-cached memory type for a transfer buffer of `size` bytes (the one
/// kiln's HostBuffer takes), else any host-visible one.
fn host_cached_type(raw: &Raw, size: u64) -> BenchResult<u32> {
    let probe = transfer_buffer(raw, size, &[], false)?;
    // SAFETY: `probe` is alive; destroyed right after.
    let bits = unsafe { raw.d.get_buffer_memory_requirements(probe) }.memory_type_bits;
    // SAFETY: unused, no memory bound.
    unsafe { raw.d.destroy_buffer(probe, None) };
    let props = raw.memory_properties();
    let want = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_CACHED;
    Ok((0..props.memory_type_count)
        .find(|&i| {
            bits & (1 << i) != 0 && props.memory_types[i as usize].property_flags.contains(want)
        })
        .or_else(|| {
            (0..props.memory_type_count).find(|&i| {
                bits & (1 << i) != 0
                    && props.memory_types[i as usize]
                        .property_flags
                        .contains(vk::MemoryPropertyFlags::HOST_VISIBLE)
            })
        })
        .ok_or("no host-visible memory type for the raw side")?)
}

/// Half a second of raw copies up and down between `host` and `dst` on `lane`: the H200's
/// copy rate ramps up over the first few hundred ms of traffic (run D2).
fn warm_up(
    raw: &Raw,
    lane: &Lane,
    dst: vk::Buffer,
    host: vk::Buffer,
    size: u64,
) -> BenchResult<()> {
    let warm = Instant::now();
    while warm.elapsed() < std::time::Duration::from_millis(500) {
        for readback in [false, true] {
            let (src, to) = if readback { (dst, host) } else { (host, dst) };
            let copy = Copy {
                src,
                dst: to,
                regions: vec![vk::BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size,
                }],
                readback,
                shader: None,
            };
            run(raw, &[(lane, vec![copy])])?;
        }
    }
    Ok(())
}
