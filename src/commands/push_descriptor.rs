//! Push descriptors (VK_KHR_push_descriptor, core in Vulkan 1.4; Vulkan spec §14.2.9
//! "Push Descriptor Updates"): the descriptors of a pipeline's push-descriptor set are
//! recorded into the command buffer with `vkCmdPushDescriptorSetKHR`, with no pool, no set
//! object and no `vkUpdateDescriptorSets`.
//!
//! A set becomes a push set through
//! [`ComputePipelineDesc::push_descriptor_set`](crate::ComputePipelineDesc::push_descriptor_set)
//! or [`PipelineLayoutDesc::with_push_descriptor`](crate::PipelineLayoutDesc::with_push_descriptor).
//! A push set holds uniform and storage buffers, sampled and storage images (whole images
//! or [`ImageView`]s), samplers, combined image samplers and uniform and storage texel
//! buffers ([`PushWrite`]'s constructors). Each write is checked against the reflected
//! layout exactly like a set write (the same functions, `descriptors::check_buffer_write_in`,
//! `check_image_write_in`, `check_texel_write_in`, and the same codes); one call must give
//! every descriptor of the set (`KILN-E207` otherwise; a SAMPLER binding with immutable
//! samplers needs none), so a dispatch never reads a descriptor that was not pushed.
//!
//! The pushed objects (buffers, images, views, samplers) are kept until the submission
//! completes; the buffers and images count as its uses for cross-queue ordering, like the
//! resources of bound sets. With automatic barriers, a dispatch or draw orders itself
//! against the pushed buffers' byte ranges and images as against a bound set's, and moves
//! each pushed image to its descriptor's layout (storage image GENERAL, sampled image and
//! combined image sampler SHADER_READ_ONLY_OPTIMAL), as it does a bound set's: the image
//! is written with that layout. A graphics push outside a rendering scope moves its images
//! at once (no barrier may be recorded inside a scope). A later push replaces the whole
//! set; binding a pipeline whose layout is not compatible for the set (Vulkan spec §14.2.2)
//! disturbs it like a bound set.

use ash::vk;

use super::automatic::buffer_key;
use super::command::image_key;
use super::work::Held;
use super::{Recorder, Slot};
use crate::descriptors::{
    check_buffer_write_in, check_image_write_in, check_texel_write_in, BufferWrite,
    DescriptorSetLayoutDesc, ImageWrite, SetLayout,
};
use crate::device::{Buffer, BufferView, Image, ImageView, Sampler, Subresources};
use crate::error::{DescriptorError, RecordingError, Result};
use crate::pipeline::BindingAccess;

/// What one descriptor of a push-descriptor set refers to.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub enum PushResource<'b> {
    /// A uniform or storage buffer: `range` bytes from `offset` (`None`: to its end).
    Buffer {
        /// The buffer.
        buffer: &'b Buffer,
        /// First byte of the buffer the descriptor refers to.
        offset: u64,
        /// Bytes from `offset` (`None`: to the end of the buffer).
        range: Option<u64>,
    },
    /// A sampled or storage image (its view of all mips and layers, or `view`), with
    /// `sampler` for a combined image sampler.
    Image {
        /// The image.
        image: &'b Image,
        /// A view of part of `image` ([`Image::view_of`]); `None`: the image's own view.
        view: Option<&'b ImageView>,
        /// The sampler of a combined image sampler.
        sampler: Option<&'b Sampler>,
    },
    /// A sampler.
    Sampler(&'b Sampler),
    /// A uniform or storage texel buffer.
    TexelBuffer(&'b BufferView),
}

impl std::fmt::Debug for PushResource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PushResource::Buffer {
                buffer,
                offset,
                range,
            } => write!(f, "Buffer(`{}`, {offset}, {range:?})", buffer.label()),
            PushResource::Image {
                image,
                view,
                sampler,
            } => write!(
                f,
                "Image(`{}`{}{})",
                image.label(),
                if view.is_some() { ", a view" } else { "" },
                if sampler.is_some() { ", a sampler" } else { "" }
            ),
            PushResource::Sampler(s) => write!(f, "Sampler(id {})", s.id()),
            PushResource::TexelBuffer(v) => write!(f, "TexelBuffer(`{}`)", v.buffer().label()),
        }
    }
}

