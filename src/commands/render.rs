//! Graphics recording: image layout transitions (synchronization2), image copies,
//! rendering scopes (dynamic rendering, Vulkan 1.3 §8.1), vertex/index buffers, viewport,
//! scissor and draws.

use ash::vk;

use super::Recorder;
use crate::device::{Buffer, Image};
use crate::error::{Error, Result};

/// What happens to an attachment's contents when rendering begins.
#[derive(Clone, Copy, Debug, PartialEq)]
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
pub struct ColorAttachment<'a> {
    /// A 2D image with COLOR_ATTACHMENT usage.
    pub image: &'a Image,
    pub load: LoadOp,
    /// Keep what was rendered (`false` = STORE_OP_DONT_CARE).
    pub store: bool,
}

impl<'a> ColorAttachment<'a> {
    /// Clear to `rgba`, then store.
    pub fn clear(image: &'a Image, rgba: [f32; 4]) -> Self {
        ColorAttachment {
            image,
            load: LoadOp::Clear(rgba),
            store: true,
        }
    }
}

/// The depth attachment of a rendering scope.
#[derive(Clone, Copy, Debug)]
pub struct DepthAttachment<'a> {
    /// An image with a depth format and DEPTH_STENCIL_ATTACHMENT usage.
    pub image: &'a Image,
    /// Clear to this depth (0.0..=1.0), or `None` to load.
    pub clear: Option<f32>,
    pub store: bool,
}

/// Attachments of one rendering scope ([`Recorder::begin_rendering`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct RenderingDesc<'a> {
    pub color: &'a [ColorAttachment<'a>],
    pub depth: Option<DepthAttachment<'a>>,
}

/// Stages and accesses that use an image in `layout` (Vulkan spec §7.1.2, §12.4).
fn stage_access(layout: vk::ImageLayout) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
    use vk::AccessFlags2 as A;
    use vk::ImageLayout as L;
    use vk::PipelineStageFlags2 as S;
    match layout {
        L::UNDEFINED | L::PREINITIALIZED => (S::NONE, A::NONE),
        L::TRANSFER_DST_OPTIMAL => (S::ALL_TRANSFER, A::TRANSFER_WRITE),
        L::TRANSFER_SRC_OPTIMAL => (S::ALL_TRANSFER, A::TRANSFER_READ),
        L::SHADER_READ_ONLY_OPTIMAL => (
            S::VERTEX_SHADER | S::FRAGMENT_SHADER | S::COMPUTE_SHADER,
            A::SHADER_SAMPLED_READ | A::SHADER_READ,
        ),
        L::COLOR_ATTACHMENT_OPTIMAL => (
            S::COLOR_ATTACHMENT_OUTPUT,
            A::COLOR_ATTACHMENT_READ | A::COLOR_ATTACHMENT_WRITE,
        ),
        L::DEPTH_ATTACHMENT_OPTIMAL | L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL => (
            S::EARLY_FRAGMENT_TESTS | S::LATE_FRAGMENT_TESTS,
            A::DEPTH_STENCIL_ATTACHMENT_READ | A::DEPTH_STENCIL_ATTACHMENT_WRITE,
        ),
        L::PRESENT_SRC_KHR => (S::NONE, A::NONE),
        _ => (S::ALL_COMMANDS, A::MEMORY_READ | A::MEMORY_WRITE),
    }
}

fn usage_error(image: &Image, needed: vk::ImageUsageFlags, what: &'static str) -> Error {
    Error::ImageUsage {
        object: image.label().to_string(),
        needed,
        what,
    }
}

impl<'a, 'r> Recorder<'a, 'r> {
    /// The layout `image` is in at this point of the recording.
    pub fn image_layout(&self, image: &Image) -> vk::ImageLayout {
        self.layouts
            .iter()
            .rev()
            .find(|(i, _)| i.raw() == image.raw())
            .map_or_else(|| image.layout(), |(_, l)| *l)
    }

