//! Compute pipelines compiled in the background (issue 28): [`Device::compute_pipeline_async`]
//! queues the creation on a bounded pool of threads (a layer slot, its threads started on
//! first use, at most the machine's parallelism, 8 at most) and returns a
//! [`PendingPipeline`] at once: [`is_ready`](PendingPipeline::is_ready),
//! [`wait`](PendingPipeline::wait), and [`get`](PendingPipeline::get), which either waits
//! or refuses with `KILN-E269` while the driver compiles ([`NotReady`], the caller's
//! choice at each bind).
//!
//! The pipelines share the device's persisted `VkPipelineCache`: kiln creates it without
//! `VK_PIPELINE_CACHE_CREATE_EXTERNALLY_SYNCHRONIZED_BIT`, so the implementation
//! synchronizes concurrent `vkCreateComputePipelines` calls on it (Vulkan spec §10.7
//! "Pipeline Cache", "Threading Behavior"); every other object creation reaches
//! (layouts, interners) is thread-safe already.
//!
//! A pending pipeline dropped before its job started cancels the job; one dropped while
//! the driver compiles lets the job finish and drop the pipeline (retired like any other):
//! nothing leaks and nothing waits. A queued job holds the device, so the device outlives
//! its jobs; the threads hold only the queue and end when the device is torn down.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::{ComputePipeline, ComputePipelineDesc, PipelineLayoutDesc};
use crate::device::{Device, LayerSlot, Shared};
use crate::error::{Error, Result};
use crate::shaders::{ShaderModule, SpecValue};

/// What [`PendingPipeline::get`] does when the pipeline is still compiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A [`ComputePipelineDesc`] that owns what it names, for another thread.
struct OwnedDesc {
    module: ShaderModule,
    entry: String,
    spec: Vec<(u32, SpecValue)>,
    layout: Option<PipelineLayoutDesc>,
    required_subgroup_size: Option<u32>,
    full_subgroups: bool,
    push_descriptor_set: Option<u32>,
    capture_statistics: bool,
}

impl OwnedDesc {
    fn new(d: &ComputePipelineDesc<'_>) -> OwnedDesc {
        OwnedDesc {
            module: d.module.clone(),
            entry: d.entry.to_string(),
            spec: d.spec.to_vec(),
            layout: d.layout.cloned(),
            required_subgroup_size: d.required_subgroup_size,
            full_subgroups: d.full_subgroups,
            push_descriptor_set: d.push_descriptor_set,
            capture_statistics: d.capture_statistics,
        }
    }

    fn desc(&self) -> ComputePipelineDesc<'_> {
        ComputePipelineDesc {
            module: &self.module,
            entry: &self.entry,
            spec: &self.spec,
            layout: self.layout.as_ref(),
            required_subgroup_size: self.required_subgroup_size,
            full_subgroups: self.full_subgroups,
            push_descriptor_set: self.push_descriptor_set,
            capture_statistics: self.capture_statistics,
        }
    }
}

/// What a job and its [`PendingPipeline`] share.
#[derive(Default)]
struct JobState {
    result: Mutex<Option<Result<ComputePipeline>>>,
    done: Condvar,
    cancelled: AtomicBool,
}

/// A compute pipeline being created on the device's pipeline threads
/// ([`Device::compute_pipeline_async`]).
pub struct PendingPipeline {
    label: String,
    state: Arc<JobState>,
    /// The pipeline once taken out of `state` by [`get`](Self::get), or why it failed.
    taken: Option<std::result::Result<ComputePipeline, String>>,
}

impl std::fmt::Debug for PendingPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingPipeline")
            .field("label", &self.label)
            .field("ready", &self.is_ready())
            .finish()
    }
}

impl PendingPipeline {
    /// Whether the driver is done (successfully or not): [`get`](Self::get) and
    /// [`wait`](Self::wait) then return at once.
    pub fn is_ready(&self) -> bool {
        self.taken.is_some() || lock(&self.state.result).is_some()
    }

    fn block(&self) -> Option<Result<ComputePipeline>> {
        let mut r = lock(&self.state.result);
        while r.is_none() {
            r = self.state.done.wait(r).unwrap_or_else(|p| p.into_inner());
        }
        r.take()
    }

    /// Blocks until the pipeline is created and returns it.
    ///
    /// Errors: those of [`Device::compute_pipeline_with`]; `KILN-E269` its failure was
    /// already returned by [`get`](Self::get).
    pub fn wait(mut self) -> Result<ComputePipeline> {
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
    /// earlier; the creation's own error (as [`Device::compute_pipeline_with`]) the first
    /// time it is seen.
    pub fn get(&mut self, not_ready: NotReady) -> Result<&ComputePipeline> {
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

    fn unavailable(&self, why: String) -> Error {
        Error::PipelineNotReady {
            label: self.label.clone(),
            why,
        }
    }
}

impl Drop for PendingPipeline {
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
    ) -> Result<PendingPipeline> {
        let shared = self.shared.clone();
        let threads = shared.slot::<PipelineThreads>()?;
        let owned = OwnedDesc::new(desc);
        let state = Arc::new(JobState::default());
        let job_state = state.clone();
        let created = threads.inner.clone();
        let job_shared = shared.clone();
        threads.push(Box::new(move || {
            if job_state.cancelled.load(Ordering::Acquire) {
                return;
            }
            let r = ComputePipeline::new(&job_shared, &owned.desc());
            if r.is_ok() {
                created.created.fetch_add(1, Ordering::Relaxed);
            }
            *lock(&job_state.result) = Some(r);
            job_state.done.notify_all();
        }));
        Ok(PendingPipeline {
            label: format!("{} ({})", desc.entry, desc.module.label()),
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
