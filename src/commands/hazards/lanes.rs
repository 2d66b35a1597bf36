//! The compute fast path of the tracker: buffer states as bit lanes, lane `i` the buffer
//! slot `i`, so one dispatch's uses of all its buffers are one step of a few dozen word
//! operations instead of a step per buffer.
//!
//! **The compute domain.** A use is in it when its stage is exactly `COMPUTE_SHADER`, it
//! reads with `UNIFORM_READ` and `SHADER_STORAGE_READ` only and writes with
//! `SHADER_STORAGE_WRITE` only, and it accesses something (every buffer binding of a
//! compute shader, `automatic::shader_use`). A buffer state is in it when each of its stage
//! masks is `NONE` or `COMPUTE_SHADER` (a last write has exactly `SHADER_STORAGE_WRITE`)
//! and its visible accesses are of those three. The last barrier is in it when its second
//! scope is (`COMPUTE_SHADER` or none, those accesses). Outside rendering scopes, a use in
//! the domain steps a state in the domain, under a last barrier in the domain, to a state
//! in the domain, so a state there is a few bits ([`Lanes`], one word per bit):
//!
//! | word | the state of the lane's buffer |
//! | --- | --- |
//! | `written` | `write_stage` `COMPUTE_SHADER` and `write_access` `SHADER_STORAGE_WRITE` (else both none) |
//! | `visible_stage` | `visible_stage` `COMPUTE_SHADER` (else none) |
//! | `ur`, `sr`, `sw` | `visible_access` holds `UNIFORM_READ`, `SHADER_STORAGE_READ`, `SHADER_STORAGE_WRITE` |
//! | `read_stage`, `war_ok` | `read_stage`, `war_ok` `COMPUTE_SHADER` (else none) |
//! | `write_covered`, `read_covered` | the command stamp of the last write (read) is before the last barrier's `cover` |
//! | `cur_write`, `cur_read` | the stamp is the command applied last |
//!
//! The state's flush count is the tracker's (a flush moves every lane back to spans, and a
//! state enters only at the current count). A command stamp matters only through its
//! order against the last barrier's `cover` and the current command (the three classes
//! `spans` merges by), so the lanes keep that order, and a state leaving them gets a stamp
//! of the same order. [`Lanes::step`] is `State::apply` written lane-wise, branch for
//! branch; the tests check it against `State::apply` on every state, use, stamp order and
//! last barrier of the domain.
//!
//! **Who takes it.** A bound set's compiled uses ([`UseLanes`], made once per recording by
//! [`Tracker::use_lanes`](super::Tracker::use_lanes) when every use is in the domain, of a
//! buffer slot below 64, of the slot's first range), applied warm outside a rendering
//! scope while the last barrier is in the domain. Their slots enter the lanes from their
//! one span at that first range where the state is in the domain; any other use of a slot
//! (a copy, a draw, another range, an image beside it) moves the slot back to its span
//! first (`Tracker::leave_lane`), and the general path applies it.
//!
//! **Their barrier.** The step answers six need bits ([`LaneNeed`]): compute → compute, with
//! a storage write or not in the first scope and any of the three accesses in the second.
//! Each of the 64 values has its `Need`, its `VkMemoryBarrier2` and `VkDependencyInfo`
//! (statics the recorder hands to `vkCmdPipelineBarrier2` as they are) and its [`Last`] in
//! tables made at compile time, so a dispatch neither builds nor masks its barrier, and
//! [`Tracker::recorded_lanes`] keeps the last barrier as its need bits ([`LastBarrier`]).

use ash::vk;

use super::{Need, Res, Span, State, Tracker, Use, UsesSummary, A, S};

/// Need bits: the destination accesses, the source write, the stages.
const NEED_UR: u32 = 1;
const NEED_SR: u32 = 1 << 1;
const NEED_SW: u32 = 1 << 2;
const SRC_STAGE: u32 = 1 << 3;
const SRC_SW: u32 = 1 << 4;
const DST_STAGE: u32 = 1 << 5;

/// The accesses of the compute domain.
const DOMAIN_ACCESS: A = A::from_raw(
    A::UNIFORM_READ.as_raw() | A::SHADER_STORAGE_READ.as_raw() | A::SHADER_STORAGE_WRITE.as_raw(),
);

