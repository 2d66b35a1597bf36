//! Fault injection: a test-only switch that makes chosen Vulkan calls fail.
//!
//! lavapipe never runs out of device memory, never loses the device and never reports a
//! swapchain out of date on demand, so kiln's error paths for those results would never run
//! in CI. A [`FaultInjector`] given to a device (`DeviceDesc::faults`, hidden) counts the
//! calls of each [`FaultSite`] and makes the `n`th call from the moment a fault is armed
//! ([`FaultInjector::fail_nth`]) fail with a chosen `VkResult` instead of reaching the
//! driver. Each site is one call to [`Shared::inject`](super::Shared::inject) just before
//! the real call, so the error takes exactly the path a driver's error would take.
//!
//! What "fails" means per site (the call is not made, unless said otherwise):
//!
//! | site | call | how kiln reports it |
//! | --- | --- | --- |
//! | `AllocateMemory` | gpu-allocator's allocation (`vkAllocateMemory`) of a buffer or image | `KILN-E150` (gpu-allocator's `OutOfMemory`) |
//! | `CreateBuffer` | `vkCreateBuffer` | `KILN-E106` / `KILN-E104` |
//! | `CreateImage` | `vkCreateImage` | `KILN-E106` / `KILN-E104` |
//! | `CreatePipeline` | `vkCreateComputePipelines`, `vkCreateGraphicsPipelines` | `KILN-E106` / `KILN-E104` |
//! | `AllocateDescriptorSets` | `vkAllocateDescriptorSets` | `OUT_OF_POOL_MEMORY`: a new pool, no error; else `KILN-E106` / `KILN-E104` |
//! | `QueueSubmit` | `vkQueueSubmit2` (every kiln submission, frames included) | `KILN-E105` (the device is lost from then on), `KILN-E106`, `KILN-E104` |
//! | `Wait` | `vkWaitSemaphores`, a frame slot's `vkWaitForFences` | as `QueueSubmit` |
//! | `Acquire` | `vkAcquireNextImageKHR` | `OUT_OF_DATE`: `FrameStatus::OutOfDate`; else as `QueueSubmit` |
//! | `Present` | `vkQueuePresentKHR`: the call **is** made (its semaphore wait still executes, as for a driver's error, Vulkan spec §34.10), its result is replaced | as `Acquire` |
//!
//! The injector is for tests: the counters are atomics and the armed faults a short list
//! behind a mutex, looked at only on devices that have an injector.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use ash::vk;

/// A category of Vulkan call that faults can be injected at (see the module docs).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaultSite {
    AllocateMemory,
    CreateBuffer,
    CreateImage,
    CreatePipeline,
    AllocateDescriptorSets,
    QueueSubmit,
    Wait,
    Acquire,
    Present,
}

impl FaultSite {
    /// Every site, in declaration order.
    pub const ALL: [FaultSite; 9] = [
        FaultSite::AllocateMemory,
        FaultSite::CreateBuffer,
        FaultSite::CreateImage,
        FaultSite::CreatePipeline,
        FaultSite::AllocateDescriptorSets,
        FaultSite::QueueSubmit,
        FaultSite::Wait,
        FaultSite::Acquire,
        FaultSite::Present,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// One armed fault: the call of `site` whose count reaches `at` fails with `result`.
#[derive(Debug)]
struct Armed {
    site: FaultSite,
    at: u64,
    result: vk::Result,
}

/// Counts the calls of every [`FaultSite`] of one device and fails the armed ones (see the
/// module docs). Share it with the device through `DeviceDesc::faults`.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct FaultInjector {
    calls: [AtomicU64; FaultSite::ALL.len()],
    injected: AtomicU64,
    /// Whether a `VK_ERROR_DEVICE_LOST` was injected: the driver's device is not lost then,
    /// so kiln must not ask it for a fault report (`vkGetDeviceFaultInfoEXT` requires the
    /// lost state, VUID-vkGetDeviceFaultInfoEXT-device-07336).
    lost_injected: AtomicBool,
    armed: Mutex<Vec<Armed>>,
}

// Armed only through `kiln::hooks` (feature `unstable-hooks`).
#[cfg_attr(not(feature = "unstable-hooks"), allow(dead_code))]
impl FaultInjector {
    /// An injector with nothing armed.
    pub fn new() -> FaultInjector {
        FaultInjector::default()
    }

