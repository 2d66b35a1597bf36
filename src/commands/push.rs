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
                bound.pushed = true;
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
        bound.pushed = true;
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

/// Splits [offset, end) at every range boundary; each piece gets the stages of the ranges
/// containing it. A piece no range contains is an error.
pub(crate) fn push_segments(
    ranges: &[PushConstantRange],
    offset: u32,
    end: u32,
) -> Result<Vec<(u32, u32, vk::ShaderStageFlags)>> {
    let describe = || {
        ranges
            .iter()
            .map(|r| format!("{:?}[{}, {})", r.stages, r.offset, r.offset + r.size))
            .collect::<Vec<_>>()
            .join(", ")
    };
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
