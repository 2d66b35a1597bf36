//! Pipelines compiled in the background (issue 28): [`Device::compute_pipeline_async`] and
//! [`Device::graphics_pipeline_async`] queue the creation on a bounded pool of threads (a
//! layer slot, its threads started on first use, at most the machine's parallelism, 8 at
//! most) and return a [`PendingPipeline`] at once: [`is_ready`](PendingPipeline::is_ready),
//! [`wait`](PendingPipeline::wait), and [`get`](PendingPipeline::get), which either waits
//! or refuses with `KILN-E269` while the driver compiles ([`NotReady`], the caller's
//! choice at each bind). Hot reload (`pipeline/hot.rs`) creates every version here too.
//!
//! The pipelines share the device's persisted `VkPipelineCache`: kiln creates it without
//! `VK_PIPELINE_CACHE_CREATE_EXTERNALLY_SYNCHRONIZED_BIT`, so the implementation
//! synchronizes concurrent `vkCreateComputePipelines` and `vkCreateGraphicsPipelines` calls
//! on it (Vulkan spec §10.7 "Pipeline Cache", "Threading Behavior"); every other object
//! creation reaches (layouts, interners) is thread-safe already.
//!
//! A pending pipeline dropped before its job started cancels the job; one dropped while
//! the driver compiles lets the job finish and drop the pipeline (retired like any other):
//! nothing leaks and nothing waits. A queued job holds the device, so the device outlives
//! its jobs; the threads hold only the queue and end when the device is torn down.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::{ComputePipeline, ComputePipelineDesc, GraphicsPipeline, GraphicsPipelineDesc};
use crate::device::{Device, LayerSlot, Shared};
use crate::error::{DeviceError, PipelineError, Result};
use owned::{OwnedCompute, OwnedGraphics};

mod owned;

/// What [`PendingPipeline::get`] does when the pipeline is still compiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotReady {
    /// Block until the driver is done.
    Wait,
    /// Return `KILN-E269` at once.
    Error,
}

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct PoolState {
    jobs: VecDeque<Job>,
    threads: usize,
    closed: bool,
    /// Test hook: threads take no job while set.
    paused: bool,
}

#[derive(Default)]
struct PoolInner {
    state: Mutex<PoolState>,
    cv: Condvar,
    /// Pipelines the threads created so far (for tests).
    created: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The device's pool of pipeline threads (a layer slot of the pipeline layer).
#[derive(Default)]
pub(crate) struct PipelineThreads {
    inner: Arc<PoolInner>,
}

impl LayerSlot for PipelineThreads {
    fn teardown(&mut self, _device: &Shared) {
        lock(&self.inner.state).closed = true;
        self.inner.cv.notify_all();
    }
}

/// The most pipeline threads of one device.
fn max_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
}

impl PipelineThreads {
    fn push(&self, job: Job) {
        let mut s = lock(&self.inner.state);
        s.jobs.push_back(job);
        if s.threads < max_threads() {
            s.threads += 1;
            let inner = self.inner.clone();
            let spawned = std::thread::Builder::new()
                .name("kiln-pipelines".into())
                .spawn(move || worker(&inner));
            if spawned.is_err() {
                // No new thread: the ones running (or the caller's next push) take it.
                s.threads -= 1;
                if s.threads == 0 {
                    if let Some(job) = s.jobs.pop_back() {
                        drop(s);
                        job();
                        return;
                    }
                }
            }
        }
        drop(s);
        self.inner.cv.notify_one();
    }
}

fn worker(inner: &PoolInner) {
    loop {
        let job = {
            let mut s = lock(&inner.state);
            loop {
                if s.closed {
                    s.threads -= 1;
                    return;
                }
                if !s.paused {
                    if let Some(j) = s.jobs.pop_front() {
                        break j;
                    }
                }
                s = inner.cv.wait(s).unwrap_or_else(|p| p.into_inner());
            }
        };
        job();
    }
}

