//! A gate that holds a queue still: submissions that wait (on the GPU, before any of their
//! commands) for a timeline semaphore the test signals from the host when it is ready
//! ([`Queue::submit_after`]), so tests can observe what kiln does while work is pending
//! without relying on timing.
//!
//! A timeline wait works on every queue family, transfer-only ones included, and may be
//! submitted before its signal (Vulkan spec §7.4.2). (The gate used to be a host-set
//! `VkEvent` that a pending command buffer waited on, which VUID-vkSetEvent-event-09543
//! forbids; validation layer 1.4 reports it.)

use kiln::{Device, Queue, Recorder, Submission, TimelineSemaphore};

/// A timeline semaphore at 0; [`Gate::open`] signals 1, the value every gated submission
/// waits for.
pub struct Gate {
    device: Device,
    semaphore: TimelineSemaphore,
}

impl Gate {
    pub fn new(device: &Device) -> Gate {
        Gate {
            device: device.clone(),
            semaphore: device.timeline_semaphore("gate", 0).unwrap(),
        }
    }

    /// Records `f` on `queue` in a submission that does not run before
    /// [`open`](Self::open); every later submission of `queue` waits behind it.
    pub fn submit_on<'a>(
        &self,
        queue: &'a Queue,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> kiln::Result<()>,
    ) -> kiln::Result<Submission> {
        queue.submit_after(&[(&self.semaphore, 1)], f)
    }

    /// [`submit_on`](Self::submit_on) with a label (named by timeouts and lost devices).
    pub fn submit_labeled<'a>(
        &self,
        queue: &'a Queue,
        label: &str,
        f: impl for<'r> FnOnce(&mut Recorder<'a, 'r>) -> kiln::Result<()>,
    ) -> kiln::Result<Submission> {
        Ok(queue
            .submit_labeled_after(label, &[(&self.semaphore, 1)], f)?
            .1)
    }

    /// An empty submission on `queue` that does not complete before [`open`](Self::open),
    /// and every later submission of `queue` behind it (any queue family).
    pub fn hold(&self, queue: &Queue) -> Submission {
        self.submit_on(queue, |_| Ok(())).unwrap()
    }

    /// Lets the waiting submissions run (once; later calls do nothing).
    pub fn open(&self) {
        if self.semaphore.value().unwrap() < 1 {
            self.semaphore.signal(1).unwrap();
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
        let _ = self.device.wait_idle();
    }
}
