//! The BAR group of the host-memory sweep (`KILN_BENCH_HOSTMEM_GROUPS=bar`): uploads by the
//! host's threads writing device memory through the PCIe BAR (a `DEVICE_LOCAL |
//! HOST_VISIBLE` memory type, write-combined), alone and at the same time as a DMA readback.
//!
//! On the H200 every pair of DMA copies (and of copy shaders) up and down at once moves at
//! most ~58 GB/s in all through Vulkan, where CUDA moves ~95 on the same bus (run F): the
//! GPU-initiated traffic of both directions shares one limit. Host writes through the BAR
//! are initiated by the CPU (posted writes from the root complex), so they may not share it.
//! Measured, each `rounds` times after half a second of copies:
//! - `size` bytes from a host `Vec` into mapped BAR memory by 1, 2, 4, 8 and 16 threads
//!   (contiguous slices, one each);
//! - the same with 8 and 16 threads while a DMA readback of `size` bytes (another device
//!   buffer into host-cached memory) runs on the last transfer queue, and while a DMA upload
//!   runs on the first: aggregate GB/s (both sides' bytes / the time until both finished)
//!   and each side's own rate.
//!
//! The BAR buffer's bytes are checked once (a DMA copy of it into host memory, compared).

use std::time::Instant;

use ash::vk;

use super::memory::{driver, Host};
use super::{pattern, run, size_name, whole, Lane};
use crate::raw::Raw;
use crate::{median, note, BenchResult, Row};

/// `src` into `dst` by `threads` threads, one contiguous slice each; returns seconds.
fn write(dst: *mut u8, src: &[u8], threads: usize) -> f64 {
    let per = src.len().div_ceil(threads);
    let dst = dst as usize;
    let t = Instant::now();
    std::thread::scope(|s| {
        for (i, part) in src.chunks(per).enumerate() {
            s.spawn(move || {
                // SAFETY: `dst` is mapped for `src.len()` bytes; each thread writes its own
                // disjoint range; no GPU work uses the memory meanwhile.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        part.as_ptr(),
                        (dst as *mut u8).add(i * per),
                        part.len(),
                    )
                }
            });
        }
    });
    t.elapsed().as_secs_f64()
}

