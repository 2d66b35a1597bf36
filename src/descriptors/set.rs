//! Descriptor sets and checked writes.
//!
//! A write is checked against the set layout before Vulkan sees it: the binding exists,
//! the descriptor type matches (VUID-VkWriteDescriptorSet-descriptorType-00330 ff.), the
//! array element is in range (VUID-VkWriteDescriptorSet-dstArrayElement-00321), the buffer
//! was created with the matching usage (VUID-VkWriteDescriptorSet-descriptorType-00331,
//! -00330), the range is within `maxUniformBufferRange` / `maxStorageBufferRange`
//! (VUID-VkWriteDescriptorSet-descriptorType-00332, -00333) and the offset is aligned
//! (VUID-VkWriteDescriptorSet-descriptorType-00327, -00328). A failed check returns an
//! error and makes no Vulkan call.

mod acceleration_structure;
mod alloc;
mod images;

pub(crate) use alloc::allocate_set_in;

use std::mem::{ManuallyDrop, MaybeUninit};
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;

use ash::vk;
use ash::vk::Handle;

use super::layout::{BufferPlan, SetLayout, SetLayoutBinding};
use super::pool::SetSlot;
use super::write::{binding_index_in, check_buffer_write_in, BufferWrite};
use crate::device::{
    AccelerationStructure, Buffer, BufferView, Image, ImageView, QueueStamps, ResourceStamps,
    Sampler,
};
use crate::error::{DescriptorError, DeviceError, Result};

/// A resource a set refers to, kept alive as long as the set is.
#[derive(Clone, Debug)]
#[allow(dead_code)] // held only to keep the resource alive
pub(super) enum Held {
    /// A buffer and the byte range `[offset, offset + size)` the descriptor covers.
    Buffer(Buffer, u64, u64),
    Image(Image),
    Sampler(Sampler),
    ImageSampler(Image, Sampler),
    /// A uniform or storage texel buffer: a view of a byte range of a buffer.
    TexelBuffer(BufferView),
    /// A view of part of an image, alone or with a sampler.
    View(ImageView, Option<Sampler>),
    /// A SAMPLER descriptor filled by the layout's immutable sampler.
    Immutable,
    /// A top-level acceleration structure (and, through it, the bottom-level ones it
    /// places).
    AccelerationStructure(AccelerationStructure),
    /// An inline uniform block with bytes written (its one entry).
    Inline,
}

/// One resource a descriptor of a set refers to (for the recorder's hazard tracking and
/// image layouts).
#[derive(Clone, Copy, Debug)]
pub(crate) enum SetResource<'s> {
    /// A buffer descriptor: the buffer and the byte range `[offset, offset + size)`.
    Buffer {
        buffer: &'s Buffer,
        offset: u64,
        size: u64,
    },
    /// An image descriptor (alone or with a sampler): the image, the type of the view
    /// written (its own, or an [`ImageView`]'s) and the mip levels and layers it shows.
    Image(&'s Image, vk::ImageViewType, crate::device::Subresources),
}

/// A set's descriptor list (its length is fixed when the set is made).
pub(super) type HeldList = Box<[Option<Held>]>;

/// Writes of one `write_buffers` call that go through stack arrays (no allocation).
const BATCH: usize = 8;

