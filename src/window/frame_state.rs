//! The presenter's state as plain data, unit-tested without a display (like
//! `SwapchainImageSemaphores` in wgpu-hal): per frame slot, what its fence and acquire
//! semaphore owe the next frame ([`SlotSync`]); per presenter, when the swapchain is
//! recreated ([`needs_recreate`], [`marks_stale`]) and with what parameters
//! ([`SwapchainChoice`]).
//!
//! A slot's two flags:
//! - `fence_pending`: a batch that signals the slot's fence was submitted and not waited
//!   for since. A frame waits for it before reusing the slot; after a failed submission
//!   the fence was reset and nothing signals it, so it must not be waited for (it would
//!   wait forever).
//! - `acquired_stale`: a failed frame left the acquire semaphore signalled with no batch to
//!   wait for it; the next frame first submits a batch that waits for it
//!   (VUID-vkAcquireNextImageKHR-semaphore-01779: it must be unsignalled when the slot
//!   acquires again).
//!
//! The swapchain is recreated before a frame when it is stale, missing, or of another size
//! than the window; every frame that acquired (or tried to) and did not end
//! [`Presented`](super::FrameStatus::Presented) marks it stale (the acquired image is
//! released by the recreation).

use ash::vk;

use super::FrameStatus;
use crate::error::Result;

/// What one frame slot's fence and acquire semaphore owe the next frame (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SlotSync {
    fence_pending: bool,
    acquired_stale: bool,
}

impl SlotSync {
    /// The next frame of the slot waits for its fence first.
    pub(super) fn must_wait(&self) -> bool {
        self.fence_pending
    }

    /// The slot's acquire semaphore is signalled with nothing waiting for it: a batch must
    /// consume it before the slot acquires again (or the swapchain is recreated).
    pub(super) fn needs_discard(&self) -> bool {
        self.acquired_stale
    }

    /// The fence was reset (after its wait, or after a failed submission).
    pub(super) fn fence_reset(&mut self) {
        self.fence_pending = false;
    }

    /// An image was acquired into the slot's semaphore and the frame failed before any
    /// batch waited for it.
    pub(super) fn acquire_unconsumed(&mut self) {
        self.acquired_stale = true;
    }

    /// A batch that waits for the acquire semaphore and signals the fence was submitted
    /// (the frame, or its discard batch): `submitted`, or its submission failed.
    pub(super) fn batch_submitted(&mut self, submitted: bool) {
        self.fence_pending = submitted;
        self.acquired_stale = !submitted;
    }
}

/// Whether the swapchain is recreated before a frame for a window of `window_size`: it is
/// `stale`, there is none (`has_swapchain` false), or its `extent` differs.
pub(super) fn needs_recreate(
    stale: bool,
    has_swapchain: bool,
    extent: vk::Extent2D,
    window_size: [u32; 2],
) -> bool {
    stale || !has_swapchain || [extent.width, extent.height] != window_size
}

/// Whether a frame that acquired (or tried to) and ended with `outcome` leaves the
/// swapchain stale: every outcome but `Presented`.
pub(super) fn marks_stale(outcome: &Result<FrameStatus>) -> bool {
    !matches!(outcome, Ok(FrameStatus::Presented))
}

/// The swapchain's parameters chosen from the surface's capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SwapchainChoice {
    /// `minImageCount`: one more than the surface's minimum, within its maximum.
    pub count: u32,
    /// COLOR_ATTACHMENT, and TRANSFER_SRC where supported (captures).
    pub usage: vk::ImageUsageFlags,
    /// OPAQUE where supported, else INHERIT.
    pub alpha: vk::CompositeAlphaFlagsKHR,
    /// FIFO with `vsync`, else MAILBOX, else IMMEDIATE, else FIFO.
    pub mode: vk::PresentModeKHR,
}

impl SwapchainChoice {
    /// The extent for a window of `size`: the surface's current extent where it has one,
    /// else `size` within the surface's bounds.
    pub(super) fn extent(caps: &vk::SurfaceCapabilitiesKHR, size: [u32; 2]) -> vk::Extent2D {
        if caps.current_extent.width != u32::MAX {
            caps.current_extent
        } else {
            vk::Extent2D {
                width: size[0].clamp(caps.min_image_extent.width, caps.max_image_extent.width),
                height: size[1].clamp(caps.min_image_extent.height, caps.max_image_extent.height),
            }
        }
    }

