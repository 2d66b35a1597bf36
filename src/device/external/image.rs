//! External images (issue 28), the buffers' twin (`device::external`): an image created
//! exportable in a dedicated allocation ([`Device::exportable_image`],
//! [`Image::export_memory`]) and one bound to memory imported from an fd
//! (`Device::import_image`), by opaque fd (Vulkan spec §11.2.6, §12.3
//! `VkExternalMemoryImageCreateInfo`).
//!
//! An opaque-fd image is meaningful to an importer that creates *the same image*: same
//! format, extent, mips, layers, samples, usage and optimal tiling on the same physical
//! device (§11.2.7, "the image must have been created with the same parameters"; kiln adds
//! the same transfer usages on both sides), so the importer passes the exporter's
//! [`ImageDesc`]. The texels' arrangement in optimal tiling is known only to the driver,
//! which is also why a DMA-BUF image (whose layout another API reads) would need
//! `VK_EXT_image_drm_format_modifier`: kiln refuses `DmaBuf` for images (`KILN-E163`).
//!
//! The layout: the importer acquires the image from `VK_QUEUE_FAMILY_EXTERNAL` in the
//! layout the exporter left it in (`import_image`'s `layout`, in `queue/external_image.rs`:
//! an image memory barrier, §7.7.4 "Queue Family Ownership Transfer"), so kiln's first
//! transition keeps the texels (from `UNDEFINED` it could discard them, §12.4). fds: as
//! for buffers, an import takes a borrowed fd and gives Vulkan a duplicate, closed once
//! whether the import works or not.

use std::os::fd::{AsRawFd, BorrowedFd, IntoRawFd, OwnedFd};
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use super::{
    check_fd, import_refused, memory_type, release_failed_import, ExternalHandle, ExternalMemory,
};
use crate::device::image::{CheckedImage, ExternalImage};
use crate::device::image_desc::ImageDesc;
use crate::device::{Device, Image, Shared};
use crate::error::{vk_device_err, MemoryError, Result};

/// Refuses what no external image of `handle` can be on this device, before any Vulkan
/// object: the handle type, the extension, then the driver's
/// `vkGetPhysicalDeviceImageFormatProperties2` with `VkPhysicalDeviceExternalImageFormatInfo`.
fn check(
    shared: &Shared,
    desc: &ImageDesc<'_>,
    handle: ExternalHandle,
    export: bool,
) -> Result<(CheckedImage, vk::ExternalMemoryHandleTypeFlags), MemoryError> {
    let what = if export { "export" } else { "import" };
    let unsupported = |why: String| MemoryError::ExternalHandleUnsupported {
        object: desc.label.to_string(),
        what,
        handle,
        device: shared.info.name.clone(),
        why,
    };
    let bits = match handle {
        ExternalHandle::OpaqueFd => vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD,
        ExternalHandle::DmaBuf => {
            return Err(unsupported(
                "a DMA-BUF image needs VK_EXT_image_drm_format_modifier (its texel layout \
                 shared with the importer), which kiln does not use; share images as \
                 OpaqueFd, or a buffer as DmaBuf"
                    .into(),
            ))
        }
        ExternalHandle::SyncFd => {
            return Err(unsupported(
                "it is a semaphore handle type, not a memory one".into(),
            ))
        }
    };
    if !shared.features.external_memory_fd {
        return Err(unsupported(
            "the device lacks VK_KHR_external_memory_fd".into(),
        ));
    }
    let checked = Image::check(shared, desc)?;
    let mut external = vk::PhysicalDeviceExternalImageFormatInfo::default().handle_type(bits);
    let info = vk::PhysicalDeviceImageFormatInfo2::default()
        .format(desc.format)
        .ty(checked.planned.image_type)
        .tiling(vk::ImageTiling::OPTIMAL)
        .usage(checked.usage)
        .flags(checked.planned.flags)
        .push_next(&mut external);
    let mut external_props = vk::ExternalImageFormatProperties::default();
    let mut props = vk::ImageFormatProperties2::default().push_next(&mut external_props);
    // SAFETY: a plain query on the device's physical device (Vulkan 1.1 core); locals
    // outlive the call.
    let r = unsafe {
        shared
            .instance
            .raw
            .get_physical_device_image_format_properties2(shared.physical, &info, &mut props)
    };
    if let Err(e) = r {
        return Err(unsupported(format!(
            "vkGetPhysicalDeviceImageFormatProperties2 refuses {:?} with usage {:?} as an \
             external image: {e:?}",
            desc.format, checked.usage
        )));
    }
    let features = external_props
        .external_memory_properties
        .external_memory_features;
    let needed = if export {
        vk::ExternalMemoryFeatureFlags::EXPORTABLE
    } else {
        vk::ExternalMemoryFeatureFlags::IMPORTABLE
    };
    if !features.contains(needed) {
        return Err(unsupported(format!(
            "vkGetPhysicalDeviceImageFormatProperties2 gives {features:?} for {:?} with usage \
             {:?}, without {needed:?}",
            desc.format, checked.usage
        )));
    }
    Ok((checked, bits))
}