/// The lanes of one compiled set's uses (a lane per buffer slot): read as uniform, read as
/// storage, written as storage; and, made once for every step, the lanes read, read only
/// and used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct UseLanes {
    ur: u64,
    sr: u64,
    sw: u64,
    read: u64,
    read_only: u64,
    all: u64,
}

impl UseLanes {
    /// Adds the use `u` of lane `lane`; `false` where it is outside the domain.
    #[inline]
    pub(super) fn add(&mut self, lane: u32, u: Use) -> bool {
        let domain = lane < 64
            && u.stage == S::COMPUTE_SHADER
            && DOMAIN_ACCESS.contains(u.read | u.write)
            && !u.read.intersects(A::SHADER_STORAGE_WRITE)
            && !u.write.intersects(A::UNIFORM_READ | A::SHADER_STORAGE_READ)
            && !(u.read | u.write).is_empty();
        if !domain {
            return false;
        }
        let bit = 1u64 << lane;
        let all = u.read | u.write;
        if all.contains(A::UNIFORM_READ) {
            self.ur |= bit;
        }
        if all.contains(A::SHADER_STORAGE_READ) {
            self.sr |= bit;
        }
        if all.contains(A::SHADER_STORAGE_WRITE) {
            self.sw |= bit;
        }
        self.read = self.ur | self.sr;
        self.read_only = self.read & !self.sw;
        self.all = self.read | self.sw;
        true
    }
}

/// The last barrier, where its second scope is in the domain: each bit a whole word (all
/// ones or zero), to mask lanes with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Last {
    dst_stage: u64,
    dst_ur: u64,
    dst_sr: u64,
    dst_sw: u64,
    /// Its first scope holds a compute storage write.
    covers_write: u64,
    /// Its first scope holds the compute stage and its second scope too (orders reads
    /// before writes).
    covers_reads: u64,
}

/// The last barrier the tracker was told of ([`Tracker::recorded`],
/// [`Tracker::recorded_lanes`]): one the lanes asked for, as its need bits (its `Need` and
/// lanes read from the tables), or any other, with its lanes made once ([`Last::of`]).
#[derive(Clone, Copy, Debug)]
pub(super) enum LastBarrier {
    Lanes(LaneNeed),
    Other(Need, Option<Last>),
}

impl LastBarrier {
    /// `need`, with its lanes.
    pub(super) fn of(need: Need) -> Self {
        LastBarrier::Other(need, Last::of(&need))
    }

    /// The barrier.
    #[inline]
    pub(super) fn need(&self) -> Need {
        match *self {
            LastBarrier::Lanes(b) => b.need(),
            LastBarrier::Other(need, _) => need,
        }
    }

    /// Its lanes (`None`: its second scope is outside the lanes' domain).
    #[inline(always)]
    pub(super) fn lanes(&self) -> Option<&Last> {
        match self {
            LastBarrier::Lanes(b) => LASTS[usize::from(b.0 & 63)].as_ref(),
            LastBarrier::Other(_, lanes) => lanes.as_ref(),
        }
    }
}

/// No barrier.
impl Default for LastBarrier {
    fn default() -> Self {
        LastBarrier::of(Need::default())
    }
}

/// All ones where `yes`.
#[inline(always)]
const fn word(yes: bool) -> u64 {
    if yes {
        u64::MAX
    } else {
        0
    }
}

/// A stage mask in the domain: `Some(true)` compute, `Some(false)` none.
#[inline(always)]
fn stage_bit(s: S) -> Option<bool> {
    if s == S::COMPUTE_SHADER {
        Some(true)
    } else if s.is_empty() {
        Some(false)
    } else {
        None
    }
}

/// `COMPUTE_SHADER` where `yes`, else `NONE`.
#[inline(always)]
fn compute_if(yes: bool) -> S {
    if yes {
        S::COMPUTE_SHADER
    } else {
        S::NONE
    }
}

impl Last {
    /// The last barrier `l`, if its second scope is in the domain.
    pub(super) const fn of(l: &Need) -> Option<Last> {
        let (dst_stage, dst_access) = (l.dst_stage.as_raw(), l.dst_access.as_raw());
        if dst_stage & !S::COMPUTE_SHADER.as_raw() != 0 || dst_access & !DOMAIN_ACCESS.as_raw() != 0
        {
            return None;
        }
        let dst = word(dst_stage != 0);
        let src = word(l.src_stage.contains(S::COMPUTE_SHADER));
        Some(Last {
            dst_stage: dst,
            dst_ur: word(dst_access & A::UNIFORM_READ.as_raw() != 0),
            dst_sr: word(dst_access & A::SHADER_STORAGE_READ.as_raw() != 0),
            dst_sw: word(dst_access & A::SHADER_STORAGE_WRITE.as_raw() != 0),
            covers_write: src & word(l.src_access.contains(A::SHADER_STORAGE_WRITE)),
            covers_reads: src & dst,
        })
    }
}

