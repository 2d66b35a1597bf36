//! Push descriptors (VK_KHR_push_descriptor, core in Vulkan 1.4; Vulkan spec §14.2.9
//! "Push Descriptor Updates"): the buffers of a pipeline's push-descriptor set are recorded
//! into the command buffer with `vkCmdPushDescriptorSetKHR`, with no pool, no set object
//! and no `vkUpdateDescriptorSets`.
//!
//! A set becomes a push set through
//! [`ComputePipelineDesc::push_descriptor_set`](crate::ComputePipelineDesc::push_descriptor_set)
//! or [`PipelineLayoutDesc::with_push_descriptor`](crate::PipelineLayoutDesc::with_push_descriptor).
//! Each write is checked against the reflected layout exactly like a set write (the same
//! function, `descriptors::check_buffer_write_in`, and the same codes); one call must give
//! every descriptor of the set (`KILN-E207` otherwise), so a dispatch never reads a
//! descriptor that was not pushed. The pushed buffers are kept until the submission
//! completes and count as its uses for cross-queue ordering, like the buffers of bound
//! sets. Push sets hold uniform and storage buffers (`PushWrite`); images and samplers go
//! in a regular set of the same layout. A later push replaces the whole set; binding a pipeline whose layout is not
//! compatible for the set (Vulkan spec §14.2.2) disturbs it like a bound set.

use ash::vk;

use super::automatic::buffer_key;
use super::{Recorder, Slot};
use crate::descriptors::{check_buffer_write_in, BufferWrite};
use crate::device::Buffer;
use crate::error::{Error, Result};

/// One buffer descriptor of a push-descriptor set: `range` bytes from `offset` of
/// `buffer` (all of it from `offset` when `None`) at array element `element` of `binding`.
#[derive(Clone, Copy, Debug)]
pub struct PushWrite<'b> {
    /// The binding number.
    pub binding: u32,
    /// The array element (0 for a non-array binding).
    pub element: u32,
    /// The buffer.
    pub buffer: &'b Buffer,
    /// First byte of the buffer the descriptor refers to.
    pub offset: u64,
    /// Bytes from `offset` (`None`: to the end of the buffer).
    pub range: Option<u64>,
}

impl<'b> PushWrite<'b> {
    /// The whole `buffer` at `binding` (element 0).
    pub fn buffer(binding: u32, buffer: &'b Buffer) -> Self {
        PushWrite {
            binding,
            element: 0,
            buffer,
            offset: 0,
            range: None,
        }
    }

    /// `range` bytes of `buffer` from `offset` at `binding` (element 0).
    pub fn range(binding: u32, buffer: &'b Buffer, offset: u64, range: u64) -> Self {
        PushWrite {
            binding,
            element: 0,
            buffer,
            offset,
            range: Some(range),
        }
    }

    /// The same write at array element `element`.
    pub fn at(mut self, element: u32) -> Self {
        self.element = element;
        self
    }
}

