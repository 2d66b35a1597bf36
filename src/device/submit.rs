//! One-shot command execution: record, submit, wait.
//!
//! Each execution takes a recording context (command pool + command buffer + fence) from a
//! pool of them, so several threads can record and submit at once. Every command buffer
//! starts with a full memory barrier (earlier submissions' writes → this one's accesses)
//! and ends with one that makes device writes visible to the host (Vulkan spec §7.9
//! "Host Write Ordering Guarantees" and §7.1.3: a fence wait alone does not make device
//! writes visible to host reads).
//!
//! Waiting polls the fence for up to `KILN_SPIN_US` microseconds (default
//! [`DEFAULT_SPIN`] on GPUs, 0 on CPU devices) before blocking in `vkWaitForFences`: a
//! short job then returns as soon as it is done instead of after the blocking wait's wake-up
//! latency, at the price of up to that much CPU time per call. `KILN_WAIT=timeline` signals
//! and polls a timeline semaphore (Vulkan 1.2 `timelineSemaphore`) instead of a fence,
//! which also saves the `vkResetFences` call.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use ash::vk;

use super::Device;
use crate::commands::Recorder;
use crate::error::{vk_err, Error, Result};

pub(crate) struct Context {
    pub pool: vk::CommandPool,
    pub cb: vk::CommandBuffer,
    pub fence: vk::Fence,
    /// A timeline semaphore signalled instead of the fence (`KILN_WAIT=timeline`), or null.
    pub timeline: vk::Semaphore,
    /// The value the last submission signals on `timeline`.
    pub value: u64,
}

impl Context {
    /// Destroys the context's objects.
    ///
    /// # Safety
    /// Nothing of the context may be pending on the GPU.
    unsafe fn destroy(self, device: &ash::Device) {
        // SAFETY: the caller guarantees the objects are idle.
        unsafe {
            if self.timeline != vk::Semaphore::null() {
                device.destroy_semaphore(self.timeline, None);
            }
            device.destroy_fence(self.fence, None);
            device.destroy_command_pool(self.pool, None);
        }
    }
}

/// Whether `KILN_WAIT=timeline` asks for timeline-semaphore waits instead of fences.
fn timeline_wanted() -> bool {
    static ENV: OnceLock<bool> = OnceLock::new();
    *ENV.get_or_init(|| std::env::var("KILN_WAIT").is_ok_and(|v| v.trim() == "timeline"))
}

#[derive(Default)]
pub(crate) struct ContextPool {
    free: Mutex<Vec<Context>>,
}

impl ContextPool {
    pub fn destroy(&self, device: &ash::Device) {
        let mut free = match self.free.lock() {
            Ok(f) => f,
            Err(p) => p.into_inner(),
        };
        for c in free.drain(..) {
            // SAFETY: the device is idle (Shared::drop waits) and each context is unused.
            unsafe { c.destroy(device) };
        }
    }
}

/// Default time [`Device::execute`] polls the fence (`vkGetFenceStatus`) before blocking in
/// `vkWaitForFences`, on devices that are not the CPU itself.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(200);

