//! What a submission reports about itself: its GPU timings ([`GpuTimings`], read from the
//! timestamps its recording wrote, `commands::scope`), the description its errors carry
//! (label and scopes), and the validation errors raised while it ran
//! (`DeviceDesc::validation_fail`, `KILN-E121`).
//!
//! Timings are read only once the queue's timeline says the submission completed, without
//! `VK_QUERY_RESULT_WAIT_BIT` (`device::timestamps`): reading never stalls the queue. Tick
//! differences are taken modulo the family's `timestampValidBits` and converted with the
//! device's `timestampPeriod` (ns per tick, Vulkan spec §18.5).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::commands::TimedWork;
use crate::device::Shared;
use crate::error::{DeviceError, Result, SubmissionError};

/// GPU timings of one submission (see [`Submission::wait_timed`](crate::Submission::wait_timed)).
#[derive(Clone, Debug, PartialEq)]
pub struct GpuTimings {
    /// The submission's label (`"execute"`, `"submit"`, `"recording"` or the caller's).
    pub label: String,
    /// Nanoseconds from the submission's first timestamp to its last: its whole command
    /// buffer when the device times every submission (`DeviceDesc::timing`), else from its
    /// first scope's start to the end of its command buffer.
    pub gpu_ns: u64,
    /// Every scope, in the order they were opened (depth 0: outermost).
    pub scopes: Vec<ScopeTiming>,
    /// The host instant of the submission's first GPU timestamp: calibrated when
    /// `calibrated` is true, else estimated from the host time the completion was seen
    /// (an upper bound).
    pub start: Instant,
    /// The GPU and host clocks were read together (`VK_KHR/EXT_calibrated_timestamps`).
    pub calibrated: bool,
}

/// One scope's GPU time (see [`Recorder::scope`](crate::Recorder::scope)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeTiming {
    /// The name given to `scope`/`begin_scope`.
    pub name: String,
    /// Nesting depth (0: not inside another scope).
    pub depth: u32,
    /// Nanoseconds from the submission's first timestamp to the scope's start.
    pub start_ns: u64,
    /// Nanoseconds from the scope's start to its end.
    pub duration_ns: u64,
    /// Where the scope was opened (Rust source file and line).
    pub file: &'static str,
    /// Line of `file`.
    pub line: u32,
}

impl GpuTimings {
    /// The first scope named `name`.
    pub fn scope(&self, name: &str) -> Option<&ScopeTiming> {
        self.scopes.iter().find(|s| s.name == name)
    }
}

/// `label (scopes: a, b)`: how errors name a submission.
pub(crate) fn describe(label: &str, timed: Option<&TimedWork>) -> String {
    match timed {
        Some(t) if !t.scopes.is_empty() => {
            let names: Vec<&str> = t.scopes.iter().map(|s| s.name_in(&t.names)).collect();
            format!("{label} (scopes: {})", names.join(", "))
        }
        _ => label.to_string(),
    }
}

/// `e` with the submission described (label and scopes) when it is a timeout or a lost
/// device.
pub(crate) fn with_description(
    e: DeviceError,
    label: &str,
    timed: Option<&TimedWork>,
) -> DeviceError {
    match e {
        DeviceError::Timeout {
            call, ms, report, ..
        } => DeviceError::Timeout {
            call,
            ms,
            label: describe(label, timed),
            report,
        },
        DeviceError::DeviceLost { call, report, .. } => DeviceError::DeviceLost {
            call,
            label: describe(label, timed),
            report,
        },
        e => e,
    }
}

/// `KILN-E121` if the device fails submissions on validation errors and errors were counted
/// after `errors_from`.
pub(crate) fn check_validation(
    shared: &Shared,
    errors_from: u32,
    label: &str,
    timed: Option<&TimedWork>,
) -> Result<(), SubmissionError> {
    if !shared.validation_fail {
        return Ok(());
    }
    let (count, messages) = shared.instance.messenger.errors_since(errors_from);
    if count == 0 {
        return Ok(());
    }
    Err(SubmissionError::ValidationFailed {
        label: describe(label, timed),
        count,
        messages: messages.join("\n"),
    })
}

/// The errors counted so far (where a submission starts watching).
pub(crate) fn error_mark(shared: &Shared) -> u32 {
    if shared.validation_fail {
        shared.instance.messenger.error_count()
    } else {
        0
    }
}

/// Reads the timings of a completed submission (`generation`: the one it was submitted
/// with); `None` when a query is not available yet. `seen` is when the host saw it
/// complete (the clock fallback).
///
/// Errors: `KILN-E124` a later submission of the same recording overwrote them.
pub(crate) fn read(
    shared: &Shared,
    timed: &Arc<TimedWork>,
    generation: u64,
    label: &str,
    seen: Instant,
) -> Result<Option<GpuTimings>, SubmissionError> {
    if timed.generation.load(Ordering::Acquire) != generation {
        return Err(SubmissionError::TimingsUnavailable {
            label: label.to_string(),
            why: "a later submission of its Recording reset them; read them before submitting \
                  the recording again",
        });
    }
    let Some(ticks) = shared.read_lease(&timed.lease, timed.queries)? else {
        return Ok(None);
    };
    let mask = shared.timestamps.mask(timed.lease.queue);
    let period = shared.timestamps.period_ns;
    let tick = |q: u32| ticks.get(q as usize).copied().unwrap_or(0);
    let ns = |from: u64, to: u64| (to.wrapping_sub(from) & mask) as f64 * period;
    let (first, last) = match timed.submission {
        Some((b, e)) => (tick(b), tick(e)),
        None => (0, 0),
    };
    let scopes = timed
        .scopes
        .iter()
        .map(|s| ScopeTiming {
            name: s.name_in(&timed.names).to_string(),
            depth: s.depth,
            start_ns: ns(first, tick(s.begin)) as u64,
            duration_ns: ns(tick(s.begin), tick(s.end)) as u64,
            file: s.location.file(),
            line: s.location.line(),
        })
        .collect();
    let (start, calibrated) = match shared.gpu_clock() {
        Some((now_ticks, now)) => {
            let back = Duration::from_nanos(ns(first, now_ticks) as u64);
            (now.checked_sub(back).unwrap_or(now), true)
        }
        None => {
            let back = Duration::from_nanos(ns(first, last) as u64);
            (seen.checked_sub(back).unwrap_or(seen), false)
        }
    };
    Ok(Some(GpuTimings {
        label: label.to_string(),
        gpu_ns: ns(first, last) as u64,
        scopes,
        start,
        calibrated,
    }))
}
