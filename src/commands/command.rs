//! The one recording path: a command as a value.
//!
//! A command that uses resources declares them in a [`Command`] (the buffers and images it
//! reads and writes, with their byte ranges, layouts, stages and accesses; whether it uses
//! the bound state of a bind point; where it may be recorded; how manual mode orders it)
//! and hands [`Recorder::record`] a closure that records its `vkCmd*`. `record` does, once
//! and in this order, what the contract in the `commands` module docs asks of every
//! command:
//!
//! 1. the caller's location (`#[track_caller]` through `record`): a validation message the
//!    layer raises from here on names the user's `file:line`;
//! 2. same-device checks of every buffer and image (`KILN-E109`,
//!    VUID-vkCmdCopyBuffer-commonparent and the like);
//! 3. the rendering-scope check (`KILN-E283`);
//! 4. for a dispatch or a draw, the bound state: a pipeline, its sets, its push constants
//!    (`KILN-E252`, `KILN-E254`, `KILN-E255`, `KILN-E265`), an indexed draw's index buffer
//!    (`KILN-E283`);
//! 5. the images moved to the layouts the command uses them in;
//! 6. barriers: in automatic mode the uses go to the hazard tracker and the one barrier
//!    they need is recorded with the layout transitions; in manual mode a
//!    [`Manual::Fenced`] command waits for the dispatches recorded since the last barrier;
//! 7. a pending timing-scope start (`flush_scopes`);
//! 8. the closure: the command's own Vulkan command;
//! 9. manual mode: a fenced command ends with a full barrier, a dispatch marks the
//!    recording as having one since the last barrier;
//! 10. the buffers kept alive until the submission completes, each once per recording.
//!
//! Checks of the arguments alone (sizes, offsets, usages) come before `record`, in the
//! command: a command whose arguments are invalid records nothing and says so whatever
//! the recorder's state. A new command is its checks, one `Command` and one closure.

use std::panic::Location;

use ash::vk;

use super::automatic::buffer_key;
use super::hazards::{ImageRange, Key, Use};
use super::{Recorder, Slot};
use crate::descriptors::SetResource;
use crate::device::{Buffer, Image, Subresources};
use crate::error::{DescriptorError, DeviceError, RecordingError, Result};
use crate::shaders::{Dim, ImageTy};

/// A byte range of a buffer a command uses, and how.
#[derive(Clone, Copy)]
pub(crate) struct BufferAccess<'c> {
    pub buffer: &'c Buffer,
    pub offset: u64,
    pub size: u64,
    pub use_: Use,
}

impl<'c> BufferAccess<'c> {
    /// `[offset, offset + size)` of `buffer`, used as `use_`.
    pub fn new(buffer: &'c Buffer, offset: u64, size: u64, use_: Use) -> Self {
        BufferAccess {
            buffer,
            offset,
            size,
            use_,
        }
    }
}

/// The subresources of an image a command uses (a mip level of a copy, every level of a
/// blit chain), the layout it uses them in, and how.
#[derive(Clone, Copy)]
pub(crate) struct ImageAccess<'c> {
    pub image: &'c Image,
    pub range: Subresources,
    pub layout: vk::ImageLayout,
    pub use_: Use,
}

/// Where a command may be recorded; the text is the `KILN-E283` message elsewhere.
#[derive(Clone, Copy)]
pub(crate) enum Place {
    /// Outside a rendering scope (copies, fills, dispatches).
    Outside(&'static str),
    /// Inside a rendering scope (draws).
    Inside(&'static str),
    /// Either (commands kiln cannot see into).
    Anywhere,
}

/// The bound state a command uses.
#[derive(Clone, Copy)]
pub(crate) enum Bound {
    /// None: the command names all it uses.
    None,
    /// The compute pipeline and its sets (dispatches); the text names the command in
    /// `KILN-E252`.
    Compute(&'static str),
    /// The graphics pipeline, its sets and the vertex buffers (draws); `indexed`: the index
    /// buffer too, which must be bound (`KILN-E283`); `mesh`: a mesh-task draw, which needs
    /// a mesh-shading pipeline (and the other draws one that is not).
    Graphics {
        what: &'static str,
        indexed: bool,
        mesh: bool,
    },
}

/// How manual mode (`Recorder::manual_barriers`) orders a command.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Manual {
    /// As the caller orders it (draws, commands recorded through `raw_using`).
    Caller,
    /// A dispatch: the caller places barriers between dispatches; copies and fills after
    /// it wait for it.
    Dispatch,
    /// A copy or fill: after the dispatches recorded before it, and a full barrier after
    /// it (as kiln did before automatic mode).
    Fenced,
}

/// What one command uses and where it may be recorded (see the module docs).
#[derive(Clone, Copy)]
pub(crate) struct Command<'c> {
    pub place: Place,
    pub bound: Bound,
    pub buffers: &'c [BufferAccess<'c>],
    pub images: &'c [ImageAccess<'c>],
    pub manual: Manual,
}