/// The fence-polling budget: `KILN_SPIN_US` (microseconds; 0 disables) or
/// [`DEFAULT_SPIN`]; 0 on CPU devices (lavapipe), where polling would steal the core that
/// runs the shader.
pub(crate) fn spin_budget(props: &vk::PhysicalDeviceProperties) -> Duration {
    static ENV: OnceLock<Option<u64>> = OnceLock::new();
    let env = ENV.get_or_init(|| {
        std::env::var("KILN_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse().ok())
    });
    match env {
        Some(us) => Duration::from_micros(*us),
        None if props.device_type == vk::PhysicalDeviceType::CPU => Duration::ZERO,
        None => DEFAULT_SPIN,
    }
}

/// How long [`Device::execute`] waits for the GPU before returning `KILN-E108`.
pub const EXECUTE_TIMEOUT: Duration = Duration::from_secs(120);

impl Device {
    fn take_context(&self) -> Result<Context> {
        if let Some(c) = self
            .shared
            .contexts
            .free
            .lock()
            .ok()
            .and_then(|mut f| f.pop())
        {
            return Ok(c);
        }
        let d = &self.shared.raw;
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(self.shared.queue_family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid create info for this device's queue family.
        let pool =
            unsafe { d.create_command_pool(&info, None) }.map_err(vk_err("vkCreateCommandPool"))?;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: `pool` was just created on this device.
        let cb = match unsafe { d.allocate_command_buffers(&alloc) } {
            Ok(v) => v[0],
            Err(e) => {
                // SAFETY: the pool has no command buffers in use.
                unsafe { d.destroy_command_pool(pool, None) };
                return Err(vk_err("vkAllocateCommandBuffers")(e));
            }
        };
        // SAFETY: plain create.
        let fence = match unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) } {
            Ok(f) => f,
            Err(e) => {
                // SAFETY: `cb` was never submitted.
                unsafe { d.destroy_command_pool(pool, None) };
                return Err(vk_err("vkCreateFence")(e));
            }
        };
        let mut ctx = Context {
            pool,
            cb,
            fence,
            timeline: vk::Semaphore::null(),
            value: 0,
        };
        if timeline_wanted() && self.shared.features.timeline_semaphore {
            let mut ty = vk::SemaphoreTypeCreateInfo::default()
                .semaphore_type(vk::SemaphoreType::TIMELINE)
                .initial_value(0);
            let info = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
            // SAFETY: the device enabled timelineSemaphore (kiln's features say so).
            match unsafe { d.create_semaphore(&info, None) } {
                Ok(s) => ctx.timeline = s,
                Err(e) => {
                    // SAFETY: nothing of the context was submitted.
                    unsafe { ctx.destroy(d) };
                    return Err(vk_err("vkCreateSemaphore")(e));
                }
            }
        }
        Ok(ctx)
    }

    fn give_context(&self, c: Context) {
        match self.shared.contexts.free.lock() {
            Ok(mut f) => f.push(c),
            Err(_) => {
                // SAFETY: the context is idle (its fence was waited on or never submitted).
                unsafe { c.destroy(&self.shared.raw) };
            }
        }
    }

    /// Records commands with `f`, submits them to the queue and waits until the GPU has
    /// finished; device writes are then visible to host reads of mapped memory.
    ///
    /// Everything the closure binds is borrowed for the whole call, so nothing it uses can
    /// be dropped while the GPU still reads it.
    ///
    /// Errors: whatever `f` returns (nothing is submitted then), `KILN-E105` device lost,
    /// `KILN-E108` the GPU did not finish within [`EXECUTE_TIMEOUT`].
    pub fn execute<'a, R>(&'a self, f: impl FnOnce(&mut Recorder<'a>) -> Result<R>) -> Result<R> {
        let mut ctx = self.take_context()?;
        let result = self.execute_in(&mut ctx, f);
        let d = &self.shared.raw;
        // SAFETY: the fence was waited on (or the buffer never submitted), so the pool's
        // command buffer is not pending and can be reset.
        let reset = unsafe {
            d.reset_command_pool(ctx.pool, vk::CommandPoolResetFlags::empty())
                .and_then(|_| {
                    if ctx.timeline == vk::Semaphore::null() {
                        d.reset_fences(&[ctx.fence])
                    } else {
                        Ok(())
                    }
                })
        };
        match (&result, reset) {
            (Err(Error::DeviceLost { .. } | Error::Timeout { .. }), _) => {
                // The fence may still be pending: leak the context rather than free
                // objects the GPU might still use.
            }
            (_, Ok(())) => self.give_context(ctx),
            (_, Err(e)) => {
                log::warn!("kiln: resetting a command context failed: {e:?}");
            }
        }
        result
    }

    fn execute_in<'a, R>(
        &'a self,
        ctx: &mut Context,
        f: impl FnOnce(&mut Recorder<'a>) -> Result<R>,
    ) -> Result<R> {
        let d = &self.shared.raw;
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: `cb` is in the initial state (fresh or its pool was reset).
        unsafe { d.begin_command_buffer(ctx.cb, &begin) }
            .map_err(vk_err("vkBeginCommandBuffer"))?;
        let mut rec = Recorder::new(&self.shared, ctx.cb);
        rec.full_barrier();
        let out = f(&mut rec);
        let out = match out {
            Ok(v) => v,
            Err(e) => {
                // SAFETY: ending a recording buffer; it is discarded by the pool reset.
                let _ = unsafe { d.end_command_buffer(ctx.cb) };
                return Err(e);
            }
        };
        let to_host = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ | vk::AccessFlags::HOST_WRITE);
        // SAFETY: `cb` is recording; the barrier has no pointers besides the local.
        unsafe {
            d.cmd_pipeline_barrier(
                ctx.cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[to_host],
                &[],
                &[],
            );
            d.end_command_buffer(ctx.cb)
        }
        .map_err(vk_err("vkEndCommandBuffer"))?;
        let cbs = [ctx.cb];
        let timeline = ctx.timeline != vk::Semaphore::null();
        let signal = [ctx.timeline];
        let values = [ctx.value + 1];
        let mut tl = vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
        let mut submit = vk::SubmitInfo::default().command_buffers(&cbs);
        let fence = if timeline {
            submit = submit.signal_semaphores(&signal).push_next(&mut tl);
            vk::Fence::null()
        } else {
            ctx.fence
        };
        {
            let queue = self.shared.queue.lock().map_err(|_| Error::DeviceLost {
                call: "vkQueueSubmit (poisoned queue lock)",
            })?;
            // SAFETY: the queue is externally synchronized by the mutex; `cb` is executable.
            unsafe { d.queue_submit(*queue, &[submit], fence) }.map_err(vk_err("vkQueueSubmit"))?;
        }
        ctx.value += 1;
        let value = ctx.value;
        // SAFETY (both): the fence / semaphore belongs to this device and was just
        // submitted to be signalled.
        let done = || unsafe {
            if timeline {
                d.get_semaphore_counter_value(ctx.timeline)
                    .map(|v| v >= value)
                    .map_err(vk_err("vkGetSemaphoreCounterValue"))
            } else {
                d.get_fence_status(ctx.fence)
                    .map_err(vk_err("vkGetFenceStatus"))
            }
        };
        // Fast path: a short GPU job finishes in microseconds, sooner than a blocking
        // wait's wake-up (interrupt + scheduler), so poll the fence for a bounded time first.
        let spin = spin_budget(&self.shared.properties);
        if !spin.is_zero() {
            let start = Instant::now();
            loop {
                if done()? {
                    return Ok(out);
                }
                if start.elapsed() >= spin {
                    break;
                }
                std::hint::spin_loop();
            }
        }
        let timeout = EXECUTE_TIMEOUT.as_nanos() as u64;
        let sems = [ctx.timeline];
        let wait_info = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&values);
        let call = if timeline {
            "vkWaitSemaphores"
        } else {
            "vkWaitForFences"
        };
        // SAFETY: the fence / semaphore belongs to this device and was just submitted.
        let waited = unsafe {
            if timeline {
                d.wait_semaphores(&wait_info, timeout)
            } else {
                d.wait_for_fences(&[ctx.fence], true, timeout)
            }
        };
        match waited {
            Ok(()) => Ok(out),
            Err(vk::Result::TIMEOUT) => Err(Error::Timeout {
                call,
                ms: EXECUTE_TIMEOUT.as_millis() as u64,
            }),
            Err(e) => Err(vk_err(call)(e)),
        }
    }
}
