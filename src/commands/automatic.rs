//! Automatic barriers and image layouts (the default mode of a [`Recorder`]).
//!
//! Before each dispatch, draw, copy and fill the recorder lists what the command reads and
//! writes: the buffers (with their byte ranges) and images of the bound descriptor sets,
//! with the pipeline's reflected access of each binding
//! ([`PipelineAccess`](crate::PipelineAccess)); the bound vertex and index buffers; a copy's
//! source and destination. The hazard tracker (`hazards`) answers with the one barrier the
//! command needs, if any, which is recorded (merged with the layout transitions the command
//! needs) right before it. Images bound through sets (the mip levels and layers of the
//! descriptor's view) are moved to the layout their descriptor type needs (storage image:
//! GENERAL, sampled image and combined image sampler: SHADER_READ_ONLY_OPTIMAL) in that
//! same barrier.
//!
//! Draws are recorded inside rendering scopes, where no barrier may be: their images are
//! moved when the set is bound outside a scope, or when the scope begins (for the sets
//! bound then), and the scope begins with one barrier from everything recorded since the
//! last scope to the graphics stages (see `hazards`).
//!
//! **Compiled set uses.** A dispatch's uses depend only on its bound sets and the bound
//! pipeline's access, both borrowed for the whole recording (neither can change in it): the
//! first dispatch with a (set, access) pair lists the set's buffers and resolves them to
//! tracker slots once ([`SetUses`]); later dispatches with the pair apply those uses as
//! they are (one hash lookup per bound set, none per buffer). Sets holding images are
//! listed binding by binding at every use (their layouts move). A compiled entry also
//! keeps the summary of its uses (what they add to the tracker's unflushed stages) and the
//! tracker generation a dispatch last applied them at: applied again at that generation
//! they skip the per-buffer generation and written-list checks, which that first
//! application settled (`Tracker::apply_compiled` says why that is exact); every state
//! step is still taken.
//!
//! A reusable recording cannot move an image at its first use (every submission would start
//! from another layout than the one it leaves): it records the use in the layout the
//! descriptor needs, and the submission layer moves the image there once before the first
//! submission (each submission then checks it, `KILN-E285`).

use std::sync::atomic::Ordering;

use ash::vk;
use vk::AccessFlags2 as A;
use vk::Handle;
use vk::PipelineStageFlags2 as S;

use super::command::{image_key, BufferAccess};
use super::hazards::{CompiledNeed, Key, LaneNeed, Need, Use};
use super::image_layouts::Move;
use super::{work::ImageUse, Recorder, Slot};
use crate::descriptors::{DescriptorSet, SetResource};
use crate::device::{Buffer, Image, Subresources};
use crate::error::{RecordingError, Result};
use crate::pipeline::BindingAccess;

mod set_uses;
pub(crate) use set_uses::SetUses;

/// An image a command uses through a bound set (the mips and layers of its view).
pub(crate) struct SetImage<'a> {
    image: &'a Image,
    range: Subresources,
    use_: Use,
    layout: vk::ImageLayout,
    set: u32,
    binding: u32,
}

/// The use of a binding by the stages that access it.
pub(super) fn shader_use(b: &BindingAccess) -> Use {
    use vk::DescriptorType as T;
    let read = if !b.access.read {
        A::NONE
    } else {
        match b.descriptor_type {
            T::UNIFORM_BUFFER | T::UNIFORM_BUFFER_DYNAMIC => A::UNIFORM_READ,
            T::SAMPLED_IMAGE | T::COMBINED_IMAGE_SAMPLER | T::UNIFORM_TEXEL_BUFFER => {
                A::SHADER_SAMPLED_READ
            }
            T::INPUT_ATTACHMENT => A::INPUT_ATTACHMENT_READ,
            T::ACCELERATION_STRUCTURE_KHR => A::ACCELERATION_STRUCTURE_READ_KHR,
            _ => A::SHADER_STORAGE_READ,
        }
    };
    let write = if b.access.write {
        A::SHADER_STORAGE_WRITE
    } else {
        A::NONE
    };
    Use {
        stage: b.stages,
        read,
        write,
    }
}

