//! The hazard tracker behind the automatic barriers: per buffer byte range and per image
//! subresource (mip level, array layer), the last write (stage, access), where that write
//! is visible already and the stages that read it since ([`Tracker`]). A command's uses go
//! through [`Tracker::apply`], which says which barrier ([`Need`]) the command needs first:
//!
//! - a read after a write (RAW) needs the write's stage and access → the read's, unless an
//!   earlier barrier made the write visible to that stage and access already;
//! - a write after a write (WAW) needs the same, with the write's access, also when reads
//!   came in between (their barrier made the write visible to the readers only);
//! - a write after reads (WAR) needs an execution dependency from the reading stages;
//! - reads after reads need nothing, and neither do uses of disjoint byte ranges or of
//!   other subresources of an image (rendering into mip 1 while sampling mip 0).
//!
//! An image's states live in a `SubresourceMap` (`device/subresources.rs`): one state while
//! every subresource shares one (a command on the whole image, the common case, is one
//! step and no allocation), else per mip level sorted layer ranges, split where a command
//! names part of the image (a copy of one level, a view's mips and layers) and merged back
//! where neighbours become equal. A use applies its step to each piece of its range; a
//! layout transition of a range resets the state of that range only
//! ([`Tracker::transitioned`]), and the source scope of a later transition of a range is
//! what the recording did with those subresources ([`Tracker::image_src`]).
//!
//! The state of a resource changes only when a command uses it, so the cost of a command
//! is the number of resources it uses, never the length of the recording. Buffers live in
//! slots ([`Res`]): a [`Key`] is resolved to its slot by one hash lookup
//! ([`Tracker::resolve`]), and a resolved use ([`Tracker::apply_resolved`]) needs none, so
//! the recorder resolves a bound set's buffers once per recording and pipeline (the
//! compiled uses of `automatic`). A full barrier clears every slot at once (a generation
//! count), so [`Tracker::reset`] costs nothing per resource.
//!
//! **Compute lanes.** The states of buffers used only by compute shaders (storage and
//! uniform accesses) outside rendering scopes fit in a few bits each, so those of the first
//! 64 buffer slots can live as bit lanes, one word per bit, and a bound set's compiled uses
//! step all their buffers in one pass of word operations (`lanes`: the domain, the
//! encoding, and why it is exact). A buffer leaves its lane for its span whenever anything
//! else uses it, and comes back at its next compute use.
//!
//! **The last barrier covers every resource.** A barrier is global (`VkMemoryBarrier2`):
//! it orders every access in its first scope before every access in its second, not only
//! the resource it was recorded for. The recorder reports each barrier it records for a
//! command ([`Tracker::recorded`]); each state remembers the command of its last write and
//! last read, so a later use of a resource last accessed before that barrier, in stages and
//! accesses the barrier covers, needs nothing more (two independent chains recorded
//! interleaved, A0 B0 A1 B1 ...: the barrier before A1 orders B0 before B1 too, one
//! barrier per level instead of one per dispatch). Only the last barrier is kept (constant
//! cost); a barrier that is not the last may still make a later one unnecessary for some
//! resource, so the tracker may record more barriers than the fewest possible, never fewer
//! than needed.
//!
//! **Rendering scopes.** No barrier may be recorded inside a rendering scope, and a draw's
//! resources are known only at the draw. So when a scope begins the tracker flushes: one
//! barrier from every write and read recorded since the last flush to every graphics stage
//! ([`Tracker::flush`]); inside the scope, uses of resources last touched before the flush
//! need nothing. A use that conflicts with an earlier draw of the same scope (a fragment
//! shader writing a storage buffer a later draw reads) cannot be ordered there: the
//! tracker returns the barrier it needs as outside a scope, and the recorder splits the
//! scope around it (`split`: end, barrier, begin again with every attachment loaded), or,
//! where the scope cannot be split, counts it in [`Tracker::uncovered`] (`KILN-W005`).

use ash::vk;

use crate::device::{SubresourceMap, Subresources};

mod handles;
pub(crate) use handles::{HandleSet, Map};
mod lanes;
pub(crate) use lanes::{CompiledNeed, LaneNeed, UseLanes};
use lanes::{Lanes, LastBarrier};
mod spans;
use spans::apply_range;

