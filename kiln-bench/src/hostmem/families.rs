//! The families group of the host-memory sweep (`KILN_BENCH_HOSTMEM_GROUPS=families`): which
//! queues' copies between host and device memory run at the same time, over **every** queue
//! family that can copy, not only the ones kiln uses.
//!
//! On the H200 an upload and a readback at once move at most ~58 GB/s through the queues
//! kiln uses (two transfer-only queues, an async-compute and a main queue, and the copy
//! shader on either side: runs A and D2), where CUDA moves ~100 GB/s both ways on the same
//! bus. If the driver binds the queues of one family to one copy engine and time-slices
//! them, a queue of another family (the video-decode family also reports `TRANSFER`) may sit
//! on another engine. This group creates a `VkDevice` of its own on kiln's physical device
//! with up to two queues of every family whose flags include `TRANSFER`, `COMPUTE` or
//! `GRAPHICS` (each of these can record `vkCmdCopyBuffer`, Vulkan spec "Queue Family
//! Properties"), checks that each queue copies both ways (bytes compared), and measures,
//! each `rounds` times after half a second of copies:
//! - every queue alone: an upload and a readback of `size` bytes;
//! - every ordered pair of queues: an upload on the first at the same time as a readback on
//!   the second (aggregate GB/s: both copies' bytes / the time until both finished);
//! - every unordered pair of queues of different families: two uploads, and two readbacks.
//!
//! Host memory: host-cached coherent `vkAllocateMemory` buffers (`CONCURRENT` over the
//! families); device memory: `DEVICE_LOCAL`, not host-visible. Rows: `kiln` = the pair's
//! aggregate GB/s, `raw` = the first queue's upload alone (a ratio near 2 means the copies
//! ran concurrently at full rate, near 1 that they shared one engine or link).

use std::time::Instant;

use ash::vk;
use kiln::Device;

use super::{pattern, rate, run, size_name, whole, Copy, Lane};
use crate::raw::{HostBuf, Raw};
use crate::{note, BenchResult, Row};

/// Short names of a family's flags.
fn flags(f: vk::QueueFlags) -> String {
    let names = [
        (vk::QueueFlags::GRAPHICS, "G"),
        (vk::QueueFlags::COMPUTE, "C"),
        (vk::QueueFlags::TRANSFER, "T"),
        (vk::QueueFlags::VIDEO_DECODE_KHR, "VD"),
        (vk::QueueFlags::VIDEO_ENCODE_KHR, "VE"),
        (vk::QueueFlags::OPTICAL_FLOW_NV, "OF"),
    ];
    names
        .iter()
        .filter(|(b, _)| f.contains(*b))
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join("+")
}

/// A device-local buffer (not host-visible where the device has such a type) of `size`
/// bytes, usable for copies by every family in `families`.
fn local(raw: &Raw, size: u64, families: &[u32]) -> BenchResult<(vk::Buffer, vk::DeviceMemory)> {
    let buf = raw.copy_buffer(size, families)?;
    // SAFETY: `buf` is alive.
    let req = unsafe { raw.d.get_buffer_memory_requirements(buf) };
    let props = raw.memory_properties();
    let ty = (0..props.memory_type_count)
        .filter(|&i| req.memory_type_bits & (1 << i) != 0)
        .map(|i| (i, props.memory_types[i as usize].property_flags))
        .filter(|(_, f)| f.contains(vk::MemoryPropertyFlags::DEVICE_LOCAL))
        .min_by_key(|(_, f)| f.contains(vk::MemoryPropertyFlags::HOST_VISIBLE))
        .map(|(i, _)| i)
        .ok_or("no device-local memory type for a transfer buffer")?;
    let alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(req.size)
        .memory_type_index(ty);
    // SAFETY: a valid allocation for `buf`'s requirements, bound once.
    unsafe {
        let mem = raw.d.allocate_memory(&alloc, None)?;
        raw.d.bind_buffer_memory(buf, mem, 0)?;
        Ok((buf, mem))
    }
}