/// One descriptor of a push-descriptor set: `resource` at array element `element` of
/// `binding`. Made by the constructors below, which say what each binding type takes.
#[derive(Clone, Copy, Debug)]
pub struct PushWrite<'b> {
    /// The binding number.
    pub binding: u32,
    /// The array element (0 for a non-array binding).
    pub element: u32,
    /// What the descriptor refers to.
    pub resource: PushResource<'b>,
}

impl<'b> PushWrite<'b> {
    fn new(binding: u32, resource: PushResource<'b>) -> Self {
        PushWrite {
            binding,
            element: 0,
            resource,
        }
    }

    /// The whole `buffer` at a uniform or storage buffer `binding` (element 0).
    pub fn buffer(binding: u32, buffer: &'b Buffer) -> Self {
        let (offset, range) = (0, None);
        Self::new(
            binding,
            PushResource::Buffer {
                buffer,
                offset,
                range,
            },
        )
    }

    /// `range` bytes of `buffer` from `offset` at `binding` (element 0).
    pub fn range(binding: u32, buffer: &'b Buffer, offset: u64, range: u64) -> Self {
        let range = Some(range);
        Self::new(
            binding,
            PushResource::Buffer {
                buffer,
                offset,
                range,
            },
        )
    }

    /// `image` (all its mips and layers) at a SAMPLED_IMAGE or STORAGE_IMAGE `binding`
    /// (a combined image sampler whose layout has an immutable sampler takes it too).
    pub fn image(binding: u32, image: &'b Image) -> Self {
        let (view, sampler) = (None, None);
        Self::new(
            binding,
            PushResource::Image {
                image,
                view,
                sampler,
            },
        )
    }

    /// `view` (part of an image, [`Image::view_of`]) at a SAMPLED_IMAGE or STORAGE_IMAGE
    /// `binding`.
    pub fn image_view(binding: u32, view: &'b ImageView) -> Self {
        let (image, view, sampler) = (view.image(), Some(view), None);
        Self::new(
            binding,
            PushResource::Image {
                image,
                view,
                sampler,
            },
        )
    }

    /// `sampler` at a SAMPLER `binding`.
    pub fn sampler(binding: u32, sampler: &'b Sampler) -> Self {
        Self::new(binding, PushResource::Sampler(sampler))
    }

    /// `image` and `sampler` at a COMBINED_IMAGE_SAMPLER `binding`.
    pub fn combined(binding: u32, image: &'b Image, sampler: &'b Sampler) -> Self {
        let (view, sampler) = (None, Some(sampler));
        Self::new(
            binding,
            PushResource::Image {
                image,
                view,
                sampler,
            },
        )
    }

    /// `view` and `sampler` at a COMBINED_IMAGE_SAMPLER `binding`.
    pub fn combined_view(binding: u32, view: &'b ImageView, sampler: &'b Sampler) -> Self {
        let (image, view, sampler) = (view.image(), Some(view), Some(sampler));
        Self::new(
            binding,
            PushResource::Image {
                image,
                view,
                sampler,
            },
        )
    }

    /// `view` at a UNIFORM_TEXEL_BUFFER or STORAGE_TEXEL_BUFFER `binding`.
    pub fn texel_buffer(binding: u32, view: &'b BufferView) -> Self {
        Self::new(binding, PushResource::TexelBuffer(view))
    }

    /// The same write at array element `element`.
    pub fn at(mut self, element: u32) -> Self {
        self.element = element;
        self
    }
}

