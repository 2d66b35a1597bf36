//! puffin GPU zones (feature `puffin`): each submission's zones are written as one puffin
//! stream with their own start and end times (puffin's clock: `puffin::now_ns`, to which
//! the zones' host instants are moved) and reported as user scopes of a track named as the
//! kiln queue (`GlobalProfiler::report_user_scopes`); they appear in the frame puffin is
//! collecting. Nothing is written while puffin's scopes are off.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use puffin::{GlobalProfiler, ScopeDetails, StreamInfo, ThreadInfo};

use super::{GpuZone, ZoneSink};

/// `KILN-W017` was logged (once per process).
static WARNED: AtomicBool = AtomicBool::new(false);

/// kiln's puffin sink.
pub(crate) struct PuffinSink;

impl PuffinSink {
    /// The sink when puffin's scopes are on; `None` otherwise, with `KILN-W017` logged
    /// (once per process).
    pub(crate) fn new() -> Option<PuffinSink> {
        if puffin::are_scopes_on() {
            return Some(PuffinSink);
        }
        warn_off();
        None
    }
}

fn warn_off() {
    if !WARNED.swap(true, Ordering::Relaxed) {
        log::warn!(
            "KILN-W017: kiln was built with feature `puffin` but puffin's scopes are off, so \
             no GPU zones go to puffin; call puffin::set_scopes_on(true) before creating the \
             device"
        );
    }
}

impl ZoneSink for PuffinSink {
    fn submission(&self, _queue: usize, queue_name: &str, zones: &[GpuZone]) {
        if !puffin::are_scopes_on() {
            warn_off();
            return;
        }
        // puffin's clock now and the host's: a zone's instant moved onto puffin's clock.
        let (now_ns, now) = (puffin::now_ns(), Instant::now());
        let ns = |t: Instant| {
            let back = i64::try_from(now.saturating_duration_since(t).as_nanos()).unwrap_or(0);
            let ahead = i64::try_from(t.saturating_duration_since(now).as_nanos()).unwrap_or(0);
            now_ns - back + ahead
        };
        let details: Vec<ScopeDetails> = zones
            .iter()
            .map(|z| {
                let d = ScopeDetails::from_scope_name(z.name.clone());
                if z.file.is_empty() {
                    d
                } else {
                    d.with_file(z.file).with_line_nr(z.line)
                }
            })
            .collect();
        let mut profiler = GlobalProfiler::lock();
        let ids = profiler.register_user_scopes(&details);
        let mut info = StreamInfo::default();
        let mut open: Vec<(usize, u32, i64)> = Vec::new();
        let close = |info: &mut StreamInfo, open: &mut Vec<(usize, u32, i64)>, depth: u32| {
            while let Some(&(offset, d, end)) = open.last() {
                if d < depth {
                    break;
                }
                info.stream.end_scope(offset, end);
                info.num_scopes += 1;
                info.range_ns.1 = info.range_ns.1.max(end);
                open.pop();
            }
        };
        for (z, id) in zones.iter().zip(&ids) {
            close(&mut info, &mut open, z.depth);
            let start = ns(z.start);
            let (offset, _) = info.stream.begin_scope(|| start, *id, "");
            info.range_ns.0 = info.range_ns.0.min(start);
            info.depth = info.depth.max(z.depth as usize + 1);
            open.push((offset, z.depth, ns(z.end)));
        }
        close(&mut info, &mut open, 0);
        profiler.report_user_scopes(
            ThreadInfo {
                start_time_ns: None,
                name: queue_name.to_string(),
            },
            &info.as_stream_into_ref(),
        );
    }
}