/// The families rows of one size (see the module docs).
pub(super) fn rows(device: &Device, size: u64, rounds: usize) -> BenchResult<Vec<Row>> {
    // SAFETY: plain queries on kiln's live instance and physical device; the instance
    // outlives the device created below, which is destroyed before this returns.
    let (inst, pd) = unsafe { (device.raw_instance().clone(), device.raw_physical_device()) };
    // SAFETY: as above.
    let props = unsafe { inst.get_physical_device_queue_family_properties(pd) };
    let copy = vk::QueueFlags::TRANSFER | vk::QueueFlags::COMPUTE | vk::QueueFlags::GRAPHICS;
    let chosen: Vec<(u32, u32)> = props
        .iter()
        .enumerate()
        .filter(|(_, f)| f.queue_flags.intersects(copy) && f.queue_count > 0)
        .map(|(i, f)| (i as u32, f.queue_count.min(2)))
        .collect();
    if chosen.is_empty() {
        return Err("hostmem families: no queue family can copy".into());
    }
    let priorities = [1.0f32; 2];
    let infos: Vec<vk::DeviceQueueCreateInfo> = chosen
        .iter()
        .map(|&(f, n)| {
            vk::DeviceQueueCreateInfo::default()
                .queue_family_index(f)
                .queue_priorities(&priorities[..n as usize])
        })
        .collect();
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default().synchronization2(true);
    let create = vk::DeviceCreateInfo::default()
        .queue_create_infos(&infos)
        .push_next(&mut v13);
    // SAFETY: valid create info (distinct families, counts within each family's, the
    // synchronization2 feature kiln itself requires of every device it uses).
    let d = unsafe { inst.create_device(pd, &create, None) }?;
    let raw = Raw::for_device(device, d, chosen[0].0);
    let families: Vec<u32> = chosen.iter().map(|c| c.0).collect();
    let mut lanes = Vec::new();
    let mut labels = Vec::new();
    let r = (|| -> BenchResult<Vec<Row>> {
        for &(f, n) in &chosen {
            for q in 0..n {
                labels.push(format!(
                    "f{f}({} x{})q{q}",
                    flags(props[f as usize].queue_flags),
                    props[f as usize].queue_count
                ));
                lanes.push(Lane {
                    name: "families",
                    // SAFETY: queue `q` of family `f` was created above.
                    queue: unsafe { raw.d.get_device_queue(f, q) },
                    ctx: raw.ctx_for(f)?,
                });
            }
        }
        measure(&raw, &lanes, &labels, &families, size, rounds)
    })();
    // SAFETY: every submission was waited on (or the device failed: idle waits for it).
    unsafe {
        let _ = raw.d.device_wait_idle();
    }
    for l in lanes {
        raw.drop_ctx(l.ctx);
    }
    // SAFETY: every object made through the device was destroyed above or in `measure`.
    unsafe { raw.d.destroy_device(None) };
    r
}

