//! Buffer views: a byte range of a [`Buffer`] seen as texels of one format, what uniform
//! and storage texel buffer descriptors hold (`samplerBuffer` / `textureBuffer` and
//! `imageBuffer` in GLSL; Vulkan spec §12.2 "Buffer Views").
//!
//! A view keeps its buffer alive; it is destroyed when its last handle drops (descriptor
//! sets hold one), after every submission that may use it.

use std::sync::Arc;

use ash::vk;

use super::format::format_info;
use super::{Buffer, Shared};
use crate::error::{vk_device_err, MemoryError, Result};

/// The texel-buffer usages, and the format feature each needs.
const TEXEL_USAGES: [(vk::BufferUsageFlags, vk::FormatFeatureFlags); 2] = [
    (
        vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER,
        vk::FormatFeatureFlags::UNIFORM_TEXEL_BUFFER,
    ),
    (
        vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER,
        vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER,
    ),
];

/// A `VkBufferView` of `[offset, offset + range)` of a buffer as texels of `format`: a
/// cheap-to-clone handle for [`DescriptorSet::write_texel_buffer`](crate::DescriptorSet::write_texel_buffer).
#[derive(Clone)]
pub struct BufferView(Arc<ViewInner>);

struct ViewInner {
    raw: vk::BufferView,
    buffer: Buffer,
    format: vk::Format,
    offset: u64,
    range: u64,
}

impl std::fmt::Debug for BufferView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.0;
        f.debug_struct("BufferView")
            .field("buffer", &s.buffer.label())
            .field("format", &s.format)
            .field("offset", &s.offset)
            .field("range", &s.range)
            .finish()
    }
}

fn invalid(buffer: &Buffer, detail: String) -> MemoryError {
    MemoryError::InvalidBufferView {
        object: buffer.label().to_string(),
        detail,
    }
}

impl BufferView {
    /// A view of `range` bytes from `offset` of `buffer` as `format` texels (see
    /// [`Buffer::view`]).
    pub(crate) fn new(
        buffer: &Buffer,
        format: vk::Format,
        offset: u64,
        range: u64,
    ) -> Result<Self, MemoryError> {
        let shared: &Arc<Shared> = buffer.shared();
        let texel = u64::from(format_info(format).map_or(0, |i| i.bytes));
        if texel == 0 {
            return Err(invalid(
                buffer,
                format!("{format:?} is not a texel format kiln knows"),
            ));
        }
        let usages: Vec<_> = TEXEL_USAGES
            .iter()
            .filter(|(u, _)| buffer.usage().contains(*u))
            .collect();
        if usages.is_empty() {
            // VUID-VkBufferViewCreateInfo-buffer-00932.
            return Err(MemoryError::BufferUsage {
                object: buffer.label().to_string(),
                needed: vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
                    | vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER,
                call: "Buffer::view (one of the two texel-buffer usages)",
            });
        }
        // SAFETY: plain query on this device's physical device.
        let found = unsafe {
            shared
                .instance
                .raw
                .get_physical_device_format_properties(shared.physical, format)
        }
        .buffer_features;
        for (_, feature) in usages {
            if !found.contains(*feature) {
                // VUID-VkBufferViewCreateInfo-buffer-00933, -00934.
                return Err(MemoryError::FormatFeature {
                    object: format!("buffer `{}`", buffer.label()),
                    format,
                    needed: *feature,
                    found,
                    what: "a texel-buffer view for the buffer's usage",
                });
            }
        }
        check_range(shared.limits(), buffer.size(), texel, offset, range)
            .map_err(|d| invalid(buffer, d))?;
        let info = vk::BufferViewCreateInfo::default()
            .buffer(buffer.raw())
            .format(format)
            .offset(offset)
            .range(range);
        // SAFETY: the buffer is live and of this device, has a texel usage whose format
        // feature `format` has, and the range was checked against its size and the limits.
        let raw = unsafe { shared.raw.create_buffer_view(&info, None) }
            .map_err(vk_device_err("vkCreateBufferView"))?;
        shared.set_name(raw, buffer.label());
        Ok(BufferView(Arc::new(ViewInner {
            raw,
            buffer: buffer.clone(),
            format,
            offset,
            range,
        })))
    }

