//! Shader hot reload (feature `hot-reload`): compute and graphics pipelines whose GLSL/HLSL
//! sources are watched, recompiled on change and swapped in at a point the caller chooses.
//!
//! - **Watching** is a background thread per pipeline that reads every watched file every
//!   [`HotDesc::poll_interval`] and compares its bytes with those of the last compile
//!   (bytes, not mtimes: two saves within one timestamp tick still count). The watched
//!   files of a stage are its source and every file the compile read: `glslc -MD` writes
//!   them to a depfile (`hot/compile.rs` parses it), so editing an `#include`d header
//!   reloads every stage that includes it. The list is renewed by each compile (a failed
//!   one adds to it); [`HotComputePipeline::watched`] shows it.
//! - **Recompiling** happens on that thread, off the dispatch thread: `glslc` (or
//!   `$KILN_GLSLC`) with the command line kiln-build uses (`--target-env=vulkan1.3`, the
//!   stage from the file name or, for graphics, from the stage's role, `-I` the file's
//!   folder, a `// kiln: target-env=…` line honoured), then reflection and pipeline
//!   creation on the device's pipeline threads, the path of
//!   [`Device::compute_pipeline_async`] and [`Device::graphics_pipeline_async`] (the same
//!   bounded pool and persisted `VkPipelineCache`; the watcher waits for its job). A graphics
//!   pipeline recompiles only the stages whose files changed and keeps the others' modules.
//! - **Swapping** happens only in `poll` (and `wait_for_reload`), which take `&mut self`:
//!   no recording can borrow the pipeline while it runs, so the safe point is wherever the
//!   caller calls it (between frames or dispatch batches). Work already submitted keeps
//!   the old `VkPipeline` alive: dropping it retires it until those submissions finish.
//! - A reloaded shader whose **pipeline layout is equal** (interned by content: the same
//!   `VkPipelineLayout`, so set layouts equal binding by binding and the same push-constant
//!   ranges) is swapped in, and every descriptor set made for the old pipeline binds to the
//!   new one. One whose **layout changed** is refused: the event carries the layout diff
//!   and the old pipeline keeps running (`KILN-W008` is logged). A **compile error** (in
//!   any stage: while one stage does not compile, nothing is built) or a pipeline kiln
//!   refuses changes nothing: the event carries the compiler's messages or kiln's coded
//!   error (`KILN-W009` is logged).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use super::{ComputePipeline, ComputePipelineDesc, PendingPipeline, Pipeline, PipelineLayout};
use crate::device::Device;
use crate::error::{PipelineError, Result, ShaderError};
use crate::shaders::ShaderModule;
use watch::{Built, StageWatch, Watched};

mod compile;
mod graphics;
mod watch;

pub use graphics::{HotGraphicsDesc, HotGraphicsPipeline, HotTessellation};

/// How a [`HotComputePipeline`] watches its source.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HotDesc {
    /// The GLSL (`*.comp`) or HLSL (`*.comp.hlsl`) source.
    pub source: PathBuf,
    /// Entry point (usually `"main"`).
    pub entry: String,
    /// How often the watcher reads the source and the files it includes (default 100 ms).
    pub poll_interval: Duration,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { HotDesc {
    source: PathBuf,
    entry: String,
    poll_interval: Duration,
} }

impl HotDesc {
    /// Entry point `main` of `source`, read every 100 ms.
    pub fn new(source: impl AsRef<Path>) -> Self {
        HotDesc {
            source: source.as_ref().to_path_buf(),
            entry: "main".into(),
            poll_interval: Duration::from_millis(100),
        }
    }
}

/// What `poll` of a [`HotComputePipeline`] or [`HotGraphicsPipeline`] did. A refusal or a
/// failure carries its warning code ([`code`](Self::code)) and displays as kiln logs it.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReloadEvent {
    /// The source changed, compiled, and its layout equals the running one: the new
    /// pipeline runs from now on; existing descriptor sets stay valid.
    Swapped,
    /// The source compiled, but its pipeline layout differs: refused, the old pipeline
    /// keeps running. `diff` says what differs (set by set, then push constants).
    LayoutChanged {
        /// The differences, one per line.
        diff: String,
    },
    /// The source failed to compile or to become a pipeline: nothing changed. `message`
    /// holds the compiler's `file:line: error: …` lines or kiln's coded error.
    CompileFailed {
        /// What the compiler or kiln said.
        message: String,
    },
}

