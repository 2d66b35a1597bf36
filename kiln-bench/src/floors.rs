//! Row 2 diagnostics: how low can a round trip go on this driver, whatever the runtime?
//!
//! Every variant submits to the same queue, signals a timeline semaphore and polls its
//! counter (the fastest wait measured on NVIDIA), so the variants differ only in what the
//! submission carries and how its command buffer is produced. The variants run interleaved
//! in blocks (machine drift hits them alike):
//!
//! - re-recorded every round trip, then the pool reset (what `execute` does), the pool
//!   reset once per 16 command buffers, or `vkResetCommandBuffer` on a resettable pool;
//! - recorded once and resubmitted: the whole round-trip stream; with the leading full
//!   barrier replaced by a wait on the previous timeline value (already reached: the same
//!   memory dependency on one queue); without the trailing device→host barrier; the
//!   dispatch alone, without or with that wait; an empty command buffer; no command buffer (a signal-only submit);
//! - the stream plus a `vkCmdFillBuffer` of the round's value into a host-visible word: the
//!   note gives when the host saw that word and when it saw the timeline value, which splits
//!   "the GPU finished" from "the driver signalled".
//!
//! Printed as notes; nothing here is a row or a target.

use std::time::Instant;

use ash::vk;

use super::raw::{HostBuf, Raw};
use super::{median, note, BenchResult};

/// Records the round trip's dispatch (bind pipeline, bind set, push constants, dispatch)
/// into a recording command buffer.
pub type Body<'a> = &'a dyn Fn(vk::CommandBuffer);

/// Runs the variants, `m` round trips each (needs timeline semaphores; skipped otherwise).
pub fn run(raw: &Raw, timeline: bool, body: Body, m: usize) -> BenchResult<()> {
    if !timeline {
        note("round-trip floors skipped: the device has no timeline semaphores".into());
        return Ok(());
    }
    let d = &raw.d;
    let mut type_info = vk::SemaphoreTypeCreateInfo::default()
        .semaphore_type(vk::SemaphoreType::TIMELINE)
        .initial_value(0);
    let info = vk::SemaphoreCreateInfo::default().push_next(&mut type_info);
    // SAFETY: plain create; destroyed below after the queue is idle.
    let sem = unsafe { d.create_semaphore(&info, None)? };
    let mut pools = Vec::new();
    let flag = raw.host_buffer(256, false);
    let out = flag.and_then(|f| {
        let r = variants(raw, sem, &mut pools, &f, body, m);
        // SAFETY: waits for everything submitted above before the buffer goes.
        unsafe {
            let _ = d.queue_wait_idle(raw.queue);
        }
        raw.drop_host_buffer(f);
        r
    });
    // SAFETY: the queue is idle: nothing of these objects is pending.
    unsafe {
        let _ = d.queue_wait_idle(raw.queue);
        for p in pools {
            d.destroy_command_pool(p, None);
        }
        d.destroy_semaphore(sem, None);
    }
    out
}

/// A command pool (recorded in `pools` for destruction) with `n` primary command buffers.
fn pool(
    raw: &Raw,
    pools: &mut Vec<vk::CommandPool>,
    flags: vk::CommandPoolCreateFlags,
    n: u32,
) -> BenchResult<(vk::CommandPool, Vec<vk::CommandBuffer>)> {
    let info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(raw.family)
        .flags(flags);
    // SAFETY: plain creates on the live device; the caller destroys the pool when idle.
    unsafe {
        let p = raw.d.create_command_pool(&info, None)?;
        pools.push(p);
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(p)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(n);
        Ok((p, raw.d.allocate_command_buffers(&alloc)?))
    }
}

/// What a recorded stream holds.
#[derive(Clone, Copy)]
pub struct Stream {
    lead: bool,
    body: bool,
    host: bool,
    /// (buffer, value): a fill of the value after one more full barrier.
    fill: Option<(vk::Buffer, u32)>,
}