    /// Moves `image` (every mip) from its current layout to `new` with a
    /// `vkCmdPipelineBarrier2` whose stages and accesses follow from the two layouts
    /// (writes before are made visible to the uses after). No-op when already in `new`.
    ///
    /// Errors: `KILN-E283` inside a rendering scope.
    pub fn transition(&mut self, image: &'a Image, new: vk::ImageLayout) -> Result<()> {
        self.transition_any(image, new)
    }

    /// [`transition`](Self::transition) for images whose lifetime the caller manages
    /// (kiln's presenter: swapchain images outlive their frame's fence wait).
    pub(crate) fn transition_any(&mut self, image: &Image, new: vk::ImageLayout) -> Result<()> {
        let old = self.image_layout(image);
        if old == new {
            // No barrier, but the commands after this rely on the layout: listed so that
            // a reusable recording checks it at every submission (KILN-E285) like the
            // layouts it does change (not committed: nothing changed).
            self.note_start(image);
            if !self.layouts.iter().any(|(i, _)| i.raw() == image.raw())
                && !self.relied.iter().any(|(i, _)| i.raw() == image.raw())
            {
                self.relied.push((image.clone(), new));
            }
            return Ok(());
        }
        self.transition_from_any(image, old, new)
    }

    /// Like [`transition`](Self::transition) with an explicit old layout (`UNDEFINED`
    /// discards the contents).
    pub fn transition_from(
        &mut self,
        image: &'a Image,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
    ) -> Result<()> {
        self.transition_from_any(image, old, new)
    }

