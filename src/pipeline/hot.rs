//! Shader hot reload (feature `hot-reload`): a compute pipeline whose GLSL/HLSL source is
//! watched, recompiled on change and swapped in at a point the caller chooses.
//!
//! - **Watching** is a background thread per pipeline that reads the source file every
//!   [`HotDesc::poll_interval`] and compares its bytes with the last ones compiled (bytes,
//!   not mtimes: two saves within one timestamp tick still count). Included files are not
//!   watched; save the file that includes them.
//! - **Recompiling** happens on that thread, off the dispatch thread: `glslc` (or
//!   `$KILN_GLSLC`) with the command line kiln-build uses (`--target-env=vulkan1.3`, the
//!   stage from the file name, `-I` the file's folder, a `// kiln: target-env=…` line
//!   honoured), then reflection and `vkCreateComputePipelines` through
//!   [`Device::compute_pipeline`].
//! - **Swapping** happens only in [`HotComputePipeline::poll`], which takes `&mut self`:
//!   no recording can borrow the pipeline while it runs, so the safe point is wherever the
//!   caller calls it (between frames or dispatch batches). Work already submitted keeps
//!   the old `VkPipeline` alive: dropping it retires it until those submissions finish.
//! - A reloaded shader whose **pipeline layout is equal** (interned: the same
//!   `VkPipelineLayout`, so the same set layouts) is swapped in, and every descriptor set
//!   made for the old pipeline binds to the new one. One whose **layout changed** is
//!   refused: the event carries the layout diff and the old pipeline keeps running
//!   (`KILN-W008` is logged). A **compile error** changes nothing: the event carries the
//!   compiler's messages (`KILN-W009` is logged).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::Duration;

use super::{ComputePipeline, PipelineLayout};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::shaders::ShaderModule;

/// How a [`HotComputePipeline`] watches its source.
#[derive(Clone, Debug)]
pub struct HotDesc {
    /// The GLSL (`*.comp`) or HLSL (`*.comp.hlsl`) source.
    pub source: PathBuf,
    /// Entry point (usually `"main"`).
    pub entry: String,
    /// How often the watcher reads the source (default 100 ms).
    pub poll_interval: Duration,
}

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

/// What [`HotComputePipeline::poll`] did.
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

/// A result of the watcher thread.
enum Built {
    Pipeline(Box<ComputePipeline>),
    Failed(String),
}

/// A compute pipeline that follows its source file (feature `hot-reload`; see the module
/// docs). Bind [`pipeline`](Self::pipeline) as usual; call [`poll`](Self::poll) at a safe
/// point to take a reloaded version. Dropping it stops and joins the watcher thread
/// (waiting for a compile in progress).
pub struct HotComputePipeline {
    current: ComputePipeline,
    source: PathBuf,
    rx: Receiver<Built>,
    /// Set on drop: the watcher thread ends at its next wake-up.
    stop: Arc<AtomicBool>,
    /// Joined on drop, so the watcher's device handle is gone when the pipeline is.
    watcher: Option<std::thread::JoinHandle<()>>,
}

impl Drop for HotComputePipeline {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(w) = self.watcher.take() {
            let _ = w.join();
        }
    }
}

impl std::fmt::Debug for HotComputePipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotComputePipeline")
            .field("source", &self.source)
            .field("current", &self.current)
            .finish()
    }
}

