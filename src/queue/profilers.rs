//! GPU zones for live profilers: every waited, timed submission becomes a zone on its
//! queue's track with one nested zone per timing scope ([`GpuZone`]), handed to each
//! [`ZoneSink`] of the device. kiln's own sinks, each behind a cargo feature: **Tracy**
//! (feature `tracy`: a `tracy_client` GPU context per kiln queue, `profilers/tracy.rs`) and
//! **puffin** (feature `puffin`: a track per queue, `profilers/puffin.rs`); an application
//! adds its own with [`Device::add_zone_sink`](crate::Device::add_zone_sink). The
//! Chrome/Perfetto trace (`KILN_TRACE`) is independent of them.
//!
//! **Times.** A zone's `start` and `end` are host `Instant`s: the submission's first GPU
//! timestamp placed on the host clock with the calibrated GPU and host clocks
//! (`VK_KHR/EXT_calibrated_timestamps`, `GpuTimings::calibrated`) or, without them, an
//! upper bound from when the host saw the submission complete; the scopes are offsets from
//! it in GPU nanoseconds (`timestampPeriod`). So a GPU zone lines up with the CPU zones the
//! profiler records on the same clock.
//!
//! **When.** Zones are emitted when a submission is waited for (`Submission::wait`,
//! `wait_timed`, `execute`): a sink turns on whole-submission timing (two timestamp queries
//! per submission, `DeviceDesc::timing`). A submission only dropped is not reported.
//!
//! **Warnings.** `KILN-W016`: feature `tracy` without a running `tracy_client::Client`
//! (start one before creating the device); `KILN-W017`: feature `puffin` with puffin's
//! scopes off (`puffin::set_scopes_on(true)` before creating the device). Each is logged
//! once per process; the device then has no such sink (and no timing for it), and works
//! as without the feature.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::timing::GpuTimings;
use crate::device::{LayerSlot, Shared};

#[cfg(feature = "puffin")]
mod puffin;
#[cfg(feature = "tracy")]
mod tracy;

/// One GPU zone: a submission (depth 0) or one of its timing scopes (depth ≥ 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuZone {
    /// The kiln queue the work ran on (its track).
    pub queue: usize,
    /// The submission's label (depth 0) or the scope's name.
    pub name: String,
    /// 0: the submission; a scope's nesting depth + 1.
    pub depth: u32,
    /// When the GPU started it, on the host clock (see the module docs).
    pub start: Instant,
    /// When the GPU finished it; `end >= start`.
    pub end: Instant,
    /// Where the scope was opened (empty for a submission).
    pub file: &'static str,
    /// Line of `file` (0 for a submission).
    pub line: u32,
}

/// Receives the GPU zones of each waited, timed submission (see the module docs).
pub trait ZoneSink: Send + Sync {
    /// The zones of one submission on kiln queue `queue` (named `queue_name`, e.g.
    /// `kiln queue 0 (Main)`): the submission first, then its scopes in the order they were
    /// opened, each nested in the zone before it of smaller depth.
    fn submission(&self, queue: usize, queue_name: &str, zones: &[GpuZone]);
}

/// The zones of `t`, a submission of kiln queue `queue` (see [`ZoneSink::submission`]).
pub fn zones_of(queue: usize, t: &GpuTimings) -> Vec<GpuZone> {
    let at = |ns: u64| t.start + Duration::from_nanos(ns);
    let mut zones = Vec::with_capacity(t.scopes.len() + 1);
    zones.push(GpuZone {
        queue,
        name: t.label.clone(),
        depth: 0,
        start: t.start,
        end: at(t.gpu_ns),
        file: "",
        line: 0,
    });
    for s in &t.scopes {
        zones.push(GpuZone {
            queue,
            name: s.name.clone(),
            depth: s.depth + 1,
            start: at(s.start_ns),
            end: at(s.start_ns + s.duration_ns),
            file: s.file,
            line: s.line,
        });
    }
    zones
}

/// The order in which a profiler that takes zones as begin/end events (Tracy's GPU zones)
/// must see `zones` (from [`zones_of`]): `(index, true)` begins zone `index`, `(index,
/// false)` ends it; every zone ends before a zone of the same or smaller depth begins.
pub fn begin_end_order(zones: &[GpuZone]) -> Vec<(usize, bool)> {
    let mut order = Vec::with_capacity(zones.len() * 2);
    let mut open: Vec<usize> = Vec::new();
    for (i, z) in zones.iter().enumerate() {
        while let Some(&top) = open.last() {
            if zones.get(top).is_some_and(|t| t.depth >= z.depth) {
                order.push((top, false));
                open.pop();
            } else {
                break;
            }
        }
        order.push((i, true));
        open.push(i);
    }
    while let Some(top) = open.pop() {
        order.push((top, false));
    }
    order
}

