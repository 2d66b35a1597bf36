//! The Chrome-trace / Perfetto profile: `KILN_TRACE=path.json` (written when the device
//! drops) or [`Device::start_trace`](crate::Device::start_trace) and
//! [`Device::write_trace`](crate::Device::write_trace).
//!
//! While a trace is on, kiln records **CPU spans** on the thread that does the work —
//! `record` (the recording closure and the command buffer's begin/end), `submit`
//! (`vkQueueSubmit2` with the waits and stamps around it) and `wait` (the host waiting for
//! the submission) — and, for every submission waited for, its **GPU time and scopes** on
//! one track per kiln queue (`GPU queue 0 (Main)` …), placed on the same clock through the
//! calibrated timestamps (`device::timestamps`; the fallback puts the GPU end at the
//! moment the wait saw it complete). Every submission is timed while a trace is on
//! (`KILN_TRACE` turns `DeviceDesc::timing` on; after `start_trace`, scopes are timed and
//! plain submissions show as CPU spans only unless the device times submissions).
//!
//! The file is the Trace Event Format's JSON object form (`{"traceEvents": [...]}`):
//! complete events (`"ph": "X"`, `ts`/`dur` in microseconds from the trace's start) and
//! `thread_name` metadata events; chrome://tracing and ui.perfetto.dev open it. It is
//! written by hand (a few fixed fields, strings escaped): the library gains no JSON
//! dependency. The same CPU work is also a `tracing` span each (`kiln.record`,
//! `kiln.submit`, `kiln.wait`, with the label), for `tracing` subscribers (tracy,
//! tracing-chrome …); without a subscriber they cost a relaxed atomic load.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::timing::GpuTimings;
use crate::device::{LayerSlot, Shared};
use crate::error::{Result, SubmissionError};

/// Events kept at most (a long-running program keeps the first ones).
const MAX_EVENTS: usize = 1 << 20;

/// The track (`tid`) of kiln queue `q`'s GPU work.
const GPU_TRACK: u64 = 1 << 20;

struct Event {
    name: String,
    cat: &'static str,
    tid: u64,
    /// Microseconds since the trace started.
    ts: f64,
    dur: f64,
    /// `args.label` (the submission's), or empty.
    label: String,
}

struct State {
    epoch: Instant,
    events: Vec<Event>,
    /// Names of the GPU tracks, by kiln queue.
    gpu_tracks: Vec<String>,
    /// CPU threads seen: (kiln's number for it, its name).
    threads: Vec<(u64, String)>,
}

/// The trace of one device (a layer slot of the submission layer).
pub(crate) struct Trace {
    on: AtomicBool,
    state: Mutex<Option<State>>,
    /// `KILN_TRACE`: written at teardown.
    path: Option<PathBuf>,
}

thread_local! {
    static THREAD: u64 = {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };
}

/// A CPU span being measured (`None` when no trace is on).
pub(crate) struct Span<'t> {
    trace: &'t Trace,
    name: &'static str,
    start: Instant,
}

impl Trace {
    /// A trace that is on from the start when `KILN_TRACE` names a file.
    pub(crate) fn from_env(shared: &Shared) -> Trace {
        let path = std::env::var_os("KILN_TRACE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let t = Trace {
            on: AtomicBool::new(false),
            state: Mutex::new(None),
            path,
        };
        if t.path.is_some() {
            t.start(shared);
        }
        t
    }

    /// Starts (or restarts, dropping what was recorded) the trace.
    pub(crate) fn start(&self, shared: &Shared) {
        let gpu_tracks = shared
            .queues
            .iter()
            .enumerate()
            .map(|(i, q)| format!("GPU queue {i} ({:?})", q.planned.kind))
            .collect();
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(State {
            epoch: Instant::now(),
            events: Vec::new(),
            gpu_tracks,
            threads: Vec::new(),
        });
        self.on.store(true, Ordering::Release);
    }