use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;

/// Every stage a draw's resources are used in, and their accesses: the destination of a
/// rendering scope's flush.
pub(crate) const GRAPHICS_STAGES: S = S::from_raw(
    S::DRAW_INDIRECT.as_raw()
        | S::INDEX_INPUT.as_raw()
        | S::VERTEX_ATTRIBUTE_INPUT.as_raw()
        | S::VERTEX_SHADER.as_raw()
        | S::TESSELLATION_CONTROL_SHADER.as_raw()
        | S::TESSELLATION_EVALUATION_SHADER.as_raw()
        | S::GEOMETRY_SHADER.as_raw()
        | S::TASK_SHADER_EXT.as_raw()
        | S::MESH_SHADER_EXT.as_raw()
        | S::FRAGMENT_SHADER.as_raw(),
);
pub(crate) const GRAPHICS_ACCESS: A = A::from_raw(
    A::INDIRECT_COMMAND_READ.as_raw()
        | A::INDEX_READ.as_raw()
        | A::VERTEX_ATTRIBUTE_READ.as_raw()
        | A::UNIFORM_READ.as_raw()
        | A::SHADER_SAMPLED_READ.as_raw()
        | A::SHADER_STORAGE_READ.as_raw()
        | A::SHADER_STORAGE_WRITE.as_raw(),
);

/// One command's use of one resource: its stage, and the accesses that read and write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Use {
    pub stage: S,
    pub read: A,
    pub write: A,
}

/// The barrier a command needs before it runs (all empty: none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Need {
    pub src_stage: S,
    pub src_access: A,
    pub dst_stage: S,
    pub dst_access: A,
}

impl Need {
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.src_stage.is_empty() && self.dst_stage.is_empty()
    }

    #[inline]
    fn add(&mut self, src_stage: S, src_access: A, dst_stage: S, dst_access: A) {
        self.src_stage |= src_stage;
        self.src_access |= src_access;
        self.dst_stage |= dst_stage;
        self.dst_access |= dst_access;
    }

    /// Both barriers in one.
    #[inline]
    pub(crate) fn merge(&mut self, other: Need) {
        self.add(
            other.src_stage,
            other.src_access,
            other.dst_stage,
            other.dst_access,
        );
    }
}

/// The synchronization state of one buffer range or image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct State {
    /// Stage and access of the last write (`NONE`: not written in this recording; a layout
    /// transition counts as a write of its destination stage with no access).
    write_stage: S,
    write_access: A,
    /// The stages and accesses the last write is visible to already.
    visible_stage: S,
    visible_access: A,
    /// Stages that read since the last write.
    read_stage: S,
    /// Stages a write in which needs no wait for those reads (a flush or a barrier ordered
    /// them).
    war_ok: S,
    /// The flush count when the state last changed (see the module docs).
    flush: u32,
    /// The command (`Tracker::cmd`) of the last write, and of the last read since.
    write_cmd: u32,
    read_cmd: u32,
}

/// Where [`State::apply`] runs.
#[derive(Clone, Copy)]
struct Ctx {
    flush: u32,
    rendering: bool,
    /// The command being applied.
    cmd: u32,
    /// The last barrier the tracker asked for and the recorder recorded ([`Tracker::recorded`]),
    /// and the commands it orders: those before `cover` (0: none).
    last: Need,
    cover: u32,
    /// What the scope's flush makes visible ([`Tracker::graphics_access`]).
    graphics_access: A,
}