fn measure(
    raw: &Raw,
    lanes: &[Lane],
    labels: &[String],
    families: &[u32],
    size: u64,
    rounds: usize,
) -> BenchResult<Vec<Row>> {
    let name = size_name(size);
    let data = pattern(size as usize);
    let h1 = raw.host_buffer_on(size, true, families)?;
    let h2 = match raw.host_buffer_on(size, true, families) {
        Ok(h) => h,
        Err(e) => {
            raw.drop_host_buffer(h1);
            return Err(e);
        }
    };
    let mut locals = Vec::new();
    let r = (|| -> BenchResult<Vec<Row>> {
        locals.push(local(raw, size, families)?);
        locals.push(local(raw, size, families)?);
        let (d1, d2) = (locals[0].0, locals[1].0);
        // SAFETY: both host buffers are mapped whole (`size` bytes); no copy is pending.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), h1.ptr, data.len());
            std::ptr::copy_nonoverlapping(data.as_ptr(), h2.ptr, data.len());
        }
        check_queues(raw, lanes, labels, (&h1, &h2, d1), &data)?;
        let t = Instant::now();
        while t.elapsed().as_millis() < 500 {
            run(raw, &[(&lanes[0], vec![whole(h1.buf, d1, size, false)])])?;
            run(raw, &[(&lanes[0], vec![whole(d2, h2.buf, size, true)])])?;
        }
        let mut alone = Vec::new();
        for (lane, label) in lanes.iter().zip(labels) {
            let u = rate(
                raw,
                &[(lane, vec![whole(h1.buf, d1, size, false)])],
                size,
                rounds,
            )?;
            let d = rate(
                raw,
                &[(lane, vec![whole(d2, h2.buf, size, true)])],
                size,
                rounds,
            )?;
            note(format!(
                "hostmem families {name}: {label} alone: upload {:.2} GB/s ({:.2}..{:.2}), \
                 readback {:.2} GB/s ({:.2}..{:.2})",
                u[0], u[1], u[2], d[0], d[1], d[2]
            ));
            alone.push(u[0]);
        }
        let pair = |a: usize, b: usize, what: &str, ca: Copy, cb: Copy| -> BenchResult<Row> {
            let work = [(&lanes[a], vec![ca]), (&lanes[b], vec![cb])];
            let g = rate(raw, &work, 2 * size, rounds)?;
            note(format!(
                "hostmem families {name}: {what} {} + {}: {:.2} GB/s aggregate ({:.2}..{:.2})",
                labels[a], labels[b], g[0], g[1], g[2]
            ));
            Ok(Row::new(
                &format!(
                    "hostmem families {name}: {what} {} + {}",
                    labels[a], labels[b]
                ),
                "GB/s",
                g[0],
                alone[a],
            ))
        };
        let mut rows = Vec::new();
        for a in 0..lanes.len() {
            for b in (0..lanes.len()).filter(|&b| b != a) {
                let up = whole(h1.buf, d1, size, false);
                let down = whole(d2, h2.buf, size, true);
                rows.push(pair(a, b, "upload + readback", up, down)?);
            }
        }
        let family = |i: usize| labels[i].split('(').next().unwrap_or_default().to_string();
        for a in 0..lanes.len() {
            for b in (a + 1..lanes.len()).filter(|&b| family(a) != family(b)) {
                let (u1, u2) = (
                    whole(h1.buf, d1, size, false),
                    whole(h2.buf, d2, size, false),
                );
                rows.push(pair(a, b, "two uploads", u1, u2)?);
                let (r1, r2) = (whole(d1, h1.buf, size, true), whole(d2, h2.buf, size, true));
                rows.push(pair(a, b, "two readbacks", r1, r2)?);
            }
        }
        Ok(rows)
    })();
    // SAFETY: every submission was waited on (or the device failed: idle waits for it).
    unsafe {
        let _ = raw.d.device_wait_idle();
    }
    for (buf, mem) in locals {
        // SAFETY: no pending work uses them.
        unsafe {
            raw.d.destroy_buffer(buf, None);
            raw.d.free_memory(mem, None);
        }
    }
    raw.drop_host_buffer(h1);
    raw.drop_host_buffer(h2);
    r
}

/// Each queue once, bytes checked (the queue really copies both ways): `data` (already in
/// `h1`) uploaded to `d` and read back into `h2`.
fn check_queues(
    raw: &Raw,
    lanes: &[Lane],
    labels: &[String],
    (h1, h2, d): (&HostBuf, &HostBuf, vk::Buffer),
    data: &[u8],
) -> BenchResult<()> {
    let size = data.len() as u64;
    for (lane, label) in lanes.iter().zip(labels) {
        run(raw, &[(lane, vec![whole(h1.buf, d, size, false)])])?;
        // SAFETY: no copy is pending; the buffer is mapped whole.
        unsafe { std::ptr::write_bytes(h2.ptr, 0, size as usize) };
        run(raw, &[(lane, vec![whole(d, h2.buf, size, true)])])?;
        // SAFETY: the readback was waited on, after a barrier to host reads; nothing
        // writes the mapping while the slice lives.
        let back = unsafe { std::slice::from_raw_parts(h2.ptr, size as usize) };
        if back != data {
            return Err(format!("hostmem families: {label}: the readback differs").into());
        }
    }
    Ok(())
}
