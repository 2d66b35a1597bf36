//! Push constants, split by range so each piece goes with exactly the stages that declare
//! it.

use ash::vk;

use super::Recorder;
use crate::error::{Error, Result};
use crate::pipeline::PushConstantRange;

impl Recorder<'_, '_> {
    /// Pushes `bytes` at byte `offset`. The stage flags come from the layout: each piece of
    /// the bytes goes with exactly the stages whose ranges contain it
    /// (VUID-vkCmdPushConstants-offset-01795, -01796).
    ///
    /// Errors: `KILN-E252` no pipeline bound, `KILN-E250` bytes outside every range.
    #[inline(always)]
    #[track_caller]
    pub fn push_constants(&mut self, offset: u32, bytes: &[u8]) -> Result<()> {
        self.at(std::panic::Location::caller());
        let Some(bound) = self.bound[usize::from(self.current_graphics)].as_mut() else {
            return Err(Error::NoPipelineBound {
                what: "push_constants",
            });
        };
        // Fast path (no allocation): aligned, non-empty bytes that every range overlapping
        // them contains whole, so one call with the union of their stages satisfies both
        // VUIDs. Anything else (errors included) takes `push_pieces`.
        let end = u32::try_from(bytes.len())
            .ok()
            .and_then(|n| offset.checked_add(n));
        if let Some(end) = end.filter(|&e| e > offset && (offset | e).is_multiple_of(4)) {
            let mut stages = vk::ShaderStageFlags::empty();
            let mut whole = true;
            for r in bound.layout.push_constant_ranges() {
                let (lo, hi) = (r.offset, r.offset + r.size);
                if lo < end && offset < hi {
                    whole &= lo <= offset && end <= hi;
                    stages |= r.stages;
                }
            }
            if whole && !stages.is_empty() {
                // SAFETY: [offset, end) lies inside every range of `stages` and overlaps no
                // other range.
                unsafe {
                    self.shared.raw.cmd_push_constants(
                        self.cb,
                        bound.layout.raw(),
                        stages,
                        offset,
                        bytes,
                    )
                };
                bound.pushed.add(offset, end);
                return Ok(());
            }
        }
        self.push_pieces(offset, bytes)
    }

    /// `push_constants` off its fast path: the errors, and bytes that straddle range
    /// boundaries (one call per piece, each with the stages of the ranges containing it).
    #[cold]
    #[inline(never)]
    fn push_pieces(&mut self, offset: u32, bytes: &[u8]) -> Result<()> {
        let Some(bound) = self.bound[usize::from(self.current_graphics)].as_mut() else {
            return Err(Error::NoPipelineBound {
                what: "push_constants",
            });
        };
        let ranges = bound.layout.push_constant_ranges();
        let end = u32::try_from(bytes.len())
            .ok()
            .and_then(|n| offset.checked_add(n))
            .ok_or_else(|| Error::PushConstantsOutOfRange {
                offset,
                end: u32::MAX,
                ranges: format!("{ranges:?} ({} bytes do not fit in 32 bits)", bytes.len()),
            })?;
        for (lo, hi, stages) in push_segments(ranges, offset, end)? {
            let piece = &bytes[(lo - offset) as usize..(hi - offset) as usize];
            // SAFETY: [lo, hi) lies inside every range of `stages` and overlaps no other.
            unsafe {
                self.shared
                    .raw
                    .cmd_push_constants(self.cb, bound.layout.raw(), stages, lo, piece)
            };
        }
        bound.pushed.add(offset, end);
        Ok(())
    }

    /// Pushes a `Pod` value at byte `offset` (see [`push_constants`](Self::push_constants)).
    #[inline(always)]
    #[track_caller]
    pub fn push<T: bytemuck::Pod>(&mut self, offset: u32, value: &T) -> Result<()> {
        self.at(std::panic::Location::caller());
        self.push_constants(offset, bytemuck::bytes_of(value))
    }
}

/// Push ranges as people read them: `COMPUTE bytes [0, 16)`, `VERTEX | FRAGMENT bytes
/// [0, 64)`.
pub(crate) fn describe_ranges(ranges: &[PushConstantRange]) -> String {
    ranges
        .iter()
        .map(|r| format!("{:?} bytes [{}, {})", r.stages, r.offset, r.offset + r.size))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Words of push-constant space pushed so far: bit `i` of `low` is bytes `[4i, 4i + 4)`
/// for the first 256 bytes (every device's `maxPushConstantsSize` is at least 128, most
/// are 256); `high` is set once anything at or past byte 256 was pushed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Words {
    low: u64,
    high: bool,
}