impl State {
    /// Adds what `u` needs after this state to `need`, then moves to the state after `u`.
    #[inline(always)]
    fn apply(&mut self, u: Use, need: &mut Need, ctx: &Ctx) {
        // Inside a rendering scope everything recorded before the scope's flush is ordered
        // before, and visible to, every graphics stage.
        let covered = ctx.rendering && self.flush < ctx.flush;
        if covered {
            self.visible_stage |= GRAPHICS_STAGES;
            self.visible_access |= ctx.graphics_access;
            self.war_ok |= GRAPHICS_STAGES;
        }
        let written = !self.write_stage.is_empty();
        let mut mine = Need::default();
        let sees = |s: &State, access: A| {
            s.visible_stage.contains(u.stage) && s.visible_access.contains(access)
        };
        // A barrier recorded after the last write (or the reads since) whose first scope
        // holds it made it visible to (or ordered it before) its second scope already: a
        // global barrier orders every resource, not only the one it was recorded for.
        // Looked at only where a barrier would be needed otherwise.
        let l = &ctx.last;
        let last_covers_write = |s: &mut State| {
            let yes = s.write_cmd < ctx.cover
                && l.src_stage.contains(s.write_stage)
                && l.src_access.contains(s.write_access);
            if yes {
                s.visible_stage |= l.dst_stage;
                s.visible_access |= l.dst_access;
            }
            yes
        };
        // RAW: the read waits for the write and sees it.
        if !u.read.is_empty()
            && written
            && !sees(self, u.read)
            && (!last_covers_write(self) || !sees(self, u.read))
        {
            mine.add(
                self.write_stage,
                self.write_access,
                u.stage,
                u.read | u.write,
            );
            self.visible_stage |= u.stage;
            self.visible_access |= u.read | u.write;
        }
        if !u.write.is_empty() {
            if !self.read_stage.is_empty() {
                // WAR: the reads since the last write (each ordered after it already) finish
                // first; an execution dependency, which also chains the last write before.
                let last_covers_reads = self.read_cmd < ctx.cover
                    && l.src_stage.contains(self.read_stage)
                    && l.dst_stage.contains(u.stage);
                if !self.war_ok.contains(u.stage) && !last_covers_reads {
                    mine.add(self.read_stage, A::NONE, u.stage, A::NONE);
                }
            }
            // WAW, also through reads in between: the barrier that ordered the reads made
            // the write visible to the readers' stages and accesses only, and an execution
            // dependency after it makes nothing visible to this write (§7.1 "Availability
            // and visibility"; sync-val 1.4 reports it, 1.3.239 did not).
            if written && !sees(self, u.write) && (!last_covers_write(self) || !sees(self, u.write))
            {
                mine.add(self.write_stage, self.write_access, u.stage, u.write);
            }
        }
        // Unconditional: four ORs cost less than the branch on `mine`.
        need.merge(mine);
        if u.write.is_empty() {
            self.read_stage |= u.stage;
            self.read_cmd = ctx.cmd;
            // This read is ordered before no later write, whatever ordered the reads
            // before it (a flush covers what was recorded before the scope only).
            self.war_ok = S::NONE;
        } else {
            *self = State {
                write_stage: u.stage,
                write_access: u.write,
                write_cmd: ctx.cmd,
                ..State::default()
            };
        }
        self.flush = ctx.flush;
    }
}

/// What a list of uses adds to the tracker's unflushed stages and accesses, and whether one
/// writes: gathered per use by [`Tracker::apply_resolved`], computed once for compiled
/// uses ([`Tracker::apply_compiled`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct UsesSummary {
    write_stage: S,
    write_access: A,
    read_stage: S,
    wrote: bool,
}

impl UsesSummary {
    /// The summary of `uses`.
    pub(crate) fn of(uses: &[(Res, Use)]) -> UsesSummary {
        let mut s = UsesSummary::default();
        for (_, u) in uses {
            s.add(*u);
        }
        s
    }

    #[inline(always)]
    fn add(&mut self, u: Use) {
        let writes = !u.write.is_empty();
        self.wrote |= writes;
        self.write_stage |= if writes { u.stage } else { S::NONE };
        self.write_access |= u.write;
        self.read_stage |= if u.read.is_empty() { S::NONE } else { u.stage };
    }
}

/// A byte range `[start, end)` of a buffer in one state.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u64,
    end: u64,
    state: State,
}

/// The subresources of an image a [`Use`] names: `range` (counts resolved) of an image of
/// `levels` mip levels and `layers` array layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ImageRange {
    pub range: Subresources,
    pub levels: u32,
    pub layers: u32,
}

impl ImageRange {
    /// A fresh map of the image's subresources.
    fn map<T: Copy + PartialEq>(&self, value: T) -> SubresourceMap<T> {
        SubresourceMap::new(self.levels, self.layers, value)
    }
}