/// The layout an image descriptor of type `ty` is read in (as kiln writes it into the set:
/// `DescriptorSet::write_image_element`); `UNDEFINED` for descriptors kiln does not move.
fn descriptor_layout(ty: vk::DescriptorType) -> vk::ImageLayout {
    use vk::DescriptorType as T;
    match ty {
        T::STORAGE_IMAGE => vk::ImageLayout::GENERAL,
        T::SAMPLED_IMAGE | T::COMBINED_IMAGE_SAMPLER => vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        _ => vk::ImageLayout::UNDEFINED,
    }
}

/// Transfer-stage uses (copies, fills).
pub(crate) const TRANSFER_READ: Use = Use {
    stage: S::ALL_TRANSFER,
    read: A::TRANSFER_READ,
    write: A::NONE,
};
pub(crate) const TRANSFER_WRITE: Use = Use {
    stage: S::ALL_TRANSFER,
    read: A::NONE,
    write: A::TRANSFER_WRITE,
};

/// The key of `[offset, offset + size)` of `buffer`.
#[inline]
pub(crate) fn buffer_key(buffer: &Buffer, offset: u64, size: u64) -> Key {
    Key::Buffer(buffer.raw().as_raw(), offset, offset.saturating_add(size))
}

impl<'a> Recorder<'a, '_> {
    /// Barriers this recording has recorded so far: the automatic barriers (each a single
    /// `vkCmdPipelineBarrier2` carrying the memory barrier and the layout transitions a
    /// command needs), [`barrier`](Self::barrier) and [`full_barrier`](Self::full_barrier),
    /// and in manual mode the barriers around copies and fills. Explicit
    /// [`transition`](Self::transition)s, the attachments' transitions and the final
    /// device→host barrier are not counted. 100 independent dispatches record 0; a chain of
    /// N dispatches each reading what the one before wrote records N − 1.
    pub fn barrier_count(&self) -> u32 {
        self.barriers
    }

    /// Accesses inside rendering scopes that needed a barrier kiln cannot record there (a
    /// draw using what an earlier draw of the same scope wrote through a descriptor set;
    /// logged once as `KILN-W005`). Unstable: for kiln's tests.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_uncovered(&self) -> u32 {
        self.sync.tracker.uncovered
    }

    /// The number of (bound set, set access) pairs whose buffer uses this recording
    /// compiled (see `SetUses`): pipelines that use a set alike share one. Unstable: for
    /// kiln's tests.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_compiled_set_uses(&self) -> usize {
        self.sync.set_cache.entries.len()
    }

    /// Turns off, for the rest of this recording, the automatic barriers' use of the last
    /// barrier recorded for the resources it covers (see the `hazards` module docs): every
    /// hazard then gets its own barrier, as before that shortcut. Unstable: an A/B switch
    /// for kiln's bench.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_no_last_barrier_cover(&mut self) {
        self.sync.tracker.no_cover = true;
    }

    /// The masks of the last automatic barrier this recording recorded, as recorded
    /// (`[src_stage, src_access, dst_stage, dst_access]`, all empty before the first, or
    /// after [`debug_no_last_barrier_cover`](Self::debug_no_last_barrier_cover)). Unstable:
    /// for kiln's bench, whose raw recording records the same barriers.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_last_barrier(
        &self,
    ) -> (
        vk::PipelineStageFlags2,
        vk::AccessFlags2,
        vk::PipelineStageFlags2,
        vk::AccessFlags2,
    ) {
        let n = self.sync.tracker.last_recorded();
        (n.src_stage, n.src_access, n.dst_stage, n.dst_access)
    }

    /// The automatic barrier of a dispatch (the bound compute sets' uses).
    #[inline(never)]
    pub(crate) fn track_dispatch(&mut self) -> Result<(), RecordingError> {
        let before = self.sync.tracker.epoch;
        let (need, had_images) = match self.compiled_dispatch() {
            // One set whose uses are compiled: applied from the cache as they are.
            Some(i) => {
                let (cache, tracker) = (&mut self.sync.set_cache, &mut self.sync.tracker);
                let Some(c) = cache.entries.get_mut(i) else {
                    return Ok(());
                };
                let gen = tracker.generation();
                let uses = cache
                    .uses
                    .get(c.start as usize..c.end as usize)
                    .unwrap_or_default();
                let need =
                    tracker.apply_compiled(uses, &c.summary, c.warm_gen == gen, c.lanes.as_ref());
                c.warm_gen = gen;
                match need {
                    CompiledNeed::Lanes(b) if !b.is_empty() => self.emit_lanes(b),
                    CompiledNeed::Spans(n) if !n.is_empty() => {
                        if let Some(recorded) = self.emit_inline(n) {
                            self.sync.tracker.recorded(recorded);
                        }
                    }
                    _ => {}
                }
                (need, false)
            }
            None => {
                self.set_uses(0, "a dispatch")?;
                let had_images = !self.sync.pending_images.is_empty();
                (CompiledNeed::Spans(self.track_uses()), had_images)
            }
        };
        // The previous change of the tracker was the previous dispatch with the same
        // bindings: every later repeat needs what this one needed.
        let addresses = !self.sync.after_addresses.is_empty();
        if self.sync.last_dispatch == (self.sync.bind_gen, before) && !had_images && !addresses {
            self.sync.repeat = (self.sync.bind_gen, self.sync.tracker.epoch, need.need());
        }
        self.sync.last_dispatch = (self.sync.bind_gen, self.sync.tracker.epoch);
        Ok(())
    }

    /// The index of the compiled uses (an entry of `set_cache`) of the dispatch about to be
    /// recorded, when one set is bound at the compute bind point, compiled for the bound
    /// pipeline's access and holding no image, and nothing else is pending (no layout
    /// transition, no buffer-device-address ordering).
    #[inline]
    fn compiled_dispatch(&mut self) -> Option<usize> {
        if !self.sync.pending_images.is_empty() || !self.sync.after_addresses.is_empty() {
            return None;
        }
        let bound = self.state.bound[0].as_ref()?;
        let [Slot::Set(set)] = bound.sets.as_slice() else {
            return None;
        };
        if bound.addresses {
            return None;
        }
        let (set_id, access_id) = (*set as *const DescriptorSet as usize, bound.access_keys[0]);
        let cache = &mut self.sync.set_cache;
        // The set's own hint first: its cache line is the one `bind_set` read.
        let i = cache.find_own_hinted(&set.dispatch_entry, set_id, access_id)?;
        let c = cache.entries.get(i as usize)?;
        (!c.images).then_some(i as usize)
    }

    /// The automatic tracking of a draw (inside a rendering scope: no barrier; the uses
    /// update the state later commands are ordered against).
    #[inline(never)]
    pub(crate) fn track_draw(
        &mut self,
        indexed: bool,
        buffers: &[BufferAccess<'_>],
    ) -> Result<(), RecordingError> {
        let before = self.sync.tracker.changes;
        self.set_uses(1, "a draw inside a rendering scope")?;
        let vertex = Use {
            stage: S::VERTEX_ATTRIBUTE_INPUT,
            read: A::VERTEX_ATTRIBUTE_READ,
            write: A::NONE,
        };
        for (b, offset) in self.state.vertex_buffers.iter().flatten() {
            let size = b.size().saturating_sub(*offset);
            self.sync.uses.push((buffer_key(b, *offset, size), vertex));
        }
        if let (true, Some((b, offset))) = (indexed, self.state.index_buffer) {
            let index = Use {
                stage: S::INDEX_INPUT,
                read: A::INDEX_READ,
                write: A::NONE,
            };
            let size = b.size().saturating_sub(offset);
            self.sync.uses.push((buffer_key(b, offset, size), index));
        }
        for b in buffers {
            self.sync
                .uses
                .push((buffer_key(b.buffer, b.offset, b.size), b.use_));
        }
        let need = self.track_uses();
        if self.state.rendering && !need.is_empty() {
            // A hazard against an earlier draw of the scope (`split`).
            self.split_scope(need);
        } else if self.state.rendering && self.sync.tracker.changes == before {
            self.mark_draw_reads(indexed);
        }
        Ok(())
    }

    /// A draw inside a rendering scope whose uses were all applied, by earlier draws, as
    /// reads that needed nothing, and nothing changed in the tracker since
    /// ([`Tracker::changes`](super::hazards::Tracker)): applying them again would need
    /// nothing and change nothing, so the draw's tracking is skipped. Holds for the bound
    /// vertex (and, for an indexed draw, index) buffers and for every bound set whose
    /// compiled uses are read-only and hold no image; not for pushed sets or pipelines
    /// that access memory through buffer device addresses. The common frame (many draws
    /// binding sets of uniforms and textures it only reads) takes this path for every draw
    /// after the first with each set.
    #[inline(always)]
    pub(crate) fn draw_repeats_reads(&self, indexed: bool) -> bool {
        self.draw_repeats_reads_except(indexed, usize::MAX)
    }

    /// [`draw_repeats_reads`](Self::draw_repeats_reads) but for the set at number
    /// `except`, which the caller checks.
    #[inline(always)]
    pub(crate) fn draw_repeats_reads_except(&self, indexed: bool, except: usize) -> bool {
        let changes = self.sync.tracker.changes;
        let (stamp, with_index) = self.sync.vertex_applied;
        if stamp != changes || (indexed && !with_index) || !self.sync.pending_images.is_empty() {
            return false;
        }
        let Some(bound) = self.state.bound[1].as_ref() else {
            return false;
        };
        if bound.addresses {
            return false;
        }
        // A plain loop: the iterator form was not inlined (a call per draw).
        let sets = bound.sets.as_slice();
        let mut si = 0;
        while si < sets.len() {
            let ok = si == except
                || match sets[si] {
                    Slot::Set(set) => self.sync.set_cache.applied_at(
                        set.draw_entry.load(Ordering::Relaxed),
                        set as *const DescriptorSet as usize,
                        bound.access_key(si),
                        changes,
                    ),
                    Slot::Pushed => false,
                    _ => true,
                };
            if !ok {
                return false;
            }
            si += 1;
        }
        true
    }

    /// After a draw inside a rendering scope that changed nothing in the tracker (its uses
    /// were reads that needed nothing): marks its vertex buffers and its read-only bound
    /// sets as applied at the tracker's `changes` (see `draw_repeats_reads`).
    fn mark_draw_reads(&mut self, indexed: bool) {
        let changes = self.sync.tracker.changes;
        self.sync.vertex_applied = (changes, indexed);
        let Some(bound) = self.state.bound[1].as_ref() else {
            return;
        };
        for (si, s) in bound.sets.iter().enumerate() {
            if let Slot::Set(set) = s {
                let entry = self.sync.set_cache.mark_applied(
                    *set as *const DescriptorSet as usize,
                    bound.access_key(si),
                    changes,
                );
                if let Some(i) = entry {
                    set.draw_entry.store(i, Ordering::Relaxed);
                }
            }
        }
    }

    /// Applies `self.sync.uses` (and the pending layout transitions) to the tracker and records
    /// the barrier they need (inside a rendering scope: records nothing); returns it.
    pub(crate) fn track_uses(&mut self) -> Need {
        // Uses from more than one source may name one resource twice.
        let merge = !(self.sync.uses.is_empty() && self.sync.pre_sources <= 1);
        let mut need = self
            .sync
            .tracker
            .apply_with(&self.sync.pre, &mut self.sync.uses, merge);
        self.sync.pre.clear();
        self.sync.pre_sources = 0;
        if !self.state.rendering {
            need.merge(self.address_barriers());
        }
        let now = std::mem::take(&mut self.sync.addresses_now);
        self.sync.after_addresses |= now;
        if self.state.rendering {
            // No barrier inside a scope: a draw's need is the caller's (`split`).
            return need;
        }
        if !need.is_empty() || !self.sync.pending_images.is_empty() {
            if let Some(recorded) = self.emit(need) {
                self.sync.tracker.recorded(recorded);
            }
        }
        need
    }

    /// The barrier around commands that access memory through buffer device addresses: one
    /// after the last such command (its stages → everything), one before the next (all
    /// earlier work → its stages). Clears `after_addresses`.
    pub(crate) fn address_barriers(&mut self) -> Need {
        let mut need = Need::default();
        let after = std::mem::take(&mut self.sync.after_addresses);
        if !after.is_empty() {
            need.merge(Need {
                src_stage: after,
                src_access: A::SHADER_STORAGE_WRITE,
                dst_stage: S::ALL_COMMANDS,
                dst_access: A::MEMORY_READ | A::MEMORY_WRITE,
            });
        }
        if !self.sync.addresses_now.is_empty() && self.sync.tracker.epoch > 1 {
            need.merge(Need {
                src_stage: S::ALL_COMMANDS,
                src_access: A::MEMORY_WRITE,
                dst_stage: self.sync.addresses_now,
                dst_access: A::MEMORY_READ | A::MEMORY_WRITE,
            });
        }
        need
    }

    /// Records one `vkCmdPipelineBarrier2` with `need` (masked to the queue's stages) and
    /// the pending layout transitions, and counts it. Returns the memory barrier as
    /// recorded (`None`: none).
    pub(crate) fn emit(&mut self, need: Need) -> Option<Need> {
        self.emit_inline(need)
    }

    /// Records the barrier of the lanes `b` (read from their tables, no masking: compute
    /// stages only) and tells the tracker.
    #[inline(always)]
    fn emit_lanes(&mut self, b: LaneNeed) {
        // Compute stages only: supported on every queue that dispatches.
        if !self
            .caps
            .stages
            .contains(vk::PipelineStageFlags2::COMPUTE_SHADER)
        {
            if let Some(recorded) = self.emit(b.need()) {
                self.sync.tracker.recorded(recorded);
            }
            return;
        }
        // SAFETY: `cb` is recording outside a rendering scope (the lanes take no use inside
        // one); synchronization2 is enabled; the barrier's stages are the compute shader
        // stage, which this queue supports; no image transition is pending
        // (`compiled_dispatch`); the dependency info and the barrier it points to are
        // statics, valid and unchanged for the program's life.
        unsafe {
            self.shared
                .raw
                .cmd_pipeline_barrier2(self.cb, b.dependency_info())
        };
        self.barriers += 1;
        self.sync.tracker.recorded_lanes(b);
    }

    /// [`emit`](Self::emit), inlined into the dispatch path (`track_dispatch`).
    #[inline(always)]
    fn emit_inline(&mut self, need: Need) -> Option<Need> {
        let (src_stage, src_access) = self.supported(need.src_stage, need.src_access);
        let (dst_stage, dst_access) = self.supported(need.dst_stage, need.dst_access);
        let memory = [vk::MemoryBarrier2::default()
            .src_stage_mask(src_stage)
            .src_access_mask(src_access)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst_access)];
        let with_memory = !(src_stage.is_empty() && dst_stage.is_empty());
        if !with_memory && self.sync.pending_images.is_empty() {
            return None;
        }
        let mut dep =
            vk::DependencyInfo::default().image_memory_barriers(&self.sync.pending_images);
        if with_memory {
            dep = dep.memory_barriers(&memory);
        }
        // SAFETY: `cb` is recording outside a rendering scope (`track_uses` returns before
        // recording a barrier inside one, `split_scope` calls this only after
        // `cmd_end_rendering`, and layouts are never moved inside one); synchronization2 is
        // enabled; the images transitioned are kept alive by `images` until the
        // submission; locals outlive the call.
        unsafe { self.shared.raw.cmd_pipeline_barrier2(self.cb, &dep) };
        self.sync.pending_images.clear();
        self.barriers += 1;
        with_memory.then_some(Need {
            src_stage,
            src_access,
            dst_stage,
            dst_access,
        })
    }

    /// Lists the uses of the sets bound at bind point `slot` (0 compute, 1 graphics) into
    /// `self.sync.uses`, moving their images to the layouts their descriptors need (transitions
    /// left pending for the command's barrier). `what` names the command in errors.
    ///
    /// Errors: `KILN-E286` an image cannot be moved (inside a rendering scope, or needed in
    /// two layouts by one command).
    pub(crate) fn set_uses(
        &mut self,
        slot: usize,
        what: &'static str,
    ) -> Result<(), RecordingError> {
        let Some(bound) = self.state.bound[slot].as_ref() else {
            return Ok(());
        };
        let access = bound.access;
        let n = bound.sets.len();
        // Memory reached through buffer device addresses is named by no binding: the
        // command is ordered after everything before it and before everything after it
        // (`track_uses`).
        self.sync.addresses_now |= access.device_address_stages();
        for si in 0..n {
            let bound_slot = self.state.bound[slot]
                .as_ref()
                .and_then(|b| b.sets.get(si).copied());
            let set: &'a DescriptorSet = match bound_slot {
                Some(Slot::Set(set)) => set,
                Some(Slot::Pushed) => {
                    self.pushed_set_uses(slot, si, access.set(si), what)?;
                    continue;
                }
                _ => continue,
            };
            let bindings = access.set(si);
            let (set_id, access_id) = (set as *const DescriptorSet as usize, access.key(si));
            let compiled = self.sync.set_cache.get(set_id, access_id);
            if let Some(c) = compiled.filter(|c| !c.images) {
                let uses = &self.sync.set_cache.uses[c.start as usize..c.end as usize];
                self.sync.pre.extend_from_slice(uses);
                self.sync.pre_sources += 1;
                continue;
            }
            // Listed binding by binding; the first time, the buffers are also resolved
            // into the cache.
            let compile = compiled.is_none();
            if compile && self.sync.set_cache.uses.capacity() == 0 {
                // One allocation for the first pairs instead of a growth per push (each a
                // realloc, and glibc consolidates its fast bins on a larger one: on lavapipe,
                // whose command buffers free many small blocks, ~50k instructions each).
                self.sync.set_cache.reserve();
            }
            let from = self.sync.set_cache.uses.len();
            let mut images = false;
            for (idx, b) in bindings.iter().enumerate() {
                // An input attachment is a local-read colour attachment of the open scope:
                // its writes and reads are the scope's (the scope barriers order them with
                // the rest; inside, `local_read_barrier` orders draw after draw).
                let input = b.descriptor_type == vk::DescriptorType::INPUT_ATTACHMENT;
                if !b.access.any() || (input && self.state.rendering) {
                    continue;
                }
                let u = shader_use(b);
                let layout = descriptor_layout(b.descriptor_type);
                let (uses, set_images) = (&mut self.sync.uses, &mut self.sync.set_images);
                let (tracker, cache) = (&mut self.sync.tracker, &mut self.sync.set_cache.uses);
                set.for_each_at(idx, |r| match r {
                    SetResource::Buffer {
                        buffer,
                        offset,
                        size,
                    } => {
                        let key = buffer_key(buffer, offset, size);
                        uses.push((key, u));
                        if compile {
                            cache.push((tracker.resolve(key), u));
                        }
                    }
                    SetResource::Image(image, _, range) => {
                        images = true;
                        set_images.push(SetImage {
                            image,
                            range,
                            use_: u,
                            layout,
                            set: si as u32,
                            binding: b.binding,
                        })
                    }
                });
            }
            if compile {
                let tracker = &self.sync.tracker;
                self.sync
                    .set_cache
                    .insert(set_id, access_id, from, images, tracker);
            }
        }
        self.set_image_layouts(slot, what)
    }

    /// The uses of the push-descriptor set at number `si` of bind point `slot` (its pushed
    /// buffers and images; `bindings`: the bound pipeline's access of that set). Errors: as
    /// `set_uses`.
    fn pushed_set_uses(
        &mut self,
        slot: usize,
        si: usize,
        bindings: &[BindingAccess],
        what: &'static str,
    ) -> Result<(), RecordingError> {
        for &(s, idx, key) in &self.state.pushed[slot] {
            let b = bindings.get(idx);
            if let Some(b) = b.filter(|b| s as usize == si && b.access.any()) {
                self.sync.uses.push((key, shader_use(b)));
            }
        }
        self.pushed_image_uses(slot, si, bindings, what)
    }

    /// [`set_uses`](Self::set_uses) for the layout transitions only: the uses listed are
    /// dropped (a draw applies them). Errors: as `set_uses`.
    pub(crate) fn set_layouts_only(
        &mut self,
        slot: usize,
        what: &'static str,
    ) -> Result<(), RecordingError> {
        let (uses, pre, sources) = (
            self.sync.uses.len(),
            self.sync.pre.len(),
            self.sync.pre_sources,
        );
        let out = self.set_uses(slot, what);
        self.sync.uses.truncate(uses);
        self.sync.pre.truncate(pre);
        self.sync.pre_sources = sources;
        out
    }

    /// Moves `self.sync.set_images` (of bind point `slot`) to their layouts and lists their uses.
    fn set_image_layouts(&mut self, slot: usize, what: &'static str) -> Result<(), RecordingError> {
        let mut images = std::mem::take(&mut self.sync.set_images);
        let mut out = Ok(());
        for (i, si) in images.iter().enumerate() {
            if let Err(e) = self.set_image_layout(slot, si, &images[..i], what) {
                out = Err(e);
                break;
            }
            self.sync
                .uses
                .push((image_key(si.image, si.range), si.use_));
        }
        images.clear();
        self.sync.set_images = images;
        if out.is_err() {
            self.sync.uses.clear();
            self.sync.pre.clear();
            self.sync.pre_sources = 0;
            self.sync.pending_images.clear();
        }
        out
    }

    /// Moves one image of a bound set to the layout its descriptor needs (see the module
    /// docs); `earlier` are the images the same command moved before it, and the images
    /// pushed at bind point `slot` that the pipeline uses were moved before them all.
    fn set_image_layout(
        &mut self,
        slot: usize,
        si: &SetImage<'a>,
        earlier: &[SetImage<'a>],
        what: &'static str,
    ) -> Result<(), RecordingError> {
        let (levels, layers) = (si.image.mip_levels(), si.image.array_layers());
        let conflict = earlier.iter().any(|e| {
            e.image.raw() == si.image.raw()
                && e.layout != si.layout
                && e.range.overlaps(&si.range, levels, layers)
        }) || self.pushed_image_conflict(slot, (si.image, si.range), si.layout);
        let at = (si.set, si.binding);
        let target = (si.image, si.range);
        self.descriptor_image_layout(target, si.use_, si.layout, at, conflict, what)
    }

    /// Moves subresources `range` of `image`, used by `use_` through the descriptor at
    /// `(set, binding)`, to `needed` (a bound set's or a pushed set's image); `conflict`:
    /// the same command needs an overlapping range in another layout too. Errors:
    /// `KILN-E286`.
    pub(super) fn descriptor_image_layout(
        &mut self,
        (image, range): (&Image, Subresources),
        use_: Use,
        needed: vk::ImageLayout,
        (set, binding): (u32, u32),
        conflict: bool,
        what: &'static str,
    ) -> Result<(), RecordingError> {
        if needed == vk::ImageLayout::UNDEFINED {
            return Ok(());
        }
        let Some(found) = self.layout_other_than(image, range, needed) else {
            return Ok(());
        };
        let err = |what: &'static str, hint: &'static str| RecordingError::DescriptorImageLayout {
            image: image.label().to_string(),
            set,
            binding,
            found,
            needed,
            what,
            hint,
        };
        if conflict {
            return Err(err(
                what,
                "one command cannot use a subresource as a storage image and as a sampled image; use two images, or views of other mips or layers",
            ));
        }
        if self.state.rendering {
            return Err(err(
                what,
                "bind the set before begin_rendering (kiln then moves the image), or transition the image before begin_rendering",
            ));
        }
        let first_touch = !self.images.iter().any(|u| u.image.raw() == image.raw());
        if self.reusable && first_touch {
            // Every submission starts with the view's subresources in `needed` (the
            // submission layer moves them there once).
            let mut layouts = image.layouts();
            layouts.set(range, needed);
            self.images.push(ImageUse {
                image: image.clone(),
                first: layouts.clone(),
                last: layouts,
                moved: false,
                prepare: true,
                discards: false,
            });
            return Ok(());
        }
        let dst = use_;
        self.move_range(
            image,
            range,
            needed,
            (dst.stage, dst.read | dst.write),
            Move::FOR_COMMAND,
        );
        Ok(())
    }

    /// Moves the images of the sets bound at the graphics bind point to the layouts the
    /// bound graphics pipeline's draws need (outside a rendering scope; the transitions are
    /// recorded at once). Errors: `KILN-E286`.
    pub(crate) fn prepare_graphics_images(&mut self) -> Result<(), RecordingError> {
        // Only the layouts: the uses are applied at the draws.
        self.set_layouts_only(1, "a draw")?;
        if !self.sync.pending_images.is_empty() {
            let _ = self.emit(Need::default());
        }
        Ok(())
    }
}
