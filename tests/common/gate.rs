//! A gate that holds a queue still: a submission that waits (`vkCmdWaitEvents`, source
//! stage HOST) for a `VkEvent` the test sets from the host when it is ready, so tests can
//! observe what kiln does while work is pending without relying on timing.
//!
//! `vkCmdWaitEvents` needs a queue family with graphics or compute
//! (VUID-vkCmdWaitEvents-commandBuffer-cmdpool); a transfer-only family (the H200's copy
//! engines) cannot record it. [`Gate::wait_in`] asserts that (so emulated transfer queues on
//! lavapipe fail as the H200 would), and [`Gate::hold`] holds any queue: on a queue that
//! cannot wait for events, the wait runs on the main queue in a submission that fills a
//! small gate buffer, and the held queue's submission copies from that buffer with a kiln
//! copy, so kiln makes it wait for the main queue's (held) submission.

use std::sync::Mutex;

use kiln::{
    vk, Buffer, BufferDesc, Device, MemoryLocation, Queue, QueueKind, Recorder, Submission,
};

/// A `VkEvent` in the unsignalled state; [`Gate::open`] signals it.
pub struct Gate {
    device: Device,
    event: vk::Event,
    /// Held main-queue submissions of [`Gate::hold`] (waited for after the gate opens) and
    /// their buffers.
    relays: Mutex<Vec<(Submission, Buffer, Buffer)>>,
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
            relays: Mutex::new(Vec::new()),
        }
    }

    /// Records a wait for the gate: nothing recorded after it runs before [`open`](Self::open).
    /// Panics where the recorder's queue family cannot wait for events (use
    /// [`hold`](Self::hold) there).
    pub fn wait_in(&self, r: &mut Recorder<'_, '_>) {
        self.check_family(r);
        // SAFETY: the command buffer is recording (the wait's own contract: record_wait).
        self.record_wait(unsafe { r.raw() });
    }

    /// Panics where `r`'s queue family cannot wait for events.
    fn check_family(&self, r: &Recorder<'_, '_>) {
        assert!(
            r.queue_flags()
                .intersects(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE),
            "the test records vkCmdWaitEvents on a queue of capabilities {:?}: it needs \
             GRAPHICS or COMPUTE (VUID-vkCmdWaitEvents-commandBuffer-cmdpool); use Gate::hold",
            r.queue_flags()
        );
    }

    fn record_wait(&self, cb: vk::CommandBuffer) {
        // SAFETY: the command buffer is recording outside a rendering scope, on a family
        // with graphics or compute (`check_family`); the event is set only by the host
        // (source stage HOST, VUID-vkCmdWaitEvents-srcStageMask-01158) and outlives the
        // submission (Drop waits for the device to be idle).
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
        self.check_family(r);
        // SAFETY: the raw command uses no kiln buffer, image or set.
        let cb = unsafe { r.raw_using(&[]) }.unwrap();
        self.record_wait(cb);
    }

    /// A submission on `queue` that does not run before [`open`](Self::open), and every
    /// later submission of `queue` behind it; valid on any queue family (module docs).
    pub fn hold(&self, queue: &Queue) -> Submission {
        let flags = queue.info().flags;
        if flags.intersects(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE) {
            return queue
                .submit(|r| {
                    self.wait_in(r);
                    Ok(())
                })
                .unwrap();
        }
        let buffer = |label| {
            self.device
                .buffer(&BufferDesc {
                    label,
                    size: 256,
                    usage: vk::BufferUsageFlags::STORAGE_BUFFER,
                    location: MemoryLocation::GpuOnly,
                })
                .unwrap()
        };
        let (relay, sink) = (buffer("gate relay"), buffer("gate sink"));
        let main = self.device.queue(QueueKind::Main);
        let held_main = main
            .submit(|r| {
                self.wait_in_naming_no_buffer(r);
                r.fill_buffer(&relay, 0x6A7E)
            })
            .unwrap();
        // A kiln copy reads `relay`: it waits for the main queue's fill behind the gate.
        let held = queue
            .submit(|r| r.copy_buffer(&relay, 0, &sink, 0, 256))
            .unwrap();
        self.relays.lock().unwrap().push((held_main, relay, sink));
        held
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
        for (held, _, _) in self.relays.get_mut().unwrap().drain(..) {
            held.wait().unwrap();
        }
        let _ = self.device.wait_idle();
        // SAFETY: the device is idle: no submission waits for the event any more.
        unsafe { self.device.raw().destroy_event(self.event, None) };
    }
}