impl ReloadEvent {
    /// The warning code of the event, the one kiln also logs: `KILN-W008` for
    /// [`LayoutChanged`](Self::LayoutChanged), `KILN-W009` for
    /// [`CompileFailed`](Self::CompileFailed); `None` for [`Swapped`](Self::Swapped).
    pub fn code(&self) -> Option<&'static str> {
        match self {
            ReloadEvent::Swapped => None,
            ReloadEvent::LayoutChanged { .. } => Some("KILN-W008"),
            ReloadEvent::CompileFailed { .. } => Some("KILN-W009"),
        }
    }
}

/// One line (or more, with the diff or the compiler's lines) as kiln logs it, starting
/// with the code: `KILN-W008: hot reload refused: …`.
impl std::fmt::Display for ReloadEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReloadEvent::Swapped => write!(f, "hot reload: swapped in"),
            ReloadEvent::LayoutChanged { diff } => write!(
                f,
                "KILN-W008: hot reload refused: the pipeline layout changed (existing \
                 descriptor sets would not fit); the running pipeline stays:\n{diff}"
            ),
            ReloadEvent::CompileFailed { message } => write!(
                f,
                "KILN-W009: hot reload failed; the running pipeline stays:\n{message}"
            ),
        }
    }
}

/// What compute and graphics hot pipelines share: the running pipeline, the watcher thread
/// and its channel, and the swap rule.
pub(crate) struct Hot<P> {
    current: P,
    label: String,
    rx: Receiver<Built<P>>,
    /// The files the watcher reads (sources and what they include).
    watched: Watched,
    /// Set on drop: the watcher thread ends at its next wake-up.
    stop: Arc<AtomicBool>,
    /// Joined on drop, so the watcher's device handle is gone when the pipeline is.
    watcher: Option<std::thread::JoinHandle<()>>,
}

impl<P> Drop for Hot<P> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(w) = self.watcher.take() {
            let _ = w.join();
        }
    }
}

impl<P: Pipeline + Send + 'static> Hot<P> {
    /// Runs `current` and starts watching `stages` (compiled once already), building each
    /// new version with `build`.
    ///
    /// Errors: `KILN-E013` the thread cannot start.
    pub(crate) fn start(
        current: P,
        label: String,
        stages: Vec<StageWatch>,
        every: Duration,
        build: impl FnMut(&[&ShaderModule]) -> std::result::Result<P, String> + Send + 'static,
    ) -> Result<Self, PipelineError> {
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let watched = Watched::default();
        let source_file = stages.first().map(|s| s.source().to_path_buf());
        let watcher = watch::spawn(stages, every, stop.clone(), watched.clone(), tx, build)
            .map_err(|e| ShaderError::HotReloadCompile {
                source_file: source_file.unwrap_or_default(),
                detail: format!("cannot start the watcher thread: {e}"),
            })?;
        Ok(Hot {
            current,
            label,
            rx,
            watched,
            stop,
            watcher: Some(watcher),
        })
    }

    pub(crate) fn pipeline(&self) -> &P {
        &self.current
    }

    pub(crate) fn watched(&self) -> Vec<PathBuf> {
        self.watched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn poll(&mut self) -> Option<ReloadEvent> {
        let mut event = None;
        while let Ok(built) = self.rx.try_recv() {
            event = Some(self.take(built));
        }
        event
    }

    pub(crate) fn wait_for_reload(&mut self, timeout: Duration) -> Option<ReloadEvent> {
        let built = self.rx.recv_timeout(timeout).ok()?;
        let first = self.take(built);
        Some(self.poll().unwrap_or(first))
    }

    fn take(&mut self, built: Built<P>) -> ReloadEvent {
        let label = &self.label;
        match built {
            Built::Failed(message) => {
                let event = ReloadEvent::CompileFailed { message };
                log::warn!("`{label}`: {event}");
                event
            }
            Built::Pipeline(p) => {
                if Arc::ptr_eq(p.layout(), self.current.layout()) {
                    // The old pipeline drops here: retired until the submissions that
                    // bound it finish (`device/lifetime.rs`).
                    self.current = *p;
                    log::info!("hot reload: `{label}` swapped in");
                    ReloadEvent::Swapped
                } else {
                    let diff = layout_diff(self.current.layout(), p.layout());
                    let event = ReloadEvent::LayoutChanged { diff };
                    log::warn!("`{label}`: {event}");
                    event
                }
            }
        }
    }
}

