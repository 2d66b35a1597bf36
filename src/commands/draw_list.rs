//! Draw lists: many draws that each bind a descriptor set and push constants, recorded in
//! one call.
//!
//! [`Recorder::draw_list`] records, for each [`ListDraw`], what `bind_set`, `push` and
//! `draw` would, with the same results and errors, but checks what is the same for every
//! draw once: the rendering scope, the graphics pipeline, the push-constant range and its
//! stages, and each set's layout and writes before anything is recorded. Per draw it then
//! does the bookkeeping of a set bind (elided when the set is bound already), the three
//! Vulkan commands and, where the draw repeats reads the recording applied already with
//! nothing changed since (the automatic barriers' repeated-reads path), no tracking. A draw
//! that needs more (the bound state checked, a set's images checked against the shaders, a
//! timing scope to start, tracking) goes through the one recording path
//! (`Recorder::record`) like `draw`.

use std::panic::Location;

use super::bind::check_set;
use super::push::whole_range_stages;
use super::Slot;
use super::{command::Command, Recorder};
use crate::descriptors::DescriptorSet;
use crate::error::{DescriptorError, RecordingError, Result};

/// One draw of [`Recorder::draw_list`]: the descriptor set it binds, its push constants and
/// `vkCmdDraw`'s vertex and instance ranges.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ListDraw<'a, T> {
    /// Bound at the list's set number before the draw.
    pub set: &'a DescriptorSet,
    /// Pushed at the list's push offset before the draw.
    pub push: T,
    /// `vkCmdDraw`'s `vertexCount`.
    pub vertex_count: u32,
    /// `instanceCount` (1 from [`new`](Self::new)).
    pub instance_count: u32,
    /// `firstVertex`.
    pub first_vertex: u32,
    /// `firstInstance`.
    pub first_instance: u32,
}

impl<'a, T> ListDraw<'a, T> {
    /// One instance of vertices `0..vertex_count`, with `set` bound and `push` pushed.
    pub fn new(set: &'a DescriptorSet, push: T, vertex_count: u32) -> Self {
        ListDraw {
            set,
            push,
            vertex_count,
            instance_count: 1,
            first_vertex: 0,
            first_instance: 0,
        }
    }

    /// Vertices `first..first + count`.
    pub fn vertices(mut self, first: u32, count: u32) -> Self {
        self.first_vertex = first;
        self.vertex_count = count;
        self
    }

    /// Instances `first..first + count`.
    pub fn instances(mut self, first: u32, count: u32) -> Self {
        self.first_instance = first;
        self.instance_count = count;
        self
    }
}

/// What `draw_list` settles once for the fast path: the set number `i`, the push size and
/// stages, the pipeline layout and the set's reflected access (its address: the key of the
/// compiled reads).
struct ListPlan {
    i: usize,
    size: u32,
    stages: ash::vk::ShaderStageFlags,
    layout: ash::vk::PipelineLayout,
    access: usize,
}