/// The barrier of need bits.
#[inline]
fn need_of(bits: u32) -> Need {
    NEEDS[(bits & 63) as usize]
}

/// The barrier of each value of the need bits (six bits).
const NEEDS: [Need; 64] = {
    let mut table = [Need {
        src_stage: S::NONE,
        src_access: A::NONE,
        dst_stage: S::NONE,
        dst_access: A::NONE,
    }; 64];
    let mut bits = 0;
    while bits < 64 {
        // The raw flag where `bit` is set.
        const fn flag(bits: u32, bit: u32, raw: u64) -> u64 {
            if bits & bit != 0 {
                raw
            } else {
                0
            }
        }
        let b = bits as u32;
        table[bits] = Need {
            src_stage: S::from_raw(flag(b, SRC_STAGE, S::COMPUTE_SHADER.as_raw())),
            src_access: A::from_raw(flag(b, SRC_SW, A::SHADER_STORAGE_WRITE.as_raw())),
            dst_stage: S::from_raw(flag(b, DST_STAGE, S::COMPUTE_SHADER.as_raw())),
            dst_access: A::from_raw(
                flag(b, NEED_UR, A::UNIFORM_READ.as_raw())
                    | flag(b, NEED_SR, A::SHADER_STORAGE_READ.as_raw())
                    | flag(b, NEED_SW, A::SHADER_STORAGE_WRITE.as_raw()),
            ),
        };
        bits += 1;
    }
    table
};

/// A barrier the lanes asked for, as its need bits: the barrier ([`need_of`]), its
/// `VkMemoryBarrier2` and its [`Last`] are read from tables, not made per dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaneNeed(u8);

impl LaneNeed {
    /// No barrier (no stage: [`Need::is_empty`]).
    #[inline(always)]
    pub(crate) fn is_empty(self) -> bool {
        u32::from(self.0) & (SRC_STAGE | DST_STAGE) == 0
    }

    /// The barrier as the tracker's [`Need`].
    #[inline(always)]
    pub(crate) fn need(self) -> Need {
        need_of(u32::from(self.0))
    }

    /// The barrier: compute to compute stages, with the accesses of the need bits (valid on
    /// every queue that dispatches, so never masked by the queue's stages).
    #[cfg(test)]
    pub(crate) fn memory_barrier(self) -> vk::MemoryBarrier2<'static> {
        MEMORY_BARRIERS[usize::from(self.0 & 63)]
    }

    /// The `VkDependencyInfo` of the barrier alone (its entry of [`MEMORY_BARRIERS`] as its
    /// one memory barrier), for `vkCmdPipelineBarrier2`.
    #[inline(always)]
    pub(crate) fn dependency_info(self) -> &'static vk::DependencyInfo<'static> {
        &DEPENDENCY_INFOS[usize::from(self.0 & 63)]
    }

    /// The lanes' form of the barrier, as the last one.
    #[cfg(test)]
    fn last(self) -> Option<Last> {
        LASTS[usize::from(self.0 & 63)]
    }
}

/// What a compiled dispatch needs: a barrier of the lanes, or any barrier (its uses were
/// applied outside the lanes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CompiledNeed {
    Lanes(LaneNeed),
    Spans(Need),
}

impl CompiledNeed {
    /// The barrier needed.
    #[inline]
    pub(crate) fn need(self) -> Need {
        match self {
            CompiledNeed::Lanes(l) => l.need(),
            CompiledNeed::Spans(n) => n,
        }
    }

    /// No barrier is needed.
    #[cfg(test)]
    pub(crate) fn is_empty(self) -> bool {
        match self {
            CompiledNeed::Lanes(l) => l.is_empty(),
            CompiledNeed::Spans(n) => n.is_empty(),
        }
    }
}

