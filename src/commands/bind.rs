//! Binding pipelines and descriptor sets (checked for compatibility by interned layout).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ash::vk;

use super::{Bound, Recorder, Slot};
use crate::descriptors::{DescriptorSet, SetLayout};
use crate::error::{DescriptorError, DeviceError, RecordingError, Result};
use crate::pipeline::{Pipeline, PipelineLayout};

/// Index of a bind point in `Recorder::bound`.
fn slot(bind_point: vk::PipelineBindPoint) -> usize {
    usize::from(bind_point == vk::PipelineBindPoint::GRAPHICS)
}

impl<'a> Recorder<'a, '_> {
    /// Binds a compute or graphics pipeline. Sets bound earlier at the same bind point stay
    /// bound when the new layout is compatible for them ("compatible for set N", Vulkan
    /// spec §14.2.2).
    ///
    /// Errors: `KILN-E109` a pipeline of another device, `KILN-E120` a pipeline the queue
    /// cannot run (a compute pipeline on a transfer queue, a graphics pipeline on a
    /// compute or transfer queue); nothing is bound.
    // The per-dispatch calls (bind_pipeline, bind_set, push/push_constants, dispatch) are
    // always inlined into the caller and keep their error and rare paths in #[cold]
    // functions: no call, no register spills, no `Result` through memory (callgrind, bench
    // recording row: 201 -> 160 instructions of kiln code per dispatch).
    #[inline(always)]
    #[track_caller]
    pub fn bind_pipeline<P: Pipeline>(&mut self, pipeline: &'a P) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        let layout: &'a PipelineLayout = pipeline.layout();
        let bind_point = pipeline.bind_point();
        let i = slot(bind_point);
        // The bound layout was checked when it was bound, and layouts are interned per
        // device: the same one belongs to this device (no chase into the layout).
        let same_layout = matches!(&self.state.bound[i], Some(b) if std::ptr::eq(b.layout, layout));
        if !same_layout && !layout.belongs_to(self.shared) {
            return Err(foreign_pipeline());
        }
        let raw = pipeline.raw();
        if self.caps.unsupported_bind[i] {
            return Err(if i == 1 {
                self.unsupported("a graphics pipeline", vk::QueueFlags::GRAPHICS)
            } else {
                self.unsupported("a compute pipeline", vk::QueueFlags::COMPUTE)
            });
        }
        self.state.current_graphics = i == 1;
        let access: &'a crate::pipeline::PipelineAccess = pipeline.access();
        if self.timing.track {
            self.timing.note_pipeline(pipeline.label());
        }
        if pipeline.device_addresses() {
            *self.opaque.get_mut() = true;
        }
        if let Some(d) = pipeline.dynamic_state() {
            // Also for the pipeline already bound: a bind resets what `set_cull_mode` & co.
            // changed.
            let d = *d;
            self.bind_dynamic_state(&d);
        }
        match &mut self.state.bound[i] {
            Some(prev) if prev.raw == raw => return Ok(()),
            Some(prev) => {
                prev.set_access(access);
                // Same interned layout: every bound set stays valid (no comparison needed).
                if !same_layout {
                    prev.sets.truncate(compatible_prefix(prev.layout, layout));
                    if prev.layout.push_constant_ranges() != layout.push_constant_ranges() {
                        prev.pushed = super::push::Words::default();
                    }
                    prev.set_layout(layout);
                    prev.ready = false;
                }
                prev.raw = raw;
                prev.workgroup = pipeline.workgroup_size();
            }
            None => {
                let mut bound = Bound {
                    raw,
                    layout,
                    layout_raw: vk::PipelineLayout::null(),
                    set_layouts: &[],
                    push_range: None,
                    first_set_layouts: [0; 4],
                    access,
                    access_keys: [0; 4],
                    addresses: false,
                    image_sets: 0,
                    bind_point,
                    workgroup: pipeline.workgroup_size(),
                    sets: smallvec::SmallVec::new(),
                    pushed: super::push::Words::default(),
                    whole_push: super::push::Words::default(),
                    ready: false,
                };
                bound.set_layout(layout);
                bound.set_access(access);
                self.state.bound[i] = Some(bound);
            }
        }
        // A pipeline whose shaders use no image has no view to check (`check_views` would
        // find none): the per-dispatch check stays passed.
        self.state.views_ok[i] = !access.has_images();
        if i == 1 {
            self.state.pipeline_formats =
                pipeline.rendering_formats().map(|f| (f, pipeline.label()));
            self.state.vertex_bindings = pipeline.vertex_bindings();
            self.state.pipeline_mesh = pipeline.mesh_shading();
            self.state.pipeline_task = pipeline.task_stage();
            self.state.formats_ok = false;
        }
        self.sync.bind_gen += 1;
        // SAFETY: `cb` is recording; the pipeline outlives the execution ('a).
        unsafe { self.shared.raw.cmd_bind_pipeline(self.cb, bind_point, raw) };
        Ok(())
    }

    /// Binds `set` at set number `index` of the bound pipeline's layout.
    ///
    /// Errors: `KILN-E252` no pipeline bound, `KILN-E205` no such set, `KILN-E204` the set's
    /// layout differs from the pipeline's at that number (the error shows the first
    /// differing binding), `KILN-E207` a binding was never written, `KILN-E109` a set made
    /// on another device.
    #[inline(always)]
    #[track_caller]
    pub fn bind_set(&mut self, index: u32, set: &'a DescriptorSet) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        // `let else`, not `ok_or`: an eagerly built error is dropped on every call.
        let Some(bound) = self.state.bound[usize::from(self.state.current_graphics)].as_mut()
        else {
            return Err(RecordingError::NoPipelineBound { what: "bind_set" });
        };
        let i = index as usize;
        // Already bound at this number: it passed the checks below when it was bound, and
        // a later pipeline with an incompatible layout would have unbound it.
        // The same object (a set's handle is its own while it lives): no chase into either.
        if let Some(Slot::Set(s)) = bound.sets.get(i) {
            if std::ptr::eq(*s, set) {
                return Ok(());
            }
        }
        // The common case: one of the layout's first four sets, written, of its set layout
        // (compared by address, `first_set_layouts`: no chase into the layout's list).
        let layout = Arc::as_ptr(set.layout()) as usize;
        if bound.first_set_layouts.get(i) == Some(&layout) && set.first_unwritten().is_none() {
            return self.set_bound(index, set);
        }
        let layouts = bound.set_layouts;
        let Some(expected) = layouts.get(i) else {
            return Err(DescriptorError::NoSuchSet {
                set: index,
                set_count: layouts.len() as u32,
            }
            .into());
        };
        check_set(index, set, expected)?;
        self.set_bound(index, set)
    }

    /// Binds `set`, checked against the bound pipeline's layout at `index` already (the
    /// bookkeeping and the Vulkan command of [`bind_set`](Self::bind_set)).
    #[inline(always)]
    pub(crate) fn set_bound(
        &mut self,
        index: u32,
        set: &'a DescriptorSet,
    ) -> Result<(), RecordingError> {
        let Some(bound) = self.state.bound[usize::from(self.state.current_graphics)].as_mut()
        else {
            return Err(RecordingError::NoPipelineBound { what: "bind_set" });
        };
        let i = index as usize;
        if bound.sets.len() <= i {
            bound.sets.resize(i + 1, Slot::Empty);
        }
        if crate::pipeline::set_in_mask(bound.image_sets, i) {
            // A set of buffers only has no view to check against the shaders.
            self.state.views_ok[usize::from(self.state.current_graphics)] = false;
        }
        self.record_set_bind(usize::from(self.state.current_graphics), i, set);
        if self.state.current_graphics && self.sync.automatic && !self.state.rendering {
            // Move the set's images to the layouts the draws will need now: no barrier can
            // be recorded inside a rendering scope.
            self.prepare_graphics_images()?;
        }
        Ok(())
    }
}

