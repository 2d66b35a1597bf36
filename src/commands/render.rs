//! Graphics recording: rendering scopes (dynamic rendering, Vulkan 1.3 §8.1), vertex/index
//! buffers, viewport, scissor and draws.

use ash::vk;

use super::attachments;
use super::command::Command;
use super::image_layouts::{stage_access, Move};
use super::Recorder;
use crate::device::{Buffer, Image, ImageView, Subresources};
use crate::error::{MemoryError, RecordingError, Result};

/// What happens to an attachment's contents when rendering begins.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum LoadOp {
    /// Clear to this value (RGBA for colour; for depth only `.0` is used).
    Clear([f32; 4]),
    /// Keep the previous contents.
    Load,
    /// Contents are undefined (fastest when every pixel is drawn).
    DontCare,
}

/// One colour attachment of a rendering scope.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ColorAttachment<'a> {
    /// A one-mip 2D image with COLOR_ATTACHMENT usage.
    pub image: &'a Image,
    /// What the attachment holds when rendering begins (clear or load).
    pub load: LoadOp,
    /// Keep what was rendered (`false` = STORE_OP_DONT_CARE).
    pub store: bool,
    /// A multisampled `image` is resolved into this single-sampled image of its format and
    /// extent at the end of the scope (the samples' average for float formats, sample 0
    /// for integer ones); its previous contents are replaced.
    pub resolve: Option<&'a Image>,
    /// Render into this 2D view of one mip and layer of `image` (a cube face, an array
    /// layer, a mip) instead of the whole image (see [`ColorAttachment::view`]).
    pub view: Option<&'a ImageView>,
    /// The attachment is in `RENDERING_LOCAL_READ_KHR` for the scope, so later draws of the
    /// scope read what earlier ones wrote through an input attachment (see
    /// [`local_read`](Self::local_read)).
    pub local_read: bool,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { ColorAttachment<'a> {
    image: &'a Image,
    load: LoadOp,
    store: bool,
    resolve: Option<&'a Image>,
} }

impl<'a> ColorAttachment<'a> {
    /// Clear to `rgba`, then store.
    pub fn clear(image: &'a Image, rgba: [f32; 4]) -> Self {
        ColorAttachment {
            image,
            load: LoadOp::Clear(rgba),
            store: true,
            resolve: None,
            view: None,
            local_read: false,
        }
    }

    /// The same attachment in `VK_IMAGE_LAYOUT_RENDERING_LOCAL_READ_KHR`
    /// (VK_KHR_dynamic_rendering_local_read, core in Vulkan 1.4): a fragment shader of a
    /// later draw in the scope reads it as the input attachment of the same index
    /// (`layout(input_attachment_index = i) uniform subpassInput`, the default mapping of
    /// colour attachment i), written to its set with
    /// [`DescriptorSet::write_input_attachment`](crate::DescriptorSet::write_input_attachment),
    /// after a [`Recorder::local_read_barrier`] between the two draws.
    /// `begin_rendering` refuses it (`KILN-E107`) on a device without
    /// `dynamicRenderingLocalRead`.
    pub fn local_read(self) -> Self {
        ColorAttachment {
            local_read: true,
            ..self
        }
    }

    /// Clear one mip and layer of an image, through `view` (a 2D view of one mip and one
    /// layer: [`ImageViewDesc::layer`](crate::ImageViewDesc::layer)), then store.
    pub fn view(view: &'a ImageView, rgba: [f32; 4]) -> Self {
        ColorAttachment {
            view: Some(view),
            ..Self::clear(view.image(), rgba)
        }
    }

    /// Resolves the (multisampled) attachment into `target` and discards its samples
    /// (`store: false`, which tile-based GPUs never write to memory; set `store` to keep
    /// them).
    pub fn resolve_into(self, target: &'a Image) -> Self {
        ColorAttachment {
            resolve: Some(target),
            store: false,
            ..self
        }
    }
}

