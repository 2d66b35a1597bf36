//! Per-subresource state of an image: a value per (mip level, array layer), stored as
//! ranges ([`SubresourceMap`]), and the ranges commands name ([`Subresources`]).
//!
//! The map has the shape of wgpu-core's range tracker (`track/range.rs`: per mip, sorted,
//! disjoint layer ranges each holding one value, split where a command touches part of
//! them and merged back where neighbours become equal), with one addition for the common
//! case: an image whose subresources all hold one value is one value (`Whole`), with no
//! allocation, and a command naming the whole image updates it in one step. A map returns
//! to `Whole` as soon as its ranges hold one value again.
//!
//! Cost: `Whole` with a whole-image range is one call of the closure; otherwise one step
//! per (mip, layer range) the command's range overlaps, plus the coalescing of the mips it
//! touched.

use std::ops::Range;

use ash::vk;

/// A range of mip levels and array layers of one image (all its aspects): what one
/// command, view or barrier names. Build one with [`Subresources::all`],
/// [`Subresources::mip`], [`Subresources::layer`] or [`Subresources::new`]; a range past
/// the image's levels or layers is refused where it is used (`KILN-E180`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Subresources {
    /// First mip level.
    pub base_mip: u32,
    /// Number of mip levels (`u32::MAX`: to the last).
    pub mip_count: u32,
    /// First array layer (a cube's faces are layers 0..6).
    pub base_layer: u32,
    /// Number of layers (`u32::MAX`: to the last).
    pub layer_count: u32,
}

impl Subresources {
    /// Every mip level and layer.
    pub const fn all() -> Self {
        Subresources {
            base_mip: 0,
            mip_count: u32::MAX,
            base_layer: 0,
            layer_count: u32::MAX,
        }
    }

    /// Mip levels `mips` of layers `layers`.
    pub const fn new(mips: Range<u32>, layers: Range<u32>) -> Self {
        Subresources {
            base_mip: mips.start,
            mip_count: mips.end.saturating_sub(mips.start),
            base_layer: layers.start,
            layer_count: layers.end.saturating_sub(layers.start),
        }
    }

    /// Mip level `mip` of every layer.
    pub const fn mip(mip: u32) -> Self {
        Subresources {
            base_mip: mip,
            mip_count: 1,
            base_layer: 0,
            layer_count: u32::MAX,
        }
    }

    /// Array layer `layer` (every mip level).
    pub const fn layer(layer: u32) -> Self {
        Subresources {
            base_mip: 0,
            mip_count: u32::MAX,
            base_layer: layer,
            layer_count: 1,
        }
    }

    /// The mip levels, resolved against an image of `levels` levels.
    pub(crate) fn mips(&self, levels: u32) -> Range<u32> {
        let end = self.base_mip.saturating_add(self.mip_count).min(levels);
        self.base_mip.min(end)..end
    }

    /// The layers, resolved against an image of `layers` layers.
    pub(crate) fn layers(&self, layers: u32) -> Range<u32> {
        let end = self.base_layer.saturating_add(self.layer_count).min(layers);
        self.base_layer.min(end)..end
    }

    /// Whether the range names at least one subresource and none past an image of `levels`
    /// levels and `layers` layers (`u32::MAX` counts: to the last).
    pub(crate) fn fits(&self, levels: u32, layers: u32) -> bool {
        let ok = |base: u32, count: u32, n: u32| {
            count != 0 && base < n && (count == u32::MAX || base.saturating_add(count) <= n)
        };
        ok(self.base_mip, self.mip_count, levels) && ok(self.base_layer, self.layer_count, layers)
    }

    /// The same range with explicit counts for an image of `levels` levels and `layers`
    /// layers.
    pub(crate) fn resolve(&self, levels: u32, layers: u32) -> Self {
        let (m, l) = (self.mips(levels), self.layers(layers));
        Subresources::new(m, l)
    }

    /// The Vulkan range of `aspect` (counts resolved against the image).
    pub(crate) fn vk(
        &self,
        aspect: vk::ImageAspectFlags,
        levels: u32,
        layers: u32,
    ) -> vk::ImageSubresourceRange {
        let (m, l) = (self.mips(levels), self.layers(layers));
        vk::ImageSubresourceRange {
            aspect_mask: aspect,
            base_mip_level: m.start,
            level_count: m.end - m.start,
            base_array_layer: l.start,
            layer_count: l.end - l.start,
        }
    }

    /// Whether the two ranges share a subresource of an image of `levels` levels and
    /// `layers` layers.
    pub(crate) fn overlaps(&self, other: &Subresources, levels: u32, layers: u32) -> bool {
        let meet = |a: Range<u32>, b: Range<u32>| a.start.max(b.start) < a.end.min(b.end);
        meet(self.mips(levels), other.mips(levels))
            && meet(self.layers(layers), other.layers(layers))
    }