impl<'a> Recorder<'a, '_> {
    /// What every bind of a checked `set` at number `i` of bind point `point` records and
    /// notes (`set_bound`, `draw_list`): the set listed once per recording,
    /// `vkCmdBindDescriptorSets`, the slot (which exists), `bind_gen`.
    #[inline(always)]
    pub(super) fn record_set_bind(&mut self, point: usize, i: usize, set: &'a DescriptorSet) {
        let Some(bound) = self.state.bound[point].as_mut() else {
            return;
        };
        // List each set once per recording: the store and the comparison are this thread's
        // own, so a set whose `listed_by` is this id was pushed by this recording. Another
        // recording (another thread) may overwrite it; then the set is listed again here,
        // which is harmless (the stamp update is a `fetch_max`).
        if set.listed_by.load(Ordering::Relaxed) != self.id {
            set.listed_by.store(self.id, Ordering::Relaxed);
            self.used_sets.push(set);
        }
        // SAFETY: the set's layout equals the pipeline layout's at `i` (checked by the
        // caller, `check_set`), the set outlives the execution ('a) and every binding was
        // written.
        unsafe {
            self.shared.raw.cmd_bind_descriptor_sets(
                self.cb,
                bound.bind_point,
                bound.layout_raw,
                i as u32,
                &[set.raw()],
                &[],
            )
        };
        if let Some(slot) = bound.sets.get_mut(i) {
            *slot = Slot::Set(set);
        }
        self.sync.bind_gen += 1;
    }
}