/// The resource of a [`Use`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    /// A buffer handle and the byte range `[start, end)`.
    Buffer(u64, u64, u64),
    /// An image handle and the subresources used.
    Image(u64, ImageRange),
}

/// A [`Key`] resolved by one tracker ([`Tracker::resolve`]): a buffer by the index of its
/// slot, which stays valid for the whole recording (a recorder may keep it: the compiled
/// uses of a bound set, `automatic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Res {
    /// A buffer slot and the byte range `[start, end)`.
    Buffer(u32, u64, u64),
    /// An image handle and the subresources used.
    Image(u64, ImageRange),
}

/// One buffer's state: disjoint spans sorted by offset.
#[derive(Default)]
struct BufferSlot {
    raw: u64,
    /// `spans` belong to this generation of the tracker (an older one: empty; a full
    /// barrier clears every slot at once by bumping the tracker's).
    gen: u32,
    spans: Vec<Span>,
    /// The byte range of the buffer's first use: the range its state has while in the
    /// compute lanes (`lanes`).
    range: (u64, u64),
    /// A command of the recording wrote the buffer (listed in `Tracker::written`).
    written: bool,
}

/// The tracker of one recording (see the module docs).
#[derive(Default)]
pub(crate) struct Tracker {
    /// Buffer slots, and the slot of each buffer handle (slots are never removed: a
    /// resolved [`Res`] stays valid).
    slots: Vec<BufferSlot>,
    slot_of: Map<u32>,
    /// Bumped by [`reset`](Self::reset).
    gen: u32,
    /// A command used a buffer since the last reset.
    used: bool,
    /// Per image, the state of each subresource (one value while they share one).
    images: Map<SubresourceMap<State>>,
    /// Scratch: the resolved uses of [`apply`](Self::apply).
    resolved: Vec<(Res, Use)>,
    /// Commands applied so far (the stamp of the state changes).
    cmd: u32,
    /// The last barrier recorded for a command, and the commands it orders (before
    /// `cover`).
    last: LastBarrier,
    cover: u32,
    /// [`recorded`](Self::recorded) is ignored (an A/B switch for the bench).
    pub no_cover: bool,
    /// The buffer states in the compute lanes (`lanes`).
    lanes: Lanes,
    /// No use takes the lanes (the reference side of the tests).
    #[cfg(test)]
    no_fast: bool,
    /// The device has `rayQuery`: a rendering scope's flush makes writes visible to
    /// `ACCELERATION_STRUCTURE_READ` too (a structure built before the scope and
    /// ray-queried in a draw's shader). Without the feature the access is invalid in a
    /// barrier (VUID-VkMemoryBarrier2-dstAccessMask-06256). Set at the recorder's creation.
    ray_query: bool,
    /// Bumped by every change of the tracker's state: a dispatch repeated with nothing
    /// changed in between reuses the previous one's answer (the state after two identical
    /// commands is the state after one).
    pub epoch: u64,
    /// Bumped by every change of the tracker's state but a read that needed no barrier: a
    /// read applied at one value of `changes` and applied again at the same value needs
    /// nothing and changes nothing that a later answer depends on (it was ordered the first
    /// time; the stages it adds are there; the command it stamps only matters against a
    /// barrier recorded after it, which bumps `changes`). The draws of a rendering scope
    /// that bind read-only sets again skip their tracking on it (`automatic`).
    pub changes: u64,
    /// Writes and reads since the last flush.
    unflushed_write: (S, A),
    unflushed_read: S,
    flush: u32,
    rendering: bool,
    /// Draws inside rendering scopes that needed a barrier kiln could not record (the
    /// recorder counts them: the scope could not be split).
    pub uncovered: u32,

    /// Every buffer and image a command of the recording wrote (the submission's writes,
    /// for the cross-queue waits).
    pub written: HandleSet,
}

impl Tracker {
    /// The tracker of a recording on a device with (`ray_query`) or without `rayQuery`.
    pub(crate) fn new(ray_query: bool) -> Self {
        Tracker {
            ray_query,
            ..Tracker::default()
        }
    }