    /// Whether the range covers every subresource of an image of `levels` levels and
    /// `layers` layers.
    pub(crate) fn covers(&self, levels: u32, layers: u32) -> bool {
        self.mips(levels) == (0..levels) && self.layers(layers) == (0..layers)
    }
}

/// A value per (mip level, array layer) of one image (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SubresourceMap<T> {
    levels: u32,
    layers: u32,
    repr: Repr<T>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr<T> {
    /// Every subresource holds this value.
    Whole(T),
    /// Per mip level: sorted, disjoint layer ranges covering `0..layers`, neighbours
    /// unequal.
    Split(Vec<Vec<(Range<u32>, T)>>),
}

impl<T: Copy + PartialEq> SubresourceMap<T> {
    /// An image of `levels` mip levels and `layers` layers (at least 1 each), every
    /// subresource holding `value`.
    pub(crate) fn new(levels: u32, layers: u32, value: T) -> Self {
        SubresourceMap {
            levels: levels.max(1),
            layers: layers.max(1),
            repr: Repr::Whole(value),
        }
    }

    /// The value every subresource holds, when they hold one.
    #[inline]
    pub(crate) fn uniform(&self) -> Option<T> {
        match &self.repr {
            Repr::Whole(v) => Some(*v),
            Repr::Split(_) => None,
        }
    }

    /// The value of mip `mip`, layer `layer` (`None`: outside the image).
    pub(crate) fn get(&self, mip: u32, layer: u32) -> Option<T> {
        if mip >= self.levels || layer >= self.layers {
            return None;
        }
        match &self.repr {
            Repr::Whole(v) => Some(*v),
            Repr::Split(mips) => mips
                .get(mip as usize)?
                .iter()
                .find(|(r, _)| r.contains(&layer))
                .map(|(_, v)| *v),
        }
    }

    /// Calls `f` with each piece of `range` (mip levels, layers) of one value: where the
    /// map is one value and `range` covers the image, once.
    pub(crate) fn for_each(&self, range: Subresources, mut f: impl FnMut(Subresources, T)) {
        let (mr, lr) = (range.mips(self.levels), range.layers(self.layers));
        match &self.repr {
            Repr::Whole(v) => {
                if !mr.is_empty() && !lr.is_empty() {
                    f(Subresources::new(mr, lr), *v)
                }
            }
            Repr::Split(mips) => {
                for m in mr {
                    for (r, v) in &mips[m as usize] {
                        let (s, e) = (r.start.max(lr.start), r.end.min(lr.end));
                        if s < e {
                            f(Subresources::new(m..m + 1, s..e), *v);
                        }
                    }
                }
            }
        }
    }

    /// Calls `f` on the value of each piece of `range` (splitting pieces at its edges),
    /// then merges equal neighbours (back to one value where all are equal). `f` sees each
    /// piece once with its range.
    pub(crate) fn update(&mut self, range: Subresources, mut f: impl FnMut(Subresources, &mut T)) {
        let (mr, lr) = (range.mips(self.levels), range.layers(self.layers));
        if mr.is_empty() || lr.is_empty() {
            return;
        }
        if let Repr::Whole(v) = &mut self.repr {
            if mr == (0..self.levels) && lr == (0..self.layers) {
                // The fast path: no allocation.
                f(Subresources::new(mr, lr), v);
                return;
            }
            let v = *v;
            let full = 0..self.layers;
            self.repr = Repr::Split((0..self.levels).map(|_| vec![(full.clone(), v)]).collect());
        }
        let Repr::Split(mips) = &mut self.repr else {
            return;
        };
        for m in mr {
            let ranges = &mut mips[m as usize];
            isolate(ranges, &lr);
            for (r, v) in ranges.iter_mut() {
                if r.start >= lr.start && r.end <= lr.end {
                    f(Subresources::new(m..m + 1, r.clone()), v);
                }
            }
            coalesce(ranges);
        }
        let first = mips[0][0].1;
        if mips.iter().all(|r| r.len() == 1 && r[0].1 == first) {
            self.repr = Repr::Whole(first);
        }
    }

    /// The values of the first subresource where `self` and `other` differ (`None`: equal
    /// everywhere; maps of one image).
    pub(crate) fn first_difference(&self, other: &Self) -> Option<(T, T)> {
        let mut found = None;
        self.for_each(Subresources::all(), |r, a| {
            other.for_each(r, |_, b| {
                if a != b && found.is_none() {
                    found = Some((a, b));
                }
            })
        });
        found
    }

    /// Sets every subresource of `range` to `value`.
    pub(crate) fn set(&mut self, range: Subresources, value: T) {
        self.update(range, |_, v| *v = value);
    }
}

/// Splits `ranges` (sorted, disjoint, covering) at the edges of `at`.
fn isolate<T: Copy>(ranges: &mut Vec<(Range<u32>, T)>, at: &Range<u32>) {
    for edge in [at.start, at.end] {
        if let Some(i) = ranges
            .iter()
            .position(|(r, _)| r.start < edge && edge < r.end)
        {
            let (r, v) = ranges[i].clone();
            ranges[i].0.end = edge;
            ranges.insert(i + 1, (edge..r.end, v));
        }
    }
}