/// The depth attachment of a rendering scope.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct DepthAttachment<'a> {
    /// An image with a depth format and DEPTH_STENCIL_ATTACHMENT usage.
    pub image: &'a Image,
    /// Clear to this depth (0.0..=1.0), or `None` to load.
    pub clear: Option<f32>,
    /// Keep what was rendered, depth and stencil (`false` = STORE_OP_DONT_CARE).
    pub store: bool,
    /// A format with stencil: clear the stencil to this value, or `None` to load it
    /// (ignored without stencil).
    pub stencil_clear: Option<u32>,
    /// Render into this 2D view of one mip and layer of `image` (a face of a shadow cube)
    /// instead of the whole image.
    pub view: Option<&'a ImageView>,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { DepthAttachment<'a> {
    image: &'a Image,
    store: bool,
    stencil_clear: Option<u32>,
} }

impl<'a> DepthAttachment<'a> {
    /// Sets [`DepthAttachment::clear`](#structfield.clear): `None` keeps the image's depth
    /// (load), `Some(d)` clears it to `d` (0.0..=1.0).
    pub fn depth_clear(mut self, clear: Option<f32>) -> Self {
        self.clear = clear;
        self
    }
}

impl<'a> DepthAttachment<'a> {
    /// Clear depth to `depth` (and any stencil to 0), then store.
    pub fn clear(image: &'a Image, depth: f32) -> Self {
        DepthAttachment {
            image,
            clear: Some(depth),
            store: true,
            stencil_clear: Some(0),
            view: None,
        }
    }

    /// Clear one layer (or face) of a depth image through `view` to `depth`, then store.
    pub fn view(view: &'a ImageView, depth: f32) -> Self {
        DepthAttachment {
            view: Some(view),
            ..Self::clear(view.image(), depth)
        }
    }
}

/// Attachments of one rendering scope ([`Recorder::begin_rendering`]).
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct RenderingDesc<'a> {
    /// Colour attachments, by fragment output location.
    pub color: &'a [ColorAttachment<'a>],
    /// The depth attachment, if any.
    pub depth: Option<DepthAttachment<'a>>,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { RenderingDesc<'a> {
    color: &'a [ColorAttachment<'a>],
    depth: Option<DepthAttachment<'a>>,
} }

impl<'a> RenderingDesc<'a> {
    /// Rendering into `color` (by fragment output location) with no depth attachment; add
    /// one with [`depth`](Self::depth).
    pub fn new(color: &'a [ColorAttachment<'a>]) -> Self {
        RenderingDesc { color, depth: None }
    }
}

fn store_op(store: bool) -> vk::AttachmentStoreOp {
    if store {
        vk::AttachmentStoreOp::STORE
    } else {
        vk::AttachmentStoreOp::DONT_CARE
    }
}