    /// The barrier the uses of one command need, each use applied (the caller records the
    /// barrier before the command). Uses of one resource by one command are merged first,
    /// so a command that reads and writes one buffer through two bindings does not wait for
    /// itself.
    #[cfg(test)]
    pub(crate) fn apply(&mut self, uses: &mut Vec<(Key, Use)>) -> Need {
        self.apply_with(&[], uses, true)
    }

    /// [`apply`](Self::apply) of `pre` (uses resolved already, merged among themselves
    /// unless `merge`) and `uses`; `merge`: uses of one resource may come from several of
    /// them.
    pub(crate) fn apply_with(
        &mut self,
        pre: &[(Res, Use)],
        uses: &mut Vec<(Key, Use)>,
        merge: bool,
    ) -> Need {
        if uses.is_empty() && !merge {
            return self.apply_resolved(pre);
        }
        let mut resolved = std::mem::take(&mut self.resolved);
        resolved.clear();
        resolved.extend_from_slice(pre);
        for &(key, u) in uses.iter() {
            resolved.push((self.resolve(key), u));
        }
        uses.clear();
        merge_uses(&mut resolved);
        let need = self.apply_resolved(&resolved);
        self.resolved = resolved;
        need
    }

    /// The slot of a buffer (made at its first use) or the image.
    #[inline]
    pub(crate) fn resolve(&mut self, key: Key) -> Res {
        match key {
            Key::Image(raw, range) => Res::Image(raw, range),
            Key::Buffer(raw, start, end) => {
                let next = self.slots.len() as u32;
                let slot = *self.slot_of.entry(raw).or_insert(next);
                if slot == next {
                    if self.slots.capacity() == 0 {
                        // One allocation for the first buffers (see `SetUses::reserve`).
                        self.slots.reserve(16);
                        self.slot_of.reserve(16);
                    }
                    self.slots.push(BufferSlot {
                        raw,
                        gen: self.gen,
                        range: (start, end),
                        // The common case, one span: room for a split too.
                        spans: Vec::with_capacity(2),
                        ..BufferSlot::default()
                    });
                }
                Res::Buffer(slot, start, end)
            }
        }
    }

    /// The barrier the resolved uses of one command need (merged: no resource twice with
    /// one stage), each applied. Cost: one step per use, no lookup for buffers.
    pub(crate) fn apply_resolved(&mut self, uses: &[(Res, Use)]) -> Need {
        self.apply_core::<false>(uses, &UsesSummary::default())
    }

    /// [`apply_resolved`](Self::apply_resolved) of uses compiled once (a bound set's, see
    /// `automatic`): `summary` is [`UsesSummary::of`] them; `warm`: the same uses were
    /// applied at the tracker's current generation ([`generation`](Self::generation))
    /// already. Then every buffer slot they name is of this generation (a slot takes the
    /// generation at its use and keeps it until [`reset`](Self::reset) bumps the tracker's)
    /// and every buffer they write is in `written` (never removed during a recording), so
    /// the per-use checks of both are skipped; the states are applied as always.
    ///
    /// `lanes`: the same uses in the compute lanes ([`use_lanes`](Self::use_lanes)); warm,
    /// outside a rendering scope and under a last barrier in their domain they are applied
    /// there (`lanes`: all of them in one step).
    #[inline]
    pub(crate) fn apply_compiled(
        &mut self,
        uses: &[(Res, Use)],
        summary: &UsesSummary,
        warm: bool,
        lanes: Option<&UseLanes>,
    ) -> CompiledNeed {
        if warm {
            if let Some(need) = lanes.and_then(|l| self.apply_lanes(l, summary)) {
                return CompiledNeed::Lanes(need);
            }
            CompiledNeed::Spans(self.apply_core::<true>(uses, summary))
        } else {
            CompiledNeed::Spans(self.apply_core::<false>(uses, summary))
        }
    }

    /// The generation of the buffer slots' states (bumped by [`reset`](Self::reset)).
    #[inline]
    pub(crate) fn generation(&self) -> u32 {
        self.gen
    }