impl<'a> Recorder<'a, '_> {
    /// Records each of `draws` as `bind_set(set, d.set)`, `push(offset, &d.push)` and
    /// `draw(d.vertex_count, d.instance_count, d.first_vertex, d.first_instance)` would, in
    /// order, with what is the same for every draw checked once (see the module docs of
    /// `draw_list.rs`): the cost per draw is close to the three Vulkan commands alone.
    ///
    /// Errors, before anything is recorded: `KILN-E283` outside a rendering scope,
    /// `KILN-E252` no graphics pipeline bound, `KILN-E205`, `KILN-E204`, `KILN-E207`,
    /// `KILN-E109` (a set, as `bind_set`), `KILN-E250` (the push constants, as `push_constants`); then, at
    /// the first draw, the errors of [`draw`](Self::draw) (the draws before it recorded).
    #[track_caller]
    pub fn draw_list<T: bytemuck::Pod>(
        &mut self,
        set: u32,
        offset: u32,
        draws: &[ListDraw<'a, T>],
    ) -> Result<(), RecordingError> {
        self.at(Location::caller());
        let Some(plan) = self.plan_list(set, offset, draws)? else {
            return self.draw_one_by_one(set, offset, draws);
        };
        if draws.is_empty() {
            // Nothing is pushed: the range must not count as pushed (`KILN-E255` at a later
            // draw, as without the list).
            return Ok(());
        }
        let ListPlan {
            i,
            size,
            stages,
            layout,
            access,
        } = plan;
        if let Some(b) = self.state.bound[1].as_mut() {
            b.pushed.add(offset, offset + size);
            if b.sets.len() <= i {
                b.sets.resize(i + 1, Slot::Empty);
            }
        }
        let mut plain = self.plain_draw_except(i);
        for d in draws {
            self.list_bind(i, d.set);
            // SAFETY: [offset, offset + size) lies inside every range of `stages` and
            // overlaps no other (`whole_range_stages`); the layout is the bound pipeline's.
            unsafe {
                self.shared.raw.cmd_push_constants(
                    self.cb,
                    layout,
                    stages,
                    offset,
                    bytemuck::bytes_of(&d.push),
                )
            };
            let repeat = !self.sync.automatic
                || self.sync.set_cache.applied_at(
                    d.set.draw_entry.load(std::sync::atomic::Ordering::Relaxed),
                    d.set as *const DescriptorSet as usize,
                    access,
                    self.sync.tracker.changes,
                );
            if plain && repeat {
                // SAFETY: as `record` checks for `draw`: a graphics pipeline without a
                // mesh stage is bound with its sets and push constants, inside a rendering
                // scope of its attachments with its vertex buffers, set `i` holds no image
                // the shaders use, and the draw's reads need nothing (the repeated-reads
                // path of the automatic barriers) or the caller orders them (manual mode):
                // `plain_draw_except`.
                unsafe {
                    self.shared.raw.cmd_draw(
                        self.cb,
                        d.vertex_count,
                        d.instance_count,
                        d.first_vertex,
                        d.first_instance,
                    )
                };
                continue;
            }
            self.record(Command::draw("draw_list", false), |raw, cb| {
                // SAFETY: checked by `record`, as in `draw`.
                unsafe {
                    raw.cmd_draw(
                        cb,
                        d.vertex_count,
                        d.instance_count,
                        d.first_vertex,
                        d.first_instance,
                    )
                }
            })?;
            plain = self.plain_draw_except(i);
        }
        Ok(())
    }

    /// The checks of `draw_list` that hold for every draw (see its errors), before anything
    /// is recorded; `None` where the list is recorded as the calls one by one (bytes that
    /// straddle push ranges, a set with images: checked against the shaders at each bind).
    fn plan_list<T: bytemuck::Pod>(
        &self,
        set: u32,
        offset: u32,
        draws: &[ListDraw<'a, T>],
    ) -> Result<Option<ListPlan>, RecordingError> {
        if !self.state.rendering {
            return Err(RecordingError::RenderingState {
                what: "draw_list outside a rendering scope; call begin_rendering first",
            });
        }
        let graphics = self.state.current_graphics;
        let Some(bound) = self.state.bound[1].as_ref().filter(|_| graphics) else {
            // Also when a compute pipeline was bound after the graphics one: the calls one
            // by one would bind the sets at the compute bind point.
            return Err(RecordingError::NoPipelineBound {
                what: "draw_list (a graphics pipeline, bound after any compute pipeline)",
            });
        };
        let layouts = bound.layout.set_layouts();
        let Some(expected) = layouts.get(set as usize) else {
            return Err(DescriptorError::NoSuchSet {
                set,
                set_count: layouts.len() as u32,
            }
            .into());
        };
        for d in draws {
            check_set(set, d.set, expected)?;
        }
        let size = std::mem::size_of::<T>() as u32;
        let i = set as usize;
        let ranges = bound.layout.push_constant_ranges();
        let stages = offset
            .checked_add(size)
            .and_then(|end| whole_range_stages(ranges, offset, end));
        let Some(stages) = stages.filter(|_| !bound.access.set_has_images(i)) else {
            // Bytes outside every range: the error now.
            super::push::push_segments(ranges, offset, offset.saturating_add(size))?;
            return Ok(None);
        };
        Ok(Some(ListPlan {
            i,
            size,
            stages,
            layout: bound.layout.raw(),
            access: bound.access_key(i),
        }))
    }

    /// `draw_list` as the calls one by one (`plan_list` said so).
    #[track_caller]
    fn draw_one_by_one<T: bytemuck::Pod>(
        &mut self,
        set: u32,
        offset: u32,
        draws: &[ListDraw<'a, T>],
    ) -> Result<(), RecordingError> {
        for d in draws {
            self.set_bound(set, d.set)?;
            self.push_constants(offset, bytemuck::bytes_of(&d.push))?;
            self.draw(
                d.vertex_count,
                d.instance_count,
                d.first_vertex,
                d.first_instance,
            )?;
        }
        Ok(())
    }

    /// Binds `set` at number `i` of the bound graphics pipeline (checked by `check_set`; a
    /// set of buffers only; the slot exists; the rendering scope open), unless it is bound
    /// there: `set_bound` without what a draw list settled once.
    #[inline(always)]
    fn list_bind(&mut self, i: usize, set: &'a DescriptorSet) {
        let bound_here = self.state.bound[1]
            .as_ref()
            .is_some_and(|b| matches!(b.sets.get(i), Some(Slot::Set(s)) if std::ptr::eq(*s, set)));
        if !bound_here {
            self.record_set_bind(1, i, set);
        }
    }

    /// Whether the next draw needs none of `record`'s work but, in automatic mode, the
    /// check of set `except`'s reads (the caller's, per draw): the bound graphics
    /// pipeline's state passed its checks, no timing scope waits to start, and the reads
    /// of its vertex buffers and other sets were applied already (`draw_repeats_reads`).
    fn plain_draw_except(&self, except: usize) -> bool {
        matches!(&self.state.bound[1], Some(b) if b.ready)
            && self.state.views_ok[1]
            && self.state.formats_ok
            && !self.state.pipeline_mesh
            && !self.scope_pending()
            && (!self.sync.automatic || self.draw_repeats_reads_except(false, except))
    }
}