/// The BAR rows of one size (see the module docs). `lanes`: transfer 0, transfer 1, ...
/// (the sweep's lanes); `bar` the BAR memory type; `cached` the host-cached one.
#[allow(clippy::too_many_arguments)]
pub(super) fn rows(
    raw: &Raw,
    lanes: &[Lane],
    families: &[u32],
    dst: vk::Buffer,
    size: u64,
    rounds: usize,
    bar: u32,
    cached: u32,
) -> BenchResult<Vec<Row>> {
    let name = size_name(size);
    let len = size as usize;
    let data = pattern(len);
    let (t0, t1) = (&lanes[0], &lanes[1]);
    let mut hosts: Vec<Host> = Vec::new();
    let r = (|| -> BenchResult<Vec<Row>> {
        hosts.push(driver(raw, len, bar, families)?);
        hosts.push(driver(raw, len, cached, families)?);
        hosts.push(driver(raw, len, cached, families)?);
        let (b, down, up) = (hosts[0].ptr, hosts[1].buf, hosts[2].buf);
        let bar_buf = hosts[0].buf;
        let what = hosts[0].what.clone();
        hosts[2].bytes().copy_from_slice(&data);
        // Correctness once: write, copy the BAR buffer into host memory, compare.
        write(b, &data, 8);
        hosts[1].bytes().fill(0);
        run(raw, &[(t1, vec![whole(bar_buf, down, size, true)])])?;
        if hosts[1].bytes() != &data[..] {
            return Err(format!("hostmem bar {name}: the BAR buffer's bytes differ").into());
        }
        let warm = Instant::now();
        while warm.elapsed().as_millis() < 500 {
            run(raw, &[(t1, vec![whole(dst, down, size, true)])])?;
            write(b, &data, 8);
        }
        let mut rows = Vec::new();
        let mut alone = [0.0f64; 17];
        for threads in [1, 2, 4, 8, 16] {
            let mut v: Vec<f64> = (0..rounds)
                .map(|_| size as f64 / write(b, &data, threads) / 1e9)
                .collect();
            alone[threads] = median(&mut v);
            note(format!(
                "hostmem bar {name}: {threads} threads write {what}: {:.2} GB/s ({:.2}..{:.2})",
                alone[threads],
                crate::best(&v),
                v.iter().copied().fold(0.0, f64::max)
            ));
            rows.push(Row::new(
                &format!("hostmem bar {name}: {threads} threads write the BAR"),
                "GB/s",
                alone[threads],
                alone[1],
            ));
        }
        let mut dma_alone = [0.0; 2];
        for (i, readback) in [true, false].into_iter().enumerate() {
            let mut v = Vec::new();
            for _ in 0..rounds {
                let work = if readback {
                    (t1, vec![whole(dst, down, size, true)])
                } else {
                    (t0, vec![whole(up, dst, size, false)])
                };
                v.push(size as f64 / run(raw, &[work])? / 1e9);
            }
            dma_alone[i] = median(&mut v);
        }
        note(format!(
            "hostmem bar {name}: DMA alone: readback on transfer 1 {:.2} GB/s, upload on \
             transfer 0 {:.2} GB/s",
            dma_alone[0], dma_alone[1]
        ));
        for threads in [8, 16] {
            for (readback, lane, label) in [
                (true, t1, "DMA readback on transfer 1"),
                (false, t0, "DMA upload on transfer 0"),
            ] {
                let copy = || {
                    if readback {
                        whole(dst, down, size, true)
                    } else {
                        whole(up, dst, size, false)
                    }
                };
                let (a, w, d) = beside_dma(raw, lane, copy, (b, &data, threads), rounds)?;
                note(format!(
                    "hostmem bar {name}: {threads} threads write the BAR + {label}: {a:.2} GB/s \
                     aggregate (BAR writes {w:.2}, DMA {d:.2} GB/s while both ran)"
                ));
                rows.push(Row::new(
                    &format!("hostmem bar {name}: {threads} threads write the BAR + {label}"),
                    "GB/s",
                    a,
                    alone[threads],
                ));
            }
        }
        Ok(rows)
    })();
    for h in hosts {
        h.drop_in(raw);
    }
    r
}

/// `threads` host threads writing `data` to the BAR at `b` while `lane` runs the copy
/// `copy` makes, `rounds` times: the medians of the aggregate GB/s (both sides' bytes over
/// the time both took), the writes' own and the copy's own GB/s.
fn beside_dma(
    raw: &Raw,
    lane: &Lane,
    copy: impl Fn() -> super::Copy,
    (b, data, threads): (*mut u8, &[u8], usize),
    rounds: usize,
) -> BenchResult<(f64, f64, f64)> {
    let size = data.len() as u64;
    let (mut agg, mut own_w, mut own_d) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let copy = copy();
        let t = Instant::now();
        let (w, d) = std::thread::scope(|s| {
            let dma = s.spawn(|| -> Result<f64, String> {
                let t = Instant::now();
                run(raw, &[(lane, vec![copy])]).map_err(|e| e.to_string())?;
                Ok(t.elapsed().as_secs_f64())
            });
            let w = write(b, data, threads);
            let d = dma.join().map_err(|_| "the DMA thread panicked")?;
            Ok::<_, Box<dyn std::error::Error>>((w, d?))
        })?;
        let all = t.elapsed().as_secs_f64();
        agg.push(2.0 * size as f64 / all / 1e9);
        own_w.push(size as f64 / w / 1e9);
        own_d.push(size as f64 / d / 1e9);
    }
    Ok((median(&mut agg), median(&mut own_w), median(&mut own_d)))
}
