//! The compiled buffer uses of (bound set, pipeline access) pairs ([`SetUses`]): listed and
//! resolved once per recording, applied by later dispatches and draws as they are.

use std::sync::atomic::{AtomicU32, Ordering};

use super::super::hazards::{merge_uses, Map, Res, Tracker, Use, UseLanes, UsesSummary};

/// The buffer uses of each (bound set, pipeline access of its set number) pair a recording
/// dispatched with, resolved by its tracker once: a later dispatch with the same pair
/// copies them (one hash lookup per bound set) instead of walking the set's bindings and
/// looking up each buffer. Valid for the whole recording: both are borrowed for it (a set
/// cannot be written, a pipeline's access cannot change) and tracker slots are never
/// removed. A pair whose set holds images (moved to their layouts at each use) is marked
/// and listed binding by binding every time.
#[derive(Default)]
pub(crate) struct SetUses {
    pub(super) index: Map<u32>,
    pub(super) entries: Vec<Compiled>,
    pub(super) uses: Vec<(Res, Use)>,
    /// Entry indices direct-mapped by their pair's hash (`HINTS` slots once `reserve` ran;
    /// each verified against the entry): a dispatch's lookup before `index`. A set's own
    /// hint (`draw_entry`) names one entry of the set, and a set dispatched with several
    /// pipelines has one per pipeline access.
    pub(super) hints: Vec<u32>,
}

/// Slots of `SetUses::hints`.
const HINTS: usize = 256;

pub(super) struct Compiled {
    pub(super) set: usize,
    pub(super) access: usize,
    /// The uses: `uses[start..end]`.
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) images: bool,
    /// Every use reads only.
    pub(super) read_only: bool,
    /// The tracker's `changes` when a draw last applied the uses, as reads that needed
    /// nothing (`u64::MAX`: not yet; see `Recorder::draw_repeats_reads`).
    pub(super) applied: u64,
    /// The uses' summary, for `Tracker::apply_compiled`.
    pub(super) summary: UsesSummary,
    /// The tracker generation at which a dispatch last applied the uses (`u32::MAX`: none):
    /// at the same generation they are warm (`Tracker::apply_compiled`).
    pub(super) warm_gen: u32,
    /// The uses in the tracker's compute lanes (`None`: not all in their domain).
    pub(super) lanes: Option<UseLanes>,
}

impl SetUses {
    /// The key of (set, access) in `index`.
    #[inline]
    pub(super) fn key(set: usize, access: usize) -> u64 {
        (set as u64).rotate_left(32) ^ access as u64
    }

    /// Entry `i`, if it is the one of (set, access): how every hint is verified.
    #[inline(always)]
    fn entry_of(&self, i: u32, set: usize, access: usize) -> Option<&Compiled> {
        self.entries
            .get(i as usize)
            .filter(|e| e.set == set && e.access == access)
    }

    /// The index of the entry of (set, access), if compiled.
    #[inline]
    pub(super) fn find(&self, set: usize, access: usize) -> Option<u32> {
        let i = *self.index.get(&Self::key(set, access))?;
        self.entry_of(i, set, access).map(|_| i)
    }