/// The sinks of one device (a layer slot of the submission layer).
pub(crate) struct Profilers {
    on: AtomicBool,
    sinks: Mutex<Vec<Arc<dyn ZoneSink>>>,
    names: Vec<String>,
}

impl LayerSlot for Profilers {
    /// Drops the sinks (a Tracy GPU context per queue lives until then).
    fn teardown(&mut self, _device: &Shared) {
        self.sinks.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

impl Profilers {
    /// The device's profilers: those of the features kiln was built with.
    pub(crate) fn new(shared: &Shared) -> Profilers {
        // A track per kiln queue, emulated ones too (which share a `VkQueue`).
        let names: Vec<String> = (shared.queues.iter().enumerate())
            .map(|(i, q)| format!("kiln queue {i} ({:?})", q.planned.kind))
            .collect();
        #[allow(unused_mut)]
        let mut sinks: Vec<Arc<dyn ZoneSink>> = Vec::new();
        #[cfg(feature = "tracy")]
        if let Some(s) = tracy::TracySink::new(&names) {
            sinks.push(Arc::new(s));
        }
        #[cfg(feature = "puffin")]
        if let Some(p) = puffin::PuffinSink::new() {
            let puffin: Arc<dyn ZoneSink> = Arc::new(p);
            sinks.push(puffin);
        }
        if !sinks.is_empty() {
            shared.timing.store(true, Ordering::Relaxed);
        }
        Profilers {
            on: AtomicBool::new(!sinks.is_empty()),
            sinks: Mutex::new(sinks),
            names,
        }
    }

    /// Whether any sink wants zones (one relaxed load).
    #[inline]
    pub(crate) fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    pub(crate) fn add(&self, shared: &Shared, sink: Arc<dyn ZoneSink>) {
        self.sinks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(sink);
        shared.timing.store(true, Ordering::Relaxed);
        self.on.store(true, Ordering::Relaxed);
    }

    /// Hands the zones of `t` (waited on kiln queue `queue`) to every sink.
    pub(crate) fn submission(&self, queue: usize, t: &GpuTimings) {
        let zones = zones_of(queue, t);
        let name = self.names.get(queue).map_or("kiln queue", String::as_str);
        let sinks = self.sinks.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for s in sinks {
            s.submission(queue, name, &zones);
        }
    }
}

impl crate::Device {
    /// Adds `sink`, which then receives the GPU zones of every waited submission (see
    /// `kiln::ZoneSink`); turns on whole-submission timing (`DeviceDesc::timing`).
    pub fn add_zone_sink(&self, sink: Arc<dyn ZoneSink>) {
        if let Ok(p) = self.shared.slot::<Profilers>() {
            p.add(&self.shared, sink);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScopeTiming;

    fn scope(name: &str, depth: u32, start_ns: u64, duration_ns: u64) -> ScopeTiming {
        ScopeTiming {
            name: name.into(),
            depth,
            start_ns,
            duration_ns,
            file: "src/a.rs",
            line: 7,
        }
    }

    /// A frame: `outer` holding `a` (holding `a1`) and `b`, then `last`.
    fn frame() -> GpuTimings {
        GpuTimings {
            label: "frame".into(),
            gpu_ns: 1000,
            scopes: vec![
                scope("outer", 0, 10, 500),
                scope("a", 1, 20, 100),
                scope("a1", 2, 30, 50),
                scope("b", 1, 200, 100),
                scope("last", 0, 600, 300),
            ],
            start: Instant::now(),
            calibrated: true,
        }
    }

    #[test]
    fn zones_are_the_submission_then_its_scopes_one_deeper_on_the_host_clock() {
        let t = frame();
        let z = zones_of(3, &t);
        let got: Vec<_> = z
            .iter()
            .map(|z| (z.queue, z.name.as_str(), z.depth, z.line))
            .collect();
        assert_eq!(
            got,
            vec![
                (3, "frame", 0, 0),
                (3, "outer", 1, 7),
                (3, "a", 2, 7),
                (3, "a1", 3, 7),
                (3, "b", 2, 7),
                (3, "last", 1, 7),
            ]
        );
        let ns = |i: Instant| i.duration_since(t.start).as_nanos() as u64;
        let times: Vec<_> = z.iter().map(|z| (ns(z.start), ns(z.end))).collect();
        assert_eq!(
            times,
            vec![
                (0, 1000),
                (10, 510),
                (20, 120),
                (30, 80),
                (200, 300),
                (600, 900)
            ]
        );
    }

    #[test]
    fn begin_end_order_closes_every_zone_before_a_sibling_opens() {
        let z = zones_of(0, &frame());
        let order = begin_end_order(&z);
        let named: Vec<_> = order
            .iter()
            .map(|&(i, begin)| format!("{}{}", if begin { "+" } else { "-" }, z[i].name))
            .collect();
        assert_eq!(
            named.join(" "),
            "+frame +outer +a +a1 -a1 -a +b -b -outer +last -last -frame"
        );
    }
}
