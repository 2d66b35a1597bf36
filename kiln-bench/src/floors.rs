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

/// The command buffers of the variants, the timeline they signal and the flag buffer.
struct Floor<'a> {
    raw: &'a Raw,
    sem: vk::Semaphore,
    /// The last timeline value submitted.
    value: u64,
    body: Body<'a>,
    flag: &'a HostBuf,
    /// Pool and buffer re-recorded each time; pool and 16 buffers reset per 16; a
    /// resettable buffer; the six streams recorded once; the flag stream's pool and buffer.
    p1: (vk::CommandPool, vk::CommandBuffer),
    p16: (vk::CommandPool, Vec<vk::CommandBuffer>),
    resettable: vk::CommandBuffer,
    once: Vec<vk::CommandBuffer>,
    pf: (vk::CommandPool, vk::CommandBuffer),
    /// Round trips of the per-16 variant: its pool is reset after every 16th.
    n16: usize,
    /// The flag variant's time from submission to the host seeing the GPU's write (µs).
    to_flag: Vec<f64>,
}

fn variants(
    raw: &Raw,
    sem: vk::Semaphore,
    pools: &mut Vec<vk::CommandPool>,
    flag: &HostBuf,
    body: Body,
    m: usize,
) -> BenchResult<()> {
    let none = vk::CommandPoolCreateFlags::TRANSIENT;
    let (p1, c1) = pool(raw, pools, none, 1)?;
    let p16 = pool(raw, pools, none, 16)?;
    let resettable = none | vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER;
    let (_, cr) = pool(raw, pools, resettable, 1)?;
    let (_, st) = pool(raw, pools, none, 6)?;
    let (pf, cf) = pool(raw, pools, none, 1)?;
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
        record(raw, *cb, body, vk::CommandBufferUsageFlags::empty(), s)?;
    }
    let mut f = Floor {
        raw,
        sem,
        value: 0,
        body,
        flag,
        p1: (p1, c1[0]),
        p16,
        resettable: cr[0],
        once: st,
        pf: (pf, cf[0]),
        n16: 0,
        to_flag: Vec::with_capacity(m),
    };
    let mut times: [Vec<f64>; NAMES.len()] = Default::default();
    let blocks = 10;
    for _ in 0..blocks {
        for (k, t) in times.iter_mut().enumerate() {
            for _ in 0..m.div_ceil(blocks) {
                let t0 = Instant::now();
                let end = match k {
                    0..=2 => f.re_record(k)?,
                    3..=8 => {
                        let v = f.submit(&[f.once[k - 3]], k == 4 || k == 7)?.0;
                        f.poll(v)?
                    }
                    9 => {
                        let v = f.submit(&[], false)?.0;
                        f.poll(v)?
                    }
                    _ => f.host_flag()?,
                };
                t.push(us(t0, end));
            }
        }
    }
    for (name, t) in NAMES.iter().zip(times.iter_mut()) {
        let extra = if name.starts_with("stream + host flag") {
            format!(
                " (from submit: the host saw the GPU's last write after {:.1} us)",
                median(&mut f.to_flag)
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

/// Microseconds from `a` to `b`.
fn us(a: Instant, b: Instant) -> f64 {
    (b - a).as_nanos() as f64 / 1e3
}

impl Floor<'_> {
    /// Submits `cbs` signalling the next timeline value (waiting for the previous one first
    /// when `wait_prev`); returns (value, submit time).
    fn submit(
        &mut self,
        cbs: &[vk::CommandBuffer],
        wait_prev: bool,
    ) -> BenchResult<(u64, Instant)> {
        let v = self.value + 1;
        self.value = v;
        let (signal, wait) = ([v], [v - 1]);
        let sems = [self.sem];
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
        unsafe {
            self.raw
                .d
                .queue_submit(self.raw.queue, &[info], vk::Fence::null())?
        };
        Ok((v, t0))
    }

    /// Polls the timeline until it reaches `v`; returns when.
    fn poll(&self, v: u64) -> BenchResult<Instant> {
        // SAFETY: the semaphore belongs to this device.
        while unsafe { self.raw.d.get_semaphore_counter_value(self.sem)? } < v {
            std::hint::spin_loop();
        }
        Ok(Instant::now())
    }

    /// Variants 0..=2: the full stream recorded again (into a pool reset each time, one of
    /// 16 reset per 16, a resettable buffer), submitted and waited for; returns when done.
    fn re_record(&mut self, k: usize) -> BenchResult<Instant> {
        let cb = match k {
            0 => self.p1.1,
            1 => self.p16.1[self.n16 % 16],
            _ => self.resettable,
        };
        let once = vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT;
        record(self.raw, cb, self.body, once, FULL)?;
        let (v, _) = self.submit(&[cb], false)?;
        self.poll(v)?;
        let d = &self.raw.d;
        // SAFETY: every submission of these buffers was waited on.
        unsafe {
            match k {
                0 => d.reset_command_pool(self.p1.0, Default::default())?,
                1 => {
                    self.n16 += 1;
                    if self.n16.is_multiple_of(16) {
                        d.reset_command_pool(self.p16.0, Default::default())?
                    }
                }
                _ => d.reset_command_buffer(cb, Default::default())?,
            }
        }
        Ok(Instant::now())
    }

    /// The last variant: the full stream ending in a fill of the flag buffer with the next
    /// timeline value, the host spinning on the flag (noted in `to_flag`) and then on the
    /// timeline; returns when the timeline was reached.
    fn host_flag(&mut self) -> BenchResult<Instant> {
        let next = (self.value + 1) as u32;
        let s = Stream {
            fill: Some((self.flag.buf, next)),
            ..FULL
        };
        let once = vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT;
        record(self.raw, self.pf.1, self.body, once, s)?;
        let (v, ts) = self.submit(&[self.pf.1], false)?;
        let ptr = self.flag.ptr as *const u32;
        // SAFETY: `ptr` points into a live, mapped, host-coherent buffer the GPU writes
        // meanwhile: a volatile read, only compared.
        while unsafe { std::ptr::read_volatile(ptr) } != next {
            std::hint::spin_loop();
        }
        self.to_flag.push(us(ts, Instant::now()));
        let end = self.poll(v)?;
        // SAFETY: waited on.
        unsafe {
            self.raw
                .d
                .reset_command_pool(self.pf.0, Default::default())?
        };
        Ok(end)
    }
}
