//! 2D images with a view and memory from `gpu-allocator` (staged uploads and readbacks live
//! in the submission layer).
//!
//! kiln tracks each image's layout (one layout for all mips): the layout after the last
//! finished execution lives in the image, and a [`Recorder`](crate::Recorder) keeps the
//! layouts it has recorded transitions to until its command buffer has been submitted.
//! Transitions use `vkCmdPipelineBarrier2` (synchronization2, Vulkan spec §7.6.2).

use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

use super::{FaultSite, ResourceStamps, Shared};
use crate::error::{vk_err, Error, Result};

/// Numeric class of a format's components, as shaders see them (Vulkan spec §34.1.2
/// "Numeric Format" / the "Interpretation of Numeric Format" table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumClass {
    /// SFLOAT, UNORM, SNORM, USCALED, SSCALED, SRGB: the shader sees floats.
    Float,
    Uint,
    Sint,
}

/// What kiln knows about a format: bytes per texel, components, numeric class, aspect.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FormatInfo {
    pub bytes: u32,
    pub components: u32,
    pub class: NumClass,
    /// 64-bit components (need 64-bit shader types).
    pub wide: bool,
    pub aspect: vk::ImageAspectFlags,
}

/// Format facts for the formats kiln creates images and vertex attributes with. `None` for
/// compressed and exotic formats.
pub(crate) fn format_info(f: vk::Format) -> Option<FormatInfo> {
    use vk::Format as F;
    use NumClass::*;
    let c = vk::ImageAspectFlags::COLOR;
    let (bytes, components, class, wide, aspect) = match f {
        F::R8_UNORM | F::R8_SNORM | F::R8_SRGB => (1, 1, Float, false, c),
        F::R8_UINT => (1, 1, Uint, false, c),
        F::R8_SINT => (1, 1, Sint, false, c),
        F::R8G8_UNORM | F::R8G8_SNORM => (2, 2, Float, false, c),
        F::R8G8_UINT => (2, 2, Uint, false, c),
        F::R8G8_SINT => (2, 2, Sint, false, c),
        F::R8G8B8A8_UNORM
        | F::R8G8B8A8_SNORM
        | F::R8G8B8A8_SRGB
        | F::B8G8R8A8_UNORM
        | F::B8G8R8A8_SRGB
        | F::A2B10G10R10_UNORM_PACK32
        | F::A2R10G10B10_UNORM_PACK32 => (4, 4, Float, false, c),
        F::R8G8B8A8_UINT => (4, 4, Uint, false, c),
        F::R8G8B8A8_SINT => (4, 4, Sint, false, c),
        F::R16_SFLOAT | F::R16_UNORM | F::R16_SNORM => (2, 1, Float, false, c),
        F::R16_UINT => (2, 1, Uint, false, c),
        F::R16_SINT => (2, 1, Sint, false, c),
        F::R16G16_SFLOAT | F::R16G16_UNORM | F::R16G16_SNORM => (4, 2, Float, false, c),
        F::R16G16_UINT => (4, 2, Uint, false, c),
        F::R16G16_SINT => (4, 2, Sint, false, c),
        F::R16G16B16A16_SFLOAT | F::R16G16B16A16_UNORM | F::R16G16B16A16_SNORM => {
            (8, 4, Float, false, c)
        }
        F::R16G16B16A16_UINT => (8, 4, Uint, false, c),
        F::R16G16B16A16_SINT => (8, 4, Sint, false, c),
        F::R32_SFLOAT => (4, 1, Float, false, c),
        F::R32_UINT => (4, 1, Uint, false, c),
        F::R32_SINT => (4, 1, Sint, false, c),
        F::R32G32_SFLOAT => (8, 2, Float, false, c),
        F::R32G32_UINT => (8, 2, Uint, false, c),
        F::R32G32_SINT => (8, 2, Sint, false, c),
        F::R32G32B32_SFLOAT => (12, 3, Float, false, c),
        F::R32G32B32_UINT => (12, 3, Uint, false, c),
        F::R32G32B32_SINT => (12, 3, Sint, false, c),
        F::R32G32B32A32_SFLOAT => (16, 4, Float, false, c),
        F::R32G32B32A32_UINT => (16, 4, Uint, false, c),
        F::R32G32B32A32_SINT => (16, 4, Sint, false, c),
        F::R64_SFLOAT => (8, 1, Float, true, c),
        F::R64G64_SFLOAT => (16, 2, Float, true, c),
        F::R64G64B64_SFLOAT => (24, 3, Float, true, c),
        F::R64G64B64A64_SFLOAT => (32, 4, Float, true, c),
        F::D16_UNORM => (2, 1, Float, false, vk::ImageAspectFlags::DEPTH),
        F::D32_SFLOAT => (4, 1, Float, false, vk::ImageAspectFlags::DEPTH),
        F::X8_D24_UNORM_PACK32 => (4, 1, Float, false, vk::ImageAspectFlags::DEPTH),
        F::D24_UNORM_S8_UINT => (
            4,
            2,
            Float,
            false,
            vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL,
        ),
        F::D32_SFLOAT_S8_UINT => (
            8,
            2,
            Float,
            false,
            vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL,
        ),
        _ => return None,
    };
    Some(FormatInfo {
        bytes,
        components,
        class,
        wide,
        aspect,
    })
}