/// `create`'s result, or `KILN-E113` when it panics: the worker thread lives on (a panic
/// would end it and leave the pool a thread short) and the handle gets an error instead of a
/// `wait` that never returns. Unwind safety: after a panic nothing the closure touched is
/// read again except through kiln's locks, which ignore poisoning.
fn create_caught<P>(create: impl FnOnce() -> Result<P, PipelineError>) -> Result<P, PipelineError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(create)).unwrap_or_else(|_| {
        Err(DeviceError::Internal {
            what: "a pipeline creation panicked on the pipeline threads",
        }
        .into())
    })
}

/// What a job and its [`PendingPipeline`] share.
struct JobState<P> {
    result: Mutex<Option<Result<P, PipelineError>>>,
    done: Condvar,
    cancelled: AtomicBool,
}

/// A pipeline being created on the device's pipeline threads: a [`ComputePipeline`]
/// ([`Device::compute_pipeline_async`], the default `P`) or a [`GraphicsPipeline`]
/// ([`Device::graphics_pipeline_async`]).
pub struct PendingPipeline<P = ComputePipeline> {
    label: String,
    state: Arc<JobState<P>>,
    /// The pipeline once taken out of `state` by [`get`](Self::get), or why it failed.
    taken: Option<std::result::Result<P, String>>,
}

impl<P> std::fmt::Debug for PendingPipeline<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingPipeline")
            .field("label", &self.label)
            .field("ready", &self.is_ready())
            .finish()
    }
}

impl<P> PendingPipeline<P> {
    /// Whether the driver is done (successfully or not): [`get`](Self::get) and
    /// [`wait`](Self::wait) then return at once.
    pub fn is_ready(&self) -> bool {
        self.taken.is_some() || lock(&self.state.result).is_some()
    }

    fn block(&self) -> Option<Result<P, PipelineError>> {
        let mut r = lock(&self.state.result);
        while r.is_none() {
            r = self.state.done.wait(r).unwrap_or_else(|p| p.into_inner());
        }
        r.take()
    }

    /// Blocks until the pipeline is created and returns it.
    ///
    /// Errors: those of [`Device::compute_pipeline_with`] (or
    /// [`Device::graphics_pipeline`]); `KILN-E269` its failure was already returned by
    /// [`get`](Self::get); `KILN-E113` the creation panicked (a bug: the pool goes on).
    pub fn wait(mut self) -> Result<P, PipelineError> {
        match self.taken.take() {
            Some(Ok(p)) => Ok(p),
            Some(Err(why)) => Err(self.unavailable(why)),
            None => self
                .block()
                .unwrap_or_else(|| Err(self.unavailable(String::new()))),
        }
    }

    /// The pipeline, to bind: waits for the driver or, with [`NotReady::Error`], refuses
    /// while it compiles. The first call after it is done takes it out of the job; later
    /// calls return the same pipeline.
    ///
    /// Errors: `KILN-E269` still compiling (with `NotReady::Error`), or its creation failed
    /// earlier; the creation's own error (as [`Device::compute_pipeline_with`] or
    /// [`Device::graphics_pipeline`]) the first time it is seen.
    pub fn get(&mut self, not_ready: NotReady) -> Result<&P, PipelineError> {
        if self.taken.is_none() {
            if not_ready == NotReady::Error && !self.is_ready() {
                return Err(self.unavailable("it is still compiling".into()));
            }
            match self.block() {
                Some(Ok(p)) => self.taken = Some(Ok(p)),
                Some(Err(e)) => {
                    self.taken = Some(Err(e.to_string()));
                    return Err(e);
                }
                None => return Err(self.unavailable(String::new())),
            }
        }
        match &self.taken {
            Some(Ok(p)) => Ok(p),
            Some(Err(why)) => Err(self.unavailable(format!("its creation failed: {why}"))),
            None => Err(self.unavailable(String::new())),
        }
    }

    fn unavailable(&self, why: String) -> PipelineError {
        PipelineError::PipelineNotReady {
            label: self.label.clone(),
            why,
        }
    }
}

impl<P> Drop for PendingPipeline<P> {
    fn drop(&mut self) {
        // A job not started yet skips the creation; one running finishes and drops it.
        self.state.cancelled.store(true, Ordering::Release);
    }
}