/// [`NEEDS`] as `VkMemoryBarrier2`s.
static MEMORY_BARRIERS: [vk::MemoryBarrier2<'static>; 64] = {
    let mut table = [vk::MemoryBarrier2 {
        s_type: vk::StructureType::MEMORY_BARRIER_2,
        p_next: std::ptr::null(),
        src_stage_mask: S::NONE,
        src_access_mask: A::NONE,
        dst_stage_mask: S::NONE,
        dst_access_mask: A::NONE,
        _marker: std::marker::PhantomData,
    }; 64];
    let mut i = 0;
    while i < 64 {
        let n = NEEDS[i];
        table[i].src_stage_mask = n.src_stage;
        table[i].src_access_mask = n.src_access;
        table[i].dst_stage_mask = n.dst_stage;
        table[i].dst_access_mask = n.dst_access;
        i += 1;
    }
    table
};

/// Each of [`MEMORY_BARRIERS`] as the one memory barrier of a `VkDependencyInfo`.
static DEPENDENCY_INFOS: [vk::DependencyInfo<'static>; 64] = {
    let mut table = [vk::DependencyInfo {
        s_type: vk::StructureType::DEPENDENCY_INFO,
        p_next: std::ptr::null(),
        dependency_flags: vk::DependencyFlags::empty(),
        memory_barrier_count: 1,
        p_memory_barriers: std::ptr::null(),
        buffer_memory_barrier_count: 0,
        p_buffer_memory_barriers: std::ptr::null(),
        image_memory_barrier_count: 0,
        p_image_memory_barriers: std::ptr::null(),
        _marker: std::marker::PhantomData,
    }; 64];
    let mut i = 0;
    while i < 64 {
        table[i].p_memory_barriers = &MEMORY_BARRIERS[i];
        i += 1;
    }
    table
};

/// [`Last::of`] each of [`NEEDS`].
static LASTS: [Option<Last>; 64] = {
    let mut table = [None; 64];
    let mut i = 0;
    while i < 64 {
        table[i] = Last::of(&NEEDS[i]);
        i += 1;
    }
    table
};

/// `bit` where any lane of `lanes` is set.
#[inline(always)]
fn any(lanes: u64, bit: u32) -> u32 {
    if lanes != 0 {
        bit
    } else {
        0
    }
}

/// The buffer states of the slots in the lanes (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Lanes {
    /// The slot's state is here (its spans are empty).
    pub fast: u64,
    written: u64,
    visible_stage: u64,
    ur: u64,
    sr: u64,
    sw: u64,
    read_stage: u64,
    war_ok: u64,
    write_covered: u64,
    read_covered: u64,
    cur_write: u64,
    cur_read: u64,
}

impl Lanes {
    /// Slot `i`'s state is in the lanes.
    #[inline(always)]
    pub(super) fn holds(&self, i: u32) -> bool {
        i < 64 && self.fast & (1 << i) != 0
    }

    /// `State::apply` of the uses `u`, lane-wise, outside a rendering scope, with the last
    /// barrier `last` (`covered`: it orders a stamp of 0, i.e. its `cover` is above 0);
    /// returns the need bits ([`need_of`]). Every lane of `u` is in the lanes.
    #[inline(always)]
    pub(super) fn step(&mut self, u: &UseLanes, last: &Last, covered: bool) -> u32 {
        let read = u.read;
        let mut need = 0;
        // The last barrier made the lane's last write visible to its second scope.
        let cw = self.write_covered & last.covers_write;
        // The lane's reads see the last write already.
        let sees_read = |s: &Lanes| s.visible_stage & (!u.ur | s.ur) & (!u.sr | s.sr);
        // RAW.
        let raw0 = read & self.written & !sees_read(self);
        if raw0 != 0 {
            let fix = raw0 & cw;
            self.visible_stage |= fix & last.dst_stage;
            self.ur |= fix & last.dst_ur;
            self.sr |= fix & last.dst_sr;
            self.sw |= fix & last.dst_sw;
            let raw = raw0 & !(cw & sees_read(self));
            need |= any(raw, SRC_STAGE | SRC_SW | DST_STAGE)
                | any(raw & u.ur, NEED_UR)
                | any(raw & u.sr, NEED_SR)
                | any(raw & u.sw, NEED_SW);
            self.visible_stage |= raw;
            self.ur |= raw & u.ur;
            self.sr |= raw & u.sr;
            self.sw |= raw & u.sw;
        }
        if u.sw != 0 {
            // WAR: an execution dependency from the reads since the write.
            let war =
                u.sw & self.read_stage & !self.war_ok & !(self.read_covered & last.covers_reads);
            need |= any(war, SRC_STAGE | DST_STAGE);
            // WAW.
            let waw0 = u.sw & self.written & !(self.visible_stage & self.sw);
            let sees_after = (self.visible_stage | last.dst_stage) & (self.sw | last.dst_sw);
            let waw = waw0 & !(cw & sees_after);
            need |= any(waw, SRC_STAGE | SRC_SW | DST_STAGE | NEED_SW);
            // The written lanes start again from their write.
            let keep = !u.sw;
            self.written |= u.sw;
            self.visible_stage &= keep;
            self.ur &= keep;
            self.sr &= keep;
            self.sw &= keep;
            self.read_stage &= keep;
            self.war_ok &= keep;
            self.write_covered &= keep;
        }
        let read_only = u.read_only;
        self.read_stage |= read_only;
        self.war_ok &= !read_only;
        // A write stamps the read with 0 (ordered by any barrier), a read with this command.
        self.read_covered = (self.read_covered & !(read_only | u.sw)) | (u.sw & word(covered));
        self.cur_write = u.sw;
        self.cur_read = read_only;
        need
    }