/// Checks that `set` can be bound at number `index` of a pipeline layout whose set layout
/// there is `expected`. Errors: `KILN-E109` a set of another device, `KILN-E204` another
/// layout, `KILN-E207` a binding never written.
#[inline(always)]
pub(super) fn check_set(
    index: u32,
    set: &DescriptorSet,
    expected: &Arc<SetLayout>,
) -> Result<(), RecordingError> {
    // Interned layouts: equal ids ⇔ the same object (both are alive for 'a).
    if !Arc::ptr_eq(expected, set.layout()) {
        return Err(incompatible_set(index, set, expected));
    }
    if let Some(binding) = set.first_unwritten() {
        return Err(DescriptorError::BindingNotWritten {
            set: index,
            binding,
        }
        .into());
    }
    Ok(())
}

/// `KILN-E109` for a pipeline of another device.
#[cold]
#[inline(never)]
fn foreign_pipeline() -> RecordingError {
    DeviceError::ForeignObject {
        object: "a pipeline of another device".to_string(),
    }
    .into()
}

/// `KILN-E204` for `set` bound at `index` where the pipeline layout has `expected`.
#[cold]
#[inline(never)]
fn incompatible_set(index: u32, set: &DescriptorSet, expected: &SetLayout) -> RecordingError {
    // A set of another device: its layout is interned there, never equal to this
    // device's, whatever its bindings (VUID-vkCmdBindDescriptorSets-commonparent).
    if !Arc::ptr_eq(&set.layout().shared, &expected.shared) {
        return DeviceError::ForeignObject {
            object: format!("descriptor set bound at set {index} (made on another device)"),
        }
        .into();
    }
    let (have, want) = (set.layout().desc(), expected.desc());
    let mut diff = have.diff(want).unwrap_or_else(|| "layouts differ".into());
    if let Some(stages) = have.only_stages_differ(want) {
        diff.push_str(&format!(
            "; to share one set layout, build each pipeline's layout with \
             PipelineLayoutDesc::from_stages(..)?.with_visibility({index}, \
             Visibility::Stages({})) (or Visibility::All) and pass it as the `layout` \
             of Device::compute_pipeline_with / GraphicsPipelineDesc, then allocate the set \
             from either pipeline",
            stage_expr(stages)
        ));
    }
    DescriptorError::IncompatibleSet { set: index, diff }.into()
}

/// Rust for `stages`: `vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::COMPUTE`.
pub(crate) fn stage_expr(stages: vk::ShaderStageFlags) -> String {
    let names = format!("{stages:?}");
    names
        .split(" | ")
        .map(|n| format!("vk::ShaderStageFlags::{n}"))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Number of leading sets for which two layouts are "compatible for set N": equal
/// push-constant ranges and equal set layouts 0..=N (Vulkan spec §14.2.2).
pub(crate) fn compatible_prefix(a: &PipelineLayout, b: &PipelineLayout) -> usize {
    if a.push_constant_ranges() != b.push_constant_ranges() {
        return 0;
    }
    a.set_layouts()
        .iter()
        .zip(b.set_layouts())
        .take_while(|(x, y)| x.id() == y.id())
        .count()
}
