//! The logical device while [`Shared::create`](super::Shared::create) builds it: one RAII
//! guard holds what was made so far (the device, then its queues' timelines), so every
//! early return cleans up the same way: the queues first, then the device (Vulkan spec
//! §5.2.1, VUID-vkDestroyDevice-device-05137: every child object is destroyed before the
//! device). [`finish`](PartialDevice::finish) hands the parts over once nothing can fail.

use super::queue::Queue;

/// A logical device under construction (module docs).
pub(super) struct PartialDevice {
    raw: ash::Device,
    /// The queues made so far; each owns a timeline semaphore of `raw`.
    pub queues: Vec<Queue>,
    /// Cleans up on drop (until [`finish`](Self::finish)).
    armed: bool,
}

impl PartialDevice {
    /// Guards `raw`, a device nothing has been created from yet, for which `queues`
    /// queues will be made.
    pub(super) fn new(raw: ash::Device, queues: usize) -> PartialDevice {
        PartialDevice {
            raw,
            queues: Vec::with_capacity(queues),
            armed: true,
        }
    }

    /// The device.
    pub(super) fn raw(&self) -> &ash::Device {
        &self.raw
    }

    /// The device and its queues, no longer cleaned up by the guard.
    pub(super) fn finish(mut self) -> (ash::Device, Vec<Queue>) {
        self.armed = false;
        (self.raw.clone(), std::mem::take(&mut self.queues))
    }
}

impl Drop for PartialDevice {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        for q in &self.queues {
            q.destroy(&self.raw);
        }
        let _loader = super::loader::exclusive();
        // SAFETY: nothing created from the device is alive: the guard holds every object
        // made from it so far (the queues' timelines, destroyed above) and was not
        // finished.
        unsafe { self.raw.destroy_device(None) }
    }
}