    /// The choice for a surface with `caps` and present `modes`.
    pub(super) fn new(
        caps: &vk::SurfaceCapabilitiesKHR,
        modes: &[vk::PresentModeKHR],
        vsync: bool,
    ) -> SwapchainChoice {
        let mode = if vsync {
            vk::PresentModeKHR::FIFO
        } else {
            [vk::PresentModeKHR::MAILBOX, vk::PresentModeKHR::IMMEDIATE]
                .into_iter()
                .find(|m| modes.contains(m))
                .unwrap_or(vk::PresentModeKHR::FIFO)
        };
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        let mut usage = vk::ImageUsageFlags::COLOR_ATTACHMENT;
        if caps
            .supported_usage_flags
            .contains(vk::ImageUsageFlags::TRANSFER_SRC)
        {
            usage |= vk::ImageUsageFlags::TRANSFER_SRC;
        }
        let alpha = if caps
            .supported_composite_alpha
            .contains(vk::CompositeAlphaFlagsKHR::OPAQUE)
        {
            vk::CompositeAlphaFlagsKHR::OPAQUE
        } else {
            vk::CompositeAlphaFlagsKHR::INHERIT
        };
        SwapchainChoice {
            count,
            usage,
            alpha,
            mode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn a_slot_through_a_good_frame_and_a_failed_one() {
        // Created: the fence is signalled, nothing to wait for or discard.
        let mut s = SlotSync::default();
        assert!(!s.must_wait() && !s.needs_discard());
        // A good frame: the fence is reset, the frame submitted.
        s.fence_reset();
        s.batch_submitted(true);
        assert!(s.must_wait() && !s.needs_discard());
        // The next frame waited, reset the fence, then its recording failed: a discard
        // batch consumes the acquire; it was submitted, so the fence is pending again.
        s.fence_reset();
        assert!(!s.must_wait());
        s.batch_submitted(true);
        assert!(s.must_wait() && !s.needs_discard());
        // A failure before the fence reset (the pool reset failed): the acquire is owed,
        // the fence still pending.
        s.acquire_unconsumed();
        assert!(s.must_wait() && s.needs_discard());
        // The discard batch could not be submitted: nothing signals the fence.
        s.fence_reset();
        s.batch_submitted(false);
        assert!(!s.must_wait() && s.needs_discard());
        // The next frame's discard succeeds.
        s.batch_submitted(true);
        assert_eq!(
            s,
            SlotSync {
                fence_pending: true,
                acquired_stale: false
            }
        );
    }

    #[test]
    fn the_swapchain_is_recreated_when_stale_missing_or_resized() {
        let e = vk::Extent2D {
            width: 64,
            height: 32,
        };
        assert!(!needs_recreate(false, true, e, [64, 32]));
        assert!(needs_recreate(true, true, e, [64, 32]));
        assert!(needs_recreate(false, false, e, [64, 32]));
        assert!(needs_recreate(false, true, e, [64, 33]));
        assert!(!marks_stale(&Ok(FrameStatus::Presented)));
        for status in [
            FrameStatus::Suboptimal,
            FrameStatus::OutOfDate,
            FrameStatus::Minimised,
        ] {
            assert!(marks_stale(&Ok(status)));
        }
        assert!(marks_stale(&Err(Error::NoDevice)));
    }

    #[test]
    fn the_swapchain_follows_the_surface_capabilities() {
        let mut caps = vk::SurfaceCapabilitiesKHR {
            min_image_count: 2,
            max_image_count: 2,
            current_extent: vk::Extent2D {
                width: u32::MAX,
                height: u32::MAX,
            },
            min_image_extent: vk::Extent2D {
                width: 1,
                height: 1,
            },
            max_image_extent: vk::Extent2D {
                width: 100,
                height: 100,
            },
            supported_usage_flags: vk::ImageUsageFlags::COLOR_ATTACHMENT,
            supported_composite_alpha: vk::CompositeAlphaFlagsKHR::INHERIT,
            ..Default::default()
        };
        let e = SwapchainChoice::extent(&caps, [640, 0]);
        assert_eq!((e.width, e.height), (100, 1));
        let c = SwapchainChoice::new(&caps, &[vk::PresentModeKHR::IMMEDIATE], false);
        assert_eq!(c.count, 2);
        assert_eq!(c.usage, vk::ImageUsageFlags::COLOR_ATTACHMENT);
        assert_eq!(c.alpha, vk::CompositeAlphaFlagsKHR::INHERIT);
        assert_eq!(c.mode, vk::PresentModeKHR::IMMEDIATE);
        caps.max_image_count = 0;
        caps.current_extent = vk::Extent2D {
            width: 30,
            height: 20,
        };
        caps.supported_usage_flags |= vk::ImageUsageFlags::TRANSFER_SRC;
        caps.supported_composite_alpha |= vk::CompositeAlphaFlagsKHR::OPAQUE;
        let e = SwapchainChoice::extent(&caps, [640, 480]);
        assert_eq!((e.width, e.height), (30, 20));
        let modes = [vk::PresentModeKHR::IMMEDIATE, vk::PresentModeKHR::MAILBOX];
        let c = SwapchainChoice::new(&caps, &modes, false);
        assert_eq!(c.count, 3);
        assert!(c.usage.contains(vk::ImageUsageFlags::TRANSFER_SRC));
        assert_eq!(c.alpha, vk::CompositeAlphaFlagsKHR::OPAQUE);
        assert_eq!(c.mode, vk::PresentModeKHR::MAILBOX);
        assert_eq!(
            SwapchainChoice::new(&caps, &modes, true).mode,
            vk::PresentModeKHR::FIFO
        );
        assert_eq!(
            SwapchainChoice::new(&caps, &[], false).mode,
            vk::PresentModeKHR::FIFO
        );
    }
}
