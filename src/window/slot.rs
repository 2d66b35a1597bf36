//! A frame slot of the presenter: the command pool and buffer a frame is recorded into,
//! the fence its submission signals, the semaphore its acquire signals, what those owe the
//! slot's next frame (`frame_state.rs`) and the timestamp pools its scopes wrote.

use std::sync::Arc;
use std::time::Duration;

use ash::vk;

use super::frame_state::SlotSync;
use crate::commands::TimedWork;
use crate::device::{FaultSite, Shared};
use crate::error::{vk_err, DeviceError, Result};

pub(super) struct Slot {
    pub pool: vk::CommandPool,
    pub cb: vk::CommandBuffer,
    pub fence: vk::Fence,
    pub acquired: vk::Semaphore,
    /// What `fence` and `acquired` owe the slot's next frame (`frame_state.rs`).
    pub sync: SlotSync,
    /// The timestamp pools the slot's last frame wrote (its scopes), kept until `fence`
    /// says the GPU is done with them: dropping them resets the pools and returns them to
    /// the free list (`device/timestamps.rs`), which must not happen while the frame runs.
    pub timestamps: Option<Arc<TimedWork>>,
}

impl Slot {
    /// A slot on the main queue's family: a transient pool with one primary command buffer,
    /// a fence created signalled (nothing to wait for) and a binary semaphore. Nothing leaks
    /// on failure. Errors: `KILN-E106`/`KILN-E104` from the first call that failed.
    pub fn new(shared: &Shared) -> Result<Slot> {
        let d = &shared.raw;
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(shared.main_queue().family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid create infos on this device; each object is destroyed by
        // `destroy` (or right here on failure).
        unsafe {
            let pool = d
                .create_command_pool(&info, None)
                .map_err(vk_err("vkCreateCommandPool"))?;
            let alloc = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            let cb = d.allocate_command_buffers(&alloc).map(|v| v[0]);
            let fence = d.create_fence(
                &vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED),
                None,
            );
            let acquired = d.create_semaphore(&vk::SemaphoreCreateInfo::default(), None);
            match (cb, fence, acquired) {
                (Ok(cb), Ok(fence), Ok(acquired)) => Ok(Slot {
                    pool,
                    cb,
                    fence,
                    acquired,
                    // Created signalled: nothing to wait for.
                    sync: SlotSync::default(),
                    timestamps: None,
                }),
                (cb, fence, acquired) => {
                    if let Ok(f) = fence {
                        d.destroy_fence(f, None);
                    }
                    if let Ok(s) = acquired {
                        d.destroy_semaphore(s, None);
                    }
                    d.destroy_command_pool(pool, None);
                    Err(vk_err(
                        "vkAllocateCommandBuffers/vkCreateFence/vkCreateSemaphore",
                    )(
                        // The first call that failed (one did: the arm above takes all Ok).
                        cb.err()
                            .or(fence.err())
                            .or(acquired.err())
                            .unwrap_or(vk::Result::ERROR_UNKNOWN),
                    ))
                }
            }
        }
    }

    /// Destroys the slot's objects (its command buffer with its pool).
    ///
    /// # Safety
    /// The device is idle (no submission of the slot pending) and `d` is the device the
    /// slot was created on.
    pub unsafe fn destroy(self, d: &ash::Device) {
        // SAFETY: the caller's contract: idle device, objects of `d`, each destroyed once
        // (`self` is consumed).
        unsafe {
            d.destroy_semaphore(self.acquired, None);
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
        }
    }
}

/// Waits (without a time limit) for a frame slot's fence. Errors: `KILN-E105` device lost
/// (naming the last submission).
pub(super) fn wait_fence(shared: &Shared, fence: vk::Fence) -> Result<(), DeviceError> {
    shared.check_lost("vkWaitForFences")?;
    // A fault injected here fails the wait as the driver would (the test-only injector).
    let waited = shared.inject(FaultSite::Wait).and_then(|()| {
        // SAFETY: the fence belongs to this device; a submitted batch signals it (callers
        // wait only for a fence whose batch was submitted).
        unsafe { shared.raw.wait_for_fences(&[fence], true, u64::MAX) }
    });
    waited.map_err(|e| {
        let e = shared
            .main_queue()
            .error("vkWaitForFences", Duration::MAX, e);
        shared.note_device_error(e)
    })
}