    /// [`find`](Self::find) through `hints` first (the hint updated).
    #[inline(always)]
    pub(super) fn find_hinted(&mut self, set: usize, access: usize) -> Option<u32> {
        let h = (Self::key(set, access).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize;
        if let Some(&i) = self.hints.get(h) {
            if self.entry_of(i, set, access).is_some() {
                return Some(i);
            }
        }
        let i = self.find(set, access)?;
        if let Some(hint) = self.hints.get_mut(h) {
            *hint = i;
        }
        Some(i)
    }

    /// [`find_hinted`](Self::find_hinted) through the set's own hint `own` first
    /// (`DescriptorSet::dispatch_entry`, which other recordings may have overwritten with
    /// an index into their caches: verified like the others); both hints updated.
    #[inline(always)]
    pub(super) fn find_own_hinted(
        &mut self,
        own: &AtomicU32,
        set: usize,
        access: usize,
    ) -> Option<u32> {
        let i = own.load(Ordering::Relaxed);
        if self.entry_of(i, set, access).is_some() {
            return Some(i);
        }
        let i = self.find_hinted(set, access)?;
        own.store(i, Ordering::Relaxed);
        Some(i)
    }

    /// The entry of (set, access), if compiled.
    #[inline]
    pub(super) fn get(&self, set: usize, access: usize) -> Option<&Compiled> {
        self.entries.get(self.find(set, access)? as usize)
    }

    /// Whether the read-only uses of (set, access) were applied by a draw at `changes`;
    /// `hint`: the index of their entry, as `mark_applied` returned it (verified).
    #[inline]
    pub(in crate::commands) fn applied_at(
        &self,
        hint: u32,
        set: usize,
        access: usize,
        changes: u64,
    ) -> bool {
        self.entry_of(hint, set, access)
            .is_some_and(|c| c.applied == changes && !c.images)
    }

    /// Marks the uses of (set, access), if compiled and read-only, as applied at
    /// `changes`; returns the index of their entry (the hint of `applied_at`).
    pub(super) fn mark_applied(&mut self, set: usize, access: usize, changes: u64) -> Option<u32> {
        let i = self.find(set, access)?;
        let e = self.entries.get_mut(i as usize)?;
        if e.read_only && !e.images {
            e.applied = changes;
            return Some(i);
        }
        None
    }

    /// Room for the uses of a few sets (see `set_uses`).
    pub(super) fn reserve(&mut self) {
        self.uses.reserve(128);
        self.hints = vec![u32::MAX; HINTS];
        self.entries.reserve(32);
        self.index.reserve(32);
    }

    /// Stores (set, access) with the uses `uses[from..]` (or marks it: `images`), resolved
    /// by `tracker`; a key taken by another pair (a hash collision) keeps the first.
    pub(super) fn insert(
        &mut self,
        set: usize,
        access: usize,
        from: usize,
        images: bool,
        tracker: &Tracker,
    ) {
        let key = Self::key(set, access);
        let next = self.entries.len() as u32;
        if *self.index.entry(key).or_insert(next) != next {
            self.uses.truncate(from);
            return;
        }
        let mut mine = self.uses.split_off(from);
        merge_uses(&mut mine);
        let read_only = mine.iter().all(|(_, u)| u.write.is_empty());
        let start = self.uses.len() as u32;
        let summary = UsesSummary::of(&mine);
        let lanes = (!images).then(|| tracker.use_lanes(&mine)).flatten();
        if !images {
            self.uses.extend_from_slice(&mine);
        }
        self.entries.push(Compiled {
            set,
            access,
            start,
            end: self.uses.len() as u32,
            images,
            read_only,
            applied: u64::MAX,
            summary,
            warm_gen: u32::MAX,
            lanes,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Review of the hint table: 600 pairs (many sharing a hint slot, and pairs that share
    /// a set or an access) looked up through the hints in an order that makes every slot
    /// name another pair between lookups: a hint answers only for its own pair (the same
    /// entry as the hash map), and a pair never compiled is never found (a set dispatched
    /// with a pipeline it was not compiled for, a pipeline with a set it was not).
    #[test]
    fn a_hint_answers_only_for_its_own_pair() {
        let mut u = SetUses::default();
        u.reserve();
        let pairs: Vec<(usize, usize)> = (0..600)
            .map(|i| (0x1000 + 64 * (i % 37), 0x9000 + 48 * (i / 37)))
            .collect();
        for &(s, a) in &pairs {
            u.insert(s, a, u.uses.len(), false, &Tracker::default());
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let (s, a) = pairs[(state % pairs.len() as u64) as usize];
            let hinted = u.find_hinted(s, a);
            assert_eq!(hinted, u.find(s, a), "pair ({s:#x}, {a:#x})");
            let e = &u.entries[hinted.expect("compiled") as usize];
            assert_eq!((e.set, e.access), (s, a));
            // Same set, an access it was never compiled with; same access, another set.
            assert_eq!(u.find_hinted(s, a + 8), None);
            assert_eq!(u.find_hinted(s + 8, a), None);
        }
    }

    /// A set's own hint: unset, or an index another recording's cache gave it (naming
    /// another pair here, or no entry at all), it is verified and replaced by the pair's
    /// entry; then it answers alone. A pair never compiled leaves it as it was.
    #[test]
    fn a_sets_own_hint_is_verified_then_updated() {
        let mut u = SetUses::default();
        u.reserve();
        for (s, a) in [(0x100, 0x900), (0x140, 0x900), (0x100, 0x930)] {
            u.insert(s, a, u.uses.len(), false, &Tracker::default());
        }
        for stale in [u32::MAX, 0, 1, 99] {
            let own = AtomicU32::new(stale);
            assert_eq!(
                u.find_own_hinted(&own, 0x100, 0x930),
                Some(2),
                "stale {stale}"
            );
            assert_eq!(own.load(Ordering::Relaxed), 2);
            assert_eq!(u.find_own_hinted(&own, 0x100, 0x930), Some(2));
        }
        let own = AtomicU32::new(1);
        assert_eq!(u.find_own_hinted(&own, 0x140, 0x930), None);
        assert_eq!(own.load(Ordering::Relaxed), 1);
    }
}