    /// [`transition_from`](Self::transition_from) without the borrow (see `transition_any`).
    pub(crate) fn transition_from_any(
        &mut self,
        image: &Image,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
    ) -> Result<()> {
        if self.rendering {
            return Err(Error::RenderingState {
                what: "image layout transition inside a rendering scope; transition before begin_rendering",
            });
        }
        let (src_stage, src_access) = stage_access(old);
        let (mut dst_stage, dst_access) = stage_access(new);
        if dst_stage == vk::PipelineStageFlags2::NONE {
            dst_stage = vk::PipelineStageFlags2::BOTTOM_OF_PIPE;
        }
        let barrier = [vk::ImageMemoryBarrier2::default()
            .src_stage_mask(src_stage)
            .src_access_mask(src_access)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst_access)
            .old_layout(old)
            .new_layout(new)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image.raw())
            .subresource_range(image.full_range())];
        let dep = vk::DependencyInfo::default().image_memory_barriers(&barrier);
        // SAFETY: `cb` is recording outside a rendering scope; synchronization2 is enabled
        // (graphics objects require it); the image is alive (a clone is kept below until
        // the recording is submitted).
        unsafe { self.shared.raw.cmd_pipeline_barrier2(self.cb, &dep) };
        self.note_start(image);
        self.layouts.push((image.clone(), new));
        Ok(())
    }

    /// Remembers the layout `image` is in when the recording first touches it.
    fn note_start(&mut self, image: &Image) {
        if !self.starts.iter().any(|(i, _)| *i == image.raw()) {
            self.starts.push((image.raw(), image.layout()));
        }
    }

    /// Copies tightly packed texels from `src` (offset 0) into mip `level` of `dst`,
    /// moving `dst` to TRANSFER_DST_OPTIMAL first.
    ///
    /// Errors: `KILN-E181` the buffer is smaller than the level, `KILN-E283` inside a
    /// rendering scope.
    pub fn copy_buffer_to_image(
        &mut self,
        src: &'a Buffer,
        dst: &'a Image,
        level: u32,
    ) -> Result<()> {
        dst.check_level(level, dst.level_size(level))?;
        if src.size() < dst.level_size(level) {
            dst.check_level(level, src.size())?;
        }
        self.transition(dst, vk::ImageLayout::TRANSFER_DST_OPTIMAL)?;
        // SAFETY: the image is in TRANSFER_DST_OPTIMAL; the buffer holds the level (checked)
        // and both have transfer usage (kiln adds it).
        unsafe {
            self.shared.raw.cmd_copy_buffer_to_image(
                self.cb,
                src.raw(),
                dst.raw(),
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[dst.copy_region(level)],
            )
        };
        Ok(())
    }

    /// Copies mip `level` of `src` into `dst` (offset 0, tightly packed), moving `src` to
    /// TRANSFER_SRC_OPTIMAL first; then a full barrier.
    pub fn copy_image_to_buffer(
        &mut self,
        src: &'a Image,
        level: u32,
        dst: &'a Buffer,
    ) -> Result<()> {
        self.copy_image_to_buffer_any(src, level, dst)
    }

    /// [`copy_image_to_buffer`](Self::copy_image_to_buffer) without the borrows (kiln's
    /// presenter keeps both alive until the frame's fence is waited on).
    pub(crate) fn copy_image_to_buffer_any(
        &mut self,
        src: &Image,
        level: u32,
        dst: &Buffer,
    ) -> Result<()> {
        let size = src.level_size(level);
        src.check_level(level, size)?;
        if dst.size() < size {
            return Err(Error::BufferOverflow {
                object: dst.label().to_string(),
                capacity: dst.size(),
                offset: 0,
                requested: size,
            });
        }
        self.transition_any(src, vk::ImageLayout::TRANSFER_SRC_OPTIMAL)?;
        // SAFETY: as in copy_buffer_to_image, with the roles swapped.
        unsafe {
            self.shared.raw.cmd_copy_image_to_buffer(
                self.cb,
                src.raw(),
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                dst.raw(),
                &[src.copy_region(level)],
            )
        };
        self.full_barrier();
        Ok(())
    }

    /// Begins a rendering scope (`vkCmdBeginRendering`) over the attachments' full extent.
    /// Attachments are moved to COLOR_ATTACHMENT_OPTIMAL / DEPTH_ATTACHMENT_OPTIMAL first;
    /// the viewport and scissor are set to the whole extent (depth range 0..1, +Y down as
    /// in Vulkan's framebuffer coordinates).
    ///
    /// Errors: `KILN-E283` already rendering or no attachment, `KILN-E182` an attachment
    /// without the attachment usage, `KILN-E180` attachments of different extents.
    pub fn begin_rendering(&mut self, desc: &RenderingDesc<'_>) -> Result<()> {
        if self.rendering {
            return Err(Error::RenderingState {
                what: "begin_rendering inside a rendering scope; call end_rendering first",
            });
        }
        // The attachments are borrowed only for this call: keep them alive until the
        // recording is submitted (their drop is then deferred past the submission).
        for c in desc.color {
            self.keep_images.push(c.image.clone());
        }
        if let Some(d) = &desc.depth {
            self.keep_images.push(d.image.clone());
        }
        let first = desc
            .color
            .first()
            .map(|c| c.image)
            .or(desc.depth.as_ref().map(|d| d.image))
            .ok_or(Error::RenderingState {
                what: "begin_rendering without any attachment",
            })?;
        let extent = first.extent();
        for img in desc
            .color
            .iter()
            .map(|c| c.image)
            .chain(desc.depth.as_ref().map(|d| d.image))
        {
            if img.extent() != extent {
                return Err(Error::InvalidImage {
                    object: img.label().to_string(),
                    detail: format!(
                        "attachment is {}x{} but `{}` is {}x{}; attachments of one rendering scope share an extent",
                        img.width(),
                        img.height(),
                        first.label(),
                        extent.width,
                        extent.height
                    ),
                });
            }
        }
        let mut colors = Vec::with_capacity(desc.color.len());
        for c in desc.color {
            if !c
                .image
                .usage()
                .contains(vk::ImageUsageFlags::COLOR_ATTACHMENT)
            {
                return Err(usage_error(
                    c.image,
                    vk::ImageUsageFlags::COLOR_ATTACHMENT,
                    "a colour attachment",
                ));
            }
            if c.image.aspect() != vk::ImageAspectFlags::COLOR {
                return Err(usage_error(
                    c.image,
                    vk::ImageUsageFlags::COLOR_ATTACHMENT,
                    "a colour attachment (this image has a depth format)",
                ));
            }
            let (load_op, clear) = match c.load {
                LoadOp::Clear(v) => (vk::AttachmentLoadOp::CLEAR, v),
                LoadOp::Load => (vk::AttachmentLoadOp::LOAD, [0.0; 4]),
                LoadOp::DontCare => (vk::AttachmentLoadOp::DONT_CARE, [0.0; 4]),
            };
            if load_op == vk::AttachmentLoadOp::LOAD {
                self.transition_any(c.image, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)?;
            } else {
                self.transition_from_any(
                    c.image,
                    self.image_layout(c.image),
                    vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                )?;
            }
            colors.push(
                vk::RenderingAttachmentInfo::default()
                    .image_view(c.image.view())
                    .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                    .load_op(load_op)
                    .store_op(if c.store {
                        vk::AttachmentStoreOp::STORE
                    } else {
                        vk::AttachmentStoreOp::DONT_CARE
                    })
                    .clear_value(vk::ClearValue {
                        color: vk::ClearColorValue { float32: clear },
                    }),
            );
        }
        let mut depth = None;
        if let Some(d) = &desc.depth {
            if !d
                .image
                .usage()
                .contains(vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT)
                || !d.image.aspect().contains(vk::ImageAspectFlags::DEPTH)
            {
                return Err(usage_error(
                    d.image,
                    vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
                    "a depth attachment (with a depth format)",
                ));
            }
            let layout = if d.image.aspect().contains(vk::ImageAspectFlags::STENCIL) {
                vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL
            } else {
                vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL
            };
            if d.clear.is_some() {
                // Discard the old contents; the barrier also orders this scope's depth
                // writes after earlier ones (e.g. a previous frame's).
                self.transition_from_any(d.image, vk::ImageLayout::UNDEFINED, layout)?;
            } else {
                self.transition_any(d.image, layout)?;
            }
            depth = Some(
                vk::RenderingAttachmentInfo::default()
                    .image_view(d.image.view())
                    .image_layout(layout)
                    .load_op(if d.clear.is_some() {
                        vk::AttachmentLoadOp::CLEAR
                    } else {
                        vk::AttachmentLoadOp::LOAD
                    })
                    .store_op(if d.store {
                        vk::AttachmentStoreOp::STORE
                    } else {
                        vk::AttachmentStoreOp::DONT_CARE
                    })
                    .clear_value(vk::ClearValue {
                        depth_stencil: vk::ClearDepthStencilValue {
                            depth: d.clear.unwrap_or(1.0),
                            stencil: 0,
                        },
                    }),
            );
        }
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
        // SAFETY: attachments are in the layouts named above, have the attachment usage and
        // one extent (checked); dynamic rendering is enabled on every Vulkan 1.3 device kiln
        // makes graphics objects for.
        unsafe { self.shared.raw.cmd_begin_rendering(self.cb, &info) };
        self.rendering = true;
        self.set_viewport(vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: extent.width as f32,
            height: extent.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        });
        self.set_scissor(area);
        Ok(())
    }

    /// Ends the rendering scope. Errors: `KILN-E283` no scope is open.
    pub fn end_rendering(&mut self) -> Result<()> {
        if !self.close_rendering() {
            return Err(Error::RenderingState {
                what: "end_rendering without begin_rendering",
            });
        }
        Ok(())
    }

    /// Ends an open rendering scope; returns whether one was open.
    pub(crate) fn close_rendering(&mut self) -> bool {
        if !self.rendering {
            return false;
        }
        // SAFETY: a rendering scope begun on this command buffer is open.
        unsafe { self.shared.raw.cmd_end_rendering(self.cb) };
        self.rendering = false;
        true
    }

    /// Sets the dynamic viewport (every kiln graphics pipeline has a dynamic viewport).
    pub fn set_viewport(&mut self, viewport: vk::Viewport) {
        // SAFETY: `cb` is recording; one viewport (kiln pipelines use viewportCount 1).
        unsafe { self.shared.raw.cmd_set_viewport(self.cb, 0, &[viewport]) };
    }

    /// Sets the dynamic scissor rectangle.
    pub fn set_scissor(&mut self, scissor: vk::Rect2D) {
        // SAFETY: `cb` is recording; one scissor (kiln pipelines use scissorCount 1).
        unsafe { self.shared.raw.cmd_set_scissor(self.cb, 0, &[scissor]) };
    }

    /// Binds `buffer` (from byte `offset`) as vertex buffer `binding` — the index of the
    /// layout in `GraphicsPipelineDesc::vertex_buffers`.
    ///
    /// Errors: `KILN-E157` the buffer lacks VERTEX_BUFFER usage.
    pub fn bind_vertex_buffer(
        &mut self,
        binding: u32,
        buffer: &'a Buffer,
        offset: u64,
    ) -> Result<()> {
        if !buffer.usage().contains(vk::BufferUsageFlags::VERTEX_BUFFER) {
            return Err(Error::BufferUsage {
                object: buffer.label().to_string(),
                needed: vk::BufferUsageFlags::VERTEX_BUFFER,
                call: "bind_vertex_buffer",
            });
        }
        // SAFETY: the buffer has VERTEX_BUFFER usage and outlives the execution ('a).
        unsafe {
            self.shared
                .raw
                .cmd_bind_vertex_buffers(self.cb, binding, &[buffer.raw()], &[offset])
        };
        Ok(())
    }

    /// Binds `buffer` as the index buffer (`UINT16` or `UINT32` indices).
    ///
    /// Errors: `KILN-E157` the buffer lacks INDEX_BUFFER usage.
    pub fn bind_index_buffer(
        &mut self,
        buffer: &'a Buffer,
        offset: u64,
        index_type: vk::IndexType,
    ) -> Result<()> {
        if !buffer.usage().contains(vk::BufferUsageFlags::INDEX_BUFFER) {
            return Err(Error::BufferUsage {
                object: buffer.label().to_string(),
                needed: vk::BufferUsageFlags::INDEX_BUFFER,
                call: "bind_index_buffer",
            });
        }
        // SAFETY: the buffer has INDEX_BUFFER usage and outlives the execution ('a).
        unsafe {
            self.shared
                .raw
                .cmd_bind_index_buffer(self.cb, buffer.raw(), offset, index_type)
        };
        Ok(())
    }

    fn check_draw(&mut self, what: &'static str) -> Result<()> {
        if self.bound[1].is_none() {
            return Err(Error::NoPipelineBound { what });
        }
        if !self.rendering {
            return Err(Error::RenderingState {
                what: "draw outside a rendering scope; call begin_rendering first",
            });
        }
        self.check_bound_state(1)
    }

    /// `vkCmdDraw`. Errors: `KILN-E252` no graphics pipeline bound, `KILN-E283` outside a
    /// rendering scope, `KILN-E254` a set of the layout not bound, `KILN-E255` push constants
    /// never pushed.
    pub fn draw(
        &mut self,
        vertex_count: u32,
        instance_count: u32,
        first_vertex: u32,
        first_instance: u32,
    ) -> Result<()> {
        self.check_draw("draw")?;
        // SAFETY: a graphics pipeline is bound inside a rendering scope.
        unsafe {
            self.shared.raw.cmd_draw(
                self.cb,
                vertex_count,
                instance_count,
                first_vertex,
                first_instance,
            )
        };
        Ok(())
    }

    /// `vkCmdDrawIndexed` (same errors as [`draw`](Self::draw)).
    pub fn draw_indexed(
        &mut self,
        index_count: u32,
        instance_count: u32,
        first_index: u32,
        vertex_offset: i32,
        first_instance: u32,
    ) -> Result<()> {
        self.check_draw("draw_indexed")?;
        // SAFETY: a graphics pipeline is bound inside a rendering scope.
        unsafe {
            self.shared.raw.cmd_draw_indexed(
                self.cb,
                index_count,
                instance_count,
                first_index,
                vertex_offset,
                first_instance,
            )
        };
        Ok(())
    }
}
