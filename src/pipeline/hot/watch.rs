//! The watcher thread of a hot pipeline: its stages, each a source with the files its last
//! compile read (from the depfile, `compile.rs`), their bytes, and the module compiled.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use super::compile::compile;
use crate::error::{PipelineError, Result, ShaderError};
use crate::shaders::ShaderModule;

/// A result of the watcher thread.
pub(crate) enum Built<P> {
    Pipeline(Box<P>),
    Failed(String),
}

/// One stage of a hot pipeline as the watcher sees it.
pub(crate) struct StageWatch {
    source: PathBuf,
    /// glslc's stage name, or `None`: from the file name.
    stage: Option<&'static str>,
    /// The files the last compile read (the source first) and their bytes then (`None`:
    /// could not be read).
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
    /// The last compile's module, or its messages.
    module: std::result::Result<ShaderModule, String>,
}

impl StageWatch {
    /// The first compile of `source`, on the caller's thread, and its module.
    ///
    /// Errors: `KILN-E013` it cannot be read or does not compile.
    pub(crate) fn first(
        source: &Path,
        stage: Option<&'static str>,
    ) -> Result<(Self, ShaderModule), PipelineError> {
        let bytes = std::fs::read(source).map_err(|e| ShaderError::HotReloadCompile {
            source_file: source.to_path_buf(),
            detail: format!("cannot read it: {e}"),
        })?;
        let mut watch = StageWatch {
            source: source.to_path_buf(),
            stage,
            files: vec![(source.to_path_buf(), Some(bytes))],
            module: Err(String::new()),
        };
        let read = vec![watch.files[0].1.clone()];
        watch.compile(&read);
        match &watch.module {
            Ok(m) => {
                let m = m.clone();
                Ok((watch, m))
            }
            Err(detail) => Err(ShaderError::HotReloadCompile {
                source_file: source.to_path_buf(),
                detail: detail.clone(),
            }
            .into()),
        }
    }

    /// The source.
    pub(crate) fn source(&self) -> &Path {
        &self.source
    }

    /// The module of the last successful compile.
    pub(crate) fn module(&self) -> Option<&ShaderModule> {
        self.module.as_ref().ok()
    }

    /// Reads the watched files; if one changed since the last compile, compiles again and
    /// returns true. A source that cannot be read (mid-save) waits for the next round.
    fn refresh(&mut self) -> bool {
        let now: Vec<Option<Vec<u8>>> = self
            .files
            .iter()
            .map(|(p, _)| std::fs::read(p).ok())
            .collect();
        if now.first().is_none_or(Option::is_none) {
            return false;
        }
        if now.iter().zip(&self.files).all(|(n, (_, old))| n == old) {
            return false;
        }
        self.compile(&now);
        true
    }

    /// Compiles the source whose files (as listed now) read `read` just before: the files
    /// of this compile are then watched with those bytes; a file new to the list is read
    /// after the compile. A failed compile keeps the files watched before too (an error
    /// in a header still reloads when the header is fixed).
    fn compile(&mut self, read: &[Option<Vec<u8>>]) {
        let before: Vec<(PathBuf, Option<Vec<u8>>)> = self
            .files
            .iter()
            .map(|(p, _)| p.clone())
            .zip(read.iter().cloned())
            .collect();
        let bytes = read.first().cloned().flatten().unwrap_or_default();
        let compiled = compile(&self.source, &bytes, self.stage);
        let mut paths = compiled.files;
        if compiled.module.is_err() {
            for (p, _) in &before {
                if !paths.contains(p) {
                    paths.push(p.clone());
                }
            }
        }
        self.files = paths
            .into_iter()
            .map(|p| {
                let bytes = match before.iter().find(|(q, _)| *q == p) {
                    Some((_, b)) => b.clone(),
                    None => std::fs::read(&p).ok(),
                };
                (p, bytes)
            })
            .collect();
        self.module = compiled.module;
    }
}

/// The files the stages watch, for [`watched`](super::HotComputePipeline::watched).
pub(crate) type Watched = Arc<Mutex<Vec<PathBuf>>>;

fn publish(watched: &Watched, stages: &[StageWatch]) {
    let files = stages
        .iter()
        .flat_map(|s| s.files.iter().map(|(p, _)| p.clone()))
        .collect();
    *watched.lock().unwrap_or_else(PoisonError::into_inner) = files;
}

/// Starts the watcher thread of `stages`: every `every` it refreshes each stage; when one
/// recompiled, it sends the failures of every stage that does not compile now, or else
/// `build` of the stages' modules (in order).
pub(crate) fn spawn<P: Send + 'static>(
    mut stages: Vec<StageWatch>,
    every: Duration,
    stop: Arc<AtomicBool>,
    watched: Watched,
    tx: Sender<Built<P>>,
    mut build: impl FnMut(&[&ShaderModule]) -> std::result::Result<P, String> + Send + 'static,
) -> std::io::Result<JoinHandle<()>> {
    publish(&watched, &stages);
    std::thread::Builder::new()
        .name("kiln-hot-reload".into())
        .spawn(move || loop {
            std::thread::sleep(every);
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let mut changed = false;
            for s in &mut stages {
                changed |= s.refresh();
            }
            if !changed {
                continue;
            }
            publish(&watched, &stages);
            let failed: Vec<&str> = stages
                .iter()
                .filter_map(|s| s.module.as_ref().err())
                .map(String::as_str)
                .collect();
            let built = if failed.is_empty() {
                let modules: Vec<&ShaderModule> =
                    stages.iter().filter_map(|s| s.module()).collect();
                match build(&modules) {
                    Ok(p) => Built::Pipeline(Box::new(p)),
                    Err(e) => Built::Failed(e),
                }
            } else {
                Built::Failed(failed.join("\n"))
            };
            if tx.send(built).is_err() {
                break;
            }
        })
}