impl Device {
    /// An image whose memory can be exported by opaque fd ([`Image::export_memory`]) to
    /// another `VkDevice` or process on the same physical device, or to CUDA
    /// (`cuImportExternalMemory`, then `cuExternalMemoryGetMappedMipmappedArray`). A
    /// dedicated allocation; otherwise an image like any other.
    ///
    /// Errors: `KILN-E163` the device cannot export images of `handle` for this format and
    /// usage (`DmaBuf`, which needs DRM format modifiers; `SyncFd`; no
    /// `VK_KHR_external_memory_fd`; the driver's refusal); those of [`Device::image`]
    /// (`KILN-E180`); `KILN-E154` heap budget exhausted; `KILN-E106`, `KILN-E104`.
    pub fn exportable_image(
        &self,
        desc: &ImageDesc<'_>,
        handle: ExternalHandle,
    ) -> Result<Image, MemoryError> {
        let (checked, bits) = check(&self.shared, desc, handle, true)?;
        bind_new(&self.shared, desc, &checked, bits, handle, None)
    }
}

/// An image of `desc` bound to the memory behind `fd` (see `Device::import_image` in
/// `queue/external_image.rs`, which acquires it from the external queue family in the
/// exporter's layout); kiln's view of its layout is `UNDEFINED` until then.
pub(crate) fn import_image_memory(
    device: &Device,
    desc: &ImageDesc<'_>,
    fd: BorrowedFd<'_>,
    memory: &ExternalMemory,
) -> Result<Image, MemoryError> {
    let shared = &device.shared;
    let (checked, bits) = check(shared, desc, memory.handle, false)?;
    check_fd(desc.label, fd, memory.handle)?;
    super::fd_kind::check_opaque(shared, desc.label, fd, memory.handle)?;
    let dup = fd
        .try_clone_to_owned()
        .map_err(|e| MemoryError::InvalidExternalHandle {
            object: desc.label.to_string(),
            handle: memory.handle,
            detail: format!("the fd cannot be duplicated: {e}"),
        })?;
    let import = Import {
        memory: *memory,
        dup: Some(dup),
        original: fd,
    };
    bind_new(shared, desc, &checked, bits, memory.handle, Some(import))
}

/// An import: what the caller said, kiln's duplicate fd, the caller's.
struct Import<'fd> {
    memory: ExternalMemory,
    dup: Option<OwnedFd>,
    original: BorrowedFd<'fd>,
}

/// The allocation size and memory type: the image's requirements and the first
/// device-local type for an export; what the caller said, checked, for an import (E164).
fn size_and_type(
    shared: &Shared,
    desc: &ImageDesc<'_>,
    req: vk::MemoryRequirements,
    import: Option<&Import<'_>>,
) -> Result<(u64, u32), MemoryError> {
    let Some(i) = import else {
        let t = memory_type(shared, req.memory_type_bits).ok_or_else(|| {
            MemoryError::ExternalHandleUnsupported {
                object: desc.label.to_string(),
                what: "export",
                handle: ExternalHandle::OpaqueFd,
                device: shared.info.name.clone(),
                why: "no memory type allows the image".into(),
            }
        })?;
        return Ok((req.size, t));
    };
    let m = i.memory;
    let bits = req.memory_type_bits;
    let fits_type = m.memory_type_index < 32 && bits & (1 << m.memory_type_index) != 0;
    if m.allocation_size < req.size || !fits_type {
        return Err(MemoryError::ExternalImportMismatch {
            object: desc.label.to_string(),
            allocation_size: m.allocation_size,
            memory_type_index: m.memory_type_index,
            needed: req.size,
            type_bits: bits,
        });
    }
    Ok((m.allocation_size, m.memory_type_index))
}