/// A descriptor set allocated from its layout's growing pool. Returned to the pool on drop
/// (once no submission can use it).
pub struct DescriptorSet {
    layout: Arc<SetLayout>,
    /// The handle (`slot.raw`'s copy): what a bind reads, beside the set's other hot
    /// fields, with no chase into the slot.
    raw: vk::DescriptorSet,
    /// Descriptors outside PARTIALLY_BOUND bindings never written: the set binds when 0.
    unwritten: u32,
    /// The handle, its pool, the descriptor list and the queue stamps, in one allocation
    /// that goes back to the pools with the handle and is taken by a later set
    /// (`pool::SetSlot`); the set itself stays small (moved without `memcpy` calls).
    /// Taken out only by `Drop`.
    slot: ManuallyDrop<Box<SetSlot>>,
    set: u32,
    /// The index of the set's binding names in its layout's name table (0: none).
    names: u32,
    /// Id of the last recording that listed `last_used` among the stamps to update at its
    /// submission (see [`Recorder::bind_set`](crate::Recorder::bind_set)); 0: none yet.
    pub(crate) listed_by: AtomicU64,
    /// A hint for the recorder that drew with this set last: the index of the set's
    /// compiled uses in its cache (`commands::automatic::SetUses`), which it verifies
    /// before use (another recording may have overwritten the hint: then it looks the set
    /// up); `u32::MAX`: none.
    pub(crate) draw_entry: AtomicU32,
    /// The same for the compiled uses a dispatch with this set last applied (each
    /// verified, as `draw_entry`).
    pub(crate) dispatch_entry: AtomicU32,
}

impl std::fmt::Debug for DescriptorSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DescriptorSet")
            .field("set", &self.set)
            .field("layout_id", &self.layout.id())
            .finish()
    }
}

/// Records in a set's list that element 0 of the binding of `p` now refers to the whole
/// `buffer` (kept alive with the set); returns the descriptors to write that this write
/// fills (1 where the entry was empty and counts, else 0). The caller checked that the entry
/// exists (`BufferPlan::admits`).
#[inline(always)]
fn hold_buffer(held: &mut [Option<Held>], p: &BufferPlan, buffer: &Buffer) -> u32 {
    let Some(slot) = held.get_mut(p.start as usize) else {
        return 0;
    };
    let new = Held::Buffer(buffer.clone(), 0, buffer.size());
    match slot {
        Some(old) => {
            *old = new;
            0
        }
        None => {
            *slot = Some(new);
            u32::from(p.counts)
        }
    }
}

#[inline]
fn partially_bound(b: &SetLayoutBinding) -> bool {
    b.flags
        .contains(vk::DescriptorBindingFlags::PARTIALLY_BOUND)
}

impl DescriptorSet {
    /// Per queue, the timeline value of the last submission that bound this set.
    #[inline]
    pub(crate) fn uses(&self) -> &QueueStamps {
        &self.slot.uses
    }

    /// The set's layout (interned).
    #[inline]
    pub fn layout(&self) -> &Arc<SetLayout> {
        &self.layout
    }

    /// The set number this set was allocated for.
    pub fn set_number(&self) -> u32 {
        self.set
    }

    /// The raw handle (owned by this object).
    #[inline]
    pub fn raw(&self) -> vk::DescriptorSet {
        self.raw
    }