pub const FULL: Stream = Stream {
    lead: true,
    body: true,
    host: true,
    fill: None,
};

/// Records stream `s` into `cb` (begun with `flags`) and ends it.
pub fn record(
    raw: &Raw,
    cb: vk::CommandBuffer,
    body: Body,
    flags: vk::CommandBufferUsageFlags,
    s: Stream,
) -> BenchResult<()> {
    let rw = vk::AccessFlags2::MEMORY_READ | vk::AccessFlags2::MEMORY_WRITE;
    let host = vk::AccessFlags2::HOST_READ | vk::AccessFlags2::HOST_WRITE;
    let all = vk::PipelineStageFlags2::ALL_COMMANDS;
    // SAFETY: `cb` is in the initial state (fresh, reset, or its pool was reset).
    unsafe {
        raw.d
            .begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default().flags(flags))?
    };
    if s.lead {
        raw.barrier(cb, vk::AccessFlags2::MEMORY_WRITE, rw, all);
    }
    if s.body {
        body(cb);
    }
    if let Some((buf, value)) = s.fill {
        raw.barrier(cb, vk::AccessFlags2::MEMORY_WRITE, rw, all);
        // SAFETY: `buf` is a live 256-byte transfer-dst buffer.
        unsafe { raw.d.cmd_fill_buffer(cb, buf, 0, 4, value) };
    }
    if s.host {
        raw.barrier(
            cb,
            vk::AccessFlags2::MEMORY_WRITE,
            host,
            vk::PipelineStageFlags2::HOST,
        );
    }
    // SAFETY: `cb` is recording.
    unsafe { raw.d.end_command_buffer(cb)? };
    Ok(())
}

const NAMES: [&str; 11] = [
    "re-record, pool reset each time",
    "re-record, pool reset per 16",
    "re-record, vkResetCommandBuffer",
    "recorded once",
    "recorded once, timeline wait instead of leading barrier",
    "recorded once, no device->host barrier",
    "recorded once, dispatch only",
    "recorded once, timeline wait, no barriers",
    "empty command buffer",
    "no command buffer",
    "stream + host flag",
];