    /// [`apply_resolved`](Self::apply_resolved); `WARM`: as `apply_compiled`'s `warm`, with
    /// the unflushed stages and accesses taken from `summary` instead of gathered per use.
    #[inline(always)]
    fn apply_core<const WARM: bool>(&mut self, uses: &[(Res, Use)], summary: &UsesSummary) -> Need {
        self.epoch += 1;
        self.cmd += 1;
        self.lanes.next_command();
        let ctx = Ctx {
            flush: self.flush,
            rendering: self.rendering,
            cmd: self.cmd,
            last: self.last.need(),
            cover: self.cover,
            graphics_access: self.graphics_access(),
        };
        let mut need = Need::default();
        // The unflushed stages and accesses, gathered in locals and stored once (warm: the
        // summary's).
        let mut sum = if WARM {
            *summary
        } else {
            UsesSummary::default()
        };
        // By reference: only the fields used are loaded, not each 64-byte pair.
        for (res, u) in uses {
            let u = *u;
            let writes = !u.write.is_empty();
            if !WARM {
                sum.add(u);
            }
            match *res {
                Res::Image(raw, range) => self.apply_image(raw, range, u, &mut need, &ctx),
                Res::Buffer(slot, start, end) => {
                    if self.lanes.holds(slot) {
                        self.leave_lane(slot);
                    }
                    let Some(b) = self.slots.get_mut(slot as usize) else {
                        continue;
                    };
                    if !WARM {
                        if b.gen != self.gen {
                            b.gen = self.gen;
                            b.spans.clear();
                        }
                        if writes && !b.written {
                            b.written = true;
                            self.written.insert(b.raw);
                        }
                        self.used = true;
                    }
                    apply_range(&mut b.spans, start, end, u, &mut need, &ctx)
                }
            }
        }
        self.unflushed_write.0 |= sum.write_stage;
        self.unflushed_write.1 |= sum.write_access;
        self.unflushed_read |= sum.read_stage;
        if sum.wrote || !need.is_empty() {
            self.changes += 1;
        }
        // Inside a rendering scope `need` is not empty only where a use conflicts with an
        // earlier draw of the scope (the flush ordered the rest): the recorder splits the
        // scope around it, or counts it in `uncovered`.
        need
    }

    /// [`apply_resolved`](Self::apply_resolved) of one use of an image (out of line: the
    /// loop over a set's buffers stays small).
    #[inline(never)]
    fn apply_image(&mut self, raw: u64, range: ImageRange, u: Use, need: &mut Need, ctx: &Ctx) {
        if !u.write.is_empty() {
            self.written.insert(raw);
        }
        let map = self
            .images
            .entry(raw)
            .or_insert_with(|| range.map(State::default()));
        map.update(range.range, |_, s| s.apply(u, need, ctx));
    }

    /// The last barrier [`recorded`](Self::recorded) (empty: none, or `no_cover`).
    #[cfg(feature = "unstable-hooks")]
    pub(crate) fn last_recorded(&self) -> Need {
        self.last.need()
    }

    /// The recorder recorded `barrier` (global, masked as recorded) right before the
    /// command applied last: it orders the earlier commands' accesses in its scopes, for
    /// every resource (later uses of them need no barrier of their own).
    #[inline]
    pub(crate) fn recorded(&mut self, barrier: Need) {
        if self.no_cover {
            return;
        }
        // Its lanes are made again only for another barrier.
        if barrier != self.last.need() {
            self.last = LastBarrier::of(barrier);
        }
        self.covered_by_last();
    }

    /// The last barrier was recorded right before the command applied last.
    #[inline(always)]
    fn covered_by_last(&mut self) {
        self.epoch += 1;
        self.changes += 1;
        self.cover = self.cmd;
        self.lanes.barrier_recorded();
    }