impl<'c> Command<'c> {
    /// A copy or fill of `buffers` and `images`, outside rendering scopes (`what` is the
    /// `KILN-E283` message inside one).
    pub fn transfer(
        what: &'static str,
        buffers: &'c [BufferAccess<'c>],
        images: &'c [ImageAccess<'c>],
    ) -> Self {
        Command {
            place: Place::Outside(what),
            bound: Bound::None,
            buffers,
            images,
            manual: Manual::Fenced,
        }
    }

    /// A dispatch of the bound compute pipeline reading and writing, besides what its sets
    /// hold, `buffers` (`what` names it in `KILN-E252`).
    pub fn dispatch(what: &'static str, buffers: &'c [BufferAccess<'c>]) -> Self {
        Command {
            place: Place::Outside("dispatch inside a rendering scope; call end_rendering first"),
            bound: Bound::Compute(what),
            buffers,
            images: &[],
            manual: Manual::Dispatch,
        }
    }

    /// A draw of the bound graphics pipeline (`indexed`: it reads the index buffer).
    pub fn draw(what: &'static str, indexed: bool) -> Self {
        Self::draw_using(what, indexed, &[])
    }

    /// A mesh-task draw of the bound mesh-shading pipeline, reading `buffers` (an indirect
    /// draw's commands and count).
    pub fn mesh_draw(what: &'static str, buffers: &'c [BufferAccess<'c>]) -> Self {
        Command {
            bound: Bound::Graphics {
                what,
                indexed: false,
                mesh: true,
            },
            ..Self::draw_using(what, false, buffers)
        }
    }

    /// A draw that also reads `buffers` (an indirect draw's commands and count).
    pub fn draw_using(what: &'static str, indexed: bool, buffers: &'c [BufferAccess<'c>]) -> Self {
        Command {
            place: Place::Inside("draw outside a rendering scope; call begin_rendering first"),
            bound: Bound::Graphics {
                what,
                indexed,
                mesh: false,
            },
            buffers,
            images: &[],
            manual: Manual::Caller,
        }
    }
}

impl Recorder<'_, '_> {
    /// Records `cmd` with `vk_cmd` as its Vulkan command (see the module docs). On an error
    /// nothing was recorded and nothing the recorder tracks changed, but for layout
    /// transitions of a failed command's images in manual mode, which are recorded and
    /// tracked as [`transition`](Self::transition) records them.
    ///
    /// Errors: `KILN-E109`, `KILN-E283` (also a draw with a vertex binding of the pipeline
    /// unbound), `KILN-E252`, `KILN-E254`, `KILN-E255`, `KILN-E265`, `KILN-E287` (a draw
    /// whose pipeline was built for other attachments than the scope's), `KILN-E286` (an
    /// image of a bound set cannot be moved).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn record(
        &mut self,
        cmd: Command<'_>,
        vk_cmd: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> Result<(), RecordingError> {
        self.at(Location::caller());
        for b in cmd.buffers {
            self.own(b.buffer)?;
        }
        for i in cmd.images {
            self.own_image(i.image)?;
        }
        match cmd.place {
            Place::Outside(what) => self.outside_rendering(what)?,
            Place::Inside(what) if !self.state.rendering => {
                return Err(RecordingError::RenderingState { what })
            }
            _ => {}
        }
        match cmd.bound {
            Bound::None => {}
            Bound::Compute(what) => {
                self.ready_to_use(0, what)?;
                if !self.state.views_ok[0] {
                    self.check_views(0)?;
                }
            }
            Bound::Graphics {
                what,
                indexed,
                mesh,
            } => {
                self.ready_to_use(1, what)?;
                if mesh != self.state.pipeline_mesh {
                    // VUID-vkCmdDrawMeshTasksEXT-stage-06480, VUID-vkCmdDraw-stage-06481.
                    return Err(RecordingError::RenderingState {
                        what: if mesh {
                            "draw_mesh_tasks with a pipeline without a mesh stage; bind a \
                             mesh-shading pipeline (GraphicsPipelineDesc::mesh_shading)"
                        } else {
                            "a vertex draw with a mesh-shading pipeline; draw it with \
                             draw_mesh_tasks"
                        },
                    });
                }
                if !self.state.views_ok[1] {
                    self.check_views(1)?;
                }
                if indexed && self.state.index_buffer.is_none() {
                    // VUID-vkCmdDrawIndexed-None-07312 and its twins of the indexed draws.
                    return Err(RecordingError::RenderingState {
                        what:
                            "an indexed draw without an index buffer; call bind_index_buffer first",
                    });
                }
                if !self.state.formats_ok {
                    self.check_formats(what)?;
                }
            }
        }
        for i in cmd.images {
            let access = i.use_.read | i.use_.write;
            self.transition_for(i.image, i.range, i.layout, (i.use_.stage, access))?;
        }
        if self.sync.automatic {
            self.track_command(&cmd)?;
        } else if cmd.manual == Manual::Fenced && self.sync.dirty {
            // Earlier dispatches may write what this command reads or writes (an image's
            // transition orders only the image).
            self.record_full_barrier();
        }
        self.flush_scopes();
        vk_cmd(&self.shared.raw, self.cb);
        match cmd.manual {
            Manual::Fenced if !self.sync.automatic => self.record_full_barrier(),
            Manual::Dispatch => self.sync.dirty = true,
            _ => {}
        }
        for b in cmd.buffers {
            self.keep(b.buffer);
        }
        Ok(())
    }

    /// Checks the bound state of bind point `slot` for a command named `what`: a pipeline
    /// is bound, and (cached until a layout change, `Bound::ready`) its sets and push
    /// constants. One branch while nothing changed since the last successful check.
    #[inline(always)]
    fn ready_to_use(&mut self, slot: usize, what: &'static str) -> Result<(), RecordingError> {
        if matches!(&self.state.bound[slot], Some(b) if b.ready) {
            return Ok(());
        }
        if self.state.bound[slot].is_none() {
            return Err(RecordingError::NoPipelineBound { what });
        }
        self.check_bound_state(slot)
    }

    /// Checks that every image of the sets bound at bind point `slot` matches the image
    /// type the bound pipeline's shaders declare for its binding. Errors: `KILN-E214`.
    #[cold]
    #[inline(never)]
    fn check_views(&mut self, slot: usize) -> Result<(), RecordingError> {
        let Some(bound) = self.state.bound[slot].as_ref() else {
            return Ok(());
        };
        for (si, s) in bound.sets.iter().enumerate() {
            if let Slot::Pushed = s {
                for p in self.pushed_images_of(slot, si) {
                    let ty = bound.access.set(si).get(p.idx).and_then(|b| b.image);
                    match ty {
                        Some(ty) if !view_matches(&ty, &p.image, p.view_type) => {
                            return Err(DescriptorError::ImageViewMismatch {
                                image: p.image.label().to_string(),
                                set: si as u32,
                                binding: p.binding,
                                view: p.view_type,
                                samples: p.image.samples(),
                                shader: describe(&ty),
                            }
                            .into());
                        }
                        _ => {}
                    }
                }
            }
            let Slot::Set(set) = s else { continue };
            for (idx, b) in bound.access.set(si).iter().enumerate() {
                let Some(ty) = b.image else { continue };
                let mut bad: Option<(Image, vk::ImageViewType)> = None;
                set.for_each_at(idx, |r| {
                    if let (SetResource::Image(img, view, _), None) = (r, &bad) {
                        if !view_matches(&ty, img, view) {
                            bad = Some((img.clone(), view));
                        }
                    }
                });
                if let Some((img, view)) = bad {
                    return Err(DescriptorError::ImageViewMismatch {
                        image: img.label().to_string(),
                        set: si as u32,
                        binding: b.binding,
                        view,
                        samples: img.samples(),
                        shader: describe(&ty),
                    }
                    .into());
                }
            }
        }
        self.state.views_ok[slot] = true;
        Ok(())
    }

    /// Checks that the bound graphics pipeline draws into the scope's attachments and
    /// that each of its vertex buffer bindings has a buffer (VUID-vkCmdDraw-None-04007).
    /// Errors: `KILN-E287`, `KILN-E283`.
    #[cold]
    #[inline(never)]
    fn check_formats(&mut self, what: &'static str) -> Result<(), RecordingError> {
        let n = self.state.vertex_bindings as usize;
        if (0..n).any(|i| self.state.vertex_buffers.get(i).is_none_or(Option::is_none)) {
            return Err(RecordingError::RenderingState {
                what: "a draw with a vertex buffer binding of the bound pipeline unbound; call \
                       bind_vertex_buffer for each of its vertex buffer layouts",
            });
        }
        if let Some((formats, label)) = self.state.pipeline_formats {
            if *formats != self.state.scope_formats {
                return Err(RecordingError::RenderingFormats {
                    what,
                    pipeline: label.to_string(),
                    built: formats.to_string(),
                    scope: self.state.scope_formats.to_string(),
                });
            }
        }
        self.state.formats_ok = true;
        Ok(())
    }

    /// Automatic mode: lists the uses of `cmd` and records the barrier they need.
    #[inline(always)]
    fn track_command(&mut self, cmd: &Command<'_>) -> Result<(), RecordingError> {
        match cmd.bound {
            Bound::Compute(_) if cmd.buffers.is_empty() => return self.track_plain_dispatch(),
            Bound::Compute(what) => self.set_uses(0, what)?,
            Bound::Graphics { indexed, .. } => {
                if cmd.buffers.is_empty() && self.draw_repeats_reads(indexed) {
                    return Ok(());
                }
                return self.track_draw(indexed, cmd.buffers);
            }
            Bound::None => {}
        }
        for b in cmd.buffers {
            let key = buffer_key(b.buffer, b.offset, b.size);
            self.sync.uses.push((key, b.use_));
        }
        for i in cmd.images {
            self.sync.uses.push((image_key(i.image, i.range), i.use_));
        }
        self.track_uses();
        Ok(())
    }

    /// A dispatch that uses only its bound sets: one repeated with nothing else changed
    /// needs what the previous one needed (two compares instead of the sets' resources).
    #[inline(always)]
    fn track_plain_dispatch(&mut self) -> Result<(), RecordingError> {
        if self.sync.bind_gen == self.sync.repeat.0 && self.sync.tracker.epoch == self.sync.repeat.1
        {
            if !self.sync.repeat.2.is_empty() {
                let _ = self.emit(self.sync.repeat.2);
            }
            return Ok(());
        }
        self.track_dispatch()
    }

    /// Keeps `buffer` alive until the submission completes (once per recording).
    #[inline]
    pub(crate) fn keep(&mut self, buffer: &Buffer) {
        if buffer.mark_kept(self.id) {
            self.kept.push(buffer.clone());
        }
    }

    /// Checks that `buffer` was made by this recorder's device. Errors: `KILN-E109`.
    #[inline]
    pub(crate) fn own(&self, buffer: &Buffer) -> Result<(), RecordingError> {
        if std::ptr::eq(&**buffer.shared(), self.shared) {
            return Ok(());
        }
        Err(foreign("buffer", buffer.label()))
    }

    /// Checks that `image` was made by this recorder's device. Errors: `KILN-E109`.
    #[inline]
    pub(crate) fn own_image(&self, image: &Image) -> Result<(), RecordingError> {
        if std::ptr::eq(&**image.shared(), self.shared) {
            return Ok(());
        }
        Err(foreign("image", image.label()))
    }
}

/// Whether a view of type `written` of `image` (and its samples) fits the shader's image
/// type `ty` (Vulkan spec
/// §12.5, table "Image type and image view type compatibility requirements"; texel buffers
/// and subpass inputs are not images of sets and always fit).
fn view_matches(ty: &ImageTy, image: &Image, written: vk::ImageViewType) -> bool {
    use vk::ImageViewType as V;
    let view = match (ty.dim, ty.arrayed) {
        (Dim::Dim1D, false) => V::TYPE_1D,
        (Dim::Dim1D, true) => V::TYPE_1D_ARRAY,
        (Dim::Dim2D | Dim::DimRect, false) => V::TYPE_2D,
        (Dim::Dim2D | Dim::DimRect, true) => V::TYPE_2D_ARRAY,
        (Dim::DimCube, false) => V::CUBE,
        (Dim::DimCube, true) => V::CUBE_ARRAY,
        (Dim::Dim3D, _) => V::TYPE_3D,
        _ => return true,
    };
    let multisampled = image.samples() != vk::SampleCountFlags::TYPE_1;
    written == view && multisampled == ty.multisampled
}

/// The shader's image type as GLSL would name its dimensionality.
fn describe(ty: &ImageTy) -> String {
    format!(
        "a {:?}{}{} image",
        ty.dim,
        if ty.arrayed { " arrayed" } else { "" },
        if ty.multisampled { " multisampled" } else { "" }
    )
}

/// `KILN-E109` for the `kind` labelled `label`.
#[cold]
#[inline(never)]
fn foreign(kind: &str, label: &str) -> RecordingError {
    DeviceError::ForeignObject {
        object: format!("{kind} `{label}`"),
    }
    .into()
}

/// The tracker's key of `range` of an image.
#[inline]
pub(crate) fn image_key(image: &Image, range: Subresources) -> Key {
    use vk::Handle;
    let (levels, layers) = (image.mip_levels(), image.array_layers());
    Key::Image(
        image.raw().as_raw(),
        ImageRange {
            range: range.resolve(levels, layers),
            levels,
            layers,
        },
    )
}