impl HotComputePipeline {
    /// Compiles `desc.source` now (the first version must compile) and starts watching it.
    ///
    /// Errors: `KILN-E013` the source cannot be read or compiled (the compiler's messages
    /// in the error), then those of [`Device::compute_pipeline`].
    pub fn new(device: &Device, desc: &HotDesc) -> Result<Self> {
        let bytes = read_source(&desc.source)?;
        let module = compile(&desc.source, &bytes).map_err(|detail| Error::HotReloadCompile {
            source_file: desc.source.clone(),
            detail,
        })?;
        let current = device.compute_pipeline(&module, &desc.entry)?;
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let (device, path, entry, every) = (
            device.clone(),
            desc.source.clone(),
            desc.entry.clone(),
            desc.poll_interval,
        );
        let watcher = std::thread::Builder::new()
            .name("kiln-hot-reload".into())
            .spawn(move || {
                let mut last = bytes;
                loop {
                    std::thread::sleep(every);
                    if stopped.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(now) = std::fs::read(&path) else {
                        continue; // mid-save or removed: try again
                    };
                    if now == last {
                        continue;
                    }
                    last = now;
                    let built = match compile(&path, &last) {
                        Ok(m) => match device.compute_pipeline(&m, &entry) {
                            Ok(p) => Built::Pipeline(Box::new(p)),
                            Err(e) => Built::Failed(e.to_string()),
                        },
                        Err(message) => Built::Failed(message),
                    };
                    if tx.send(built).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| Error::HotReloadCompile {
                source_file: desc.source.clone(),
                detail: format!("cannot start the watcher thread: {e}"),
            })?;
        Ok(HotComputePipeline {
            current,
            source: desc.source.clone(),
            rx,
            stop,
            watcher: Some(watcher),
        })
    }

    /// The pipeline to bind now.
    pub fn pipeline(&self) -> &ComputePipeline {
        &self.current
    }

    /// The watched source.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Takes what the watcher built since the last call, if anything: swaps in a new
    /// pipeline whose layout is equal to the running one, refuses one whose layout
    /// changed, reports a failed compile. Of several versions built since the last call,
    /// each is handled in order, and the event of the last is returned. Never blocks.
    pub fn poll(&mut self) -> Option<ReloadEvent> {
        let mut event = None;
        while let Ok(built) = self.rx.try_recv() {
            event = Some(self.take(built));
        }
        event
    }

    /// Like [`poll`](Self::poll), but waits up to `timeout` for the watcher to build
    /// something (e.g. in a tool that waits for the next save).
    pub fn wait_for_reload(&mut self, timeout: Duration) -> Option<ReloadEvent> {
        let built = self.rx.recv_timeout(timeout).ok()?;
        let first = self.take(built);
        Some(self.poll().unwrap_or(first))
    }

    fn take(&mut self, built: Built) -> ReloadEvent {
        let label = self.source.display().to_string();
        match built {
            Built::Failed(message) => {
                log::warn!("KILN-W009: hot reload of `{label}` failed; the running pipeline stays:\n{message}");
                ReloadEvent::CompileFailed { message }
            }
            Built::Pipeline(p) => {
                if Arc::ptr_eq(p.layout(), self.current.layout()) {
                    self.current = *p;
                    log::info!("hot reload: `{label}` swapped in");
                    ReloadEvent::Swapped
                } else {
                    let diff = layout_diff(self.current.layout(), p.layout());
                    log::warn!(
                        "KILN-W008: hot reload of `{label}` refused: the pipeline layout changed \
                         (existing descriptor sets would not fit); the running pipeline stays:\n{diff}"
                    );
                    ReloadEvent::LayoutChanged { diff }
                }
            }
        }
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

fn read_source(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::HotReloadCompile {
        source_file: path.to_path_buf(),
        detail: format!("cannot read it: {e}"),
    })
}

/// `glslc` on `bytes` (the source as read): kiln-build's command line.
fn compile(path: &Path, bytes: &[u8]) -> std::result::Result<ShaderModule, String> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let (stage, hlsl) = match name.rsplit('.').collect::<Vec<_>>().as_slice() {
        ["hlsl", stage, ..] => (*stage, true),
        [stage, ..] => (*stage, false),
        [] => ("", false),
    };
    const STAGES: &[&str] = &[
        "comp", "vert", "frag", "geom", "tesc", "tese", "mesh", "task",
    ];
    if !STAGES.contains(&stage) {
        return Err(format!(
            "cannot tell the stage of {}; name it *.comp (or *.comp.hlsl)",
            path.display()
        ));
    }
    let text = String::from_utf8_lossy(bytes);
    let env = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("//"))
        .filter_map(|l| l.trim().strip_prefix("kiln:"))
        .find_map(|l| l.trim().strip_prefix("target-env="))
        .map_or("vulkan1.3".to_string(), |e| e.trim().to_string());
    let compiler = std::env::var("KILN_GLSLC").unwrap_or_else(|_| "glslc".into());
    let mut cmd = std::process::Command::new(&compiler);
    cmd.arg(format!("--target-env={env}"))
        .arg(format!("-fshader-stage={stage}"))
        .arg("-o")
        .arg("-");
    if hlsl {
        cmd.arg("-x").arg("hlsl").arg("-fentry-point=main");
    }
    if let Some(dir) = path.parent() {
        cmd.arg("-I").arg(dir);
    }
    let out = cmd
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run `{compiler}` ({e}); install glslc or set KILN_GLSLC"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim_end().to_string());
    }
    ShaderModule::from_bytes(&out.stdout)
        .map(|m| m.with_label(name))
        .map_err(|e| e.to_string())
}