    /// An image was moved to another layout by a barrier whose destination is
    /// (`stage`, `access`): later uses there need nothing more. `write` is what the stage
    /// writes without naming it to the tracker (attachments: rendering).
    pub(crate) fn transitioned(
        &mut self,
        raw: vk::Image,
        range: ImageRange,
        (stage, access): (S, A),
        write: A,
    ) {
        use vk::Handle;
        self.epoch += 1;
        self.changes += 1;
        let map = self
            .images
            .entry(raw.as_raw())
            .or_insert_with(|| range.map(State::default()));
        map.set(
            range.range,
            State {
                write_stage: stage,
                write_access: write,
                visible_stage: stage,
                visible_access: access,
                read_stage: S::NONE,
                war_ok: S::NONE,
                flush: self.flush,
                // The transition may be recorded with the next command's barrier (one
                // `vkCmdPipelineBarrier2`, which does not order it): only a barrier of a
                // later command covers it.
                write_cmd: self.cmd + 1,
                read_cmd: 0,
            },
        );
    }

    /// The source scope a layout transition of `range` of `raw` needs, when this
    /// recording used those subresources (`None`: it did not; the layout's own stages
    /// apply).
    pub(crate) fn image_src(&self, raw: vk::Image, range: Subresources) -> Option<(S, A)> {
        use vk::Handle;
        let map = self.images.get(&raw.as_raw())?;
        let (mut stage, mut access) = (S::NONE, A::NONE);
        map.for_each(range, |_, s| {
            stage |= s.write_stage | s.read_stage;
            access |= s.write_access;
        });
        (!stage.is_empty()).then_some((stage, access))
    }

    /// A rendering scope begins: the barrier from everything since the last flush to every
    /// graphics stage (`None`: nothing was recorded since).
    pub(crate) fn flush(&mut self) -> Option<Need> {
        // Every slot leaves the lanes at the flush count its state has there.
        let mut fast = self.lanes.fast;
        while fast != 0 {
            self.leave_lane(fast.trailing_zeros());
            fast &= fast - 1;
        }
        self.epoch += 1;
        self.changes += 1;
        self.flush += 1;
        self.rendering = true;
        let (ws, wa) = std::mem::take(&mut self.unflushed_write);
        let rs = std::mem::take(&mut self.unflushed_read);
        if ws.is_empty() && rs.is_empty() {
            return None;
        }
        Some(Need {
            src_stage: ws | rs,
            src_access: wa,
            dst_stage: GRAPHICS_STAGES,
            dst_access: self.graphics_access(),
        })
    }

    /// The accesses a rendering scope's flush makes writes visible to: [`GRAPHICS_ACCESS`],
    /// and `ACCELERATION_STRUCTURE_READ` where the device has `rayQuery` (`ray_query`).
    fn graphics_access(&self) -> A {
        if self.ray_query {
            GRAPHICS_ACCESS | A::ACCELERATION_STRUCTURE_READ_KHR
        } else {
            GRAPHICS_ACCESS
        }
    }

    /// The rendering scope ended.
    pub(crate) fn end_rendering(&mut self) {
        self.epoch += 1;
        self.changes += 1;
        self.rendering = false;
    }

    /// Nothing recorded so far is tracked (no command used a resource since the last
    /// reset).
    pub(crate) fn is_clear(&self) -> bool {
        !self.used && self.images.is_empty()
    }

    /// A full barrier (all commands → all commands) was recorded: nothing earlier needs
    /// ordering any more. Constant cost: the buffer slots are cleared at their next use.
    pub(crate) fn reset(&mut self) {
        self.epoch += 1;
        self.changes += 1;
        self.gen += 1;
        self.used = false;
        self.last = LastBarrier::default();
        self.cover = 0;
        self.lanes = Lanes::default();
        self.images.clear();
        self.unflushed_write = (S::NONE, A::NONE);
        self.unflushed_read = S::NONE;
    }
}

/// Merges uses of the same resource and range by one stage (one command's bindings of one
/// resource).
pub(crate) fn merge_uses(uses: &mut Vec<(Res, Use)>) {
    if uses.len() < 2 {
        return;
    }
    let mut i = 0;
    while i < uses.len() {
        let mut j = i + 1;
        while j < uses.len() {
            if uses[j].0 == uses[i].0 && uses[j].1.stage == uses[i].1.stage {
                let u = uses.swap_remove(j).1;
                uses[i].1.read |= u.read;
                uses[i].1.write |= u.write;
            } else {
                j += 1;
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod coverage_tests;

#[cfg(test)]
mod compiled_tests;