impl Words {
    /// The words `[offset, end)` covers (bytes, multiples of 4 once checked).
    pub(crate) fn of(offset: u32, end: u32) -> Words {
        let lo = (offset / 4).min(64);
        let hi = end.div_ceil(4).min(64);
        let low = if hi > lo {
            (u64::MAX >> (64 - (hi - lo))) << lo
        } else {
            0
        };
        Words {
            low,
            high: end > 256,
        }
    }

    /// Marks `[offset, end)` pushed.
    #[inline(always)]
    pub(crate) fn add(&mut self, offset: u32, end: u32) {
        let w = Words::of(offset, end);
        self.low |= w.low;
        self.high |= w.high;
    }
}

/// The bytes of `ranges` not in `pushed`, as `[4, 8), [12, 16)`; `None` when all were.
pub(crate) fn missing(ranges: &[PushConstantRange], pushed: Words) -> Option<String> {
    let mut need = Words::default();
    for r in ranges {
        need.add(r.offset, r.offset + r.size);
    }
    let gap = need.low & !pushed.low;
    let mut out = Vec::new();
    let mut i = 0u32;
    while i < 64 {
        if gap & (1 << i) != 0 {
            let start = i;
            while i < 64 && gap & (1 << i) != 0 {
                i += 1;
            }
            out.push(format!("[{}, {})", start * 4, i * 4));
        } else {
            i += 1;
        }
    }
    if need.high && !pushed.high {
        out.push("[256, ..)".into());
    }
    (!out.is_empty()).then(|| out.join(", "))
}

/// Splits [offset, end) at every range boundary; each piece gets the stages of the ranges
/// containing it. A piece no range contains is an error.
pub(crate) fn push_segments(
    ranges: &[PushConstantRange],
    offset: u32,
    end: u32,
) -> Result<Vec<(u32, u32, vk::ShaderStageFlags)>> {
    let describe = || describe_ranges(ranges);
    if !offset.is_multiple_of(4) || !end.is_multiple_of(4) || end <= offset {
        return Err(Error::PushConstantsOutOfRange {
            offset,
            end,
            ranges: format!("{} (offset and size must be multiples of 4)", describe()),
        });
    }
    let mut cuts = vec![offset, end];
    for r in ranges {
        for c in [r.offset, r.offset + r.size] {
            if c > offset && c < end {
                cuts.push(c);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<(u32, u32, vk::ShaderStageFlags)> = Vec::new();
    for w in cuts.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        let stages = ranges
            .iter()
            .filter(|r| r.offset <= lo && hi <= r.offset + r.size)
            .fold(vk::ShaderStageFlags::empty(), |s, r| s | r.stages);
        if stages.is_empty() {
            return Err(Error::PushConstantsOutOfRange {
                offset,
                end,
                ranges: describe(),
            });
        }
        match out.last_mut() {
            Some(last) if last.2 == stages && last.1 == lo => last.1 = hi,
            _ => out.push((lo, hi, stages)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(stages: vk::ShaderStageFlags, offset: u32, size: u32) -> PushConstantRange {
        PushConstantRange {
            stages,
            offset,
            size,
        }
    }

    #[test]
    fn words_track_what_was_pushed() {
        let c = vk::ShaderStageFlags::COMPUTE;
        let ranges = [r(c, 0, 8)];
        let mut w = Words::default();
        w.add(0, 4);
        assert_eq!(missing(&ranges, w).as_deref(), Some("[4, 8)"));
        w.add(4, 8);
        assert_eq!(missing(&ranges, w), None);
        let ranges = [r(c, 0, 16), r(vk::ShaderStageFlags::VERTEX, 240, 32)];
        let mut w = Words::default();
        w.add(4, 8);
        assert_eq!(
            missing(&ranges, w).as_deref(),
            Some("[0, 4), [8, 16), [240, 256), [256, ..)")
        );
        assert_eq!(Words::of(0, 256).low, u64::MAX);
        assert_eq!(
            describe_ranges(&ranges),
            "COMPUTE bytes [0, 16), VERTEX bytes [240, 272)"
        );
    }

    #[test]
    fn segments_split_overlapping_ranges() {
        let v = vk::ShaderStageFlags::VERTEX;
        let f = vk::ShaderStageFlags::FRAGMENT;
        let ranges = [r(v, 0, 64), r(f, 0, 16)];
        let s = push_segments(&ranges, 0, 64).unwrap();
        assert_eq!(s, vec![(0, 16, v | f), (16, 64, v)]);
        let s = push_segments(&ranges, 4, 8).unwrap();
        assert_eq!(s, vec![(4, 8, v | f)]);
        assert!(push_segments(&ranges, 60, 68).is_err());
        assert!(push_segments(&ranges, 2, 6).is_err());
    }
}