    /// The raw view (owned by this object).
    pub fn raw(&self) -> vk::BufferView {
        self.0.raw
    }
    /// The viewed buffer.
    pub fn buffer(&self) -> &Buffer {
        &self.0.buffer
    }
    /// The texel format.
    pub fn format(&self) -> vk::Format {
        self.0.format
    }
    /// The first byte viewed.
    pub fn offset(&self) -> u64 {
        self.0.offset
    }
    /// The bytes viewed.
    pub fn range(&self) -> u64 {
        self.0.range
    }
}

/// `[offset, offset + range)` of a buffer of `size` bytes as texels of `texel` bytes:
/// aligned to `minTexelBufferOffsetAlignment` (VUID-VkBufferViewCreateInfo-offset-00926),
/// inside the buffer (-offset-00925, -range-00928, -offset-00931), a whole number of texels
/// (-range-00929), at most `maxTexelBufferElements` of them (-range-00930).
fn check_range(
    limits: &vk::PhysicalDeviceLimits,
    size: u64,
    texel: u64,
    offset: u64,
    range: u64,
) -> std::result::Result<(), String> {
    let align = limits.min_texel_buffer_offset_alignment.max(1);
    if !offset.is_multiple_of(align) {
        return Err(format!(
            "offset {offset} is not a multiple of minTexelBufferOffsetAlignment ({align})"
        ));
    }
    if range == 0 || offset.checked_add(range).is_none_or(|end| end > size) {
        return Err(format!(
            "{range} bytes from offset {offset} are not a non-empty range inside its {size} bytes"
        ));
    }
    if !range.is_multiple_of(texel) {
        return Err(format!(
            "{range} bytes are not a whole number of {texel}-byte texels"
        ));
    }
    let max = u64::from(limits.max_texel_buffer_elements);
    if range / texel > max {
        return Err(format!(
            "{} texels exceed maxTexelBufferElements ({max})",
            range / texel
        ));
    }
    Ok(())
}

impl Drop for ViewInner {
    fn drop(&mut self) {
        let raw = self.raw;
        // The buffer handle moves into the closure, so the buffer outlives its view.
        let buffer = self.buffer.clone();
        self.buffer.shared().retire(move |s| {
            // SAFETY: retire runs this after every kiln submission that could use the
            // view completed; nothing else refers to it.
            unsafe { s.raw.destroy_buffer_view(raw, None) };
            drop(buffer);
        });
    }
}

impl Buffer {
    /// A view of `range` bytes from `offset` as texels of `format`, for uniform and storage
    /// texel buffer descriptors. The buffer needs UNIFORM_TEXEL_BUFFER and/or
    /// STORAGE_TEXEL_BUFFER usage, and `format` the matching buffer format features.
    ///
    /// Errors: `KILN-E157` neither texel usage, `KILN-E183` the format lacks the feature a
    /// usage needs, `KILN-E167` a range Vulkan rejects (alignment, bounds, whole texels,
    /// `maxTexelBufferElements`) or a format kiln does not know.
    pub fn view(
        &self,
        format: vk::Format,
        offset: u64,
        range: u64,
    ) -> Result<BufferView, MemoryError> {
        BufferView::new(self, format, offset, range)
    }
}

#[cfg(test)]
mod tests {
    use super::check_range;
    use ash::vk;

    #[test]
    fn texel_ranges_follow_the_buffer_view_rules() {
        let limits = vk::PhysicalDeviceLimits {
            min_texel_buffer_offset_alignment: 16,
            max_texel_buffer_elements: 1000,
            ..Default::default()
        };
        assert_eq!(check_range(&limits, 4096, 4, 16, 64), Ok(()));
        for (offset, range, want) in [
            (8, 64, "minTexelBufferOffsetAlignment (16)"),
            (0, 0, "non-empty range"),
            (4080, 32, "inside its 4096 bytes"),
            (0, 6, "whole number of 4-byte texels"),
            (0, 4004, "exceed maxTexelBufferElements (1000)"),
        ] {
            let err = check_range(&limits, 4096, 4, offset, range).unwrap_err();
            assert!(err.contains(want), "{offset}+{range}: {err}");
        }
    }
}