    /// A barrier was recorded for the command applied last: every stamp but that
    /// command's is before its `cover`.
    #[inline]
    pub(super) fn barrier_recorded(&mut self) {
        self.write_covered = !self.cur_write;
        self.read_covered = !self.cur_read;
    }

    /// A command is applied outside the lanes: no stamp is the last command's any more.
    #[inline(always)]
    pub(super) fn next_command(&mut self) {
        self.cur_write = 0;
        self.cur_read = 0;
    }

    /// Puts `s` into lane `i` (not in the lanes yet), if it is in the domain and of the
    /// flush count `flush`; stamps ordered against `cover`.
    pub(super) fn enter(&mut self, i: u32, s: &State, flush: u32, cover: u32) -> bool {
        let (Some(written), Some(visible), Some(read), Some(war_ok)) = (
            stage_bit(s.write_stage),
            stage_bit(s.visible_stage),
            stage_bit(s.read_stage),
            stage_bit(s.war_ok),
        ) else {
            return false;
        };
        let write_access = if written {
            A::SHADER_STORAGE_WRITE
        } else {
            A::NONE
        };
        if s.write_access != write_access
            || !DOMAIN_ACCESS.contains(s.visible_access)
            || s.flush != flush
            || i >= 64
        {
            return false;
        }
        let bit = 1u64 << i;
        let set = |w: &mut u64, yes: bool| {
            if yes {
                *w |= bit;
            } else {
                *w &= !bit;
            }
        };
        set(&mut self.written, written);
        set(&mut self.visible_stage, visible);
        set(&mut self.ur, s.visible_access.contains(A::UNIFORM_READ));
        set(
            &mut self.sr,
            s.visible_access.contains(A::SHADER_STORAGE_READ),
        );
        set(
            &mut self.sw,
            s.visible_access.contains(A::SHADER_STORAGE_WRITE),
        );
        set(&mut self.read_stage, read);
        set(&mut self.war_ok, war_ok);
        set(&mut self.write_covered, s.write_cmd < cover);
        set(&mut self.read_covered, s.read_cmd < cover);
        set(&mut self.cur_write, false);
        set(&mut self.cur_read, false);
        self.fast |= bit;
        true
    }

    /// The state of lane `i` (a stamp of the same order as the lane's: 0 before `cover`,
    /// `cover` between it and the command applied last `cmd`, `cmd`), of flush count
    /// `flush`.
    pub(super) fn state(&self, i: u32, flush: u32, cover: u32, cmd: u32) -> State {
        let bit = |w: u64| (w >> i) & 1 != 0;
        let stamp = |used: bool, cur: bool, covered: bool| match (used, cur, covered) {
            (false, ..) => 0,
            (true, true, _) => cmd,
            (true, false, true) => 0,
            (true, false, false) => cover,
        };
        let written = bit(self.written);
        let mut visible_access = A::NONE;
        for (w, a) in [
            (self.ur, A::UNIFORM_READ),
            (self.sr, A::SHADER_STORAGE_READ),
            (self.sw, A::SHADER_STORAGE_WRITE),
        ] {
            if bit(w) {
                visible_access |= a;
            }
        }
        State {
            write_stage: compute_if(written),
            write_access: if written {
                A::SHADER_STORAGE_WRITE
            } else {
                A::NONE
            },
            visible_stage: compute_if(bit(self.visible_stage)),
            visible_access,
            read_stage: compute_if(bit(self.read_stage)),
            war_ok: compute_if(bit(self.war_ok)),
            flush,
            write_cmd: stamp(written, bit(self.cur_write), bit(self.write_covered)),
            read_cmd: stamp(
                bit(self.read_stage),
                bit(self.cur_read),
                bit(self.read_covered),
            ),
        }
    }
}