/// A compute pipeline that follows its source file and the files it includes (feature
/// `hot-reload`). Bind [`pipeline`](Self::pipeline) as usual; call [`poll`](Self::poll) at
/// a safe point to take a reloaded version. Dropping it stops and joins the watcher thread
/// (waiting for a compile in progress).
///
/// A thread reads the source and every file its last compile read (`glslc -MD`'s depfile:
/// the `#include`d files, directly or not) every [`HotDesc::poll_interval`], compares their
/// bytes, and on a change recompiles and creates the new pipeline. `poll` swaps it in when
/// its pipeline layout equals the running one (interned by content), so descriptor sets
/// made for the old one bind to it, and submitted work keeps the old one alive (retired
/// until it finishes); a changed layout is refused ([`ReloadEvent::LayoutChanged`],
/// `KILN-W008` logged), a compile error or a pipeline kiln refuses is reported
/// ([`ReloadEvent::CompileFailed`], `KILN-W009`), the old pipeline running on.
pub struct HotComputePipeline {
    hot: Hot<ComputePipeline>,
    source: PathBuf,
}

impl std::fmt::Debug for HotComputePipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotComputePipeline")
            .field("source", &self.source)
            .field("current", self.hot.pipeline())
            .finish()
    }
}

impl HotComputePipeline {
    /// Compiles `desc.source` now (the first version must compile) and starts watching it
    /// and the files it includes.
    ///
    /// Errors: `KILN-E013` the source cannot be read or compiled (the compiler's messages
    /// in the error), then those of [`Device::compute_pipeline`].
    pub fn new(device: &Device, desc: &HotDesc) -> Result<Self, PipelineError> {
        let (stage, module) = StageWatch::first(&desc.source, None)?;
        let current = device
            .compute_pipeline_async(&ComputePipelineDesc::new(&module, &desc.entry))?
            .wait()?;
        let (device, entry) = (device.clone(), desc.entry.clone());
        let build = move |m: &[&ShaderModule]| match m {
            [m] => device
                .compute_pipeline_async(&ComputePipelineDesc::new(m, &entry))
                .and_then(PendingPipeline::wait)
                .map_err(|e| e.to_string()),
            _ => Err(format!("{} modules for one compute stage", m.len())),
        };
        let label = desc.source.display().to_string();
        Ok(HotComputePipeline {
            hot: Hot::start(current, label, vec![stage], desc.poll_interval, build)?,
            source: desc.source.clone(),
        })
    }

    /// The pipeline to bind now.
    pub fn pipeline(&self) -> &ComputePipeline {
        self.hot.pipeline()
    }

    /// The watched source.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// The files watched now: the source, then the files its last compile included
    /// (directly or not), as the compiler named them.
    pub fn watched(&self) -> Vec<PathBuf> {
        self.hot.watched()
    }

    /// Takes what the watcher built since the last call, if anything: swaps in a new
    /// pipeline whose layout is equal to the running one, refuses one whose layout
    /// changed, reports a failed compile. Of several versions built since the last call,
    /// each is handled in order, and the event of the last is returned. Never blocks.
    pub fn poll(&mut self) -> Option<ReloadEvent> {
        self.hot.poll()
    }

    /// Like [`poll`](Self::poll), but waits up to `timeout` for the watcher to build
    /// something (e.g. in a tool that waits for the next save).
    pub fn wait_for_reload(&mut self, timeout: Duration) -> Option<ReloadEvent> {
        self.hot.wait_for_reload(timeout)
    }
}

/// The differences between two pipeline layouts, one line each.
fn layout_diff(old: &PipelineLayout, new: &PipelineLayout) -> String {
    let (a, b) = (old.set_layouts(), new.set_layouts());
    let mut lines = Vec::new();
    for n in 0..a.len().max(b.len()) {
        match (a.get(n), b.get(n)) {
            (Some(x), Some(y)) => {
                if let Some(d) = x.desc().diff(y.desc()) {
                    lines.push(format!(
                        "set {n}: {}",
                        d.replace("set has", "running has")
                            .replace("pipeline expects", "reloaded has")
                    ));
                }
            }
            (Some(_), None) => lines.push(format!("set {n}: the reloaded shader has no set {n}")),
            (None, Some(_)) => lines.push(format!("set {n}: new in the reloaded shader")),
            (None, None) => {}
        }
    }
    if old.push_constant_ranges() != new.push_constant_ranges() {
        let show = |l: &PipelineLayout| {
            l.push_constant_ranges()
                .iter()
                .map(|r| format!("{:?} bytes [{}, {})", r.stages, r.offset, r.offset + r.size))
                .collect::<Vec<_>>()
                .join(", ")
        };
        lines.push(format!(
            "push constants: running [{}], reloaded [{}]",
            show(old),
            show(new)
        ));
    }
    if lines.is_empty() {
        lines.push("the layouts differ".into());
    }
    lines.join("\n")
}