    /// Whether a trace is on.
    #[inline]
    pub(crate) fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Starts a CPU span named `name` when a trace is on.
    #[inline]
    pub(crate) fn span(&self, name: &'static str) -> Option<Span<'_>> {
        self.on().then(|| Span {
            trace: self,
            name,
            start: Instant::now(),
        })
    }

    fn push(&self, e: impl FnOnce(&mut State) -> Event) {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = g.as_mut() {
            if s.events.len() < MAX_EVENTS {
                let e = e(s);
                s.events.push(e);
            }
        }
    }

    /// Adds a submission's GPU time and scopes on queue `queue`'s track.
    pub(crate) fn gpu(&self, queue: usize, t: &GpuTimings) {
        let tid = GPU_TRACK + queue as u64;
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(s) = g.as_mut() else { return };
        let start = micros(s.epoch, t.start);
        if s.events.len() + t.scopes.len() + 1 > MAX_EVENTS {
            return;
        }
        s.events.push(Event {
            name: t.label.clone(),
            cat: "gpu",
            tid,
            ts: start,
            dur: t.gpu_ns as f64 / 1000.0,
            label: t.label.clone(),
        });
        for sc in &t.scopes {
            s.events.push(Event {
                name: sc.name.clone(),
                cat: "gpu",
                tid,
                ts: start + sc.start_ns as f64 / 1000.0,
                dur: sc.duration_ns as f64 / 1000.0,
                label: t.label.clone(),
            });
        }
    }

    /// The trace as Trace Event Format JSON (see the module docs).
    pub(crate) fn json(&self) -> String {
        let g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::from("{\"traceEvents\":[\n");
        let Some(s) = g.as_ref() else {
            out.push_str("],\"displayTimeUnit\":\"ns\"}\n");
            return out;
        };
        let mut first = true;
        let mut sep = |out: &mut String| {
            if !first {
                out.push_str(",\n");
            }
            first = false;
        };
        for (tid, name) in &s.threads {
            sep(&mut out);
            meta(&mut out, *tid, name);
        }
        for (q, name) in s.gpu_tracks.iter().enumerate() {
            sep(&mut out);
            meta(&mut out, GPU_TRACK + q as u64, name);
        }
        for e in &s.events {
            sep(&mut out);
            let _ = write!(
                out,
                "{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{:.3},\"dur\":{:.3},\"args\":{{\"label\":{}}}}}",
                quote(&e.name),
                e.cat,
                e.tid,
                e.ts,
                e.dur,
                quote(&e.label)
            );
        }
        out.push_str("\n],\"displayTimeUnit\":\"ns\"}\n");
        out
    }

    /// Writes the trace to `path`. Errors: `KILN-E129`.
    pub(crate) fn write(&self, path: &Path) -> Result<(), SubmissionError> {
        std::fs::write(path, self.json()).map_err(|source| SubmissionError::TraceWrite {
            path: path.to_path_buf(),
            source,
        })
    }
}

impl Span<'_> {
    /// Ends the span, naming the submission `label`.
    pub(crate) fn end(self, label: &str) {
        let end = Instant::now();
        let tid = THREAD.with(|t| *t);
        self.trace.push(|s| {
            if !s.threads.iter().any(|(t, _)| *t == tid) {
                let name = std::thread::current()
                    .name()
                    .map_or_else(|| format!("thread {tid}"), |n| format!("{n} ({tid})"));
                s.threads.push((tid, name));
            }
            Event {
                name: self.name.to_string(),
                cat: "cpu",
                tid,
                ts: micros(s.epoch, self.start),
                dur: (end - self.start).as_secs_f64() * 1e6,
                label: label.to_string(),
            }
        });
    }
}

/// Microseconds from `epoch` to `t` (negative before it).
fn micros(epoch: Instant, t: Instant) -> f64 {
    match t.checked_duration_since(epoch) {
        Some(d) => d.as_secs_f64() * 1e6,
        None => -((epoch - t).as_secs_f64() * 1e6),
    }
}

/// A `thread_name` metadata event.
fn meta(out: &mut String, tid: u64, name: &str) {
    let _ = write!(
        out,
        "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{tid},\"args\":{{\"name\":{}}}}}",
        quote(name)
    );
}

/// `s` as a JSON string.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

impl LayerSlot for Trace {
    fn teardown(&mut self, _device: &Shared) {
        let Some(path) = &self.path else { return };
        if let Err(e) = self.write(path) {
            log::warn!("KILN-W006: the KILN_TRACE file is not written: {e}");
        } else {
            log::info!("kiln: trace written to {}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn strings_are_escaped_for_json() {
        assert_eq!(quote("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }
}