impl Device {
    /// Queues the creation of the compute pipeline `desc` on the device's pipeline threads
    /// and returns at once (see the module docs of `pipeline::background`): for the large
    /// kernels a driver takes seconds to compile, and many specializations compiled in
    /// parallel. Checks that need no driver run on the thread too, so every error comes
    /// from the [`PendingPipeline`].
    pub fn compute_pipeline_async(
        &self,
        desc: &ComputePipelineDesc<'_>,
    ) -> Result<PendingPipeline, PipelineError> {
        let owned = OwnedCompute::new(desc);
        let label = format!("{} ({})", desc.entry, desc.module.label());
        self.spawn_pipeline(label, move |shared| {
            ComputePipeline::new(shared, &owned.desc())
        })
    }

    /// Queues the creation of the graphics pipeline `desc` on the device's pipeline
    /// threads, as [`compute_pipeline_async`](Self::compute_pipeline_async) does for
    /// compute: the same pool, the same `VkPipelineCache`, the same handle
    /// ([`PendingPipeline::get`] waits or refuses with `KILN-E269`). Every error of
    /// [`Device::graphics_pipeline`] comes from the handle.
    pub fn graphics_pipeline_async(
        &self,
        desc: &GraphicsPipelineDesc<'_>,
    ) -> Result<PendingPipeline<GraphicsPipeline>, PipelineError> {
        let owned = OwnedGraphics::new(desc);
        let label = owned.label().to_string();
        self.spawn_pipeline(label, move |shared| {
            GraphicsPipeline::new(shared, &owned.desc())
        })
    }

    /// Queues `create` on the pipeline threads; its result lands in the handle.
    fn spawn_pipeline<P: Send + 'static>(
        &self,
        label: String,
        create: impl FnOnce(&Arc<Shared>) -> Result<P, PipelineError> + Send + 'static,
    ) -> Result<PendingPipeline<P>, PipelineError> {
        let shared = self.shared.clone();
        let threads = shared.slot::<PipelineThreads>()?;
        let state = Arc::new(JobState {
            result: Mutex::new(None),
            done: Condvar::new(),
            cancelled: AtomicBool::new(false),
        });
        let job_state = state.clone();
        let created = threads.inner.clone();
        let job_shared = shared.clone();
        threads.push(Box::new(move || {
            if job_state.cancelled.load(Ordering::Acquire) {
                return;
            }
            let r = create_caught(|| create(&job_shared));
            if r.is_ok() {
                created.created.fetch_add(1, Ordering::Relaxed);
            }
            *lock(&job_state.result) = Some(r);
            job_state.done.notify_all();
        }));
        Ok(PendingPipeline {
            label,
            state,
            taken: None,
        })
    }

    /// Holds (`true`) or releases the device's pipeline threads: held, they start no job.
    /// For tests of pipelines that are not ready. Unstable.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_hold_pipeline_threads(&self, hold: bool) {
        if let Ok(t) = self.shared.slot::<PipelineThreads>() {
            lock(&t.inner.state).paused = hold;
            t.inner.cv.notify_all();
        }
    }

    /// Pipelines the pipeline threads created so far. Unstable: for kiln's tests.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_pipelines_created_async(&self) -> u64 {
        self.shared
            .slot::<PipelineThreads>()
            .map_or(0, |t| t.inner.created.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_creation_that_panics_is_e113_and_one_that_returns_is_kept() {
        let panicked = create_caught::<u32>(|| panic!("a driver callback panicked"));
        assert_eq!(panicked.map_err(|e| e.code()), Err("KILN-E113"));
        let failed = create_caught::<u32>(|| {
            Err(PipelineError::PipelineNotReady {
                label: "p".into(),
                why: String::new(),
            })
        });
        assert_eq!(failed.map_err(|e| e.code()), Err("KILN-E269"));
        assert_eq!(create_caught(|| Ok(7u32)).map_err(|e| e.code()), Ok(7));
    }
}
