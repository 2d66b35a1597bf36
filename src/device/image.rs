//! Images (1D, 2D, 3D, arrays, cubes; mip chains; multisampled targets) with a view and
//! memory from `gpu-allocator` (staged uploads and readbacks live in the submission layer;
//! the description's checks in `image_desc`).
//!
//! kiln tracks each image's layout per mip level and array layer (`SubresourceMap`: one
//! value while they all share one): the layouts after the last finished execution live in
//! the image, and a [`Recorder`](crate::Recorder) keeps the layouts it has recorded
//! transitions to until its command buffer has been submitted.
//! Transitions use `vkCmdPipelineBarrier2` (synchronization2, Vulkan spec §7.6.2).

use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

use super::image_desc::{plan, ImageDesc, ImageLimits, ImagePlan};
use super::subresources::{SubresourceMap, Subresources};
use super::texel_block::texel_block;
use super::{FaultSite, ResourceStamps, Shared};
use crate::error::{vk_device_err, DeviceError, MemoryError, Result};

/// A `VkImage`, its `VkImageView` (all mips and layers, of the description's
/// `view_type`) and memory: a cheap-to-clone handle,
/// destroyed when the last handle (including those descriptor sets hold) drops.
#[derive(Clone)]
pub struct Image(Arc<ImageInner>);

struct ImageInner {
    shared: Arc<Shared>,
    raw: vk::Image,
    view: vk::ImageView,
    allocation: Option<Allocation>,
    /// The dedicated memory of an exportable or imported image (`device::external::image`).
    external: Option<ExternalImage>,
    /// False for swapchain images: the swapchain owns `raw`.
    owns_image: bool,
    format: vk::Format,
    width: u32,
    height: u32,
    depth: u32,
    array_layers: u32,
    view_type: vk::ImageViewType,
    samples: vk::SampleCountFlags,
    mip_levels: u32,
    usage: vk::ImageUsageFlags,
    aspect: vk::ImageAspectFlags,
    /// Layouts (per mip and layer) after the last submitted command buffer that changed
    /// them.
    layout: Mutex<SubresourceMap<vk::ImageLayout>>,
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
            .field("extent", &(s.width, s.height, s.depth))
            .field("view_type", &s.view_type)
            .field("array_layers", &s.array_layers)
            .field("format", &s.format)
            .field("mip_levels", &s.mip_levels)
            .field("samples", &s.samples)
            .field("usage", &s.usage)
            .finish()
    }
}

/// What [`Image::check`] found: the plan, the usage kiln creates with, the aspect.
pub(crate) struct CheckedImage {
    pub planned: ImagePlan,
    pub usage: vk::ImageUsageFlags,
    pub aspect: vk::ImageAspectFlags,
}

/// The memory of an external image (`device::external::image`): the dedicated allocation,
/// how it is shared, whether it can be exported, its heap reservation.
pub(crate) struct ExternalImage {
    pub memory: vk::DeviceMemory,
    pub info: super::ExternalMemory,
    pub exportable: bool,
    pub heap: (usize, u64),
}

fn invalid(label: &str, detail: String) -> MemoryError {
    MemoryError::InvalidImage {
        object: label.to_string(),
        detail,
    }
}

impl Image {
    pub(crate) fn new(shared: &Arc<Shared>, desc: &ImageDesc<'_>) -> Result<Image, MemoryError> {
        let checked = Self::check(shared, desc)?;
        let raw = Self::create_raw(shared, desc, &checked, None)?;
        let (usage, aspect) = (checked.usage, checked.aspect);
        let (allocation, view) = match memory_and_view(shared, raw, desc, usage, aspect) {
            Ok(done) => done,
            Err(e) => {
                // SAFETY: unused image; its memory (if any) was returned.
                unsafe { shared.raw.destroy_image(raw, None) };
                return Err(e);
            }
        };
        Ok(Self::assemble(
            shared,
            desc,
            (raw, view),
            &checked,
            Some(allocation),
            None,
        ))
    }

