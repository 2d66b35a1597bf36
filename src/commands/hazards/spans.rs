//! A buffer's spans (`BufferSlot::spans`): a use of a byte range applied to the disjoint
//! spans it overlaps, split at the range's ends and merged back where neighbours become
//! equal.

use super::{Ctx, Need, Span, State, Use};

/// Applies `u` to `[start, end)` of a buffer's spans (splitting spans at the range's ends,
/// creating spans for the parts never used before, merging equal neighbours).
/// The common case, one span that is the whole range, is inlined into the caller.
#[inline(always)]
pub(super) fn apply_range(
    spans: &mut Vec<Span>,
    start: u64,
    end: u64,
    u: Use,
    need: &mut Need,
    ctx: &Ctx,
) {
    if let [only] = spans.as_mut_slice() {
        if only.start == start && only.end == end {
            only.state.apply(u, need, ctx);
            return;
        }
    }
    apply_split(spans, start, end, u, need, ctx);
}

/// [`apply_range`] where the range is not one span already.
#[inline(never)]
fn apply_split(spans: &mut Vec<Span>, start: u64, end: u64, u: Use, need: &mut Need, ctx: &Ctx) {
    let old = std::mem::take(spans);
    let mut out = Vec::with_capacity(old.len() + 2);
    let mut cur = start;
    let fresh = |a: u64, b: u64, out: &mut Vec<Span>| {
        let mut state = State::default();
        state.apply(u, &mut Need::default(), ctx);
        out.push(Span {
            start: a,
            end: b,
            state,
        });
    };
    for sp in old {
        if sp.end <= start || sp.start >= end {
            if sp.start >= end && cur < end {
                fresh(cur, end, &mut out);
                cur = end;
            }
            out.push(sp);
            continue;
        }
        if sp.start < start {
            out.push(Span { end: start, ..sp });
        }
        let (os, oe) = (sp.start.max(start), sp.end.min(end));
        if cur < os {
            fresh(cur, os, &mut out);
        }
        let mut state = sp.state;
        state.apply(u, need, ctx);
        out.push(Span {
            start: os,
            end: oe,
            state,
        });
        cur = oe;
        if sp.end > end {
            out.push(Span { start: end, ..sp });
        }
    }
    if cur < end {
        fresh(cur, end, &mut out);
    }
    // Equal neighbours become one span (a buffer used whole again returns to one span).
    // Command stamps count as equal when every barrier, recorded or to come, covers both
    // or neither (`class`); the later ones are kept.
    out.dedup_by(|b, a| {
        let class = |stamp: u32| {
            if stamp < ctx.cover {
                0 // covered by the last barrier, and by every later one
            } else if stamp < ctx.cmd {
                1 // covered by any barrier recorded for this command or a later one
            } else if stamp == ctx.cmd {
                2 // this command's: covered by a barrier of a later command
            } else {
                3
            }
        };
        let unstamped = |s: &State| {
            (
                State {
                    write_cmd: 0,
                    read_cmd: 0,
                    ..*s
                },
                class(s.write_cmd),
                class(s.read_cmd),
            )
        };
        if a.end == b.start && unstamped(&a.state) == unstamped(&b.state) {
            a.end = b.end;
            a.state.write_cmd = a.state.write_cmd.max(b.state.write_cmd);
            a.state.read_cmd = a.state.read_cmd.max(b.state.read_cmd);
            true
        } else {
            false
        }
    });
    *spans = out;
}