fn variants(
    raw: &Raw,
    sem: vk::Semaphore,
    pools: &mut Vec<vk::CommandPool>,
    flag: &HostBuf,
    body: Body,
    m: usize,
) -> BenchResult<()> {
    let d = &raw.d;
    let none = vk::CommandPoolCreateFlags::TRANSIENT;
    let (p1, c1) = pool(raw, pools, none, 1)?;
    let (p16, c16) = pool(raw, pools, none, 16)?;
    let resettable = none | vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER;
    let (_, cr) = pool(raw, pools, resettable, 1)?;
    let (_, st) = pool(raw, pools, none, 6)?;
    let (pf, cf) = pool(raw, pools, none, 1)?;
    let reuse = vk::CommandBufferUsageFlags::empty();
    let once = vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT;
    let streams = [
        FULL,
        Stream {
            lead: false,
            ..FULL
        },
        Stream {
            host: false,
            ..FULL
        },
        Stream {
            lead: false,
            host: false,
            ..FULL
        },
        Stream {
            lead: false,
            host: false,
            ..FULL
        },
        Stream {
            lead: false,
            body: false,
            host: false,
            fill: None,
        },
    ];
    for (cb, s) in st.iter().zip(streams) {
        record(raw, *cb, body, reuse, s)?;
    }
    let value = std::cell::Cell::new(0u64);
    // Submits `cbs` signalling the next timeline value (waiting for the previous one first
    // when `wait_prev`) and polls until it is reached; returns (value, submit time).
    let submit = |cbs: &[vk::CommandBuffer], wait_prev: bool| -> BenchResult<(u64, Instant)> {
        let v = value.get() + 1;
        value.set(v);
        let (signal, wait) = ([v], [v - 1]);
        let sems = [sem];
        let stages = [vk::PipelineStageFlags::ALL_COMMANDS];
        let mut tl = vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&signal);
        let mut info = vk::SubmitInfo::default()
            .command_buffers(cbs)
            .signal_semaphores(&sems);
        if wait_prev {
            tl = tl.wait_semaphore_values(&wait);
            info = info.wait_semaphores(&sems).wait_dst_stage_mask(&stages);
        }
        let info = info.push_next(&mut tl);
        let t0 = Instant::now();
        // SAFETY: the command buffers are executable and not pending (every earlier
        // submission was waited on); the timeline value increases.
        unsafe { d.queue_submit(raw.queue, &[info], vk::Fence::null())? };
        Ok((v, t0))
    };
    let poll = |v: u64| -> BenchResult<Instant> {
        // SAFETY: the semaphore belongs to this device.
        while unsafe { d.get_semaphore_counter_value(sem)? } < v {
            std::hint::spin_loop();
        }
        Ok(Instant::now())
    };
    let us = |a: Instant, b: Instant| (b - a).as_nanos() as f64 / 1e3;
    let mut times: [Vec<f64>; NAMES.len()] = Default::default();
    let mut to_flag = Vec::with_capacity(m);
    let ptr = flag.ptr as *const u32;
    let blocks = 10;
    // Round trips of the per-16 variant: its pool is reset after every 16th.
    let mut n16 = 0usize;
    for _ in 0..blocks {
        for (k, t) in times.iter_mut().enumerate() {
            for _ in 0..m.div_ceil(blocks) {
                let t0 = Instant::now();
                let end = match k {
                    0..=2 => {
                        let cb = match k {
                            0 => c1[0],
                            1 => c16[n16 % 16],
                            _ => cr[0],
                        };
                        record(raw, cb, body, once, FULL)?;
                        let (v, _) = submit(&[cb], false)?;
                        poll(v)?;
                        // SAFETY: every submission of these buffers was waited on.
                        unsafe {
                            match k {
                                0 => d.reset_command_pool(p1, Default::default())?,
                                1 => {
                                    n16 += 1;
                                    if n16.is_multiple_of(16) {
                                        d.reset_command_pool(p16, Default::default())?
                                    }
                                }
                                _ => d.reset_command_buffer(cb, Default::default())?,
                            }
                        }
                        Instant::now()
                    }
                    3..=8 => {
                        let (v, _) = submit(&[st[k - 3]], k == 4 || k == 7)?;
                        poll(v)?
                    }
                    9 => {
                        let (v, _) = submit(&[], false)?;
                        poll(v)?
                    }
                    _ => {
                        let next = (value.get() + 1) as u32;
                        let s = Stream {
                            fill: Some((flag.buf, next)),
                            ..FULL
                        };
                        record(raw, cf[0], body, once, s)?;
                        let (v, ts) = submit(&[cf[0]], false)?;
                        // SAFETY: `ptr` points into a live, mapped, host-coherent buffer
                        // the GPU writes meanwhile: a volatile read, only compared.
                        while unsafe { std::ptr::read_volatile(ptr) } != next {
                            std::hint::spin_loop();
                        }
                        to_flag.push(us(ts, Instant::now()));
                        let end = poll(v)?;
                        // SAFETY: waited on.
                        unsafe { d.reset_command_pool(pf, Default::default())? };
                        end
                    }
                };
                t.push(us(t0, end));
            }
        }
    }
    for (name, t) in NAMES.iter().zip(times.iter_mut()) {
        let extra = if name.starts_with("stream + host flag") {
            format!(
                " (from submit: the host saw the GPU's last write after {:.1} us)",
                median(&mut to_flag)
            )
        } else {
            String::new()
        };
        note(format!(
            "round-trip floor, {name}: median {:.1} us{extra}",
            median(t)
        ));
    }
    Ok(())
}
