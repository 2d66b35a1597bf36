//! Row 2 diagnostics: how low can a round trip go on this driver, whatever the runtime?
//!
//! Every variant submits to the same queue, signals a timeline semaphore and polls its
//! counter (the fastest wait measured on NVIDIA), so the variants differ only in what the
//! submission carries and how the command buffer is produced:
//!
//! - `re-record, pool reset per 16`: record every time, but reset the command pool only
//!   once every 16 round trips (16 command buffers from one pool);
//! - `recorded once`: the same command buffer (the round-trip stream) resubmitted;
//! - `empty command buffer`: begin + end, recorded once;
//! - `no command buffer`: a `vkQueueSubmit` that only signals the semaphore;
//! - `stream + host flag`: the stream, then a `vkCmdFillBuffer` of the round's value
//!   into a host-visible word; the note gives the time until the host sees that word and
//!   the time until it sees the timeline value, which splits "the GPU finished" from "the
//!   driver signalled".
//!
//! Printed as notes; nothing here is a row or a target.

use std::time::Instant;

use ash::vk;

use super::raw::Raw;
use super::{median, note, BenchResult};

/// Records the round trip's dispatch (bind pipeline, bind set, push constants, dispatch)
/// into a recording command buffer.
pub type Body<'a> = &'a dyn Fn(vk::CommandBuffer);

struct Objects {
    sem: vk::Semaphore,
    pool: vk::CommandPool,
    cbs: Vec<vk::CommandBuffer>,
}

/// Runs the variants `m` times each (timeline semaphores required; skipped otherwise).
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
    let pool_info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(raw.family)
        .flags(vk::CommandPoolCreateFlags::TRANSIENT);
    // SAFETY: plain creates on the live device; destroyed at the end of this function after
    // the device is idle.
    let o = unsafe {
        let sem = d.create_semaphore(&info, None)?;
        let pool = d.create_command_pool(&pool_info, None)?;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(16);
        let cbs = d.allocate_command_buffers(&alloc)?;
        Objects { sem, pool, cbs }
    };
    let flag = raw.host_buffer(256, false)?;
    let out = variants(raw, &o, flag.buf, flag.ptr as *const u32, body, m);
    // SAFETY: waits for everything submitted above, then destroys what this function made.
    unsafe {
        let _ = d.queue_wait_idle(raw.queue);
        d.destroy_command_pool(o.pool, None);
        d.destroy_semaphore(o.sem, None);
    }
    raw.drop_host_buffer(flag);
    out
}

/// Full memory barrier (all commands → `dst_stage`), as the round-trip stream has.
fn barrier(raw: &Raw, cb: vk::CommandBuffer, dst: vk::AccessFlags, stage: vk::PipelineStageFlags) {
    let b = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(dst);
    // SAFETY: `cb` is recording; the barrier is a local.
    unsafe {
        raw.d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::ALL_COMMANDS,
            stage,
            vk::DependencyFlags::empty(),
            &[b],
            &[],
            &[],
        )
    }
}

/// Records the round-trip stream (leading full barrier, body, device→host barrier), and
/// `fill` (buffer, value) after one more barrier when given.
fn record(
    raw: &Raw,
    cb: vk::CommandBuffer,
    body: Body,
    flags: vk::CommandBufferUsageFlags,
    fill: Option<(vk::Buffer, u32)>,
) -> BenchResult<()> {
    let rw = vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE;
    let host = vk::AccessFlags::HOST_READ | vk::AccessFlags::HOST_WRITE;
    // SAFETY: `cb` is in the initial state (its pool was reset or it is fresh).
    unsafe {
        raw.d
            .begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default().flags(flags))?
    };
    barrier(raw, cb, rw, vk::PipelineStageFlags::ALL_COMMANDS);
    body(cb);
    if let Some((buf, value)) = fill {
        barrier(raw, cb, rw, vk::PipelineStageFlags::ALL_COMMANDS);
        // SAFETY: `buf` is a live 256-byte transfer-dst buffer.
        unsafe { raw.d.cmd_fill_buffer(cb, buf, 0, 4, value) };
    }
    barrier(raw, cb, host, vk::PipelineStageFlags::HOST);
    // SAFETY: `cb` is recording.
    unsafe { raw.d.end_command_buffer(cb)? };
    Ok(())
}