/// How to create an [`Image`]: a 2D image with one array layer.
#[derive(Clone, Debug)]
pub struct ImageDesc<'a> {
    /// Name shown in errors and validation messages.
    pub label: &'a str,
    /// Width and height in texels (each ≥ 1 and ≤ `maxImageDimension2D`).
    pub width: u32,
    /// Height in texels (≥ 1 and ≤ `maxImageDimension2D`).
    pub height: u32,
    /// The texel format.
    pub format: vk::Format,
    /// Usage; kiln adds TRANSFER_SRC | TRANSFER_DST so upload and readback always work.
    pub usage: vk::ImageUsageFlags,
    /// Mip levels, 1 ..= ⌊log2(max(width, height))⌋ + 1.
    pub mip_levels: u32,
}

impl Default for ImageDesc<'_> {
    /// An unlabelled 1x1 RGBA8 sampled texture with one mip: set at least the size
    /// (`ImageDesc { width: 64, height: 64, ..Default::default() }`).
    fn default() -> Self {
        ImageDesc::texture("", 1, 1, vk::Format::R8G8B8A8_UNORM)
    }
}

impl<'a> ImageDesc<'a> {
    /// A sampled texture with one mip.
    pub fn texture(label: &'a str, width: u32, height: u32, format: vk::Format) -> Self {
        ImageDesc {
            label,
            width,
            height,
            format,
            usage: vk::ImageUsageFlags::SAMPLED,
            mip_levels: 1,
        }
    }

    /// A colour render target (colour attachment, also sampleable).
    pub fn color_target(label: &'a str, width: u32, height: u32, format: vk::Format) -> Self {
        ImageDesc {
            usage: vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED,
            ..Self::texture(label, width, height, format)
        }
    }

    /// A depth(-stencil) attachment.
    pub fn depth_target(label: &'a str, width: u32, height: u32, format: vk::Format) -> Self {
        ImageDesc {
            usage: vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
            ..Self::texture(label, width, height, format)
        }
    }
}

/// A 2D `VkImage`, its `VkImageView` (all mips) and memory: a cheap-to-clone handle,
/// destroyed when the last handle (including those descriptor sets hold) drops.
#[derive(Clone)]
pub struct Image(Arc<ImageInner>);

struct ImageInner {
    shared: Arc<Shared>,
    raw: vk::Image,
    view: vk::ImageView,
    allocation: Option<Allocation>,
    /// False for swapchain images: the swapchain owns `raw`.
    owns_image: bool,
    format: vk::Format,
    width: u32,
    height: u32,
    mip_levels: u32,
    usage: vk::ImageUsageFlags,
    aspect: vk::ImageAspectFlags,
    /// Layout after the last submitted command buffer that changed it.
    layout: Mutex<vk::ImageLayout>,
    label: String,
    /// Per queue, the last submissions that used and wrote the image (cross-queue
    /// ordering; see `device::queue`).
    stamps: ResourceStamps,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.0;
        f.debug_struct("Image")
            .field("label", &s.label)
            .field("extent", &(s.width, s.height))
            .field("format", &s.format)
            .field("mip_levels", &s.mip_levels)
            .field("usage", &s.usage)
            .finish()
    }
}

fn invalid(label: &str, detail: String) -> Error {
    Error::InvalidImage {
        object: label.to_string(),
        detail,
    }
}

