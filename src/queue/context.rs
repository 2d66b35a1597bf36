//! Command contexts: one `VkCommandPool` with one primary command buffer each, per queue,
//! reused across submissions. A layer slot of the device.
//!
//! A context is taken for one recording, submitted, and goes back *pending* with the
//! timeline value of its last submission; once that value is complete it is reset and free
//! again (contexts are recycled when one is taken, so a round trip allocates nothing).

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use ash::vk;

use crate::device::{LayerSlot, Shared};
use crate::error::{vk_err, Error, Result};

/// A command pool and its one primary command buffer.
pub(crate) struct Context {
    pub pool: vk::CommandPool,
    pub cb: vk::CommandBuffer,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The contexts of one queue.
struct QueueContexts {
    family: u32,
    free: Mutex<Vec<Context>>,
    /// Submitted contexts with the value their last submission signals, sorted by value.
    pending: Mutex<VecDeque<(u64, Context)>>,
}

/// Every queue's contexts (indexed like the device's queues).
pub(crate) struct Contexts {
    queues: Vec<QueueContexts>,
}

impl Contexts {
    pub(super) fn new(shared: &Shared) -> Contexts {
        Contexts {
            queues: shared
                .queues
                .iter()
                .map(|q| QueueContexts {
                    family: q.family,
                    free: Mutex::default(),
                    pending: Mutex::default(),
                })
                .collect(),
        }
    }

    /// A free context of queue `queue`: a recycled one whose last submission completed, or a
    /// new one.
    pub(super) fn take(&self, shared: &Shared, queue: usize) -> Result<Context> {
        let Some(qc) = self.queues.get(queue) else {
            return Err(Error::Internal {
                what: "a command context was asked for a kiln queue the device does not have",
            });
        };
        if let Some(c) = lock(&qc.free).pop() {
            return Ok(c);
        }
        // Recycle what completed, one context at a time (no allocation).
        let done = shared.completed_value(queue);
        loop {
            let c = {
                let mut p = lock(&qc.pending);
                match p.front() {
                    Some((v, _)) if *v <= done => p.pop_front().map(|(_, c)| c),
                    _ => None,
                }
            };
            let Some(c) = c else { break };
            self.reset_and_free(shared, queue, c);
        }
        if let Some(c) = lock(&qc.free).pop() {
            return Ok(c);
        }
        create(&shared.raw, qc.family)
    }

    /// Gives back a context whose last submission signals `last` (0: never submitted): it
    /// is reset and free again once that value completes.
    pub(super) fn recycle(&self, shared: &Shared, queue: usize, last: u64, ctx: Context) {
        if last <= shared.completed_value(queue) {
            self.reset_and_free(shared, queue, ctx);
            return;
        }
        let Some(qc) = self.queues.get(queue) else {
            destroy(&shared.raw, ctx);
            return;
        };
        // Pending until `last` completes; the queue stays sorted.
        let mut p = lock(&qc.pending);
        let at = p.partition_point(|(v, _)| *v <= last);
        p.insert(at, (last, ctx));
    }

    /// Returns a context whose command buffer is not pending (never submitted, completed,
    /// or still recording) to the free list, reset. If the reset fails the context is
    /// destroyed instead of leaking its pool.
    pub(super) fn reset_and_free(&self, shared: &Shared, queue: usize, ctx: Context) {
        // Not while another thread destroys what the command buffer recorded (the
        // validation layer's race: `Shared::exclusive_invalidation`).
        let reset = shared.exclusive_invalidation(|| {
            // SAFETY: the caller guarantees the command buffer is not pending; its pool
            // was created with RESET_COMMAND_BUFFER.
            unsafe {
                shared
                    .raw
                    .reset_command_buffer(ctx.cb, vk::CommandBufferResetFlags::empty())
            }
        });
        match self.queues.get(queue) {
            Some(qc) if reset.is_ok() => lock(&qc.free).push(ctx),
            _ => destroy(&shared.raw, ctx),
        }
    }
}

/// A new context on queue family `family`.
fn create(d: &ash::Device, family: u32) -> Result<Context> {
    let info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(family)
        // One command buffer per pool, reset on its own after each use:
        // vkResetCommandBuffer measured ~0.6 µs cheaper per round trip than
        // vkResetCommandPool on a GPU driver, and no slower on lavapipe.
        .flags(
            vk::CommandPoolCreateFlags::TRANSIENT
                | vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER,
        );
    // SAFETY: valid create info for this device's queue family.
    let pool =
        unsafe { d.create_command_pool(&info, None) }.map_err(vk_err("vkCreateCommandPool"))?;
    let alloc = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(1);
    // SAFETY: `pool` was just created on this device.
    match unsafe { d.allocate_command_buffers(&alloc) } {
        Ok(v) => Ok(Context { pool, cb: v[0] }),
        Err(e) => {
            // SAFETY: the pool has no command buffers in use.
            unsafe { d.destroy_command_pool(pool, None) };
            Err(vk_err("vkAllocateCommandBuffers")(e))
        }
    }
}

/// Destroys a context none of whose work is pending.
fn destroy(d: &ash::Device, ctx: Context) {
    // SAFETY: the caller guarantees nothing of the context is pending; destroying the pool
    // frees its command buffer.
    unsafe { d.destroy_command_pool(ctx.pool, None) };
}

impl LayerSlot for Contexts {
    fn teardown(&mut self, shared: &Shared) {
        for qc in &self.queues {
            let mut all: Vec<Context> = lock(&qc.free).drain(..).collect();
            all.extend(lock(&qc.pending).drain(..).map(|(_, c)| c));
            for c in all {
                // The device is idle (teardown waits), so no context is in use.
                destroy(&shared.raw, c);
            }
        }
    }
}
