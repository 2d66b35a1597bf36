//! The checks a buffer descriptor write passes before Vulkan sees it, shared by descriptor
//! set writes (`set.rs`) and push descriptors (`pipeline`'s push-descriptor commands): the
//! binding exists, the descriptor type and the buffer's usage match, the range is within the
//! device limit and the offset aligned (the VUIDs are listed in `set.rs`'s module docs).

use std::sync::Arc;

use ash::vk;

use super::layout::SetLayout;
use crate::device::Buffer;
use crate::error::{Error, Result};

/// One buffer descriptor write, as [`check_buffer_write_in`] checks it.
#[derive(Clone, Copy)]
pub(crate) struct BufferWrite<'b> {
    pub binding: u32,
    pub element: u32,
    /// The descriptor type the caller means, when it says one.
    pub ty: Option<vk::DescriptorType>,
    pub buffer: &'b Buffer,
    pub offset: u64,
    pub range: u64,
}

/// Index of `binding` in `layout`'s (sorted) bindings, for set number `set`.
/// Errors: `KILN-E200`.
#[inline]
pub(crate) fn binding_index_in(layout: &SetLayout, set: u32, binding: u32) -> Result<usize> {
    let desc = layout.desc();
    // Bindings are usually numbered 0, 1, 2, …: then the number is the index.
    if desc
        .bindings()
        .get(binding as usize)
        .is_some_and(|b| b.binding == binding)
    {
        return Ok(binding as usize);
    }
    desc.bindings()
        .binary_search_by_key(&binding, |b| b.binding)
        .map_err(|_| Error::NoSuchBinding {
            set,
            binding,
            available: desc.bindings().iter().map(|b| b.binding).collect(),
        })
}

/// Checks one buffer write to set number `set` of `layout` against the layout and the
/// device limits (`count_of(idx)`: the binding's actual descriptor count); returns the
/// binding's index in the layout and its descriptor type. Shared by set writes and push
/// descriptors. Errors: `KILN-E200`, `KILN-E109`, `KILN-E202`, `KILN-E203`, `KILN-E151`,
/// `KILN-E206`, `KILN-E208`.
#[inline]
pub(crate) fn check_buffer_write_in(
    layout: &SetLayout,
    set: u32,
    count_of: impl Fn(usize) -> u32,
    write: &BufferWrite<'_>,
) -> Result<(usize, vk::DescriptorType)> {
    let BufferWrite {
        binding,
        element,
        ty,
        buffer,
        offset,
        range,
    } = *write;
    let desc = layout.desc();
    let idx = binding_index_in(layout, set, binding)?;
    if !Arc::ptr_eq(buffer.shared(), &layout.shared) {
        return Err(Error::ForeignObject {
            object: format!(
                "buffer `{}` (written to set {} binding {binding})",
                buffer.label(),
                set
            ),
        });
    }
    let b = &desc.bindings()[idx];
    let expected = b.descriptor_type;
    if let Some(found) = ty {
        if found != expected {
            return Err(Error::DescriptorTypeMismatch {
                set,
                binding,
                expected,
                found,
                hint: "write the descriptor type the shader declares",
            });
        }
    }
    let needed = usage_for(expected);
    if needed.is_empty() {
        return Err(Error::DescriptorTypeMismatch {
            set,
            binding,
            expected,
            found: vk::DescriptorType::STORAGE_BUFFER,
            hint: "this binding takes an image, sampler, texel buffer or acceleration structure, not a buffer",
        });
    }
    if !buffer.usage().contains(needed) {
        let found = if buffer
            .usage()
            .contains(vk::BufferUsageFlags::UNIFORM_BUFFER)
        {
            vk::DescriptorType::UNIFORM_BUFFER
        } else if buffer
            .usage()
            .contains(vk::BufferUsageFlags::STORAGE_BUFFER)
        {
            vk::DescriptorType::STORAGE_BUFFER
        } else {
            vk::DescriptorType::from_raw(i32::MAX)
        };
        return Err(Error::DescriptorTypeMismatch {
            set,
            binding,
            expected,
            found,
            hint: "create the buffer with the matching usage (UNIFORM_BUFFER or STORAGE_BUFFER)",
        });
    }
    let actual = count_of(idx);
    if element >= actual {
        return Err(Error::ArrayElementOutOfRange {
            set,
            binding,
            count: actual,
            element,
        });
    }
    let end = offset.checked_add(range);
    if end.is_none_or(|e| e > buffer.size()) || range == 0 {
        return Err(Error::BufferOverflow {
            object: buffer.label().to_string(),
            capacity: buffer.size(),
            offset,
            requested: range,
        });
    }
    let limits = layout.shared.limits();
    let (limit, limit_name, align, align_name) = if needed == vk::BufferUsageFlags::UNIFORM_BUFFER {
        (
            limits.max_uniform_buffer_range as u64,
            "maxUniformBufferRange",
            limits.min_uniform_buffer_offset_alignment,
            "minUniformBufferOffsetAlignment",
        )
    } else {
        (
            limits.max_storage_buffer_range as u64,
            "maxStorageBufferRange",
            limits.min_storage_buffer_offset_alignment,
            "minStorageBufferOffsetAlignment",
        )
    };
    if range > limit {
        return Err(Error::BufferRangeTooLarge {
            set,
            binding,
            range,
            limit,
            limit_name,
        });
    }
    if offset != 0 && align > 0 && !offset.is_multiple_of(align) {
        return Err(Error::MisalignedOffset {
            set,
            binding,
            offset,
            alignment: align,
            limit_name: align_name,
        });
    }
    Ok((idx, expected))
}

/// The buffer usage a buffer descriptor of type `ty` needs
/// (VUID-VkWriteDescriptorSet-descriptorType-00330, -00331).
fn usage_for(ty: vk::DescriptorType) -> vk::BufferUsageFlags {
    match ty {
        vk::DescriptorType::UNIFORM_BUFFER | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC => {
            vk::BufferUsageFlags::UNIFORM_BUFFER
        }
        vk::DescriptorType::STORAGE_BUFFER | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC => {
            vk::BufferUsageFlags::STORAGE_BUFFER
        }
        _ => vk::BufferUsageFlags::empty(),
    }
}
