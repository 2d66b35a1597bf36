//! A gate that holds a queue still: a submission that waits (`vkCmdWaitEvents`, source
//! stage HOST) for a `VkEvent` the test sets from the host when it is ready, so tests can
//! observe what kiln does while work is pending without relying on timing.

use kiln::{vk, Device, Recorder};

/// A `VkEvent` in the unsignalled state; [`Gate::open`] signals it.
pub struct Gate {
    device: Device,
    event: vk::Event,
}

impl Gate {
    pub fn new(device: &Device) -> Gate {
        // SAFETY: a plain create on the live device; destroyed in Drop after the device is
        // idle.
        let event = unsafe {
            device
                .raw()
                .create_event(&vk::EventCreateInfo::default(), None)
                .unwrap()
        };
        Gate {
            device: device.clone(),
            event,
        }
    }

    /// Records a wait for the gate: nothing recorded after it runs before [`open`](Self::open).
    pub fn wait_in(&self, r: &mut Recorder<'_, '_>) {
        // SAFETY: the command buffer is recording (the wait's own contract: record_wait).
        self.record_wait(unsafe { r.raw() });
    }

    fn record_wait(&self, cb: vk::CommandBuffer) {
        // SAFETY: the command buffer is recording outside a rendering scope; the event is
        // set only by the host (source stage HOST, VUID-vkCmdWaitEvents-srcStageMask-01158)
        // and outlives the submission (Drop waits for the device to be idle).
        unsafe {
            self.device.raw().cmd_wait_events(
                cb,
                &[self.event],
                vk::PipelineStageFlags::HOST,
                vk::PipelineStageFlags::ALL_COMMANDS,
                &[vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::HOST_WRITE)
                    .dst_access_mask(vk::AccessFlags::MEMORY_READ)],
                &[],
                &[],
            )
        };
    }

    /// [`wait_in`](Self::wait_in), naming the raw wait's uses (none): the submission stays
    /// transparent, so host access to mapped buffers it does not use does not wait for it.
    pub fn wait_in_naming_no_buffer(&self, r: &mut Recorder<'_, '_>) {
        // SAFETY: the raw command uses no kiln buffer, image or set.
        let cb = unsafe { r.raw_using(&[]) }.unwrap();
        self.record_wait(cb);
    }

    /// Lets the waiting submissions run.
    pub fn open(&self) {
        // SAFETY: the event belongs to this device; setting it from the host is allowed at
        // any time.
        unsafe { self.device.raw().set_event(self.event).unwrap() };
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
        let _ = self.device.wait_idle();
        // SAFETY: the device is idle: no submission waits for the event any more.
        unsafe { self.device.raw().destroy_event(self.event, None) };
    }
}
