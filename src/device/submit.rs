//! One-shot command execution: record, submit, wait.
//!
//! Each execution takes a recording context (command pool + command buffer + fence) from a
//! pool of them, so several threads can record and submit at once. Every command buffer
//! starts with a full memory barrier (earlier submissions' writes → this one's accesses)
//! and ends with one that makes device writes visible to the host (Vulkan spec §7.9
//! "Host Write Ordering Guarantees" and §7.1.3: a fence wait alone does not make device
//! writes visible to host reads).

use std::sync::Mutex;
use std::time::Duration;

use ash::vk;

use super::Device;
use crate::commands::Recorder;
use crate::error::{vk_err, Error, Result};

pub(crate) struct Context {
    pub pool: vk::CommandPool,
    pub cb: vk::CommandBuffer,
    pub fence: vk::Fence,
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
            unsafe {
                device.destroy_fence(c.fence, None);
                device.destroy_command_pool(c.pool, None);
            }
        }
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
        Ok(Context { pool, cb, fence })
    }

    fn give_context(&self, c: Context) {
        match self.shared.contexts.free.lock() {
            Ok(mut f) => f.push(c),
            Err(_) => {
                // SAFETY: the context is idle (its fence was waited on or never submitted).
                unsafe {
                    self.shared.raw.destroy_fence(c.fence, None);
                    self.shared.raw.destroy_command_pool(c.pool, None);
                }
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
        let ctx = self.take_context()?;
        let result = self.execute_in(&ctx, f);
        let d = &self.shared.raw;
        // SAFETY: the fence was waited on (or the buffer never submitted), so the pool's
        // command buffer is not pending and can be reset.
        let reset = unsafe {
            d.reset_command_pool(ctx.pool, vk::CommandPoolResetFlags::empty())
                .and_then(|_| d.reset_fences(&[ctx.fence]))
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
        ctx: &Context,
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
        // An open rendering scope is closed (its command buffer must not end inside one,
        // VUID-vkEndCommandBuffer-None-06281); leaving it open is the caller's error.
        let out = match (rec.close_rendering(), out) {
            (true, Ok(_)) => Err(Error::RenderingState {
                what: "execute ended inside a rendering scope; call end_rendering",
            }),
            (_, out) => out,
        };
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
        let submit = vk::SubmitInfo::default().command_buffers(&cbs);
        {
            let queue = self.shared.queue.lock().map_err(|_| Error::DeviceLost {
                call: "vkQueueSubmit (poisoned queue lock)",
            })?;
            // SAFETY: the queue is externally synchronized by the mutex; `cb` is executable.
            unsafe { d.queue_submit(*queue, &[submit], ctx.fence) }
                .map_err(vk_err("vkQueueSubmit"))?;
        }
        // Submitted: later submissions see the image layouts this one leaves behind.
        rec.commit_layouts();
        let timeout = EXECUTE_TIMEOUT.as_nanos() as u64;
        // SAFETY: the fence belongs to this device and was just submitted.
        match unsafe { d.wait_for_fences(&[ctx.fence], true, timeout) } {
            Ok(()) => Ok(out),
            Err(vk::Result::TIMEOUT) => Err(Error::Timeout {
                call: "vkWaitForFences",
                ms: EXECUTE_TIMEOUT.as_millis() as u64,
            }),
            Err(e) => Err(vk_err("vkWaitForFences")(e)),
        }
    }
}
