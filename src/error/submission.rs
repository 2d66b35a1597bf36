//! The variants of [`Error`](super::Error) that submission gives (submissions, their waits,
//! timeline semaphores, reusable recordings, traces): codes E121, E124, E129–E133, E284,
//! E285 and, for new ones, E350–E399.
//!
//! Written as a link of the chain `errors!` is built from (see the module docs of
//! [`error`](super)): the macro emits the area type [`SubmissionError`](super::SubmissionError) with these
//! variants, appends them to the ones it is given and hands them on to the next macro
//! named. Unlike the range files, this area is a list: its codes were given in the ranges
//! of the areas below before it had a type of its own, and they keep them (codes are never
//! renumbered); a new submission error takes the next code of E350–E399.

macro_rules! submission_errors {
    ($($chain:tt)*) => {
        link! { SubmissionError "submission (KILN-E121, E124, E129–E133, E284, E285; new codes E350–E399)" [Device(DeviceError), Memory(MemoryError), Recording(RecordingError)] ($($chain)*)
            /// The validation layer reported errors while a submission was recorded, submitted or
            /// waited for, and `DeviceDesc::validation_fail` (`KILN_VALIDATION_FAIL=1`) turns them
            /// into an error. `messages` are the layer's texts (the last 32 at most), each with the
            /// Rust line that recorded the command where the layer raised it at record time.
            #[code("KILN-E121")]
            #[error("the validation layer reported {count} error(s) during submission `{label}`:\n{messages}\n; fix the Vulkan usage the messages name (KILN_VALIDATION_FAIL=0 only logs them)")]
            ValidationFailed {
                label: String,
                count: u32,
                messages: String,
            },

            /// The timings of a submission cannot be read: it was not timed, the GPU has not
            /// finished it, or a later submission of the same `Recording` overwrote them.
            #[code("KILN-E124")]
            #[error("no GPU timings for submission `{label}`: {why}")]
            TimingsUnavailable { label: String, why: &'static str },

            /// The Chrome trace (`KILN_TRACE`, `Device::write_trace`) could not be written.
            #[code("KILN-E129")]
            #[error("cannot write the trace to {}: {source}; check that the directory exists and is writable", path.display())]
            TraceWrite {
                path: PathBuf,
                #[source]
                source: std::io::Error,
            },

            /// A host signal of a timeline semaphore to a value not greater than its current one
            /// (VUID-VkSemaphoreSignalInfo-value-03258: a timeline only grows).
            #[code("KILN-E130")]
            #[error("timeline semaphore `{object}` cannot be signalled to {value}: its value is {current} already; signal a greater value")]
            TimelineValue {
                object: String,
                value: u64,
                current: u64,
            },

            /// A submission asked to wait for more application timeline semaphores than kiln
            /// passes in one `vkQueueSubmit2` (`MAX_TIMELINE_WAITS`).
            #[code("KILN-E131")]
            #[error("submission `{label}` waits for {count} timeline semaphores, more than the {max} kiln allows; wait for fewer (one semaphore with a later value orders as much as several)")]
            TooManyWaits {
                label: String,
                count: usize,
                max: usize,
            },

            /// A host wait for a timeline semaphore to reach a value did not end within its
            /// timeout (`TimelineSemaphore::wait_for`). The semaphore is unchanged.
            #[code("KILN-E132")]
            #[error("timeline semaphore `{object}` did not reach {value} within {ms} ms (it is at {current}); signal it (from the host or a submission), or wait longer")]
            TimelineTimeout {
                object: String,
                value: u64,
                current: u64,
                ms: u64,
            },

            /// A submission asked to signal more application timeline semaphores than kiln
            /// passes in one `vkQueueSubmit2` (`MAX_TIMELINE_WAITS`; `After::signal`).
            #[code("KILN-E133")]
            #[error("a submission signals {count} timeline semaphores, more than the {max} kiln allows; signal fewer (one semaphore's value can stand for several events)")]
            TooManySignals { count: usize, max: usize },

            /// A reusable recording ([`crate::Device::record`]) leaves an image in another layout
            /// than it found it in, so a second submission would start from the wrong layout
            /// (VUID-VkImageMemoryBarrier2-oldLayout-01197). Not raised for an image whose first
            /// command is a transition from UNDEFINED (valid from every layout).
            #[code("KILN-E284")]
            #[error("the recording leaves image `{image}` in {end:?} but found it in {start:?}; a reusable recording must transition it back to {start:?} at the end (or use execute for one-off work)")]
            RecordingChangesLayout {
                image: String,
                start: vk::ImageLayout,
                end: vk::ImageLayout,
            },

            /// A reusable recording was submitted while an image it transitions is in another
            /// layout than the one it was recorded for (VUID-VkImageMemoryBarrier2-oldLayout-01197).
            #[code("KILN-E285")]
            #[error("image `{image}` is in {now:?} but the recording expects {recorded:?}; transition it back to {recorded:?} before submitting the recording")]
            RecordingLayoutMoved {
                image: String,
                recorded: vk::ImageLayout,
                now: vk::ImageLayout,
            },
        }
    };
}
