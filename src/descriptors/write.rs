//! The checks a descriptor write passes before Vulkan sees it, shared by descriptor set
//! writes (`set.rs`) and push descriptors (`commands/push_descriptor.rs`): the binding
//! exists, the descriptor type and the resource's usage match, the element is in range,
//! the resource belongs to the set's device; for buffers the range is within the device
//! limit and the offset aligned (the VUIDs are listed in `set.rs`'s module docs).

use std::sync::Arc;

use ash::vk;

use super::layout::SetLayout;
use crate::device::{Buffer, BufferView, Image, ImageView, Sampler};
use crate::error::{DescriptorError, DeviceError, MemoryError, Result};

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
pub(crate) fn binding_index_in(
    layout: &SetLayout,
    set: u32,
    binding: u32,
) -> Result<usize, DescriptorError> {
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
        .map_err(|_| DescriptorError::NoSuchBinding {
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
// Inlined into each caller: a whole-buffer write (offset 0, element 0, no type given,
// `write_buffers`) folds most checks to constants (callgrind, descriptor_profile: ~110 ->
// ~40 instructions per write).
#[inline(always)]
pub(crate) fn check_buffer_write_in(
    layout: &SetLayout,
    set: u32,
    count_of: impl Fn(usize) -> u32,
    write: &BufferWrite<'_>,
) -> Result<(usize, vk::DescriptorType), DescriptorError> {
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
        return Err(DescriptorError::Device(DeviceError::ForeignObject {
            object: format!(
                "buffer `{}` (written to set {} binding {binding})",
                buffer.label(),
                set
            ),
        }));
    }
    let b = &desc.bindings()[idx];
    let expected = b.descriptor_type;
    if let Some(found) = ty {
        if found != expected {
            return Err(DescriptorError::DescriptorTypeMismatch {
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
        return Err(DescriptorError::DescriptorTypeMismatch {
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
        return Err(DescriptorError::DescriptorTypeMismatch {
            set,
            binding,
            expected,
            found,
            hint: "create the buffer with the matching usage (UNIFORM_BUFFER or STORAGE_BUFFER)",
        });
    }
    let actual = count_of(idx);
    if element >= actual {
        return Err(DescriptorError::ArrayElementOutOfRange {
            set,
            binding,
            count: actual,
            element,
        });
    }
    let end = offset.checked_add(range);
    if end.is_none_or(|e| e > buffer.size()) || range == 0 {
        return Err(DescriptorError::Memory(MemoryError::BufferOverflow {
            object: buffer.label().to_string(),
            capacity: buffer.size(),
            offset,
            requested: range,
        }));
    }
    check_buffer_range(layout, (set, binding), needed, offset, range)?;
    Ok((idx, expected))
}

/// A buffer descriptor's range and offset against the device limits of its kind (`needed`:
/// UNIFORM_BUFFER, else storage): `KILN-E206` a range over max{Uniform,Storage}BufferRange,
/// `KILN-E208` an offset not a multiple of min{Uniform,Storage}BufferOffsetAlignment.
#[inline(always)]
fn check_buffer_range(
    layout: &SetLayout,
    (set, binding): (u32, u32),
    needed: vk::BufferUsageFlags,
    offset: u64,
    range: u64,
) -> Result<(), DescriptorError> {
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
        return Err(DescriptorError::BufferRangeTooLarge {
            set,
            binding,
            range,
            limit,
            limit_name,
        });
    }
    if offset != 0 && align > 0 && !offset.is_multiple_of(align) {
        return Err(DescriptorError::MisalignedOffset {
            set,
            binding,
            offset,
            alignment: align,
            limit_name: align_name,
        });
    }
    Ok(())
}

/// The buffer usage a buffer descriptor of type `ty` needs
/// (VUID-VkWriteDescriptorSet-descriptorType-00330, -00331).
#[inline]
pub(super) fn usage_for(ty: vk::DescriptorType) -> vk::BufferUsageFlags {
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

/// One image, sampler or combined image-sampler descriptor write, as
/// [`check_image_write_in`] checks it. Which of `image`/`sampler` is given says which
/// descriptor type the caller means; `view`, when given, is a view of `image`.
#[derive(Clone, Copy)]
pub(crate) struct ImageWrite<'w> {
    pub binding: u32,
    pub element: u32,
    pub image: Option<&'w Image>,
    pub view: Option<&'w ImageView>,
    pub sampler: Option<&'w Sampler>,
}

/// The layout an image descriptor of type `ty` is written with, and the one kiln's
/// automatic barriers move the image to before a command that uses it: storage image
/// GENERAL, sampled image and combined image sampler SHADER_READ_ONLY_OPTIMAL, input
/// attachment RENDERING_LOCAL_READ_KHR (dynamic rendering local read); `UNDEFINED` for
/// the other types.
pub(crate) fn image_layout_of(ty: vk::DescriptorType) -> vk::ImageLayout {
    use vk::DescriptorType as T;
    match ty {
        T::STORAGE_IMAGE => vk::ImageLayout::GENERAL,
        T::SAMPLED_IMAGE | T::COMBINED_IMAGE_SAMPLER => vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        T::INPUT_ATTACHMENT => vk::ImageLayout::RENDERING_LOCAL_READ_KHR,
        _ => vk::ImageLayout::UNDEFINED,
    }
}

/// The image usage an image descriptor of type `ty` needs
/// (VUID-VkWriteDescriptorSet-descriptorType-00337, -00339, -00338).
fn image_usage_of(ty: vk::DescriptorType) -> vk::ImageUsageFlags {
    use vk::DescriptorType as T;
    match ty {
        T::STORAGE_IMAGE => vk::ImageUsageFlags::STORAGE,
        T::INPUT_ATTACHMENT => vk::ImageUsageFlags::INPUT_ATTACHMENT,
        _ => vk::ImageUsageFlags::SAMPLED,
    }
}

/// Checks one image, sampler or combined image-sampler write to set number `set` of
/// `layout` (`count_of(idx)`: the binding's actual descriptor count); returns the
/// binding's index, its descriptor type and the `VkDescriptorImageInfo` to write. The
/// layout's immutable sampler completes an image-only write to a COMBINED_IMAGE_SAMPLER
/// binding; a SAMPLER binding with immutable samplers takes no write
/// (VUID-VkWriteDescriptorSet-descriptorType-02752). Errors: `KILN-E200`, `KILN-E202`,
/// `KILN-E203`, `KILN-E109`, `KILN-E216` a view of another image than `w.image`,
/// `KILN-E182`, `KILN-E107` an input attachment without `dynamicRenderingLocalRead`.
pub(crate) fn check_image_write_in(
    layout: &SetLayout,
    set: u32,
    count_of: impl Fn(usize) -> u32,
    w: &ImageWrite<'_>,
) -> Result<(usize, vk::DescriptorType, vk::DescriptorImageInfo), DescriptorError> {
    use vk::DescriptorType as T;
    let binding = w.binding;
    let idx = binding_index_in(layout, set, binding)?;
    let b = &layout.desc().bindings()[idx];
    let expected = b.descriptor_type;
    let immutable = !b.immutable_samplers.is_empty();
    let (found, ok) = match (w.image, w.sampler) {
        (Some(_), None) if immutable && expected == T::COMBINED_IMAGE_SAMPLER => {
            (T::COMBINED_IMAGE_SAMPLER, true)
        }
        (Some(_), Some(_)) => (
            T::COMBINED_IMAGE_SAMPLER,
            expected == T::COMBINED_IMAGE_SAMPLER,
        ),
        (None, Some(_)) => (T::SAMPLER, expected == T::SAMPLER && !immutable),
        (Some(_), None) => (
            match expected {
                T::STORAGE_IMAGE | T::INPUT_ATTACHMENT => expected,
                _ => T::SAMPLED_IMAGE,
            },
            matches!(
                expected,
                T::SAMPLED_IMAGE | T::STORAGE_IMAGE | T::INPUT_ATTACHMENT
            ),
        ),
        (None, None) => (T::from_raw(i32::MAX), false),
    };
    if !ok {
        return Err(DescriptorError::DescriptorTypeMismatch {
            set,
            binding,
            expected,
            found,
            hint: match expected {
                T::SAMPLER if immutable => {
                    "this binding's sampler is immutable (set in the layout): it needs no write"
                }
                T::COMBINED_IMAGE_SAMPLER => "write an image and a sampler (write_combined)",
                T::SAMPLER => "write a sampler (write_sampler)",
                T::SAMPLED_IMAGE | T::STORAGE_IMAGE => "write an image (write_image)",
                T::INPUT_ATTACHMENT => "write an image (write_input_attachment)",
                T::UNIFORM_TEXEL_BUFFER | T::STORAGE_TEXEL_BUFFER => {
                    "write a buffer view (write_texel_buffer)"
                }
                T::INLINE_UNIFORM_BLOCK => "write bytes (write_inline_uniform_block)",
                _ => "this binding takes a buffer (write_buffer)",
            },
        });
    }
    let actual = count_of(idx);
    if w.element >= actual {
        return Err(DescriptorError::ArrayElementOutOfRange {
            set,
            binding,
            count: actual,
            element: w.element,
        });
    }
    if expected == T::INPUT_ATTACHMENT && !layout.shared.features.dynamic_rendering_local_read {
        // An input attachment of a dynamic rendering scope is read in
        // RENDERING_LOCAL_READ_KHR (VUID-VkWriteDescriptorSet-descriptorType-04150 ff.).
        return Err(crate::device::local_read_missing(&layout.shared.info.name).into());
    }
    check_image_objects(layout, set, expected, w)?;
    let info = vk::DescriptorImageInfo {
        sampler: w.sampler.map_or(vk::Sampler::null(), |s| s.raw()),
        image_view: match (w.view, w.image) {
            (Some(v), _) => v.raw(),
            (None, Some(i)) => i.view(),
            (None, None) => vk::ImageView::null(),
        },
        image_layout: if w.image.is_some() {
            image_layout_of(expected)
        } else {
            vk::ImageLayout::UNDEFINED
        },
    };
    Ok((idx, expected, info))
}

/// The objects of image write `w` to a binding of type `expected` of set number `set`:
/// image, view and sampler of `layout`'s device (`KILN-E109`), the view one of the image's
/// (`KILN-E216`), the image with the usage the type needs (`KILN-E182`).
fn check_image_objects(
    layout: &SetLayout,
    set: u32,
    expected: vk::DescriptorType,
    w: &ImageWrite<'_>,
) -> Result<(), DescriptorError> {
    let binding = w.binding;
    // A descriptor written with another VkDevice's image view or sampler is invalid.
    let foreign = |kind: &str, label: &str| {
        DescriptorError::Device(DeviceError::ForeignObject {
            object: format!("{kind} `{label}` (written to set {set} binding {binding})"),
        })
    };
    if let Some(img) = w.image.filter(|i| !Arc::ptr_eq(i.shared(), &layout.shared)) {
        return Err(foreign("image", img.label()));
    }
    if let Some(v) = w.view {
        let of = v.image();
        if !Arc::ptr_eq(of.shared(), &layout.shared) {
            return Err(foreign("view of image", of.label()));
        }
        if let Some(img) = w.image.filter(|i| i.raw() != of.raw()) {
            return Err(DescriptorError::ViewOfOtherImage {
                view_image: of.label().to_string(),
                image: img.label().to_string(),
                set,
                binding,
            });
        }
    }
    if let Some(s) = w
        .sampler
        .filter(|s| !Arc::ptr_eq(s.shared(), &layout.shared))
    {
        return Err(foreign("sampler", &format!("id {}", s.id())));
    }
    let usage = image_usage_of(expected);
    if let Some(img) = w.image {
        if !img.usage().contains(usage) {
            return Err(DescriptorError::Memory(MemoryError::ImageUsage {
                object: img.label().to_string(),
                needed: usage,
                what: "this descriptor type",
            }));
        }
    }
    Ok(())
}

/// Checks one texel-buffer write of `view` at `element` of `binding` of set number `set`
/// of `layout`: the layout's type is a texel buffer
/// (VUID-VkWriteDescriptorSet-descriptorType-00325 ff.), the element in range, the view
/// of the set's device and its buffer created with that texel usage
/// (VUID-VkWriteDescriptorSet-descriptorType-08765, -08766). Returns the binding's index
/// and its type. Errors: `KILN-E200`, `KILN-E202`, `KILN-E203`, `KILN-E109`, `KILN-E157`.
pub(crate) fn check_texel_write_in(
    layout: &SetLayout,
    set: u32,
    count_of: impl Fn(usize) -> u32,
    binding: u32,
    element: u32,
    view: &BufferView,
) -> Result<(usize, vk::DescriptorType), DescriptorError> {
    use vk::DescriptorType as T;
    let idx = binding_index_in(layout, set, binding)?;
    let expected = layout.desc().bindings()[idx].descriptor_type;
    let usage = match expected {
        T::UNIFORM_TEXEL_BUFFER => vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER,
        T::STORAGE_TEXEL_BUFFER => vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER,
        _ => {
            return Err(DescriptorError::DescriptorTypeMismatch {
                set,
                binding,
                expected,
                found: T::UNIFORM_TEXEL_BUFFER,
                hint: "this binding is not a texel buffer; write what its type takes",
            })
        }
    };
    let actual = count_of(idx);
    if element >= actual {
        return Err(DescriptorError::ArrayElementOutOfRange {
            set,
            binding,
            count: actual,
            element,
        });
    }
    let buffer = view.buffer();
    if !Arc::ptr_eq(buffer.shared(), &layout.shared) {
        return Err(DescriptorError::Device(DeviceError::ForeignObject {
            object: format!(
                "buffer view of `{}` (written to set {set} binding {binding})",
                buffer.label(),
            ),
        }));
    }
    if !buffer.usage().contains(usage) {
        return Err(DescriptorError::Memory(MemoryError::BufferUsage {
            object: buffer.label().to_string(),
            needed: usage,
            call: "write_texel_buffer (a view for this binding's texel-buffer type)",
        }));
    }
    Ok((idx, expected))
}
