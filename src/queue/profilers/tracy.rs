//! Tracy GPU zones (feature `tracy`): a `tracy_client` GPU context per kiln queue, named
//! as the queue, whose clock is nanoseconds since the sink was made (period 1 ns, its
//! first timestamp taken at the same host instant, so Tracy lines the GPU zones up with
//! its CPU zones); each submission's zones are allocated, ended and given their start and
//! end times in the nesting order Tracy needs ([`begin_end_order`](super::begin_end_order)).

use std::sync::Mutex;
use std::time::Instant;

use tracy_client::{Client, GpuContext, GpuContextType};

use super::{begin_end_order, GpuZone, ZoneSink};

/// kiln's Tracy sink: the GPU contexts, made when a queue first reports.
pub(crate) struct TracySink {
    client: Client,
    epoch: Instant,
    contexts: Mutex<Vec<Option<GpuContext>>>,
}

impl TracySink {
    /// The sink where a Tracy client runs; `None` otherwise, with `KILN-W016` logged (once
    /// per process).
    pub(crate) fn new(names: &[String]) -> Option<TracySink> {
        let Some(client) = Client::running() else {
            static WARNED: std::sync::atomic::AtomicBool =
                std::sync::atomic::AtomicBool::new(false);
            if WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                return None;
            }
            log::warn!(
                "KILN-W016: kiln was built with feature `tracy` but no Tracy client runs, so \
                 no GPU zones go to Tracy; call tracy_client::Client::start() before \
                 creating the device"
            );
            return None;
        };
        Some(TracySink {
            client,
            epoch: Instant::now(),
            contexts: Mutex::new(names.iter().map(|_| None).collect()),
        })
    }

    /// Nanoseconds of `t` since the sink's epoch (0 before it).
    fn ns(&self, t: Instant) -> i64 {
        i64::try_from(t.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(i64::MAX)
    }
}

impl ZoneSink for TracySink {
    fn submission(&self, queue: usize, queue_name: &str, zones: &[GpuZone]) {
        let mut contexts = self.contexts.lock().unwrap_or_else(|p| p.into_inner());
        let Some(slot) = contexts.get_mut(queue) else {
            return;
        };
        if slot.is_none() {
            let now = self.ns(Instant::now());
            match self.client.clone().new_gpu_context(
                Some(queue_name),
                GpuContextType::Vulkan,
                now,
                1.0,
            ) {
                Ok(c) => *slot = Some(c),
                Err(e) => {
                    log::warn!("KILN-W016: no Tracy GPU context for `{queue_name}`: {e}");
                    return;
                }
            }
        }
        let Some(context) = slot.as_ref() else { return };
        let mut spans: Vec<Option<tracy_client::GpuSpan>> = zones.iter().map(|_| None).collect();
        for (i, begin) in begin_end_order(zones) {
            let Some(z) = zones.get(i) else { continue };
            if begin {
                let file = if z.file.is_empty() { "kiln" } else { z.file };
                if let (Ok(span), Some(s)) = (
                    context.span_alloc(&z.name, "", file, z.line),
                    spans.get_mut(i),
                ) {
                    *s = Some(span);
                }
            } else if let Some(mut span) = spans.get_mut(i).and_then(Option::take) {
                span.end_zone();
                span.upload_timestamp_start(self.ns(z.start));
                span.upload_timestamp_end(self.ns(z.end));
            }
        }
    }
}