    /// Makes the `nth` call of `site` from now (1: the next one) fail with `result`. Several
    /// faults may be armed at once, on one site or several.
    pub fn fail_nth(&self, site: FaultSite, nth: u64, result: vk::Result) {
        let at = self.calls(site) + nth.max(1);
        self.lock().push(Armed { site, at, result });
    }

    /// Calls of `site` made so far (failed ones included).
    pub fn calls(&self, site: FaultSite) -> u64 {
        self.calls[site.index()].load(Ordering::Acquire)
    }

    /// Faults injected so far.
    pub fn injected(&self) -> u64 {
        self.injected.load(Ordering::Acquire)
    }

    /// Whether a `VK_ERROR_DEVICE_LOST` was injected (then the driver's device is not lost).
    pub(crate) fn lost_injected(&self) -> bool {
        self.lost_injected.load(Ordering::Acquire)
    }

    /// Faults armed and not injected yet.
    pub fn pending(&self) -> usize {
        self.lock().len()
    }

    /// Disarms every pending fault.
    pub fn disarm(&self) {
        self.lock().clear();
    }

    /// Counts one call of `site`; `Err(result)` when an armed fault is due.
    pub(crate) fn hit(&self, site: FaultSite) -> Result<(), vk::Result> {
        let n = self.calls[site.index()].fetch_add(1, Ordering::AcqRel) + 1;
        let mut armed = self.lock();
        let Some(i) = armed.iter().position(|a| a.site == site && a.at == n) else {
            return Ok(());
        };
        let fault = armed.swap_remove(i);
        drop(armed);
        self.injected.fetch_add(1, Ordering::AcqRel);
        if fault.result == vk::Result::ERROR_DEVICE_LOST {
            self.lost_injected.store(true, Ordering::Release);
        }
        log::debug!("kiln: injected {:?} at call {n} of {site:?}", fault.result);
        Err(fault.result)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Armed>> {
        self.armed.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nth_call_fails_once() {
        let f = FaultInjector::new();
        assert_eq!(f.hit(FaultSite::QueueSubmit), Ok(()));
        f.fail_nth(FaultSite::QueueSubmit, 2, vk::Result::ERROR_DEVICE_LOST);
        assert!(!f.lost_injected());
        f.fail_nth(FaultSite::Wait, 1, vk::Result::ERROR_OUT_OF_HOST_MEMORY);
        assert_eq!(f.pending(), 2);
        assert_eq!(f.hit(FaultSite::QueueSubmit), Ok(()));
        assert_eq!(
            f.hit(FaultSite::QueueSubmit),
            Err(vk::Result::ERROR_DEVICE_LOST)
        );
        assert!(
            f.lost_injected(),
            "the driver's device is not lost: no fault report"
        );
        assert_eq!(f.hit(FaultSite::QueueSubmit), Ok(()));
        assert_eq!(
            f.hit(FaultSite::Wait),
            Err(vk::Result::ERROR_OUT_OF_HOST_MEMORY)
        );
        assert_eq!(f.calls(FaultSite::QueueSubmit), 4);
        assert_eq!(f.calls(FaultSite::Wait), 1);
        assert_eq!(f.injected(), 2);
        assert_eq!(f.pending(), 0);
        f.fail_nth(FaultSite::Present, 1, vk::Result::ERROR_OUT_OF_DATE_KHR);
        f.disarm();
        assert_eq!(f.hit(FaultSite::Present), Ok(()));
        assert_eq!(f.injected(), 2);
    }
}