fn variants(
    raw: &Raw,
    o: &Objects,
    flag_buf: vk::Buffer,
    flag: *const u32,
    body: Body,
    m: usize,
) -> BenchResult<()> {
    let d = &raw.d;
    let value = std::cell::Cell::new(0u64);
    // Submits `cbs` signalling the next timeline value and polls until it is reached;
    // returns (submit µs, wait µs).
    let submit = |cbs: &[vk::CommandBuffer]| -> BenchResult<(u64, Instant, Instant)> {
        value.set(value.get() + 1);
        let values = [value.get()];
        let sems = [o.sem];
        let mut tl = vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
        let info = vk::SubmitInfo::default()
            .command_buffers(cbs)
            .signal_semaphores(&sems)
            .push_next(&mut tl);
        let t0 = Instant::now();
        // SAFETY: the command buffers are executable and not pending (every earlier
        // submission was waited on); the timeline value increases.
        unsafe { d.queue_submit(raw.queue, &[info], vk::Fence::null())? };
        Ok((value.get(), t0, Instant::now()))
    };
    let poll = |v: u64| -> BenchResult<Instant> {
        // SAFETY: the semaphore belongs to this device.
        while unsafe { d.get_semaphore_counter_value(o.sem)? } < v {
            std::hint::spin_loop();
        }
        Ok(Instant::now())
    };
    let us = |a: Instant, b: Instant| (b - a).as_nanos() as f64 / 1e3;
    let report = |how: &str, total: &mut Vec<f64>, extra: String| {
        note(format!(
            "round-trip floor, {how}: median {:.1} us{extra}",
            median(total)
        ));
    };

    // Re-record, pool reset once per 16 command buffers.
    let mut total = Vec::with_capacity(m);
    let once = vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT;
    for i in 0..m {
        let cb = o.cbs[i % 16];
        let t = Instant::now();
        record(raw, cb, body, once, None)?;
        let (v, _, _) = submit(&[cb])?;
        poll(v)?;
        if i % 16 == 15 {
            // SAFETY: every command buffer of the pool was waited on.
            unsafe { d.reset_command_pool(o.pool, vk::CommandPoolResetFlags::empty())? };
        }
        total.push(us(t, Instant::now()));
    }
    report("re-record, pool reset per 16", &mut total, String::new());
    // SAFETY: all waited on.
    unsafe { d.reset_command_pool(o.pool, vk::CommandPoolResetFlags::empty())? };

    // Recorded once, resubmitted.
    let cb = o.cbs[0];
    let reuse = vk::CommandBufferUsageFlags::empty();
    record(raw, cb, body, reuse, None)?;
    let (mut total, mut subs) = (Vec::with_capacity(m), Vec::with_capacity(m));
    for _ in 0..m {
        let (v, t0, t1) = submit(&[cb])?;
        let t2 = poll(v)?;
        total.push(us(t0, t2));
        subs.push(us(t0, t1));
    }
    let s = format!(" (submit {:.1})", median(&mut subs));
    report("recorded once", &mut total, s);

    // Empty command buffer, recorded once.
    let empty = o.cbs[1];
    // SAFETY: `empty` is fresh; begin + end only.
    unsafe {
        d.begin_command_buffer(empty, &vk::CommandBufferBeginInfo::default())?;
        d.end_command_buffer(empty)?;
    }
    let mut total = Vec::with_capacity(m);
    for _ in 0..m {
        let (v, t0, _) = submit(&[empty])?;
        total.push(us(t0, poll(v)?));
    }
    report("empty command buffer", &mut total, String::new());

    // No command buffer at all: the submission only signals.
    let mut total = Vec::with_capacity(m);
    for _ in 0..m {
        let (v, t0, _) = submit(&[])?;
        total.push(us(t0, poll(v)?));
    }
    report("no command buffer", &mut total, String::new());

    // Stream + host flag: when does the host see the GPU's last write, and when the
    // timeline value? Re-recorded per round to carry the new value; timing starts at the
    // submit.
    let (mut to_flag, mut to_sem) = (Vec::with_capacity(m), Vec::with_capacity(m));
    for _ in 0..m {
        let next = (value.get() + 1) as u32;
        // SAFETY: the last submission of `cb` was waited on; resetting its pool (the other
        // buffers of the pool are not pending either) returns it to the initial state.
        unsafe { d.reset_command_pool(o.pool, vk::CommandPoolResetFlags::empty())? };
        record(raw, cb, body, once, Some((flag_buf, next)))?;
        let (v, t0, _) = submit(&[cb])?;
        // SAFETY: `flag` points into a live, mapped, host-coherent buffer; the GPU writes the
        // word while we read it, so the read is volatile and the value only compared.
        while unsafe { std::ptr::read_volatile(flag) } != next {
            std::hint::spin_loop();
        }
        let tf = Instant::now();
        let ts = poll(v)?;
        to_flag.push(us(t0, tf));
        to_sem.push(us(t0, ts));
    }
    let s = format!(
        "; the host saw the GPU's last write after {:.1} us",
        median(&mut to_flag)
    );
    report("stream + host flag (timeline seen)", &mut to_sem, s);
    Ok(())
}
