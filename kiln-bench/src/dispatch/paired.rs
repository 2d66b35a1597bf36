//! The automatic row's stream judged in pairs of chunks: kiln's recording and raw's command
//! buffer open side by side, each round's stream cut into chunks of [`CHUNK`] dispatches,
//! and each chunk recorded by kiln and by raw in turn (which goes first alternates). A pair
//! runs within about a millisecond of the host, so on a host whose speed moves between
//! modes from round to round (the H100 virtual machines of 2026-12-05) both sides of a pair
//! see the same mode, and the median of the pairs' ratios compares kiln and raw where the
//! best of whole rounds compares two draws of the host.

use std::ops::Range;
use std::time::Instant;

use kiln::Device;

use super::super::raw::{BarrierMasks, Ctx, Raw};
use super::super::{median, ns_since, percentile, BenchResult};
use super::{raw_stream, Fixture, Params};

/// Dispatches per chunk (~0.5–1 ms on the H100).
pub(super) const CHUNK: usize = 500;

/// What the pairs say: the median, first and third quartile of their ratios (kiln / raw),
/// the medians of kiln's and raw's ns per dispatch in them, and their number.
pub(crate) struct Paired {
    pub median: f64,
    pub q1: f64,
    pub q3: f64,
    pub kiln_ns: f64,
    pub raw_ns: f64,
    pub pairs: usize,
}

/// [`Paired`] over `rounds` rounds of `seq`. `marks`: raw's barriers (kiln's, found by a
/// first kiln pass), one per dispatch of `seq`.
pub(super) fn paired_ratios(
    device: &Device,
    raw: &Raw,
    fx: &Fixture,
    ctx: &Ctx,
    (seq, marks): (&[(usize, usize)], &[Option<BarrierMasks>]),
    p: &Params,
    rounds: usize,
) -> BenchResult<Paired> {
    pairs(
        device,
        (raw, ctx),
        (seq.len(), rounds),
        || Ok(()),
        |rec, part| {
            for &d in &seq[part] {
                fx.kiln_dispatch(rec, d, p)?;
            }
            Ok(())
        },
        |part| raw_stream(raw, fx, ctx, &seq[part.clone()], p, &marks[part], None),
    )
}

/// [`Paired`] over `rounds` rounds of `n` dispatches cut into chunks of [`CHUNK`]: each
/// chunk recorded by `kiln_side` (one kiln recording per round, `Device::execute`) and by
/// `raw_side` (into `raw`'s command buffer of `ctx`, begun before and submitted after each
/// round), which goes first alternating; `before_round` runs before each round (outside the
/// pairs' clocks).
pub(crate) fn pairs<'q>(
    device: &'q Device,
    (raw, ctx): (&Raw, &Ctx),
    (n, rounds): (usize, usize),
    mut before_round: impl FnMut() -> BenchResult<()>,
    mut kiln_side: impl for<'r> FnMut(&mut kiln::Recorder<'q, 'r>, Range<usize>) -> kiln::Result<()>,
    mut raw_side: impl FnMut(Range<usize>),
) -> BenchResult<Paired> {
    let (mut ratios, mut ks, mut rs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        before_round()?;
        raw.begin(ctx)?;
        device.execute(|rec| {
            for (i, start) in (0..n).step_by(CHUNK).enumerate() {
                let part = start..(start + CHUNK).min(n);
                let (mut k, mut r) = (0.0, 0.0);
                for kiln_first in [i % 2 == 0, i % 2 == 1] {
                    let t0 = Instant::now();
                    if kiln_first {
                        kiln_side(rec, part.clone())?;
                        k = ns_since(t0);
                    } else {
                        raw_side(part.clone());
                        r = ns_since(t0);
                    }
                }
                if r > 0.0 {
                    ratios.push(k / r);
                    ks.push(k / part.len() as f64);
                    rs.push(r / part.len() as f64);
                }
            }
            Ok(())
        })?;
        raw.submit_wait(ctx)?;
    }
    Ok(Paired {
        median: median(&mut ratios),
        q1: percentile(&mut ratios, 0.25),
        q3: percentile(&mut ratios, 0.75),
        kiln_ns: median(&mut ks),
        raw_ns: median(&mut rs),
        pairs: ratios.len(),
    })
}

impl Paired {
    /// The note's text after the row's name: median, quartiles, medians per op, pairs.
    pub(crate) fn describe(&self, op: &str) -> String {
        format!(
            "paired chunks: kiln / raw median {:.3}x (quartiles {:.3}x–{:.3}x; medians kiln \
             {:.1} ns, raw {:.1} ns a {op}; {} pairs of {} {op}es, kiln and raw in turn \
             inside each round)",
            self.median, self.q1, self.q3, self.kiln_ns, self.raw_ns, self.pairs, CHUNK
        )
    }
}