/// The tracker's side of the lanes.
impl Tracker {
    /// The compiled uses' lanes, if every use is in the compute domain, of a buffer slot
    /// below 64 at the range of the slot's first use (`lanes`).
    pub(crate) fn use_lanes(&self, uses: &[(Res, Use)]) -> Option<UseLanes> {
        let mut lanes = UseLanes::default();
        for (res, u) in uses {
            let Res::Buffer(slot, start, end) = *res else {
                return None;
            };
            let at_first_range = self
                .slots
                .get(slot as usize)
                .is_some_and(|b| b.range == (start, end));
            if !at_first_range || !lanes.add(slot, *u) {
                return None;
            }
        }
        Some(lanes)
    }

    /// [`apply_compiled`](Self::apply_compiled) of warm uses in the lanes; `None` where they
    /// cannot take them (a rendering scope, a last barrier outside their domain, a slot
    /// whose state cannot enter).
    #[inline(always)]
    pub(super) fn apply_lanes(&mut self, u: &UseLanes, summary: &UsesSummary) -> Option<LaneNeed> {
        #[cfg(test)]
        if self.no_fast {
            return None;
        }
        if self.last.lanes().is_none() || self.rendering {
            return None;
        }
        let missing = u.all & !self.lanes.fast;
        if missing != 0 && !self.enter_lanes(missing) {
            return None;
        }
        let last = self.last.lanes()?;
        self.epoch += 1;
        self.cmd += 1;
        let bits = self.lanes.step(u, last, self.cover > 0);
        self.unflushed_write.0 |= summary.write_stage;
        self.unflushed_write.1 |= summary.write_access;
        self.unflushed_read |= summary.read_stage;
        if summary.wrote || bits != 0 {
            self.changes += 1;
        }
        Some(LaneNeed((bits & 63) as u8))
    }

    /// [`recorded`](Self::recorded) of the barrier of the lanes `b`, recorded as asked
    /// (unmasked): its tracker forms come from tables.
    #[inline]
    pub(crate) fn recorded_lanes(&mut self, b: LaneNeed) {
        if self.no_cover {
            return;
        }
        self.last = LastBarrier::Lanes(b);
        self.covered_by_last();
    }

    /// Moves the slots of `lanes` into the lanes; `false` where one cannot (it stays in its
    /// spans; those moved before it stay in the lanes).
    #[inline(never)]
    pub(super) fn enter_lanes(&mut self, mut lanes: u64) -> bool {
        while lanes != 0 {
            let i = lanes.trailing_zeros();
            lanes &= lanes - 1;
            let Some(b) = self.slots.get_mut(i as usize) else {
                return false;
            };
            let state = match b.spans.as_slice() {
                [only] if (only.start, only.end) == b.range => only.state,
                _ => return false,
            };
            if b.gen != self.gen || !self.lanes.enter(i, &state, self.flush, self.cover) {
                return false;
            }
            b.spans.clear();
        }
        true
    }

    /// Lane `i`'s state as the one span of its slot's first range `(start, end)`.
    fn lane_span(&self, i: u32, (start, end): (u64, u64)) -> Span {
        Span {
            start,
            end,
            state: self.lanes.state(i, self.flush, self.cover, self.cmd),
        }
    }

    /// Moves slot `i` out of the lanes into its one span.
    #[inline(never)]
    pub(super) fn leave_lane(&mut self, i: u32) {
        self.lanes.fast &= !(1u64 << i);
        let Some(range) = self.slots.get(i as usize).map(|b| b.range) else {
            return;
        };
        let span = self.lane_span(i, range);
        if let Some(b) = self.slots.get_mut(i as usize) {
            b.spans.clear();
            b.spans.push(span);
        }
    }

    /// The spans of slot `i` (its lane's state as its one span).
    #[cfg(test)]
    pub(super) fn spans_of(&self, i: usize) -> Vec<Span> {
        match self.slots.get(i) {
            Some(b) if self.lanes.holds(i as u32) => vec![self.lane_span(i as u32, b.range)],
            Some(b) => b.spans.clone(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests;