    /// Every check of `desc` that needs no Vulkan object: the features, the format, the
    /// plan, the device's format support.
    pub(crate) fn check(
        shared: &Shared,
        desc: &ImageDesc<'_>,
    ) -> Result<CheckedImage, MemoryError> {
        let label = desc.label;
        if !shared.features.synchronization2 {
            return Err(DeviceError::MissingFeature {
                device: shared.info.name.clone(),
                what: "synchronization2 (Vulkan 1.3), which kiln's image layout transitions use"
                    .into(),
            }
            .into());
        }
        let info = texel_block(desc.format).ok_or_else(|| {
            invalid(
                label,
                format!(
                    "format {:?} is not one kiln creates images with",
                    desc.format
                ),
            )
        })?;
        let cube_array = shared.features.image_cube_array;
        let planned = plan(desc, &ImageLimits::of(shared.limits(), cube_array))
            .map_err(|detail| invalid(label, detail))?;
        let usage =
            desc.usage | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
        check_format(shared, desc, usage, planned)?;
        Ok(CheckedImage {
            planned,
            usage,
            aspect: info.aspect,
        })
    }

    /// The `VkImage` of a checked description, external (of the handle types `external`)
    /// or not; no memory bound.
    pub(crate) fn create_raw(
        shared: &Shared,
        desc: &ImageDesc<'_>,
        checked: &CheckedImage,
        external: Option<vk::ExternalMemoryHandleTypeFlags>,
    ) -> Result<vk::Image, MemoryError> {
        let planned = checked.planned;
        let mut ext =
            vk::ExternalMemoryImageCreateInfo::default().handle_types(external.unwrap_or_default());
        let mut create = vk::ImageCreateInfo::default()
            .flags(planned.flags)
            .image_type(planned.image_type)
            .format(desc.format)
            .extent(vk::Extent3D {
                width: desc.width,
                height: desc.height,
                depth: desc.depth,
            })
            .mip_levels(desc.mip_levels)
            .array_layers(desc.array_layers)
            .samples(desc.samples)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(checked.usage)
            // Concurrent over kiln's queue families when there are several (see `Sharing`).
            .sharing_mode(shared.sharing.mode())
            .queue_family_indices(shared.sharing.families())
            .initial_layout(vk::ImageLayout::UNDEFINED);
        if external.is_some() {
            create = create.push_next(&mut ext);
        }
        let raw = shared
            .inject(FaultSite::CreateImage)
            .and_then(|()| {
                // SAFETY: every field was checked against the device (`check`); the
                // families (if any) are distinct families of this device's queues; an
                // external handle type was checked by the caller (`device::external::image`).
                unsafe { shared.raw.create_image(&create, None) }
            })
            .map_err(vk_device_err("vkCreateImage"))?;
        shared.set_name(raw, desc.label);
        Ok(raw)
    }

    /// An image of `desc` bound to the dedicated memory of `external` (an export or an
    /// import, `device::external::image`), with its view. On an error the caller frees
    /// `raw` and the memory.
    pub(crate) fn from_external(
        shared: &Arc<Shared>,
        desc: &ImageDesc<'_>,
        raw: vk::Image,
        checked: &CheckedImage,
        external: ExternalImage,
    ) -> Result<Image, MemoryError> {
        let view = view_of(shared, raw, desc, checked.usage, checked.aspect)?;
        Ok(Self::assemble(
            shared,
            desc,
            (raw, view),
            checked,
            None,
            Some(external),
        ))
    }

    fn assemble(
        shared: &Arc<Shared>,
        desc: &ImageDesc<'_>,
        (raw, view): (vk::Image, vk::ImageView),
        checked: &CheckedImage,
        allocation: Option<Allocation>,
        external: Option<ExternalImage>,
    ) -> Image {
        shared.set_name(view, desc.label);
        Image(Arc::new(ImageInner {
            shared: shared.clone(),
            raw,
            view,
            allocation,
            external,
            owns_image: true,
            format: desc.format,
            width: desc.width,
            height: desc.height,
            depth: desc.depth,
            array_layers: desc.array_layers,
            view_type: desc.view_type,
            samples: desc.samples,
            mip_levels: desc.mip_levels,
            usage: checked.usage,
            aspect: checked.aspect,
            layout: Mutex::new(SubresourceMap::new(
                desc.mip_levels,
                desc.array_layers,
                vk::ImageLayout::UNDEFINED,
            )),
            label: desc.label.to_string(),
            stamps: ResourceStamps::default(),
        }))
    }