impl Recorder<'_, '_> {
    /// Records the buffers of push-descriptor set `set` of the bound pipeline's layout
    /// (`vkCmdPushDescriptorSetKHR`). Every descriptor of the set must be given once; the
    /// checks are those of a set write.
    ///
    /// Errors: `KILN-E252` no pipeline bound, `KILN-E205` no such set, `KILN-E210` the set
    /// is not a push-descriptor set (VUID-vkCmdPushDescriptorSetKHR-set-00365),
    /// `KILN-E200` no such binding, `KILN-E202` a binding that does not take this buffer
    /// (type or usage), `KILN-E203` element out of range, `KILN-E151` offset or range
    /// beyond the buffer, `KILN-E206` a range beyond maxStorageBufferRange /
    /// maxUniformBufferRange, `KILN-E208` a misaligned offset, `KILN-E109` a buffer of
    /// another device, `KILN-E207` a descriptor of the set not given.
    #[track_caller]
    pub fn push_descriptor_set(&mut self, set: u32, writes: &[PushWrite<'_>]) -> Result<()> {
        self.at(std::panic::Location::caller());
        let Some(bound) = self.bound[usize::from(self.current_graphics)].as_mut() else {
            return Err(Error::NoPipelineBound {
                what: "push_descriptor_set",
            });
        };
        let layouts = bound.layout.set_layouts();
        let Some(layout) = layouts.get(set as usize) else {
            return Err(Error::NoSuchSet {
                set,
                set_count: layouts.len() as u32,
            });
        };
        let desc = layout.desc();
        let Some(push) = self.shared.push_descriptor.as_ref().filter(|_| {
            desc.flags
                .contains(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
        }) else {
            return Err(Error::PushDescriptor {
                pipeline: format!("the bound pipeline's layout {}", bound.layout.id()),
                set,
                detail: "the set is not a push-descriptor set; bind_set a DescriptorSet, or \
                         make the set a push set (ComputePipelineDesc::push_descriptor_set, \
                         PipelineLayoutDesc::with_push_descriptor)"
                    .into(),
            });
        };
        // Up to BATCH writes and descriptors on the stack: no allocation per call.
        const BATCH: usize = 8;
        let total = layout.descriptor_total() as usize;
        let mut given_stack = [false; BATCH];
        let mut given_heap = Vec::new();
        let given: &mut [bool] = if total <= BATCH {
            &mut given_stack[..total]
        } else {
            given_heap.resize(total, false);
            &mut given_heap
        };
        let none = vk::DescriptorBufferInfo::default();
        let mut info_stack = [none; BATCH];
        let mut info_heap = Vec::new();
        let infos: &mut [vk::DescriptorBufferInfo] = if writes.len() <= BATCH {
            &mut info_stack[..writes.len()]
        } else {
            info_heap.resize(writes.len(), none);
            &mut info_heap
        };
        let mut kinds_stack = [(0u32, 0u32, vk::DescriptorType::SAMPLER); BATCH];
        let mut kinds_heap = Vec::new();
        let kinds: &mut [(u32, u32, vk::DescriptorType)] = if writes.len() <= BATCH {
            &mut kinds_stack[..writes.len()]
        } else {
            kinds_heap.resize(writes.len(), (0, 0, vk::DescriptorType::SAMPLER));
            &mut kinds_heap
        };
        let mut idxs_stack = [0usize; BATCH];
        let mut idxs_heap = Vec::new();
        let idxs: &mut [usize] = if writes.len() <= BATCH {
            &mut idxs_stack[..writes.len()]
        } else {
            idxs_heap.resize(writes.len(), 0);
            &mut idxs_heap
        };
        let starts = layout.starts();
        for (k, w) in writes.iter().enumerate() {
            let range = w
                .range
                .unwrap_or_else(|| w.buffer.size().saturating_sub(w.offset));
            let write = BufferWrite {
                binding: w.binding,
                element: w.element,
                ty: None,
                buffer: w.buffer,
                offset: w.offset,
                range,
            };
            let (idx, ty) =
                check_buffer_write_in(layout, set, |i| desc.bindings()[i].count, &write)?;
            let slot = starts[idx] as usize + w.element as usize;
            if let Some(g) = given.get_mut(slot) {
                *g = true;
            }
            infos[k] = vk::DescriptorBufferInfo {
                buffer: w.buffer.raw(),
                offset: w.offset,
                range,
            };
            kinds[k] = (w.binding, w.element, ty);
            idxs[k] = idx;
        }
        if let Some(slot) = given.iter().position(|g| !g) {
            let idx = starts
                .iter()
                .rposition(|&s| s as usize <= slot)
                .unwrap_or(0);
            return Err(Error::BindingNotWritten {
                set,
                binding: desc.bindings()[idx].binding,
            });
        }
        let empty = vk::WriteDescriptorSet::default();
        let mut write_stack = [empty; BATCH];
        let mut write_heap = Vec::new();
        let vk_writes: &mut [vk::WriteDescriptorSet<'_>] = if writes.len() <= BATCH {
            &mut write_stack[..writes.len()]
        } else {
            write_heap.resize(writes.len(), empty);
            &mut write_heap
        };
        for (k, w) in vk_writes.iter_mut().enumerate() {
            let (binding, element, ty) = kinds[k];
            *w = vk::WriteDescriptorSet::default()
                .dst_binding(binding)
                .dst_array_element(element)
                .descriptor_type(ty)
                .buffer_info(std::slice::from_ref(&infos[k]));
        }
        let (bind_point, layout) = (bound.bind_point, bound.layout.raw());
        self.flush_scopes();
        // SAFETY: `cb` is recording with a pipeline of layout `layout` bound at this bind
        // point; `set` is that layout's push-descriptor set; every write was checked against
        // its layout (binding, type, usage, range, alignment, same device) and every
        // descriptor of the set is written; the buffers are kept until the submission
        // completes (below).
        unsafe { push.cmd_push_descriptor_set(self.cb, bind_point, layout, set, vk_writes) };
        let point = usize::from(self.current_graphics);
        if let Some(bound) = self.bound[point].as_mut() {
            let i = set as usize;
            if bound.sets.len() <= i {
                bound.sets.resize(i + 1, Slot::Empty);
            }
            bound.sets[i] = Slot::Pushed;
        }
        // The automatic barriers read what this set now holds.
        self.pushed[point].retain(|(s, _, _)| *s != set);
        for (k, w) in writes.iter().enumerate() {
            let size = infos[k].range;
            self.pushed[point].push((set, idxs[k], buffer_key(w.buffer, w.offset, size)));
            self.keep(w.buffer);
        }
        self.bind_gen += 1;
        Ok(())
    }
}