/// An image of a pushed set, for the automatic barriers and the view checks.
pub(crate) struct PushedImage {
    pub set: u32,
    /// Index of the binding in the set layout's (sorted) bindings.
    pub idx: usize,
    pub binding: u32,
    pub image: Image,
    pub view_type: vk::ImageViewType,
    /// The mip levels and layers the descriptor shows (its view's, or the whole image).
    pub range: Subresources,
    /// The layout the descriptor was written with.
    pub layout: vk::ImageLayout,
}

/// One checked write: binding, element, type, binding index and what Vulkan gets.
#[derive(Clone, Copy)]
struct Checked {
    binding: u32,
    element: u32,
    ty: vk::DescriptorType,
    info: Info,
}

#[derive(Clone, Copy)]
enum Info {
    Buffer(vk::DescriptorBufferInfo),
    Image(vk::DescriptorImageInfo),
    Texel(vk::BufferView),
}

/// Up to BATCH writes and descriptors on the stack: no allocation per call.
const BATCH: usize = 8;

/// `n` elements of `fill`: on the stack up to BATCH, else in `heap`.
fn scratch<'s, T: Copy>(
    stack: &'s mut [T; BATCH],
    heap: &'s mut Vec<T>,
    n: usize,
    fill: T,
) -> &'s mut [T] {
    if n <= BATCH {
        &mut stack[..n]
    } else {
        heap.resize(n, fill);
        heap
    }
}

/// Checks `w` against `layout` (set number `set`); returns it checked and its binding
/// index. Errors: those of the set writes.
fn check_write(
    layout: &SetLayout,
    set: u32,
    w: &PushWrite<'_>,
) -> Result<(Checked, usize), RecordingError> {
    let count = |i: usize| layout.desc().bindings()[i].count;
    let (binding, element) = (w.binding, w.element);
    let (idx, ty, info) = match w.resource {
        PushResource::Buffer {
            buffer,
            offset,
            range,
        } => {
            let range = range.unwrap_or_else(|| buffer.size().saturating_sub(offset));
            let write = BufferWrite {
                binding,
                element,
                ty: None,
                buffer,
                offset,
                range,
            };
            let (idx, ty) = check_buffer_write_in(layout, set, count, &write)?;
            let info = vk::DescriptorBufferInfo {
                buffer: buffer.raw(),
                offset,
                range,
            };
            (idx, ty, Info::Buffer(info))
        }
        PushResource::Image { .. } | PushResource::Sampler(_) => {
            let (image, view, sampler) = match w.resource {
                PushResource::Image {
                    image,
                    view,
                    sampler,
                } => (Some(image), view, sampler),
                PushResource::Sampler(s) => (None, None, Some(s)),
                _ => (None, None, None),
            };
            let write = ImageWrite {
                binding,
                element,
                image,
                view,
                sampler,
            };
            let (idx, ty, info) = check_image_write_in(layout, set, count, &write)?;
            (idx, ty, Info::Image(info))
        }
        PushResource::TexelBuffer(view) => {
            let (idx, ty) = check_texel_write_in(layout, set, count, binding, element, view)?;
            (idx, ty, Info::Texel(view.raw()))
        }
    };
    let checked = Checked {
        binding,
        element,
        ty,
        info,
    };
    Ok((checked, idx))
}