/// Creates the external image, allocates its dedicated memory (exported, or imported from
/// `import`'s duplicate fd), binds it and makes the view. Nothing leaks on failure; the
/// duplicate fd is released to Vulkan only once the allocation succeeded.
fn bind_new(
    shared: &Arc<Shared>,
    desc: &ImageDesc<'_>,
    checked: &CheckedImage,
    bits: vk::ExternalMemoryHandleTypeFlags,
    handle: ExternalHandle,
    mut import: Option<Import<'_>>,
) -> Result<Image, MemoryError> {
    let d = &shared.raw;
    let raw = Image::create_raw(shared, desc, checked, Some(bits))?;
    // SAFETY: `raw` was just created on this device.
    let req = unsafe { d.get_image_memory_requirements(raw) };
    let destroy = |e: MemoryError| {
        // SAFETY: the image is unused and has no memory bound.
        unsafe { d.destroy_image(raw, None) };
        Err(e)
    };
    let (size, type_index) = match size_and_type(shared, desc, req, import.as_ref()) {
        Ok(st) => st,
        Err(e) => return destroy(e),
    };
    let heap = match shared
        .heaps
        .reserve(desc.label, MemoryLocation::GpuOnly, size)
    {
        Ok(h) => h,
        Err(e) => return destroy(e),
    };
    let fail = |e: MemoryError| {
        shared.heaps.release(heap, size);
        destroy(e)
    };
    let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().image(raw);
    let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(bits);
    let mut import_info = vk::ImportMemoryFdInfoKHR::default().handle_type(bits);
    let mut alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(size)
        .memory_type_index(type_index)
        .push_next(&mut dedicated);
    alloc = match import.as_ref().and_then(|i| i.dup.as_ref()) {
        Some(fd) => {
            import_info = import_info.fd(fd.as_raw_fd());
            alloc.push_next(&mut import_info)
        }
        None => alloc.push_next(&mut export),
    };
    // SAFETY: size and type checked against the image's requirements; the handle type is
    // one the device supports for this image (checked); an import's fd is kiln's
    // duplicate, alive for the call.
    let memory = match unsafe { d.allocate_memory(&alloc, None) } {
        Ok(m) => m,
        Err(e) => {
            if let Some(i) = import.as_mut() {
                if let Some(dup) = i.dup.take() {
                    release_failed_import(dup, i.original);
                }
            }
            return fail(match &import {
                Some(i) => import_refused(desc.label, i.memory.handle, e),
                None => vk_device_err("vkAllocateMemory")(e).into(),
            });
        }
    };
    if let Some(dup) = import.as_mut().and_then(|i| i.dup.take()) {
        let _owned_by_vulkan = dup.into_raw_fd();
    }
    let free = |e: MemoryError| {
        // SAFETY: nothing uses the memory; the image is destroyed by `fail`.
        unsafe { d.free_memory(memory, None) };
        fail(e)
    };
    // SAFETY: a dedicated allocation of the image's size and an allowed type, at 0.
    if let Err(e) = unsafe { d.bind_image_memory(raw, memory, 0) } {
        return free(vk_device_err("vkBindImageMemory")(e).into());
    }
    let external = ExternalImage {
        memory,
        info: ExternalMemory {
            handle,
            allocation_size: size,
            memory_type_index: type_index,
        },
        exportable: import.is_none(),
        heap: (heap, size),
    };
    match Image::from_external(shared, desc, raw, checked, external) {
        Ok(image) => Ok(image),
        Err(e) => free(e),
    }
}

impl Image {
    /// A new fd of this image's memory (`vkGetMemoryFdKHR`), owned by the caller, and what
    /// an importer needs besides the image's [`ImageDesc`] and [`layout`](Image::layout).
    ///
    /// Errors: `KILN-E163` the image was not made by [`Device::exportable_image`] (an
    /// imported one cannot be exported again); `KILN-E106`, `KILN-E104`.
    pub fn export_memory(&self) -> Result<(OwnedFd, ExternalMemory), MemoryError> {
        let ext = self.external().map(|e| (e.memory, e.info, e.exportable));
        super::export_fd(self.shared(), self.label(), ext, "Device::exportable_image")
    }

    /// How its memory is shared: `Some` for images made by [`Device::exportable_image`] or
    /// `Device::import_image`.
    pub fn external_memory(&self) -> Option<ExternalMemory> {
        self.external().map(|e| e.info)
    }
}