/// Merges equal neighbours of `ranges`.
fn coalesce<T: Copy + PartialEq>(ranges: &mut Vec<(Range<u32>, T)>) {
    ranges.dedup_by(|b, a| {
        if a.0.end == b.0.start && a.1 == b.1 {
            a.0.end = b.0.end;
            true
        } else {
            false
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(m: &SubresourceMap<u8>, r: Subresources) -> Vec<(Range<u32>, Range<u32>, u8)> {
        let mut out = Vec::new();
        m.for_each(r, |s, v| out.push((s.mips(99), s.layers(99), v)));
        out
    }

    #[test]
    fn a_whole_image_range_keeps_one_value() {
        let mut m = SubresourceMap::new(4, 6, 0u8);
        let mut calls = 0;
        m.update(Subresources::all(), |s, v| {
            calls += 1;
            assert_eq!(s, Subresources::new(0..4, 0..6));
            *v = 7;
        });
        assert_eq!(calls, 1);
        assert_eq!(m.uniform(), Some(7));
        assert_eq!(m, SubresourceMap::new(4, 6, 7));
    }

    #[test]
    fn one_mip_and_one_layer_split_and_merge_back() {
        let mut m = SubresourceMap::new(3, 4, 0u8);
        m.set(Subresources::mip(1), 5);
        assert_eq!(m.uniform(), None);
        assert_eq!(
            (m.get(0, 0), m.get(1, 3), m.get(2, 0)),
            (Some(0), Some(5), Some(0))
        );
        m.set(Subresources::layer(2), 9);
        assert_eq!(
            pieces(&m, Subresources::all()),
            vec![
                (0..1, 0..2, 0),
                (0..1, 2..3, 9),
                (0..1, 3..4, 0),
                (1..2, 0..2, 5),
                (1..2, 2..3, 9),
                (1..2, 3..4, 5),
                (2..3, 0..2, 0),
                (2..3, 2..3, 9),
                (2..3, 3..4, 0),
            ]
        );
        // A part of the image: only the pieces inside it, cut at its edges.
        assert_eq!(
            pieces(&m, Subresources::new(1..2, 1..3)),
            vec![(1..2, 1..2, 5), (1..2, 2..3, 9)]
        );
        // Everything equal again: one value.
        m.set(Subresources::mip(1), 0);
        m.set(Subresources::layer(2), 0);
        assert_eq!(m.uniform(), Some(0));
        assert_eq!(m, SubresourceMap::new(3, 4, 0));
    }

    #[test]
    fn update_sees_each_piece_once_and_ranges_clamp() {
        let mut m = SubresourceMap::new(2, 8, 0u8);
        m.set(Subresources::new(0..1, 2..5), 1);
        let mut seen = Vec::new();
        m.update(Subresources::new(0..2, 4..u32::MAX), |s, v| {
            seen.push((s.mips(99), s.layers(99), *v));
            *v += 10;
        });
        assert_eq!(
            seen,
            vec![(0..1, 4..5, 1), (0..1, 5..8, 0), (1..2, 4..8, 0)]
        );
        assert_eq!(
            pieces(&m, Subresources::mip(0)),
            vec![
                (0..1, 0..2, 0),
                (0..1, 2..4, 1),
                (0..1, 4..5, 11),
                (0..1, 5..8, 10)
            ]
        );
        assert_eq!(m.get(1, 3), Some(0));
        assert_eq!(m.get(2, 0), None);
        let whole = SubresourceMap::new(2, 8, 0u8);
        assert_eq!(m.first_difference(&whole), Some((1, 0)));
        assert_eq!(whole.first_difference(&whole.clone()), None);
        // Past the image: nothing.
        m.update(Subresources::mip(5), |_, _| panic!("outside"));
    }

    #[test]
    fn ranges_resolve_and_fit() {
        let r = Subresources::mip(2);
        assert!(r.fits(3, 6));
        assert!(!r.fits(2, 6));
        assert_eq!(r.resolve(3, 6), Subresources::new(2..3, 0..6));
        assert!(Subresources::all().covers(5, 5));
        assert!(!Subresources::layer(0).covers(1, 2));
        assert!(Subresources::layer(0).covers(1, 1));
        assert!(!Subresources::new(0..0, 0..1).fits(1, 1));
        assert!(Subresources::mip(1).overlaps(&Subresources::layer(3), 2, 4));
        assert!(!Subresources::mip(1).overlaps(&Subresources::mip(0), 2, 4));
        assert!(!Subresources::layer(1).overlaps(&Subresources::layer(2), 2, 4));
        let v = Subresources::new(1..3, 2..4).vk(vk::ImageAspectFlags::COLOR, 4, 4);
        assert_eq!(
            (
                v.base_mip_level,
                v.level_count,
                v.base_array_layer,
                v.layer_count
            ),
            (1, 2, 2, 2)
        );
    }
}