    /// The main queue's timeline value of the last submission on it that used this set
    /// (0: none yet). Unstable: for kiln's tests.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_last_used(&self) -> u64 {
        self.slot.uses.get(0)
    }

    /// Calls `f` with the stamps of every buffer and image the set refers to, whether a
    /// shader may write it through the set, and its raw handle (storage buffers, storage images and storage
    /// texel buffers; uniform buffers and sampled images are read only). The submission
    /// layer derives cross-queue waits from these and stamps them.
    pub(crate) fn for_each_resource(&self, mut f: impl FnMut(&ResourceStamps, bool, u64)) {
        use vk::DescriptorType as T;
        for (i, b) in self.layout.desc().bindings().iter().enumerate() {
            let write = matches!(
                b.descriptor_type,
                T::STORAGE_BUFFER
                    | T::STORAGE_BUFFER_DYNAMIC
                    | T::STORAGE_IMAGE
                    | T::STORAGE_TEXEL_BUFFER
            );
            for h in self.slot.held[self.slots(i)].iter().flatten() {
                match h {
                    Held::Buffer(buf, ..) => f(buf.stamps(), write, buf.raw().as_raw()),
                    Held::TexelBuffer(v) => {
                        let buf = v.buffer();
                        f(buf.stamps(), write, buf.raw().as_raw())
                    }
                    Held::Image(img) | Held::ImageSampler(img, _) => {
                        f(img.stamps(), write, img.raw().as_raw())
                    }
                    Held::View(v, _) => {
                        let img = v.image();
                        f(img.stamps(), write, img.raw().as_raw())
                    }
                    Held::AccelerationStructure(a) => {
                        a.for_each_traversed(|b| f(b.stamps(), false, b.raw().as_raw()))
                    }
                    Held::Sampler(_) | Held::Immutable | Held::Inline => {}
                }
            }
        }
    }

    /// Calls `f` with every buffer (and byte range) and image that the binding at index
    /// `idx` of the layout's (sorted) bindings refers to, array element after element;
    /// samplers and unwritten elements are skipped.
    #[inline]
    pub(crate) fn for_each_at<'s>(&'s self, idx: usize, mut f: impl FnMut(SetResource<'s>)) {
        if idx >= self.layout.starts().len() {
            return;
        }
        for h in self.slot.held[self.slots(idx)].iter().flatten() {
            match h {
                Held::Buffer(buffer, offset, size) => f(SetResource::Buffer {
                    buffer,
                    offset: *offset,
                    size: *size,
                }),
                Held::TexelBuffer(v) => f(SetResource::Buffer {
                    buffer: v.buffer(),
                    offset: v.offset(),
                    size: v.range(),
                }),
                Held::Image(img) | Held::ImageSampler(img, _) => {
                    f(SetResource::Image(img, img.view_type(), img.subresources()))
                }
                Held::View(v, _) => f(SetResource::Image(
                    v.image(),
                    v.desc().view_type,
                    v.subresources(),
                )),
                // A ray query reads the structure's storage and its bottom-level ones'.
                Held::AccelerationStructure(a) => a.for_each_traversed(|buffer| {
                    f(SetResource::Buffer {
                        buffer,
                        offset: 0,
                        size: buffer.size(),
                    })
                }),
                Held::Sampler(_) | Held::Immutable | Held::Inline => {}
            }
        }
    }

    /// The buffer and byte range `(buffer, offset, size)` that array element `element` of
    /// `binding` refers to (`None`: no such binding or element, not written yet, or not a
    /// buffer binding).
    pub fn buffer_at(&self, binding: u32, element: u32) -> Option<(&Buffer, u64, u64)> {
        let idx = self.binding_index(binding).ok()?;
        let slots = self.slots(idx);
        match self.slot.held[slots].get(element as usize)? {
            Some(Held::Buffer(b, offset, size)) => Some((b, *offset, *size)),
            Some(Held::TexelBuffer(v)) => Some((v.buffer(), v.offset(), v.range())),
            _ => None,
        }
    }

    /// The image that array element `element` of `binding` refers to (`None`: no such
    /// binding or element, not written yet, or not an image binding).
    pub fn image_at(&self, binding: u32, element: u32) -> Option<&Image> {
        let idx = self.binding_index(binding).ok()?;
        let slots = self.slots(idx);
        match self.slot.held[slots].get(element as usize)? {
            Some(Held::Image(i) | Held::ImageSampler(i, _)) => Some(i),
            Some(Held::View(v, _)) => Some(v.image()),
            _ => None,
        }
    }

    /// The binding number of a reflected name: the variable's (instance) name, `scene` in
    /// `uniform Scene { .. } scene;`, or its block name, `Scene`.
    ///
    /// Errors: `KILN-E201` no binding of that name (the message lists the names the set
    /// has).
    pub fn binding_of(&self, name: &str) -> Result<u32, DescriptorError> {
        let names = self.layout.names.get(self.names);
        names
            .get(name)
            .copied()
            .ok_or_else(|| DescriptorError::NoSuchBindingName {
                set: self.set,
                name: name.to_string(),
                available: names
                    .iter()
                    .map(|(n, b)| format!("`{n}` (binding {b})"))
                    .collect(),
            })
    }

    /// Writes the whole `buffer` to `binding` (element 0); the descriptor type is the
    /// layout's (uniform or storage buffer).
    pub fn write_buffer(&mut self, binding: u32, buffer: &Buffer) -> Result<(), DescriptorError> {
        self.write_buffer_range(binding, 0, None, buffer, 0, buffer.size())
    }

    /// Writes the whole `buffer` to array element `element` of `binding`.
    pub fn write_buffer_at(
        &mut self,
        binding: u32,
        element: u32,
        buffer: &Buffer,
    ) -> Result<(), DescriptorError> {
        self.write_buffer_range(binding, element, None, buffer, 0, buffer.size())
    }

    /// Writes `buffer` to the binding whose reflected name is `name`.
    pub fn write_named(&mut self, name: &str, buffer: &Buffer) -> Result<(), DescriptorError> {
        let binding = self.binding_of(name)?;
        self.write_buffer(binding, buffer)
    }

    /// Writes `buffer` as a uniform buffer: an error if the binding is not one.
    pub fn write_uniform_buffer(
        &mut self,
        binding: u32,
        buffer: &Buffer,
    ) -> Result<(), DescriptorError> {
        let ty = Some(vk::DescriptorType::UNIFORM_BUFFER);
        self.write_buffer_range(binding, 0, ty, buffer, 0, buffer.size())
    }

    /// Writes `buffer` as a storage buffer: an error if the binding is not one.
    pub fn write_storage_buffer(
        &mut self,
        binding: u32,
        buffer: &Buffer,
    ) -> Result<(), DescriptorError> {
        let ty = Some(vk::DescriptorType::STORAGE_BUFFER);
        self.write_buffer_range(binding, 0, ty, buffer, 0, buffer.size())
    }

    /// Writes `[offset, offset + range)` of `buffer` to array element `element` of
    /// `binding`. `ty`, when given, is the descriptor type the caller means to write; it
    /// must equal the layout's. Offsets and ranges are in bytes.
    pub fn write_buffer_range(
        &mut self,
        binding: u32,
        element: u32,
        ty: Option<vk::DescriptorType>,
        buffer: &Buffer,
        offset: u64,
        range: u64,
    ) -> Result<(), DescriptorError> {
        let (idx, expected) =
            self.check_buffer_write(binding, element, ty, buffer, offset, range)?;
        self.wait_unused()?;
        let info = [vk::DescriptorBufferInfo {
            buffer: buffer.raw(),
            offset,
            range,
        }];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(self.slot.raw)
            .dst_binding(binding)
            .dst_array_element(element)
            .descriptor_type(expected)
            .buffer_info(&info);
        // SAFETY: every field was checked against the layout and limits above; no pending
        // submission uses the set (waited above) and `&mut self` gives the external
        // synchronization vkUpdateDescriptorSets needs.
        unsafe { self.layout.shared.raw.update_descriptor_sets(&[write], &[]) };
        self.store(idx, element, Held::Buffer(buffer.clone(), offset, range));
        Ok(())
    }

    /// Writes several whole buffers (binding, buffer) in one `vkUpdateDescriptorSets` call.
    /// Every write is checked first (as in [`write_buffer`](Self::write_buffer)); if one
    /// fails, nothing is written.
    pub fn write_buffers(&mut self, writes: &[(u32, &Buffer)]) -> Result<(), DescriptorError> {
        if self.write_buffers_planned(writes)? {
            return Ok(());
        }
        self.write_buffers_checked(writes)
    }

    /// [`write_buffers`](Self::write_buffers) of up to [`BATCH`] writes that each pass their
    /// binding's precomputed checks ([`BufferPlan`](super::layout::BufferPlan): the checks
    /// of `check_buffer_write_in` for a whole buffer at element 0, folded per binding);
    /// `false` (nothing done) where one does not: the caller checks them one by one (and
    /// returns the error).
    #[inline(always)]
    fn write_buffers_planned(
        &mut self,
        writes: &[(u32, &Buffer)],
    ) -> Result<bool, DescriptorError> {
        let n = writes.len();
        if n > BATCH {
            return Ok(false);
        }
        let plans = self.layout.buffer_plans();
        let device = Arc::as_ptr(&self.layout.shared);
        let len = self.slot.held.len();
        // Not zeroed: the first `n` are written below before anything reads them.
        let mut infos = [MaybeUninit::<vk::DescriptorBufferInfo>::uninit(); BATCH];
        // Every binding written, in layout order (the update template's case).
        let mut in_order = n == plans.len();
        for (i, ((binding, buffer), info)) in writes.iter().zip(&mut infos).enumerate() {
            let Some(p) = plans.get(*binding as usize) else {
                return Ok(false);
            };
            if !p.admits(*binding, buffer, device, len) {
                return Ok(false);
            }
            info.write(vk::DescriptorBufferInfo {
                buffer: buffer.raw(),
                offset: 0,
                range: buffer.size(),
            });
            in_order &= *binding as usize == i;
        }
        // Every write passed its plan: `infos[..n]` are initialized.
        self.wait_unused()?;
        let template = if in_order {
            self.layout.buffers_template()
        } else {
            None
        };
        if let Some(template) = template {
            // SAFETY: the template writes element 0 of every binding of this set's layout
            // in order from `infos[..n]` (n = the layout's binding count = the writes,
            // each initialized above: `MaybeUninit<T>` has `T`'s layout), each info passed
            // its binding's plan (every check of `check_buffer_write_in`);
            // no pending submission uses the set (waited above) and `&mut self` gives the
            // external synchronization the update needs; `infos` outlives the call.
            unsafe {
                self.layout.shared.raw.update_descriptor_set_with_template(
                    self.slot.raw,
                    template,
                    infos.as_ptr().cast(),
                )
            };
            // Binding `i` is write `i` (in order).
            let (held, mut filled) = (&mut self.slot.held[..], 0);
            for (p, (_, buffer)) in plans.iter().zip(writes) {
                filled += hold_buffer(held, p, buffer);
            }
            self.unwritten -= filled;
            return Ok(true);
        }
        // The Vulkan writes and the set's list in one pass (the update cannot fail, and no
        // pending submission uses the set: waited above).
        let mut vk_writes = [vk::WriteDescriptorSet::default(); BATCH];
        let slot = &mut **self.slot;
        let (held, mut filled) = (&mut slot.held[..], 0);
        for ((w, info), (binding, buffer)) in vk_writes.iter_mut().zip(&infos).zip(writes) {
            // Each write passed its binding's plan above: the plan is there.
            let Some(p) = plans.get(*binding as usize) else {
                continue;
            };
            // SAFETY: `info` is one of `infos[..n]` (zipped with the writes), initialized.
            let info = unsafe { info.assume_init_ref() };
            *w = vk::WriteDescriptorSet::default()
                .dst_set(slot.raw)
                .dst_binding(p.binding)
                .descriptor_type(p.ty)
                .buffer_info(std::slice::from_ref(info));
            filled += hold_buffer(held, p, buffer);
        }
        self.unwritten -= filled;
        // SAFETY: as in write_buffer_range, for each write (each passed its binding's
        // plan, which is every check of `check_buffer_write_in` for this write).
        unsafe {
            self.layout
                .shared
                .raw
                .update_descriptor_sets(&vk_writes[..n], &[])
        };
        Ok(true)
    }

    /// [`write_buffers`](Self::write_buffers), each write checked by `check_buffer_write_in`.
    fn write_buffers_checked(&mut self, writes: &[(u32, &Buffer)]) -> Result<(), DescriptorError> {
        let none = (0usize, vk::DescriptorType::SAMPLER);
        let mut on_stack = [none; BATCH];
        let mut on_heap = Vec::new();
        let checked: &mut [(usize, vk::DescriptorType)] = if writes.len() <= BATCH {
            &mut on_stack[..writes.len()]
        } else {
            on_heap.resize(writes.len(), none);
            &mut on_heap
        };
        for (c, (binding, buffer)) in checked.iter_mut().zip(writes) {
            *c = self.check_buffer_write(*binding, 0, None, buffer, 0, buffer.size())?;
        }
        self.wait_unused()?;
        for (ws, cs) in writes.chunks(BATCH).zip(checked.chunks(BATCH)) {
            let mut infos = [vk::DescriptorBufferInfo::default(); BATCH];
            for (info, (_, b)) in infos.iter_mut().zip(ws) {
                *info = vk::DescriptorBufferInfo {
                    buffer: b.raw(),
                    offset: 0,
                    range: b.size(),
                };
            }
            let mut vk_writes = [vk::WriteDescriptorSet::default(); BATCH];
            for (i, ((binding, _), (_, ty))) in ws.iter().zip(cs).enumerate() {
                vk_writes[i] = vk::WriteDescriptorSet::default()
                    .dst_set(self.slot.raw)
                    .dst_binding(*binding)
                    .dst_array_element(0)
                    .descriptor_type(*ty)
                    .buffer_info(std::slice::from_ref(&infos[i]));
            }
            // SAFETY: as in write_buffer_range, for each write (all checked above).
            unsafe {
                self.layout
                    .shared
                    .raw
                    .update_descriptor_sets(&vk_writes[..ws.len()], &[])
            };
        }
        for ((_, buffer), (idx, _)) in writes.iter().zip(checked.iter()) {
            self.store(*idx, 0, Held::Buffer((*buffer).clone(), 0, buffer.size()));
        }
        Ok(())
    }

    /// The range of `held` holding the descriptors of the binding at `idx` (layout order).
    #[inline]
    fn slots(&self, idx: usize) -> std::ops::Range<usize> {
        let starts = self.layout.starts();
        let start = starts[idx] as usize;
        let end = starts
            .get(idx + 1)
            .map_or(self.slot.held.len(), |&e| e as usize);
        start..end
    }

    /// Records that `element` of the binding at `idx` now refers to `h` (kept alive with
    /// the set).
    #[inline(always)]
    fn store(&mut self, idx: usize, element: u32, h: Held) {
        let slot = self.layout.starts()[idx] as usize + element as usize;
        let old = self.slot.held[slot].replace(h);
        if old.is_none() && !partially_bound(&self.layout.desc().bindings()[idx]) {
            self.unwritten -= 1;
        }
    }

    /// Index of `binding` in the layout's (sorted) bindings. Errors: `KILN-E200`.
    #[inline]
    fn binding_index(&self, binding: u32) -> Result<usize, DescriptorError> {
        binding_index_in(&self.layout, self.set, binding)
    }

    /// Checks one buffer write against the layout and the device limits; returns the
    /// binding's index in the layout and its descriptor type.
    #[inline(always)]
    fn check_buffer_write(
        &self,
        binding: u32,
        element: u32,
        ty: Option<vk::DescriptorType>,
        buffer: &Buffer,
        offset: u64,
        range: u64,
    ) -> Result<(usize, vk::DescriptorType), DescriptorError> {
        let write = BufferWrite {
            binding,
            element,
            ty,
            buffer,
            offset,
            range,
        };
        check_buffer_write_in(
            &self.layout,
            self.set,
            |idx| self.slots(idx).len() as u32,
            &write,
        )
    }

    /// Waits until no pending submission uses this set (VUID-vkUpdateDescriptorSets-None-03047:
    /// a set in use may not be updated without UPDATE_AFTER_BIND).
    #[inline]
    fn wait_unused(&self) -> Result<(), DeviceError> {
        // A set no recording ever listed was never bound in a submission: no stamp to wait
        // for (the common case, a new set's first write). `&mut self` of the writes orders
        // this load after every recording's borrow of the set.
        if self.listed_by.load(std::sync::atomic::Ordering::Relaxed) == 0 {
            return Ok(());
        }
        // Every queue's last submission that bound the set.
        self.layout.shared.wait_stamps(&self.slot.uses)
    }

    /// Writes `bytes` at byte `offset` of the inline uniform block at `binding` (a uniform
    /// block the pipeline layout made inline,
    /// [`PipelineLayoutDesc::with_inline_uniform_block`](crate::PipelineLayoutDesc::with_inline_uniform_block);
    /// `VkWriteDescriptorSetInlineUniformBlock`, Vulkan spec §14.2.4). The bytes are the
    /// block's as the shader lays it out (std140 for a GLSL `uniform` block: the reflected
    /// offsets, kiln-build's typed bindings). Like every set write it waits until no
    /// pending submission uses the set.
    ///
    /// A partial write marks the **whole** block written: the set binds without
    /// `KILN-E207` (descriptor not written) once any bytes of the block were written, but
    /// bytes never written (outside every `offset..offset + bytes.len()` written so far)
    /// hold undefined values that the shader reads as they are — kiln does not track
    /// them. Write the whole block (or every member the shader reads) before its first use.
    ///
    /// Errors: `KILN-E200` no such binding, `KILN-E202` the binding is not an inline
    /// uniform block, `KILN-E215` an offset or size not a multiple of 4, no bytes, or bytes
    /// past the block's end.
    pub fn write_inline_uniform_block(
        &mut self,
        binding: u32,
        offset: u32,
        bytes: &[u8],
    ) -> Result<(), DescriptorError> {
        let idx = self.binding_index(binding)?;
        let b = &self.layout.desc().bindings()[idx];
        if b.descriptor_type != vk::DescriptorType::INLINE_UNIFORM_BLOCK {
            return Err(DescriptorError::DescriptorTypeMismatch {
                set: self.set,
                binding,
                expected: b.descriptor_type,
                found: vk::DescriptorType::INLINE_UNIFORM_BLOCK,
                hint: "only a uniform block made inline by the layout \
                       (PipelineLayoutDesc::with_inline_uniform_block) takes bytes",
            });
        }
        let size = b.count;
        let len = bytes.len() as u64;
        let fail = |detail| DescriptorError::InlineUniformBlockWrite {
            set: self.set,
            binding,
            offset,
            len,
            size,
            detail,
        };
        if !offset.is_multiple_of(4) || !len.is_multiple_of(4) {
            return Err(fail("the offset and the size must be multiples of 4"));
        }
        if len == 0 {
            return Err(fail("a write needs at least 4 bytes"));
        }
        if offset as u64 + len > size as u64 {
            return Err(fail("the bytes run past the end of the block"));
        }
        self.wait_unused()?;
        let mut inline = vk::WriteDescriptorSetInlineUniformBlock::default().data(bytes);
        // For an inline uniform block, dstArrayElement is the byte offset and
        // descriptorCount the byte count (Vulkan spec §14.2.4).
        let mut write = vk::WriteDescriptorSet::default()
            .dst_set(self.slot.raw)
            .dst_binding(binding)
            .dst_array_element(offset)
            .descriptor_type(vk::DescriptorType::INLINE_UNIFORM_BLOCK)
            .push_next(&mut inline);
        write.descriptor_count = len as u32;
        // SAFETY: the binding is an inline uniform block of `size` bytes and the write's
        // offset and size are multiples of 4 within it (checked above); the set is not in
        // use by a pending command buffer and `&mut self` synchronizes the update.
        unsafe { self.layout.shared.raw.update_descriptor_sets(&[write], &[]) };
        self.store(idx, 0, Held::Inline);
        Ok(())
    }

    /// The first binding (in number order) with an element never written, if any
    /// (PARTIALLY_BOUND bindings never count). O(1) once every descriptor is written.
    #[inline]
    pub fn first_unwritten(&self) -> Option<u32> {
        if self.unwritten == 0 {
            return None;
        }
        self.layout
            .desc()
            .bindings()
            .iter()
            .enumerate()
            .find_map(|(i, b)| {
                let open = self.slot.held[self.slots(i)].iter().any(|e| e.is_none());
                (!partially_bound(b) && open).then_some(b.binding)
            })
    }
}