impl Image {
    pub(crate) fn new(shared: &Arc<Shared>, desc: &ImageDesc<'_>) -> Result<Image> {
        let label = desc.label;
        if !shared.features.synchronization2 {
            return Err(Error::MissingFeature {
                device: shared.info.name.clone(),
                what: "synchronization2 (Vulkan 1.3), which kiln's image layout transitions use"
                    .into(),
            });
        }
        let info = format_info(desc.format).ok_or_else(|| {
            invalid(
                label,
                format!(
                    "format {:?} is not one kiln creates images with",
                    desc.format
                ),
            )
        })?;
        let max = shared.limits().max_image_dimension2_d;
        if desc.width == 0 || desc.height == 0 || desc.width > max || desc.height > max {
            return Err(invalid(
                label,
                format!(
                    "extent {}x{} is outside 1..={max} (maxImageDimension2D)",
                    desc.width, desc.height
                ),
            ));
        }
        let max_mips = 32 - desc.width.max(desc.height).leading_zeros();
        if desc.mip_levels == 0 || desc.mip_levels > max_mips {
            return Err(invalid(
                label,
                format!(
                    "{} mip levels; a {}x{} image has 1..={max_mips}",
                    desc.mip_levels, desc.width, desc.height
                ),
            ));
        }
        let usage =
            desc.usage | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
        let ir = &shared.instance.raw;
        // SAFETY: plain query on this instance's physical device.
        let props = unsafe {
            ir.get_physical_device_image_format_properties(
                shared.physical,
                desc.format,
                vk::ImageType::TYPE_2D,
                vk::ImageTiling::OPTIMAL,
                usage,
                vk::ImageCreateFlags::empty(),
            )
        };
        match props {
            Ok(p) if p.max_mip_levels >= desc.mip_levels => {}
            Ok(p) => {
                return Err(invalid(
                    label,
                    format!(
                        "{:?} allows {} mip levels, {} requested",
                        desc.format, p.max_mip_levels, desc.mip_levels
                    ),
                ))
            }
            Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED) => {
                return Err(invalid(
                    label,
                    format!(
                        "the device does not support {:?} with usage {usage:?} (optimal tiling)",
                        desc.format
                    ),
                ))
            }
            Err(e) => return Err(vk_err("vkGetPhysicalDeviceImageFormatProperties")(e)),
        }
        let d = &shared.raw;
        let create = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(desc.format)
            .extent(vk::Extent3D {
                width: desc.width,
                height: desc.height,
                depth: 1,
            })
            .mip_levels(desc.mip_levels)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            // Concurrent over kiln's queue families when there are several (see `Sharing`).
            .sharing_mode(shared.sharing.mode())
            .queue_family_indices(shared.sharing.families())
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let raw = shared
            .inject(FaultSite::CreateImage)
            .and_then(|()| {
                // SAFETY: every field was checked against the device above; the families
                // (if any) are distinct families of this device's queues.
                unsafe { d.create_image(&create, None) }
            })
            .map_err(vk_err("vkCreateImage"))?;
        // SAFETY: `raw` was just created on this device.
        let requirements = unsafe { d.get_image_memory_requirements(raw) };
        let alloc = match shared.allocator.lock() {
            Ok(mut a) => shared.inject_allocation(label).and_then(|()| {
                a.allocate(&AllocationCreateDesc {
                    name: label,
                    requirements,
                    location: MemoryLocation::GpuOnly,
                    linear: false,
                    allocation_scheme: AllocationScheme::GpuAllocatorManaged,
                })
                .map_err(|source| Error::Allocation {
                    object: label.to_string(),
                    source,
                })
            }),
            Err(_) => Err(Error::Internal {
                what: "the allocator's lock is poisoned (a thread panicked holding it)",
            }),
        };
        let allocation = match alloc {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: unused image without memory.
                unsafe { d.destroy_image(raw, None) };
                return Err(e);
            }
        };
        // SAFETY: the allocation satisfies `requirements` (gpu-allocator's contract).
        let bound = unsafe { d.bind_image_memory(raw, allocation.memory(), allocation.offset()) };
        // An image used only for copies gets no view: a view needs a usage that views
        // serve (VUID-VkImageViewCreateInfo-image-04441).
        let view = bound.map_err(vk_err("vkBindImageMemory")).and_then(|_| {
            if usage.intersects(VIEW_USAGE) {
                make_view(shared, raw, desc.format, info.aspect, desc.mip_levels)
            } else {
                Ok(vk::ImageView::null())
            }
        });
        let view = match view {
            Ok(v) => v,
            Err(e) => {
                // SAFETY: unused image; its allocation is returned below.
                unsafe { d.destroy_image(raw, None) };
                if let Ok(mut a) = shared.allocator.lock() {
                    let _ = a.free(allocation);
                }
                return Err(e);
            }
        };
        shared.set_name(raw, label);
        shared.set_name(view, label);
        Ok(Image(Arc::new(ImageInner {
            shared: shared.clone(),
            raw,
            view,
            allocation: Some(allocation),
            owns_image: true,
            format: desc.format,
            width: desc.width,
            height: desc.height,
            mip_levels: desc.mip_levels,
            usage,
            aspect: info.aspect,
            layout: Mutex::new(vk::ImageLayout::UNDEFINED),
            label: label.to_string(),
            stamps: ResourceStamps::default(),
        })))
    }

    /// Wraps an image another object owns (a swapchain image): kiln makes and destroys
    /// only the view.
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub(crate) fn wrap(
        shared: &Arc<Shared>,
        raw: vk::Image,
        format: vk::Format,
        extent: vk::Extent2D,
        usage: vk::ImageUsageFlags,
        label: &str,
    ) -> Result<Image> {
        let aspect = vk::ImageAspectFlags::COLOR;
        let view = make_view(shared, raw, format, aspect, 1)?;
        shared.set_name(view, label);
        Ok(Image(Arc::new(ImageInner {
            shared: shared.clone(),
            raw,
            view,
            allocation: None,
            owns_image: false,
            format,
            width: extent.width,
            height: extent.height,
            mip_levels: 1,
            usage,
            aspect,
            layout: Mutex::new(vk::ImageLayout::UNDEFINED),
            label: label.to_string(),
            stamps: ResourceStamps::default(),
        })))
    }

    /// The submissions that used and wrote this image, per queue.
    #[inline]
    pub(crate) fn stamps(&self) -> &ResourceStamps {
        &self.0.stamps
    }

    /// Width of mip level 0, texels.
    pub fn width(&self) -> u32 {
        self.0.width
    }
    /// Height of mip level 0, texels.
    pub fn height(&self) -> u32 {
        self.0.height
    }
    /// `(width, height)` as a `VkExtent2D`.
    pub fn extent(&self) -> vk::Extent2D {
        vk::Extent2D {
            width: self.0.width,
            height: self.0.height,
        }
    }
    /// The texel format.
    pub fn format(&self) -> vk::Format {
        self.0.format
    }
    /// Number of mip levels.
    pub fn mip_levels(&self) -> u32 {
        self.0.mip_levels
    }
    /// Usage flags the image was created with (including the added transfer bits).
    pub fn usage(&self) -> vk::ImageUsageFlags {
        self.0.usage
    }
    /// The aspects of the format (COLOR, or DEPTH and/or STENCIL).
    pub fn aspect(&self) -> vk::ImageAspectFlags {
        self.0.aspect
    }
    /// The label given at creation (shown in errors and validation messages).
    pub fn label(&self) -> &str {
        &self.0.label
    }
    /// The raw image (owned by this object or its swapchain: do not destroy it).
    pub fn raw(&self) -> vk::Image {
        self.0.raw
    }
    /// The raw view of all mips (owned by this object); `VK_NULL_HANDLE` for an image
    /// created with transfer usage only, which no view may be made for
    /// (VUID-VkImageViewCreateInfo-image-04441): sampling, storage and attachment usage
    /// each need one.
    pub fn view(&self) -> vk::ImageView {
        self.0.view
    }
    /// The layout after the last finished execution that used the image.
    pub fn layout(&self) -> vk::ImageLayout {
        *self.0.layout.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tightly packed byte size of mip `level`.
    pub fn level_size(&self, level: u32) -> u64 {
        let (w, h) = self.level_extent(level);
        let bytes = format_info(self.0.format).map_or(0, |i| i.bytes) as u64;
        w as u64 * h as u64 * bytes
    }

    fn level_extent(&self, level: u32) -> (u32, u32) {
        (
            (self.0.width >> level).max(1),
            (self.0.height >> level).max(1),
        )
    }

    /// The device state this image belongs to.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.0.shared
    }

    /// Records the layout the image is in after the last submitted command buffer that
    /// changed it (the submission layer calls this once such a command buffer is submitted).
    pub(crate) fn set_layout(&self, layout: vk::ImageLayout) {
        *self.0.layout.lock().unwrap_or_else(|p| p.into_inner()) = layout;
    }

    /// Checks that mip `level` exists, is a colour level (kiln copies colour images only)
    /// and holds `found` bytes tightly packed.
    ///
    /// Errors: `KILN-E180` no such level or not a colour image, `KILN-E181` wrong size.
    pub(crate) fn check_level(&self, level: u32, found: u64) -> Result<()> {
        if level >= self.0.mip_levels {
            return Err(invalid(
                &self.0.label,
                format!("mip {level} does not exist ({} levels)", self.0.mip_levels),
            ));
        }
        if self.0.aspect != vk::ImageAspectFlags::COLOR {
            return Err(invalid(
                &self.0.label,
                "kiln copies colour images only (this one is depth/stencil)".into(),
            ));
        }
        let expected = self.level_size(level);
        if expected != found {
            let (width, height) = self.level_extent(level);
            return Err(Error::ImageDataSize {
                object: self.0.label.clone(),
                level,
                width,
                height,
                format: self.0.format,
                expected,
                found,
            });
        }
        Ok(())
    }

    /// The extent of `level` as a copy region for the whole level.
    pub(crate) fn copy_region(&self, level: u32) -> vk::BufferImageCopy {
        let (w, h) = self.level_extent(level);
        vk::BufferImageCopy {
            buffer_offset: 0,
            buffer_row_length: 0,
            buffer_image_height: 0,
            image_subresource: vk::ImageSubresourceLayers {
                aspect_mask: self.0.aspect,
                mip_level: level,
                base_array_layer: 0,
                layer_count: 1,
            },
            image_offset: vk::Offset3D::default(),
            image_extent: vk::Extent3D {
                width: w,
                height: h,
                depth: 1,
            },
        }
    }

    /// The subresource range of every mip.
    pub(crate) fn full_range(&self) -> vk::ImageSubresourceRange {
        vk::ImageSubresourceRange {
            aspect_mask: self.0.aspect,
            base_mip_level: 0,
            level_count: self.0.mip_levels,
            base_array_layer: 0,
            layer_count: 1,
        }
    }
}