    /// The external memory, for images made by `device::external::image`.
    pub(crate) fn external(&self) -> Option<&ExternalImage> {
        self.0.external.as_ref()
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
    ) -> Result<Image, MemoryError> {
        let aspect = vk::ImageAspectFlags::COLOR;
        let range = vk::ImageSubresourceRange {
            aspect_mask: aspect,
            base_mip_level: 0,
            level_count: 1,
            base_array_layer: 0,
            layer_count: 1,
        };
        let view_type = vk::ImageViewType::TYPE_2D;
        let view = make_view(shared, raw, format, view_type, range)?;
        shared.set_name(view, label);
        Ok(Image(Arc::new(ImageInner {
            shared: shared.clone(),
            raw,
            view,
            allocation: None,
            external: None,
            owns_image: false,
            format,
            width: extent.width,
            height: extent.height,
            depth: 1,
            array_layers: 1,
            view_type,
            samples: vk::SampleCountFlags::TYPE_1,
            mip_levels: 1,
            usage,
            aspect,
            layout: Mutex::new(SubresourceMap::new(1, 1, vk::ImageLayout::UNDEFINED)),
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
    /// Depth of mip level 0, texels (1 but for 3D images).
    pub fn depth(&self) -> u32 {
        self.0.depth
    }
    /// Number of array layers (6 per cube).
    pub fn array_layers(&self) -> u32 {
        self.0.array_layers
    }
    /// The type of [`view`](Self::view) (which decided the image's type).
    pub fn view_type(&self) -> vk::ImageViewType {
        self.0.view_type
    }
    /// Samples per texel (TYPE_1 but for multisampled targets).
    pub fn samples(&self) -> vk::SampleCountFlags {
        self.0.samples
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
    /// The raw view of all mips and layers, of type [`view_type`](Self::view_type) (owned
    /// by this object); `VK_NULL_HANDLE` for an image
    /// created with transfer usage only, which no view may be made for
    /// (VUID-VkImageViewCreateInfo-image-04441): sampling, storage and attachment usage
    /// each need one.
    pub fn view(&self) -> vk::ImageView {
        self.0.view
    }
    /// The layout after the last finished execution that used the image: that of every
    /// mip level and layer when they share one, else that of mip 0, layer 0 (see
    /// [`subresource_layout`](Self::subresource_layout)).
    pub fn layout(&self) -> vk::ImageLayout {
        let map = self.0.layout.lock().unwrap_or_else(|p| p.into_inner());
        map.uniform()
            .or_else(|| map.get(0, 0))
            .unwrap_or(vk::ImageLayout::UNDEFINED)
    }

    /// The layout of mip level `mip`, array layer `layer` after the last finished execution
    /// that used the image (`None`: no such subresource).
    pub fn subresource_layout(&self, mip: u32, layer: u32) -> Option<vk::ImageLayout> {
        let map = self.0.layout.lock().unwrap_or_else(|p| p.into_inner());
        map.get(mip, layer)
    }

    /// The layouts of every subresource (a copy; one value, no allocation, while they
    /// share one).
    pub(crate) fn layouts(&self) -> SubresourceMap<vk::ImageLayout> {
        self.0
            .layout
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Every mip level and layer of the image, as a [`Subresources`] with explicit
    /// counts.
    pub fn subresources(&self) -> Subresources {
        Subresources::new(0..self.0.mip_levels, 0..self.0.array_layers)
    }

    /// `range` of this image as a Vulkan range of its aspects.
    pub(crate) fn vk_range(&self, range: Subresources) -> vk::ImageSubresourceRange {
        range.vk(self.0.aspect, self.0.mip_levels, self.0.array_layers)
    }

    /// Tightly packed byte size of mip `level`, every layer: layer after layer, each depth
    /// slice after slice, row after row; for a block-compressed format, rows of whole 4×4
    /// (or ASTC's) texel blocks, a partial block at an edge counted whole.
    pub fn level_size(&self, level: u32) -> u64 {
        let (w, h, d) = self.level_extent(level);
        texel_block(self.0.format).map_or(0, |b| b.bytes_of(w, h, d))
            * u64::from(self.0.array_layers)
    }

    /// The extent of mip `level`: each dimension halved per level, at least 1.
    pub fn level_extent(&self, level: u32) -> (u32, u32, u32) {
        let half = |x: u32| x.checked_shr(level).unwrap_or(0).max(1);
        (half(self.0.width), half(self.0.height), half(self.0.depth))
    }

    /// The device state this image belongs to.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.0.shared
    }

    /// Records the layout the image is in after the last submitted command buffer that
    /// changed it (the submission layer calls this once such a command buffer is submitted).
    pub(crate) fn set_layouts(&self, layouts: &SubresourceMap<vk::ImageLayout>) {
        *self.0.layout.lock().unwrap_or_else(|p| p.into_inner()) = layouts.clone();
    }

    /// Checks that mip `level` exists, is a single-sampled colour level (kiln copies
    /// those only; a multisampled image cannot be copied, VUID-vkCmdCopyBufferToImage-
    /// dstImage-07973) and holds `found` bytes tightly packed.
    ///
    /// Errors: `KILN-E180` no such level, not a colour image or multisampled, `KILN-E181`
    /// wrong size.
    pub(crate) fn check_level(&self, level: u32, found: u64) -> Result<(), MemoryError> {
        if self.0.samples != vk::SampleCountFlags::TYPE_1 {
            return Err(invalid(
                &self.0.label,
                format!(
                    "a multisampled image ({:?}) cannot be copied; resolve it into a \
                     single-sampled image (ColorAttachment::resolve) and copy that",
                    self.0.samples
                ),
            ));
        }
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
            let (width, height, depth) = self.level_extent(level);
            return Err(MemoryError::ImageDataSize {
                object: self.0.label.clone(),
                level,
                width,
                height,
                depth,
                layers: self.0.array_layers,
                format: self.0.format,
                expected,
                found,
            });
        }
        Ok(())
    }

    /// The copy region of `layers` of mip `level`, the whole extent of the level.
    pub(crate) fn copy_region(
        &self,
        level: u32,
        layers: std::ops::Range<u32>,
    ) -> vk::BufferImageCopy {
        let (w, h, d) = self.level_extent(level);
        vk::BufferImageCopy {
            buffer_offset: 0,
            buffer_row_length: 0,
            buffer_image_height: 0,
            image_subresource: vk::ImageSubresourceLayers {
                aspect_mask: self.0.aspect,
                mip_level: level,
                base_array_layer: layers.start,
                layer_count: layers.end - layers.start,
            },
            image_offset: vk::Offset3D::default(),
            image_extent: vk::Extent3D {
                width: w,
                height: h,
                depth: d,
            },
        }
    }
}

/// Memory from gpu-allocator bound to the new image `raw`, and its view of every mip and
/// layer (none for a transfer-only image). On an error nothing is left allocated; the
/// caller destroys `raw`.
fn memory_and_view(
    shared: &Shared,
    raw: vk::Image,
    desc: &ImageDesc<'_>,
    usage: vk::ImageUsageFlags,
    aspect: vk::ImageAspectFlags,
) -> Result<(Allocation, vk::ImageView), MemoryError> {
    let (d, label) = (&shared.raw, desc.label);
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
            .map_err(|source| MemoryError::Allocation {
                object: label.to_string(),
                source,
            })
        }),
        Err(_) => Err(DeviceError::Internal {
            what: "the allocator's lock is poisoned (a thread panicked holding it)",
        }
        .into()),
    };
    let allocation = alloc?;
    // SAFETY: the allocation satisfies `requirements` (gpu-allocator's contract).
    let bound = unsafe { d.bind_image_memory(raw, allocation.memory(), allocation.offset()) };
    // An image used only for copies gets no view: a view needs a usage that views
    // serve (VUID-VkImageViewCreateInfo-image-04441).
    let view = bound
        .map_err(|e| vk_device_err("vkBindImageMemory")(e).into())
        .and_then(|_| view_of(shared, raw, desc, usage, aspect));
    let view = match view {
        Ok(v) => v,
        Err(e) => {
            if let Ok(mut a) = shared.allocator.lock() {
                let _ = a.free(allocation);
            }
            return Err(e);
        }
    };
    Ok((allocation, view))
}

/// The view of every mip and layer of `raw` (memory bound), or none for a transfer-only
/// image.
fn view_of(
    shared: &Shared,
    raw: vk::Image,
    desc: &ImageDesc<'_>,
    usage: vk::ImageUsageFlags,
    aspect: vk::ImageAspectFlags,
) -> Result<vk::ImageView, MemoryError> {
    if !usage.intersects(VIEW_USAGE) {
        return Ok(vk::ImageView::null());
    }
    let range = vk::ImageSubresourceRange {
        aspect_mask: aspect,
        base_mip_level: 0,
        level_count: desc.mip_levels,
        base_array_layer: 0,
        layer_count: desc.array_layers,
    };
    make_view(shared, raw, desc.format, desc.view_type, range)
}

/// Checks that the device supports `desc` as planned with `usage` (optimal tiling): the
/// format, mips, layers, extent and sample count `vkGetPhysicalDeviceImageFormatProperties`
/// allows (VUID-VkImageCreateInfo-extent-02252, -mipLevels-02255, -arrayLayers-02256,
/// -samples-02258, -imageCreateMaxMipLevels-02251).
///
/// Errors: `KILN-E180`.
fn check_format(
    shared: &Shared,
    desc: &ImageDesc<'_>,
    usage: vk::ImageUsageFlags,
    planned: ImagePlan,
) -> Result<(), MemoryError> {
    let label = desc.label;
    // SAFETY: plain query on this instance's physical device.
    let props = unsafe {
        shared
            .instance
            .raw
            .get_physical_device_image_format_properties(
                shared.physical,
                desc.format,
                planned.image_type,
                vk::ImageTiling::OPTIMAL,
                usage,
                planned.flags,
            )
    };
    let p = match props {
        Ok(p) => p,
        Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED) => {
            return Err(invalid(
                label,
                format!(
                    "the device does not support {:?} as a {:?} image with usage {usage:?} \
                     (optimal tiling)",
                    desc.format, planned.image_type
                ),
            ))
        }
        Err(e) => return Err(vk_device_err("vkGetPhysicalDeviceImageFormatProperties")(e).into()),
    };
    let e = p.max_extent;
    let detail = if p.max_mip_levels < desc.mip_levels {
        format!(
            "{:?} allows {} mip levels, {} requested",
            desc.format, p.max_mip_levels, desc.mip_levels
        )
    } else if p.max_array_layers < desc.array_layers {
        format!(
            "{:?} allows {} layers, {} requested",
            desc.format, p.max_array_layers, desc.array_layers
        )
    } else if desc.width > e.width || desc.height > e.height || desc.depth > e.depth {
        format!(
            "{:?} allows at most {}x{}x{}",
            desc.format, e.width, e.height, e.depth
        )
    } else if !p.sample_counts.contains(desc.samples) {
        format!(
            "{:?} with usage {usage:?} allows sample counts {:?}, not {:?}",
            desc.format, p.sample_counts, desc.samples
        )
    } else {
        return Ok(());
    };
    Err(invalid(label, detail))
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
    view_type: vk::ImageViewType,
    range: vk::ImageSubresourceRange,
) -> Result<vk::ImageView, MemoryError> {
    let info = vk::ImageViewCreateInfo::default()
        .image(raw)
        .view_type(view_type)
        .format(format)
        .subresource_range(range);
    // SAFETY: `raw` is a live image of `format` with memory bound, whose type, flags,
    // levels and layers admit `view_type` and `range` (`image_desc::plan`).
    Ok(unsafe { shared.raw.create_image_view(&info, None) }
        .map_err(vk_device_err("vkCreateImageView"))?)
}

impl Drop for ImageInner {
    fn drop(&mut self) {
        let (view, raw, owns) = (self.view, self.raw, self.owns_image);
        let allocation = self.allocation.take();
        let external = self.external.as_ref().map(|e| (e.memory, e.heap));
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
                // The dedicated memory of an external image, after the image; an imported
                // allocation's fd is closed by the driver.
                if let Some((memory, _)) = external {
                    s.raw.free_memory(memory, None);
                }
            }
            if let Some((_, heap)) = external {
                s.heaps.release(heap.0, heap.1);
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
