//! The CPU cost of kiln's automatic barriers per dispatch, for a profiler (`perf record`,
//! `valgrind --tool=callgrind`): the stream of the bench's `dispatch recording` rows
//! (4 pipelines of `six.comp`, 8 sets over 12 buffers, a pseudo-random (pipeline, set)
//! stream) recorded in automatic mode (with and without the last-barrier shortcut) and in
//! manual mode, 10 000 dispatches per recording (recorded, never submitted), and the thread
//! CPU time per dispatch of each mode (best of the rounds, and their mean: what a sampling
//! profiler's shares multiply, `scripts/gpu/profile.sh`).
//!
//! `KILN_VALIDATION=0 cargo run --release -p kiln-bench --example tracker_profile [rounds]`
//! (`TRACKER_MODE=automatic|nocover|manual|known|scoped`: one mode only; `known` is the
//! automatic row's *barriers known* floor, manual mode with `Recorder::barrier` where the
//! tracker placed one, so `automatic` − `known` is the tracker's own cost; `scoped` is the
//! `scoped dispatch recording` row's stream, each dispatch in a timing scope, submitted).
//!
//! `EVICT_KB=n`: after each dispatch, write one word in each cache line of an `n` KiB
//! buffer (inside the timed loop, the same for every build): a stand-in for a driver whose
//! work between two commands evicts the recorder's data from the caches (NVIDIA's does;
//! lavapipe's recording barely touches memory), to compare two builds' cache misses on
//! this machine.

use kiln::Device;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    pad: u32,
    a: f32,
    b: f32,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds = kiln_bench::rounds_arg(30);
    let device = Device::new()?;
    let module = kiln::include_spirv!("six.comp")?;
    let bufs = kiln_bench::six_buffers(&device, "profile six", 12)?;
    let (pipes, sets) = kiln_bench::six_pipelines_and_sets(&device, &module, &bufs)?;
    let seq = kiln_bench::profile_stream(10_000);
    let p = Params {
        n: u32::MAX,
        pad: 0,
        a: 1.0,
        b: 2.0,
    };
    // `TRACKER_MODE=automatic|nocover|manual|known|scoped`: that mode only (one per
    // process, for instruction counts). `known`: manual barriers, `Recorder::barrier` before
    // each dispatch the tracker placed one before (found by a first automatic pass).
    // `scoped` is the bench's `scoped dispatch recording` stream: manual barriers, each
    // dispatch in a timing scope of its own (submitted: its queries are written).
    let only = std::env::var("TRACKER_MODE").ok();
    let evict_kb: usize = std::env::var("EVICT_KB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let evict: Vec<std::cell::Cell<u64>> =
        (0..evict_kb * 128).map(|_| Default::default()).collect();
    let marks = kiln_bench::barrier_places(&device, (&pipes, &sets), &seq, &p)?;
    for name in ["automatic", "nocover", "manual", "known", "scoped"] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let (manual, cover, scoped) = (
            name == "manual" || name == "scoped",
            name != "nocover",
            name == "scoped",
        );
        let (mut best, mut sum) = (f64::MAX, 0.0);
        let mut barriers = 0;
        for _ in 0..rounds {
            let mut t = 0.0;
            let stream = Stream {
                pipes: &pipes,
                sets: &sets,
                seq: &seq,
                p,
                manual: manual || name == "known",
                cover,
                scoped,
                marks: (name == "known").then_some(marks.as_slice()),
                evict: &evict,
            };
            if scoped {
                device.execute(|r| {
                    (t, barriers) = stream.record(r)?;
                    Ok(())
                })?;
            } else {
                // Recorded only, never submitted: no device work runs beside the recording.
                drop(device.record(|r| {
                    (t, barriers) = stream.record(r)?;
                    Ok(())
                })?);
            }
            best = best.min(t / seq.len() as f64);
            sum += t / seq.len() as f64;
        }
        let mean = sum / rounds.max(1) as f64;
        let mode = if name == "nocover" {
            "automatic, last-barrier cover off"
        } else {
            name
        };
        println!(
            "{mode:34} {best:8.1} ns per dispatch (thread CPU, best of {rounds}; mean {mean:.1}), \
             {barriers} barriers"
        );
    }
    Ok(())
}

/// One mode's stream of dispatches (see `main`).
struct Stream<'s> {
    pipes: &'s [kiln::ComputePipeline],
    sets: &'s [kiln::DescriptorSet],
    seq: &'s [(usize, usize)],
    p: Params,
    manual: bool,
    cover: bool,
    scoped: bool,
    /// Known barriers: `Recorder::barrier` before dispatch `i` where `marks[i]` holds the
    /// masks kiln's automatic mode recorded there.
    marks: Option<&'s [Option<kiln_bench::raw::BarrierMasks>]>,
    /// `EVICT_KB`'s buffer (empty: none).
    evict: &'s [std::cell::Cell<u64>],
}

impl<'s> Stream<'s> {
    /// Records the stream; the thread CPU time of the dispatches and the barriers recorded.
    fn record(&self, r: &mut kiln::Recorder<'s, '_>) -> kiln::Result<(f64, u32)> {
        if self.manual {
            r.manual_barriers();
        }
        if !self.cover {
            r.debug_no_last_barrier_cover();
        }
        let t0 = kiln_bench::thread_cpu_ns();
        for (i, &(pi, si)) in self.seq.iter().enumerate() {
            if self.scoped {
                r.begin_scope("dispatch")?;
            }
            r.bind_pipeline(&self.pipes[pi])?;
            r.bind_set(0, &self.sets[si])?;
            r.push(0, &self.p)?;
            if self
                .marks
                .is_some_and(|m| m.get(i).is_some_and(Option::is_some))
            {
                r.barrier()?;
            }
            r.dispatch(1, 1, 1)?;
            if self.scoped {
                r.end_scope()?;
            }
            // One word per 64-byte line.
            for w in self.evict.iter().step_by(8) {
                w.set(w.get().wrapping_add(1));
            }
        }
        Ok((kiln_bench::thread_cpu_ns() - t0, r.barrier_count()))
    }
}