impl Recorder<'_, '_> {
    /// Records the descriptors of push-descriptor set `set` of the bound pipeline's layout
    /// (`vkCmdPushDescriptorSetKHR`). Every descriptor of the set must be given once; the
    /// checks are those of a set write (`DescriptorSet::write_buffer_range`,
    /// `write_image_element`, `write_image_view`, `write_texel_buffer_at`).
    ///
    /// Errors: `KILN-E252` no pipeline bound, `KILN-E205` no such set, `KILN-E210` the set
    /// is not a push-descriptor set (VUID-vkCmdPushDescriptorSetKHR-set-00365),
    /// `KILN-E200` no such binding, `KILN-E202` a binding that does not take this
    /// resource (type, or a buffer's usage), `KILN-E203` element out of range, `KILN-E151`
    /// offset or range beyond the buffer, `KILN-E206` a range beyond
    /// maxStorageBufferRange / maxUniformBufferRange, `KILN-E208` a misaligned offset,
    /// `KILN-E182` an image without the SAMPLED / STORAGE usage its binding needs,
    /// `KILN-E157` a texel buffer's buffer without the binding's texel usage, `KILN-E109`
    /// a resource of another device, `KILN-E207` a descriptor of the set not given,
    /// `KILN-E286` (graphics, outside a rendering scope) a pushed image needed in two
    /// layouts.
    #[track_caller]
    pub fn push_descriptor_set(
        &mut self,
        set: u32,
        writes: &[PushWrite<'_>],
    ) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        let Some(bound) = self.state.bound[usize::from(self.state.current_graphics)].as_mut()
        else {
            return Err(RecordingError::NoPipelineBound {
                what: "push_descriptor_set",
            });
        };
        let layouts = bound.layout.set_layouts();
        let Some(layout) = layouts.get(set as usize) else {
            return Err(DescriptorError::NoSuchSet {
                set,
                set_count: layouts.len() as u32,
            }
            .into());
        };
        let desc = layout.desc();
        let Some(push) = self.shared.push_descriptor.as_ref().filter(|_| {
            desc.flags
                .contains(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
        }) else {
            return Err(DescriptorError::PushDescriptor {
                pipeline: format!("the bound pipeline's layout {}", bound.layout.id()),
                set,
                detail: "the set is not a push-descriptor set; bind_set a DescriptorSet, or \
                         make the set a push set (ComputePipelineDesc::push_descriptor_set, \
                         PipelineLayoutDesc::with_push_descriptor)"
                    .into(),
            }
            .into());
        };
        let total = layout.descriptor_total() as usize;
        let (mut given_stack, mut given_heap) = ([false; BATCH], Vec::new());
        let given = scratch(&mut given_stack, &mut given_heap, total, false);
        let starts = layout.starts();
        mark_immutable_samplers(desc, starts, given);
        let none = Checked {
            binding: 0,
            element: 0,
            ty: vk::DescriptorType::SAMPLER,
            info: Info::Texel(vk::BufferView::null()),
        };
        let (mut checked_stack, mut checked_heap) = ([none; BATCH], Vec::new());
        let checked = scratch(&mut checked_stack, &mut checked_heap, writes.len(), none);
        let (mut idx_stack, mut idx_heap) = ([0usize; BATCH], Vec::new());
        let idxs = scratch(&mut idx_stack, &mut idx_heap, writes.len(), 0);
        for (k, w) in writes.iter().enumerate() {
            let (c, idx) = check_write(layout, set, w)?;
            if let Some(g) = given.get_mut(starts[idx] as usize + w.element as usize) {
                *g = true;
            }
            checked[k] = c;
            idxs[k] = idx;
        }
        all_given(desc, starts, given, set)?;
        let empty = vk::WriteDescriptorSet::default();
        let (mut write_stack, mut write_heap) = ([empty; BATCH], Vec::new());
        let vk_writes = scratch(&mut write_stack, &mut write_heap, writes.len(), empty);
        for (w, c) in vk_writes.iter_mut().zip(checked.iter()) {
            let write = vk::WriteDescriptorSet::default()
                .dst_binding(c.binding)
                .dst_array_element(c.element)
                .descriptor_type(c.ty);
            *w = match &c.info {
                Info::Buffer(b) => write.buffer_info(std::slice::from_ref(b)),
                Info::Image(i) => write.image_info(std::slice::from_ref(i)),
                Info::Texel(v) => write.texel_buffer_view(std::slice::from_ref(v)),
            };
        }
        let (bind_point, layout) = (bound.bind_point, bound.layout.raw());
        self.flush_scopes();
        // SAFETY: `cb` is recording with a pipeline of layout `layout` bound at this bind
        // point; `set` is that layout's push-descriptor set; every write was checked against
        // its layout (binding, type, usage, range, alignment, same device) and every
        // descriptor of the set is written; the objects written are kept until the
        // submission completes (`remember_pushed`).
        unsafe { push.cmd_push_descriptor_set(self.cb, bind_point, layout, set, vk_writes) };
        self.remember_pushed(set, writes, checked, idxs);
        if self.state.current_graphics && self.sync.automatic && !self.state.rendering {
            // As bind_set: the images move now, no barrier may be recorded in a scope.
            self.prepare_graphics_images()?;
        }
        Ok(())
    }

    /// After a push of `writes` (checked as `checked`, at binding indices `idxs`) to set
    /// number `set`: the set is bound, its buffers and images replace the earlier push's
    /// for the automatic barriers, and every object written is kept until the submission.
    fn remember_pushed(
        &mut self,
        set: u32,
        writes: &[PushWrite<'_>],
        checked: &[Checked],
        idxs: &[usize],
    ) {
        let point = usize::from(self.state.current_graphics);
        if let Some(bound) = self.state.bound[point].as_mut() {
            let i = set as usize;
            if bound.sets.len() <= i {
                bound.sets.resize(i + 1, Slot::Empty);
            }
            bound.sets[i] = Slot::Pushed;
        }
        self.state.pushed[point].retain(|(s, _, _)| *s != set);
        self.state.pushed_images[point].retain(|p| p.set != set);
        for ((w, c), &idx) in writes.iter().zip(checked).zip(idxs) {
            match w.resource {
                PushResource::Buffer { buffer, .. } => {
                    let Info::Buffer(info) = c.info else { continue };
                    let key = buffer_key(buffer, info.offset, info.range);
                    self.state.pushed[point].push((set, idx, key));
                    self.keep(buffer);
                }
                PushResource::TexelBuffer(view) => {
                    let key = buffer_key(view.buffer(), view.offset(), view.range());
                    self.state.pushed[point].push((set, idx, key));
                    self.keep(view.buffer());
                    self.hold(Held::TexelBuffer(view.clone()));
                }
                PushResource::Image {
                    image,
                    view,
                    sampler,
                } => {
                    let Info::Image(info) = c.info else { continue };
                    self.state.pushed_images[point].push(PushedImage {
                        set,
                        idx,
                        binding: w.binding,
                        image: image.clone(),
                        view_type: view.map_or(image.view_type(), |v| v.desc().view_type),
                        range: view.map_or(image.subresources(), |v| v.subresources()),
                        layout: info.image_layout,
                    });
                    match view {
                        Some(v) => self.hold(Held::View(v.clone())),
                        None => self.hold(Held::Image(image.clone())),
                    }
                    if let Some(s) = sampler {
                        self.hold(Held::Sampler(s.clone()));
                    }
                    if !self.sync.automatic {
                        // Listed for cross-queue ordering (the automatic barriers touch it
                        // at each use).
                        self.touch(image);
                    }
                }
                PushResource::Sampler(s) => self.hold(Held::Sampler(s.clone())),
            }
        }
        self.state.views_ok[point] = false;
        self.sync.bind_gen += 1;
    }

    /// Keeps `h` until the submission, once per recording (a recording that pushes the
    /// same objects at every draw holds each once).
    fn hold(&mut self, h: Held) {
        if self.held_keys.insert(h.key()) {
            self.held.push(h);
        }
    }

    /// Whether an image of a bound set, `range` of `image` needed in `layout`, conflicts
    /// with an image pushed at bind point `slot` that the bound pipeline uses: the same
    /// image, an overlapping range, another layout (one command cannot have both).
    pub(crate) fn pushed_image_conflict(
        &self,
        slot: usize,
        (image, range): (&Image, Subresources),
        layout: vk::ImageLayout,
    ) -> bool {
        let Some(bound) = self.state.bound[slot].as_ref() else {
            return false;
        };
        let (levels, layers) = (image.mip_levels(), image.array_layers());
        self.state.pushed_images[slot].iter().any(|p| {
            let set = p.set as usize;
            matches!(bound.sets.get(set), Some(Slot::Pushed))
                && bound
                    .access
                    .set(set)
                    .get(p.idx)
                    .is_some_and(|b| b.access.any())
                && p.image.raw() == image.raw()
                && p.layout != layout
                && p.range.overlaps(&range, levels, layers)
        })
    }

    /// The automatic barriers' part for the images pushed to set number `set` at bind
    /// point `slot` (0 compute, 1 graphics) that the bound pipeline uses (`bindings`, its
    /// access of that set): each is moved to its descriptor's layout as a bound set's image
    /// is, and its use listed. `what` names the command. Errors: `KILN-E286`.
    pub(crate) fn pushed_image_uses(
        &mut self,
        slot: usize,
        set: usize,
        bindings: &[BindingAccess],
        what: &'static str,
    ) -> Result<(), RecordingError> {
        if self.state.pushed_images[slot].is_empty() {
            return Ok(());
        }
        let images = std::mem::take(&mut self.state.pushed_images[slot]);
        let mut out = Ok(());
        for (i, p) in images.iter().enumerate() {
            let b = bindings.get(p.idx).filter(|b| b.access.any());
            let Some(b) = b.filter(|_| p.set as usize == set) else {
                continue;
            };
            let use_ = super::automatic::shader_use(b);
            let (levels, layers) = (p.image.mip_levels(), p.image.array_layers());
            let conflict = images[..i].iter().any(|e| {
                e.set == p.set
                    && e.image.raw() == p.image.raw()
                    && e.layout != p.layout
                    && e.range.overlaps(&p.range, levels, layers)
            });
            let at = (p.set, p.binding);
            let target = (&p.image, p.range);
            let moved = self.descriptor_image_layout(target, use_, p.layout, at, conflict, what);
            if let Err(e) = moved {
                out = Err(e);
                break;
            }
            // Listed for cross-queue ordering and kept (a no-op when moved above).
            self.touch(&p.image);
            self.sync.uses.push((image_key(&p.image, p.range), use_));
        }
        self.state.pushed_images[slot] = images;
        if out.is_err() {
            self.sync.uses.clear();
            self.sync.pre.clear();
            self.sync.pre_sources = 0;
            self.sync.pending_images.clear();
        }
        out
    }

    /// The images pushed to set number `set` at bind point `slot`, with their view types
    /// (the view checks, `KILN-E214`).
    pub(crate) fn pushed_images_of(
        &self,
        slot: usize,
        set: usize,
    ) -> impl Iterator<Item = &PushedImage> {
        self.state.pushed_images[slot]
            .iter()
            .filter(move |p| p.set as usize == set)
    }
}

/// Marks the descriptors of SAMPLER bindings with immutable samplers as given: the layout
/// fills them. `starts[i]`: the first descriptor of binding index `i` in `given`.
fn mark_immutable_samplers(desc: &DescriptorSetLayoutDesc, starts: &[u32], given: &mut [bool]) {
    for (i, b) in desc.bindings().iter().enumerate() {
        if b.descriptor_type == vk::DescriptorType::SAMPLER && !b.immutable_samplers.is_empty() {
            let start = starts[i] as usize;
            let end = (start + b.count as usize).min(given.len());
            given[start..end].fill(true);
        }
    }
}

/// `KILN-E207` naming the binding of the first descriptor of set `set` not given.
fn all_given(
    desc: &DescriptorSetLayoutDesc,
    starts: &[u32],
    given: &[bool],
    set: u32,
) -> Result<(), DescriptorError> {
    let Some(slot) = given.iter().position(|g| !g) else {
        return Ok(());
    };
    let idx = starts
        .iter()
        .rposition(|&s| s as usize <= slot)
        .unwrap_or(0);
    Err(DescriptorError::BindingNotWritten {
        set,
        binding: desc.bindings()[idx].binding,
    })
}