impl<'a> Recorder<'a, '_> {
    /// Begins a rendering scope (`vkCmdBeginRendering`) over the attachments' full extent.
    /// Attachments (and resolve targets) are moved to COLOR_ATTACHMENT_OPTIMAL /
    /// DEPTH_ATTACHMENT_OPTIMAL first, a [`local_read`](ColorAttachment::local_read) colour
    /// attachment to RENDERING_LOCAL_READ_KHR (its resolve target to
    /// COLOR_ATTACHMENT_OPTIMAL); the viewport and scissor are set to the whole extent
    /// (depth range 0..1, +Y down as in Vulkan's framebuffer coordinates). Draws in the
    /// scope need a pipeline built for its attachments (`KILN-E287`).
    ///
    /// Errors: `KILN-E283` already rendering or no attachment, `KILN-E182` an attachment
    /// without the attachment usage, `KILN-E180` attachments of different extents or
    /// sample counts, one that is not a one-mip 2D image, a resolve target Vulkan rejects,
    /// `KILN-E120` a queue without graphics, `KILN-E109` an image of another device,
    /// `KILN-E107` a local-read attachment without `dynamicRenderingLocalRead`, `KILN-E182`
    /// a local-read attachment without INPUT_ATTACHMENT or STORAGE usage.
    #[track_caller]
    pub fn begin_rendering(&mut self, desc: &RenderingDesc<'_>) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        if !self.caps.queue_flags.contains(vk::QueueFlags::GRAPHICS) {
            return Err(self.unsupported("rendering", vk::QueueFlags::GRAPHICS));
        }
        if self.state.rendering {
            return Err(RecordingError::RenderingState {
                what: "begin_rendering inside a rendering scope; call end_rendering first",
            });
        }
        for img in attachments::images(desc) {
            self.own_image(img)?;
        }
        let max_colors = self.shared.limits().max_color_attachments;
        let (extent, formats) = attachments::check(desc, max_colors)?;
        self.check_local_read(desc)?;
        // The attachments are borrowed only for this call: their transitions below keep
        // them alive until the recording is submitted (their drop is then deferred past
        // the submission).
        let mut colors = Vec::with_capacity(desc.color.len());
        for c in desc.color {
            colors.push(self.color_attachment(c)?);
        }
        let (depth, stencil) = match &desc.depth {
            Some(d) => {
                let (depth, stencil) = self.depth_attachment(d)?;
                (Some(depth), stencil)
            }
            None => (None, None),
        };
        let area = vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent,
        };
        let mut info = vk::RenderingInfo::default()
            .render_area(area)
            .layer_count(1)
            .color_attachments(&colors);
        if let Some(d) = depth.as_ref() {
            info = info.depth_attachment(d);
        }
        if let Some(st) = stencil.as_ref() {
            info = info.stencil_attachment(st);
        }
        if self.sync.automatic {
            self.scope_barrier()?;
        }
        self.flush_scopes();
        // SAFETY: attachments are one-mip 2D images of this device in the layouts named
        // above (a depth-stencil image is both the depth and the stencil attachment,
        // through one view, in one layout), with the attachment usage, one extent and one
        // sample count; a local-read attachment (RENDERING_LOCAL_READ_KHR) has
        // dynamicRenderingLocalRead enabled and INPUT_ATTACHMENT or STORAGE usage
        // (`check_local_read`); resolve targets are single-sampled images of their
        // attachment's format (checked) in COLOR_ATTACHMENT_OPTIMAL; dynamic rendering is
        // enabled on every Vulkan 1.3 device kiln makes graphics objects for.
        unsafe { self.shared.raw.cmd_begin_rendering(self.cb, &info) };
        self.state.rendering = true;
        // Kept to begin the scope again where a draw's hazard splits it (`split`).
        self.state.resume.area = area;
        self.state.resume.depth = depth;
        self.state.resume.stencil = stencil;
        self.state.resume.colors = colors;
        self.state.local_read_scope = desc.color.iter().any(|c| c.local_read);
        if formats != self.state.scope_formats {
            self.state.scope_formats = formats;
            self.state.formats_ok = false;
        }
        let viewport = vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: extent.width as f32,
            height: extent.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        // SAFETY: `cb` is recording; one viewport and one scissor (kiln pipelines use
        // viewportCount and scissorCount 1); the stencil reference is dynamic in every kiln
        // pipeline.
        unsafe {
            let raw = &self.shared.raw;
            raw.cmd_set_viewport(self.cb, 0, &[viewport]);
            raw.cmd_set_scissor(self.cb, 0, &[area]);
            raw.cmd_set_stencil_reference(self.cb, vk::StencilFaceFlags::FRONT_AND_BACK, 0);
        }
        Ok(())
    }

    /// Checks the local-read colour attachments of `desc` before anything is recorded:
    /// `KILN-E107` without `dynamicRenderingLocalRead`, `KILN-E182` an image without
    /// INPUT_ATTACHMENT or STORAGE usage (an image in RENDERING_LOCAL_READ_KHR has STORAGE,
    /// or INPUT_ATTACHMENT with COLOR_ATTACHMENT;
    /// VUID-VkImageMemoryBarrier2-srcQueueFamilyIndex-09550).
    fn check_local_read(&self, desc: &RenderingDesc<'_>) -> Result<(), RecordingError> {
        let reading = vk::ImageUsageFlags::INPUT_ATTACHMENT | vk::ImageUsageFlags::STORAGE;
        for c in desc.color.iter().filter(|c| c.local_read) {
            if !self.shared.features.dynamic_rendering_local_read {
                return Err(crate::device::local_read_missing(&self.shared.info.name).into());
            }
            if !c.image.usage().intersects(reading) {
                return Err(MemoryError::ImageUsage {
                    object: c.image.label().to_string(),
                    needed: vk::ImageUsageFlags::INPUT_ATTACHMENT,
                    what: "a local-read colour attachment (INPUT_ATTACHMENT, or STORAGE)",
                }
                .into());
            }
        }
        Ok(())
    }

    /// Automatic mode, before a scope: the sets bound for draws move their images now (no
    /// barrier may be recorded inside the scope), and one barrier orders everything
    /// recorded since the last scope before the draws (`hazards`: rendering scopes).
    fn scope_barrier(&mut self) -> Result<(), RecordingError> {
        self.set_layouts_only(1, "a draw")?;
        let mut need = self.sync.tracker.flush();
        let addresses = self.address_barriers();
        if !addresses.is_empty() {
            need.get_or_insert_with(Default::default).merge(addresses);
        }
        match need {
            Some(need) => {
                let _ = self.emit(need);
            }
            None => self.emit_transitions(),
        }
        Ok(())
    }

    /// Moves a checked colour attachment (and its resolve target, whose contents the
    /// resolve replaces) to COLOR_ATTACHMENT_OPTIMAL; returns its attachment info.
    fn color_attachment(
        &mut self,
        c: &ColorAttachment<'_>,
    ) -> Result<vk::RenderingAttachmentInfo<'static>, RecordingError> {
        let (load_op, clear) = match c.load {
            LoadOp::Clear(v) => (vk::AttachmentLoadOp::CLEAR, v),
            LoadOp::Load => (vk::AttachmentLoadOp::LOAD, [0.0; 4]),
            LoadOp::DontCare => (vk::AttachmentLoadOp::DONT_CARE, [0.0; 4]),
        };
        let layout = if c.local_read {
            vk::ImageLayout::RENDERING_LOCAL_READ_KHR
        } else {
            vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL
        };
        let range = c.view.map_or(Subresources::all(), ImageView::subresources);
        self.attach(
            c.image,
            range,
            None,
            layout,
            load_op != vk::AttachmentLoadOp::LOAD,
        )?;
        let mut info = vk::RenderingAttachmentInfo::default()
            .image_view(c.view.map_or(c.image.view(), |v| v.raw()))
            .image_layout(layout)
            .load_op(load_op)
            .store_op(store_op(c.store))
            .clear_value(vk::ClearValue {
                color: vk::ClearColorValue { float32: clear },
            });
        if let Some(r) = c.resolve {
            // The resolve target is written by the resolve only, never read in the scope:
            // COLOR_ATTACHMENT_OPTIMAL whether or not its attachment is read locally.
            let undefined = Some(vk::ImageLayout::UNDEFINED);
            let resolve_layout = vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL;
            self.attach(r, Subresources::all(), undefined, resolve_layout, true)?;
            info = info
                .resolve_mode(attachments::resolve_mode(c.image.format()))
                .resolve_image_view(r.view())
                .resolve_image_layout(resolve_layout);
        }
        Ok(info)
    }

    /// Moves a checked depth attachment to its attachment layout; returns its depth info
    /// and, for a format with stencil, its stencil info (the same view).
    fn depth_attachment(
        &mut self,
        d: &DepthAttachment<'_>,
    ) -> Result<
        (
            vk::RenderingAttachmentInfo<'static>,
            Option<vk::RenderingAttachmentInfo<'static>>,
        ),
        RecordingError,
    > {
        let stencil = d.image.aspect().contains(vk::ImageAspectFlags::STENCIL);
        let layout = if stencil {
            vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL
        } else {
            vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL
        };
        let range = d.view.map_or(Subresources::all(), ImageView::subresources);
        // Both aspects are discarded only when both are cleared.
        if d.clear.is_some() && (!stencil || d.stencil_clear.is_some()) {
            // Discard the old contents; the barrier also orders this scope's depth
            // writes after earlier ones (e.g. a previous frame's).
            let undefined = Some(vk::ImageLayout::UNDEFINED);
            self.attach(d.image, range, undefined, layout, true)?;
        } else {
            self.attach(d.image, range, None, layout, false)?;
        }
        let load = |clear: bool| {
            if clear {
                vk::AttachmentLoadOp::CLEAR
            } else {
                vk::AttachmentLoadOp::LOAD
            }
        };
        let clear_value = vk::ClearValue {
            depth_stencil: vk::ClearDepthStencilValue {
                depth: d.clear.unwrap_or(1.0),
                stencil: d.stencil_clear.unwrap_or(0),
            },
        };
        let info = vk::RenderingAttachmentInfo::default()
            .image_view(d.view.map_or(d.image.view(), |v| v.raw()))
            .image_layout(layout)
            .store_op(store_op(d.store))
            .clear_value(clear_value);
        let stencil_info = stencil.then(|| info.load_op(load(d.stencil_clear.is_some())));
        Ok((info.load_op(load(d.clear.is_some())), stencil_info))
    }

    /// Ends the rendering scope. Errors: `KILN-E283` no scope is open.
    #[track_caller]
    pub fn end_rendering(&mut self) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        if !self.close_rendering() {
            return Err(RecordingError::RenderingState {
                what: "end_rendering without begin_rendering",
            });
        }
        Ok(())
    }

    /// Ends an open rendering scope; returns whether one was open (the submission layer
    /// closes a scope a recording left open, and fails the recording with `KILN-E283`).
    pub(crate) fn close_rendering(&mut self) -> bool {
        if !self.state.rendering {
            return false;
        }
        // SAFETY: a rendering scope begun on this command buffer is open.
        unsafe { self.shared.raw.cmd_end_rendering(self.cb) };
        self.state.rendering = false;
        self.state.local_read_scope = false;
        self.sync.tracker.end_rendering();
        true
    }

    /// Makes what the draws recorded so far in this rendering scope wrote to its
    /// local-read colour attachments ([`ColorAttachment::local_read`]) visible to the input
    /// attachment reads of the draws after it: a `vkCmdPipelineBarrier2` inside the scope,
    /// `BY_REGION`, colour attachment writes → fragment-shader input attachment reads (the
    /// barriers Vulkan allows there, Vulkan spec §7.6.1 "Local Read Synchronization",
    /// VUID-vkCmdPipelineBarrier2-None-09553, -09554). kiln's automatic barriers record no
    /// barrier inside a scope: a draw that reads what an earlier draw of its scope wrote
    /// needs this one.
    ///
    /// Errors: `KILN-E283` outside a rendering scope, or in one without a local-read
    /// attachment.
    #[track_caller]
    pub fn local_read_barrier(&mut self) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        if !self.state.rendering || !self.state.local_read_scope {
            return Err(RecordingError::RenderingState {
                what: "local_read_barrier outside a rendering scope with a local-read colour \
                       attachment; begin_rendering with ColorAttachment::local_read",
            });
        }
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        let memory = [vk::MemoryBarrier2::default()
            .src_stage_mask(S::COLOR_ATTACHMENT_OUTPUT)
            .src_access_mask(A::COLOR_ATTACHMENT_WRITE)
            .dst_stage_mask(S::FRAGMENT_SHADER)
            .dst_access_mask(A::INPUT_ATTACHMENT_READ)];
        let dep = vk::DependencyInfo::default()
            .dependency_flags(vk::DependencyFlags::BY_REGION)
            .memory_barriers(&memory);
        self.flush_scopes();
        // SAFETY: `cb` is recording inside a rendering scope with a colour attachment in
        // RENDERING_LOCAL_READ_KHR (dynamicRenderingLocalRead enabled, checked at
        // begin_rendering); the barrier is BY_REGION, a memory barrier between
        // framebuffer-space stages only, as local read synchronization allows.
        unsafe { self.shared.raw.cmd_pipeline_barrier2(self.cb, &dep) };
        self.barriers += 1;
        Ok(())
    }

    /// Sets the dynamic viewport (every kiln graphics pipeline has a dynamic viewport).
    /// Never fails (it returns `Result` like every command).
    #[track_caller]
    pub fn set_viewport(&mut self, viewport: vk::Viewport) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        // SAFETY: `cb` is recording; one viewport (kiln pipelines use viewportCount 1).
        unsafe { self.shared.raw.cmd_set_viewport(self.cb, 0, &[viewport]) };
        Ok(())
    }

    /// Sets the dynamic scissor rectangle. Never fails (it returns `Result` like every
    /// command).
    #[track_caller]
    pub fn set_scissor(&mut self, scissor: vk::Rect2D) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        // SAFETY: `cb` is recording; one scissor (kiln pipelines use scissorCount 1).
        unsafe { self.shared.raw.cmd_set_scissor(self.cb, 0, &[scissor]) };
        Ok(())
    }

    /// Sets the stencil reference of `faces` (`vkCmdSetStencilReference`; dynamic in every
    /// kiln pipeline, 0 at each `begin_rendering`), compared and written by the bound
    /// pipeline's stencil test. Never fails.
    #[track_caller]
    pub fn set_stencil_reference(
        &mut self,
        faces: vk::StencilFaceFlags,
        reference: u32,
    ) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        self.flush_scopes();
        // SAFETY: `cb` is recording; the state is dynamic in every kiln graphics pipeline.
        unsafe {
            self.shared
                .raw
                .cmd_set_stencil_reference(self.cb, faces, reference)
        };
        Ok(())
    }

    /// Binds `buffer` (from byte `offset`) as vertex buffer `binding` — the index of the
    /// layout in `GraphicsPipelineDesc::vertex_buffers`.
    ///
    /// Errors: `KILN-E109` a buffer of another device, `KILN-E157` the buffer lacks
    /// VERTEX_BUFFER usage.
    #[track_caller]
    pub fn bind_vertex_buffer(
        &mut self,
        binding: u32,
        buffer: &'a Buffer,
        offset: u64,
    ) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        self.own(buffer)?;
        if !buffer.usage().contains(vk::BufferUsageFlags::VERTEX_BUFFER) {
            return Err(MemoryError::BufferUsage {
                object: buffer.label().to_string(),
                needed: vk::BufferUsageFlags::VERTEX_BUFFER,
                call: "bind_vertex_buffer",
            }
            .into());
        }
        // SAFETY: the buffer has VERTEX_BUFFER usage and outlives the execution ('a).
        unsafe {
            self.shared
                .raw
                .cmd_bind_vertex_buffers(self.cb, binding, &[buffer.raw()], &[offset])
        };
        self.note_read(buffer);
        let i = binding as usize;
        if self.state.vertex_buffers.len() <= i {
            self.state.vertex_buffers.resize(i + 1, None);
        }
        self.state.vertex_buffers[i] = Some((buffer, offset));
        self.sync.vertex_applied = (u64::MAX, false);
        self.state.formats_ok = false;
        Ok(())
    }

    /// Binds `buffer` as the index buffer (`UINT16` or `UINT32` indices).
    ///
    /// Errors: `KILN-E109` a buffer of another device, `KILN-E157` the buffer lacks
    /// INDEX_BUFFER usage.
    #[track_caller]
    pub fn bind_index_buffer(
        &mut self,
        buffer: &'a Buffer,
        offset: u64,
        index_type: vk::IndexType,
    ) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        self.own(buffer)?;
        if !buffer.usage().contains(vk::BufferUsageFlags::INDEX_BUFFER) {
            return Err(MemoryError::BufferUsage {
                object: buffer.label().to_string(),
                needed: vk::BufferUsageFlags::INDEX_BUFFER,
                call: "bind_index_buffer",
            }
            .into());
        }
        // SAFETY: the buffer has INDEX_BUFFER usage and outlives the execution ('a).
        unsafe {
            self.shared
                .raw
                .cmd_bind_index_buffer(self.cb, buffer.raw(), offset, index_type)
        };
        self.note_read(buffer);
        self.state.index_buffer = Some((buffer, offset));
        self.sync.vertex_applied = (u64::MAX, false);
        Ok(())
    }

    /// Lists `buffer` (about to be bound as a vertex or index buffer) as a use of the
    /// submission (host writes to it wait for it), unless a buffer bound now is it: those
    /// are listed already, so a buffer bound again and again is listed once.
    fn note_read(&mut self, buffer: &'a Buffer) {
        let bound = self.state.vertex_buffers.iter().flatten();
        let listed = bound
            .chain(self.state.index_buffer.as_ref())
            .any(|(b, _)| std::ptr::eq(*b, buffer));
        if !listed {
            self.read.push(buffer);
        }
    }

    /// Moves `range` of an attachment from `old` (`None`: the current layouts) to `new`
    /// before the scope: in manual mode recorded at once as `transition` (or
    /// `transition_from` when `always`) records it; in automatic mode joined to the
    /// scope's barrier, after what the recording did with those subresources (`always`:
    /// even where they are in `new`, ordering the scope's clear after earlier writes).
    fn attach(
        &mut self,
        image: &Image,
        range: Subresources,
        old: Option<vk::ImageLayout>,
        new: vk::ImageLayout,
        always: bool,
    ) -> Result<(), RecordingError> {
        if !self.sync.automatic {
            return match (always, old) {
                (true, Some(old)) => self.layout_barrier(image, range, old, new),
                (true, None) => {
                    let how = Move {
                        old: None,
                        always: true,
                        order_same: false,
                        raw_src: true,
                    };
                    self.move_range(image, range, new, stage_access(new), how);
                    self.emit_transitions();
                    Ok(())
                }
                (false, _) => self.transition_now(image, range, new),
            };
        }
        let undefined = vk::ImageLayout::UNDEFINED;
        // The first command on the image discards it (a clear, from UNDEFINED given or
        // found): the recording relies on no layout of it.
        let discards = always
            && !self.images.iter().any(|u| u.image.raw() == image.raw())
            && old.map_or_else(
                || self.layout_other_than(image, range, undefined).is_none(),
                |o| o == undefined,
            );
        let how = Move {
            old,
            always,
            order_same: true,
            raw_src: false,
        };
        self.move_range(image, range, new, stage_access(new), how);
        self.mark_discards(image, range, discards);
        Ok(())
    }

    /// `vkCmdDraw`. Errors: `KILN-E252` no graphics pipeline bound, `KILN-E283` outside a
    /// rendering scope or with a vertex binding of the pipeline unbound, `KILN-E254` a set
    /// of the layout not bound, `KILN-E255` push constants never pushed, `KILN-E287` the
    /// pipeline was built for other attachments than the scope's.
    #[track_caller]
    pub fn draw(
        &mut self,
        vertex_count: u32,
        instance_count: u32,
        first_vertex: u32,
        first_instance: u32,
    ) -> Result<(), RecordingError> {
        self.record(Command::draw("draw", false), |raw, cb| {
            // SAFETY: a graphics pipeline is bound with its sets and push constants inside
            // a rendering scope (checked by `record`).
            unsafe {
                raw.cmd_draw(
                    cb,
                    vertex_count,
                    instance_count,
                    first_vertex,
                    first_instance,
                )
            }
        })
    }

    /// `vkCmdDrawIndexed`. Errors: as [`draw`](Self::draw); `KILN-E283` also without an
    /// index buffer bound.
    #[track_caller]
    pub fn draw_indexed(
        &mut self,
        index_count: u32,
        instance_count: u32,
        first_index: u32,
        vertex_offset: i32,
        first_instance: u32,
    ) -> Result<(), RecordingError> {
        self.record(Command::draw("draw_indexed", true), |raw, cb| {
            // SAFETY: as in `draw`; an index buffer is bound (checked by `record`,
            // VUID-vkCmdDrawIndexed-None-07312).
            unsafe {
                raw.cmd_draw_indexed(
                    cb,
                    index_count,
                    instance_count,
                    first_index,
                    vertex_offset,
                    first_instance,
                )
            }
        })
    }
}