/// Usages served by an image view: an image with none of them gets no view
/// (VUID-VkImageViewCreateInfo-image-04441).
const VIEW_USAGE: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::SAMPLED.as_raw()
        | vk::ImageUsageFlags::STORAGE.as_raw()
        | vk::ImageUsageFlags::COLOR_ATTACHMENT.as_raw()
        | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT.as_raw()
        | vk::ImageUsageFlags::INPUT_ATTACHMENT.as_raw()
        | vk::ImageUsageFlags::TRANSIENT_ATTACHMENT.as_raw(),
);

fn make_view(
    shared: &Shared,
    raw: vk::Image,
    format: vk::Format,
    aspect: vk::ImageAspectFlags,
    mips: u32,
) -> Result<vk::ImageView> {
    let info = vk::ImageViewCreateInfo::default()
        .image(raw)
        .view_type(vk::ImageViewType::TYPE_2D)
        .format(format)
        .subresource_range(vk::ImageSubresourceRange {
            aspect_mask: aspect,
            base_mip_level: 0,
            level_count: mips,
            base_array_layer: 0,
            layer_count: 1,
        });
    // SAFETY: `raw` is a live 2D image of `format` with `mips` levels and memory bound.
    unsafe { shared.raw.create_image_view(&info, None) }.map_err(vk_err("vkCreateImageView"))
}

impl Drop for ImageInner {
    fn drop(&mut self) {
        let (view, raw, owns) = (self.view, self.raw, self.owns_image);
        let allocation = self.allocation.take();
        let label = std::mem::take(&mut self.label);
        // Deferred until every submission that may use the image has finished (swapchain
        // images are owned by the swapchain: only their view is destroyed).
        self.shared.retire(move |s| {
            // SAFETY: retire runs this after every kiln submission that could use the view
            // or image completed; presenter frames wait on their fences before resources drop.
            // (A null view, of a transfer-only image, is ignored by vkDestroyImageView.)
            unsafe {
                s.raw.destroy_image_view(view, None);
                if owns {
                    s.raw.destroy_image(raw, None);
                }
            }
            if let Some(a) = allocation {
                match s.allocator.lock() {
                    Ok(mut alloc) => {
                        if let Err(e) = alloc.free(a) {
                            log::error!("kiln: freeing memory of image `{label}` failed: {e}");
                        }
                    }
                    Err(_) => log::error!("kiln: allocator lock poisoned; leaking `{label}`"),
                }
            }
        });
    }
}
