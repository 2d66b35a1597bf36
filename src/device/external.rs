//! External memory (issue 28): buffers whose memory another API or another `VkDevice`
//! shares through an OS handle (Vulkan spec §11.2.6 "External Memory Handle Types", §11.2.7
//! "Device Memory Allocation"; `VK_KHR_external_memory_fd`, `VK_EXT_external_memory_dma_buf`).
//!
//! - [`Device::exportable_buffer`]: a buffer in a dedicated allocation created exportable
//!   (`VkExportMemoryAllocateInfo`); [`Buffer::export_memory`] hands out a new fd of it
//!   (`vkGetMemoryFdKHR`: each call a new fd, owned by the caller) with what an importer
//!   needs ([`ExternalMemory`]: the handle type, the allocation size, the memory type).
//! - [`Device::import_buffer`]: a buffer bound to memory imported from an fd
//!   (`VkImportMemoryFdInfoKHR`).
//!
//! Ownership of fds: the import takes a *borrowed* fd and passes Vulkan a duplicate of it
//! (`dup`, close-on-exec). A successful import transfers the duplicate's ownership to the
//! implementation (§11.2.7: "Importing memory from a file descriptor transfers ownership
//! of the file descriptor from the application to the Vulkan implementation"), which
//! closes it when the memory is freed; a failed import leaves the duplicate kiln's, and
//! kiln closes it at once. The caller's fd is never closed by kiln either way: it is
//! closed exactly once, by its owner.
//!
//! Drivers differ on a *failed* import: the spec transfers ownership only on success, but
//! lavapipe (Mesa 22.3 and 25.0, `lvp_AllocateMemory`) closes the fd it was given on
//! failure too. So after a failed import kiln closes its duplicate only if the fd number
//! still names the caller's file ([`release_failed_import`]); otherwise the driver closed
//! it and kiln leaves the number alone (closing it could close another thread's new fd).
//! Before any of this, an fd that cannot be an allocation or payload on any driver (not
//! open, a pipe, a socket, a directory) is refused (`KILN-E165`, [`check_fd`]), and so is
//! an opaque fd of another kind of file than the device's own exports (`fd_kind`: handing
//! one to the driver is undefined behaviour).
//!
//! A CUDA program imports an exported buffer with `cuImportExternalMemory`
//! (`CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD`, the size of [`ExternalMemory`],
//! `CUDA_EXTERNAL_MEMORY_DEDICATED`: kiln's exports are dedicated allocations) and maps it
//! with `cuExternalMemoryGetMappedBuffer`; the fd then belongs to CUDA.
//!
//! Every check below runs before the Vulkan call it stands in for: the extension and the
//! handle type's support (`vkGetPhysicalDeviceExternalBufferProperties`), the size and
//! memory type against the buffer's requirements (`vkGetDeviceBufferMemoryRequirements`).

use std::os::fd::{AsRawFd, BorrowedFd, IntoRawFd, OwnedFd};
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use super::buffer::{check_size, External};
use super::{Buffer, BufferDesc, Device, Shared};
use crate::error::{vk_device_err, DeviceError, MemoryError, Result};

mod fd_kind;
mod image;

pub use crate::error::ExternalHandle;
pub(crate) use fd_kind::{check_opaque_semaphore, learn_semaphore, FdKind};
pub(crate) use image::import_image_memory;

/// What an importer needs besides the fd: returned by [`Buffer::export_memory`], given to
/// [`Device::import_buffer`] (or to CUDA: `cuImportExternalMemory`'s `size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExternalMemory {
    /// The handle type of the fd.
    pub handle: ExternalHandle,
    /// Bytes of the allocation (`VkMemoryAllocateInfo::allocationSize`): at least the
    /// buffer's size, rounded up as the driver requires.
    pub allocation_size: u64,
    /// The memory type the exporter allocated from: an opaque-fd import must use the same
    /// (VUID-VkMemoryAllocateInfo-allocationSize-01742), which on the same physical device
    /// is the same index.
    pub memory_type_index: u32,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `new` (or an export's value) and these.
setters! { ExternalMemory {
    handle: ExternalHandle,
    allocation_size: u64,
    memory_type_index: u32,
} }

impl ExternalMemory {
    /// An fd's description for [`Device::import_buffer`] (`#[non_exhaustive]`: a later kiln
    /// may add fields with defaults), for memory another API exported: its handle type,
    /// allocation size in bytes, and the memory type index the exporter allocated from.
    pub fn new(handle: ExternalHandle, allocation_size: u64, memory_type_index: u32) -> Self {
        ExternalMemory {
            handle,
            allocation_size,
            memory_type_index,
        }
    }
}

/// The usage every external buffer gets (as kiln's buffers: transfers always work).
fn usage_of(desc: &BufferDesc<'_>) -> vk::BufferUsageFlags {
    desc.usage | vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST
}

/// Refuses what no external buffer of `handle` on this device can be, before any Vulkan
/// call: the extension, the handle type, the location, the size; then asks the driver
/// whether the handle type can be exported (or imported) for this usage.
fn check(
    shared: &Shared,
    desc: &BufferDesc<'_>,
    handle: ExternalHandle,
    export: bool,
) -> Result<vk::ExternalMemoryHandleTypeFlags, MemoryError> {
    let what = if export { "export" } else { "import" };
    let unsupported = |why: String| MemoryError::ExternalHandleUnsupported {
        object: desc.label.to_string(),
        what,
        handle,
        device: shared.info.name.clone(),
        why,
    };
    let Some(bits) = handle.memory_bits() else {
        return Err(unsupported(
            "it is a semaphore handle type, not a memory one".into(),
        ));
    };
    let f = &shared.features;
    let (on, ext) = match handle {
        ExternalHandle::DmaBuf => (f.external_memory_dma_buf, "VK_EXT_external_memory_dma_buf"),
        _ => (f.external_memory_fd, "VK_KHR_external_memory_fd"),
    };
    if !on {
        return Err(unsupported(format!("the device lacks {ext}")));
    }
    if desc.location != MemoryLocation::GpuOnly {
        return Err(unsupported(format!(
            "external buffers are device-local (MemoryLocation::GpuOnly), not {:?}",
            desc.location
        )));
    }
    if desc.size == 0 {
        return Err(MemoryError::ZeroSizedBuffer {
            object: desc.label.to_string(),
        });
    }
    check_size(shared, desc.label, desc.size)?;
    let info = vk::PhysicalDeviceExternalBufferInfo::default()
        .usage(usage_of(desc))
        .handle_type(bits);
    let mut props = vk::ExternalBufferProperties::default();
    // SAFETY: a plain query on the device's physical device; locals outlive the call.
    unsafe {
        shared
            .instance
            .raw
            .get_physical_device_external_buffer_properties(shared.physical, &info, &mut props)
    };
    let features = props.external_memory_properties.external_memory_features;
    let needed = if export {
        vk::ExternalMemoryFeatureFlags::EXPORTABLE
    } else {
        vk::ExternalMemoryFeatureFlags::IMPORTABLE
    };
    if !features.contains(needed) {
        return Err(unsupported(format!(
            "vkGetPhysicalDeviceExternalBufferProperties gives {features:?} for usage {:?}, \
             without {needed:?}",
            usage_of(desc)
        )));
    }
    Ok(bits)
}

/// The memory type kiln allocates external buffers from: the first device-local type the
/// buffer allows (the exporter and an importer on the same physical device choose the same).
pub(crate) fn memory_type(shared: &Shared, bits: u32) -> Option<u32> {
    // SAFETY: a plain query on the device's physical device.
    let props = unsafe {
        shared
            .instance
            .raw
            .get_physical_device_memory_properties(shared.physical)
    };
    let types = props.memory_types_as_slice();
    let allowed = |i: usize| bits & (1 << i) != 0;
    (0..types.len())
        .find(|&i| {
            allowed(i)
                && types[i]
                    .property_flags
                    .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
        })
        .or_else(|| (0..types.len()).find(|&i| allowed(i)))
        .and_then(|i| u32::try_from(i).ok())
}

impl Device {
    /// A buffer whose memory can be exported as `handle` ([`Buffer::export_memory`]) to
    /// another `VkDevice`, process or API (CUDA: `cuImportExternalMemory`). Device-local,
    /// in a dedicated allocation; otherwise a buffer like any other (bind it, copy it,
    /// upload and read it).
    ///
    /// Errors: `KILN-E163` the device cannot export `handle` (extension missing, handle
    /// type not exportable for this usage, a semaphore handle type, a location other than
    /// `GpuOnly`); `KILN-E152` size 0; `KILN-E159`, `KILN-E162` too large; `KILN-E154` heap
    /// budget exhausted; `KILN-E106` out of memory; `KILN-E104` other failures.
    pub fn exportable_buffer(
        &self,
        desc: &BufferDesc<'_>,
        handle: ExternalHandle,
    ) -> Result<Buffer, MemoryError> {
        exportable(&self.shared, desc, handle)
    }

    /// A buffer bound to the memory behind `fd` (exported by [`Buffer::export_memory`]
    /// of this or another kiln device on the same physical device, or by another API),
    /// described by `memory`. `fd` stays the caller's: kiln imports a duplicate (see the
    /// module docs of `device::external`), so the caller closes `fd` as before, whether the
    /// import succeeded or not. The memory lives until the buffer drops (and its last
    /// submission completed); the exporter's buffer and this one alias: order their uses
    /// with semaphores.
    ///
    /// Errors: `KILN-E163` the device cannot import `memory.handle` (as
    /// [`exportable_buffer`](Self::exportable_buffer)); `KILN-E164` `memory`'s size or
    /// memory type does not fit a buffer of `desc` (checked before the import);
    /// `KILN-E165` `fd` is not memory of that handle type that this device can import (a
    /// pipe, socket or directory; an opaque fd of another kind of file than this device's
    /// own exports, checked before the driver sees it; the driver's
    /// `VK_ERROR_INVALID_EXTERNAL_HANDLE`, or NVIDIA's `VK_ERROR_OUT_OF_DEVICE_MEMORY` for an
    /// opaque fd); `KILN-E152`, `KILN-E159`,
    /// `KILN-E162`, `KILN-E154`, `KILN-E106`, `KILN-E104` as for any buffer.
    pub fn import_buffer(
        &self,
        desc: &BufferDesc<'_>,
        fd: BorrowedFd<'_>,
        memory: &ExternalMemory,
    ) -> Result<Buffer, MemoryError> {
        let shared = &self.shared;
        let bits = check(shared, desc, memory.handle, false)?;
        check_fd(desc.label, fd, memory.handle)?;
        fd_kind::check_opaque(shared, desc.label, fd, memory.handle)?;
        let mut allowed = u32::MAX;
        if memory.handle == ExternalHandle::DmaBuf {
            fd_kind::check_dma_buf(desc.label, fd, memory.handle)?;
            allowed = dma_buf_types(shared, desc, fd)?;
        }
        let dup = fd
            .try_clone_to_owned()
            .map_err(|e| MemoryError::InvalidExternalHandle {
                object: desc.label.to_string(),
                handle: memory.handle,
                detail: format!("the fd cannot be duplicated: {e}"),
            })?;
        let check = ImportCheck {
            memory: *memory,
            allowed,
            dup: Some(dup),
            original: fd,
        };
        bind_new(shared, desc, bits, memory.handle, Some(check))
    }
}

/// [`Device::exportable_buffer`]'s body.
fn exportable(
    shared: &Arc<Shared>,
    desc: &BufferDesc<'_>,
    handle: ExternalHandle,
) -> Result<Buffer, MemoryError> {
    let bits = check(shared, desc, handle, true)?;
    bind_new(shared, desc, bits, handle, None)
}

/// `KILN-E165` for an fd that is no exported allocation or payload on any driver: not
/// open, or a pipe, socket or directory (exports are memfds, DMA-BUFs, driver character
/// devices or anonymous inodes). Read through `/proc/self/fd`, which follows the fd to its
/// file without taking a new one.
pub(crate) fn check_fd(
    object: &str,
    fd: BorrowedFd<'_>,
    handle: ExternalHandle,
) -> Result<(), MemoryError> {
    use std::os::unix::fs::FileTypeExt;
    let bad = |detail: String| MemoryError::InvalidExternalHandle {
        object: object.to_string(),
        handle,
        detail,
    };
    let meta = std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .map_err(|e| bad(format!("the fd cannot be inspected: {e}")))?;
    let t = meta.file_type();
    let kind = if t.is_fifo() {
        "a pipe"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        return Ok(());
    };
    Err(bad(format!("it is {kind}")))
}

/// The (device, inode) of the file an fd number names now, if it is open.
fn file_id(fd: i32) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(format!("/proc/self/fd/{fd}")).ok()?;
    Some((m.dev(), m.ino()))
}

/// After a failed import of `dup` (kiln's duplicate of `original`): closes `dup` if its
/// number still names `original`'s file, else leaves it (the driver closed it; see the
/// module docs).
pub(crate) fn release_failed_import(dup: OwnedFd, original: BorrowedFd<'_>) {
    let ours = file_id(dup.as_raw_fd());
    if ours.is_some() && ours == file_id(original.as_raw_fd()) {
        drop(dup);
    } else {
        let _closed_by_the_driver = dup.into_raw_fd();
    }
}

/// For an import: what the caller said of the memory, the types the fd allows, and the
/// duplicate fd handed to Vulkan (released to it on success, closed by kiln on failure).
struct ImportCheck<'fd> {
    memory: ExternalMemory,
    allowed: u32,
    dup: Option<OwnedFd>,
    original: BorrowedFd<'fd>,
}

/// The memory types a DMA-BUF fd can be imported as (`vkGetMemoryFdPropertiesKHR`);
/// `KILN-E165` where the fd is no DMA-BUF the device can import.
fn dma_buf_types(
    shared: &Shared,
    desc: &BufferDesc<'_>,
    fd: BorrowedFd<'_>,
) -> Result<u32, MemoryError> {
    let ext = super::loader::walking(|| {
        ash::khr::external_memory_fd::Device::new(&shared.instance.raw, &shared.raw)
    });
    let mut props = vk::MemoryFdPropertiesKHR::default();
    // SAFETY: the extension is enabled (checked); a query on an fd the caller keeps open
    // for the call; it takes no ownership.
    unsafe {
        (ext.fp().get_memory_fd_properties_khr)(
            shared.raw.handle(),
            vk::ExternalMemoryHandleTypeFlags::DMA_BUF_EXT,
            fd.as_raw_fd(),
            &mut props,
        )
    }
    .result()
    .map_err(|e| MemoryError::InvalidExternalHandle {
        object: desc.label.to_string(),
        handle: ExternalHandle::DmaBuf,
        detail: format!("vkGetMemoryFdPropertiesKHR: {e:?}"),
    })?;
    Ok(props.memory_type_bits)
}

/// Creates an external buffer of `desc` and handle type `bits`, allocates its dedicated
/// memory (an export when `import` is `None`, an import of `import`'s fd otherwise) and
/// binds it. Nothing leaks on failure; the import's duplicate fd is released to Vulkan
/// only once the allocation succeeded.
fn bind_new(
    shared: &Arc<Shared>,
    desc: &BufferDesc<'_>,
    bits: vk::ExternalMemoryHandleTypeFlags,
    handle: ExternalHandle,
    mut import: Option<ImportCheck<'_>>,
) -> Result<Buffer, MemoryError> {
    let d = &shared.raw;
    let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(bits);
    let info = vk::BufferCreateInfo::default()
        .size(desc.size)
        .usage(usage_of(desc))
        .sharing_mode(shared.sharing.mode())
        .queue_family_indices(shared.sharing.families())
        .push_next(&mut external);
    let req_info = vk::DeviceBufferMemoryRequirements::default().create_info(&info);
    let mut req = vk::MemoryRequirements2::default();
    // SAFETY: a query with a valid create info (checked sizes and usage); no object made.
    unsafe { d.get_device_buffer_memory_requirements(&req_info, &mut req) };
    let req = req.memory_requirements;
    let (size, type_index) = size_and_type(shared, desc, handle, req, import.as_ref())?;
    let heap = shared.heaps.reserve(desc.label, desc.location, size)?;
    let fail = |e: MemoryError| {
        shared.heaps.release(heap, size);
        Err(e)
    };
    // SAFETY: valid create info (checked above); locals outlive the call.
    let raw = match unsafe { d.create_buffer(&info, None) } {
        Ok(b) => b,
        Err(e) => return fail(vk_device_err("vkCreateBuffer")(e).into()),
    };
    let memory = match allocate_dedicated(shared, desc, raw, (size, type_index), bits, &mut import)
    {
        Ok(m) => m,
        Err(e) => return fail(e),
    };
    // Imported: the implementation owns the duplicate now and closes it with the memory.
    if let Some(dup) = import.as_mut().and_then(|c| c.dup.take()) {
        let _owned_by_vulkan = dup.into_raw_fd();
    }
    // SAFETY: a dedicated allocation of the buffer's size and an allowed type, at 0.
    if let Err(e) = unsafe { d.bind_buffer_memory(raw, memory, 0) } {
        // SAFETY: neither is in use.
        unsafe {
            d.destroy_buffer(raw, None);
            d.free_memory(memory, None);
        }
        return fail(vk_device_err("vkBindBufferMemory")(e).into());
    }
    shared.set_name(raw, desc.label);
    let external = External {
        memory,
        info: ExternalMemory {
            handle,
            allocation_size: size,
            memory_type_index: type_index,
        },
        exportable: import.is_none(),
    };
    Ok(Buffer::from_external(
        shared,
        desc,
        raw,
        usage_of(desc),
        external,
        (heap, size),
    ))
}

/// Allocates the dedicated memory of external buffer `raw` (`(size, type_index)`): an
/// export of handle types `bits` when `import` is `None`, else an import of its duplicate
/// fd. On failure the buffer is destroyed and an import's duplicate closed once (by kiln
/// or the driver); the caller releases the heap reservation.
///
/// Errors: `KILN-E165` (an import the driver refuses as an invalid external handle),
/// `KILN-E104`/`KILN-E106` other failures.
fn allocate_dedicated(
    shared: &Shared,
    desc: &BufferDesc<'_>,
    raw: vk::Buffer,
    (size, type_index): (u64, u32),
    bits: vk::ExternalMemoryHandleTypeFlags,
    import: &mut Option<ImportCheck<'_>>,
) -> Result<vk::DeviceMemory, MemoryError> {
    let d = &shared.raw;
    let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().buffer(raw);
    let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(bits);
    let mut import_info = vk::ImportMemoryFdInfoKHR::default().handle_type(bits);
    let mut alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(size)
        .memory_type_index(type_index)
        .push_next(&mut dedicated);
    alloc = match import.as_ref().and_then(|c| c.dup.as_ref()) {
        Some(fd) => {
            import_info = import_info.fd(fd.as_raw_fd());
            alloc.push_next(&mut import_info)
        }
        None => alloc.push_next(&mut export),
    };
    // SAFETY: size and type checked against the buffer's requirements; the export or import
    // struct is of a handle type the device supports for this usage (checked); an import's
    // fd is kiln's duplicate, alive for the call.
    match unsafe { d.allocate_memory(&alloc, None) } {
        Ok(m) => Ok(m),
        Err(e) => {
            // SAFETY: the buffer has no memory and is unused.
            unsafe { d.destroy_buffer(raw, None) };
            // A failed import: kiln's duplicate is closed once, by kiln or by the driver.
            if let Some(c) = import.as_mut() {
                if let Some(dup) = c.dup.take() {
                    release_failed_import(dup, c.original);
                }
            }
            Err(match &import {
                Some(c) => import_refused(desc.label, c.memory.handle, e),
                None => vk_device_err("vkAllocateMemory")(e).into(),
            })
        }
    }
}

/// The error of an import's failed `vkAllocateMemory`: `KILN-E165` where the driver refuses
/// the fd — `VK_ERROR_INVALID_EXTERNAL_HANDLE` as the spec says (§11.2.7), or, for an
/// opaque fd, `VK_ERROR_OUT_OF_DEVICE_MEMORY`, NVIDIA's answer (driver 580) to an fd that
/// is none of its allocations (an import maps memory that exists; it allocates none) —
/// else what [`vk_err`] makes of it. A DMA-BUF fd was accepted by
/// `vkGetMemoryFdPropertiesKHR` before (`dma_buf_types`), so its out-of-memory is one
/// (`KILN-E106`), not a refused fd.
pub(crate) fn import_refused(
    object: &str,
    handle: ExternalHandle,
    result: vk::Result,
) -> MemoryError {
    let refused = result == vk::Result::ERROR_INVALID_EXTERNAL_HANDLE
        || (result == vk::Result::ERROR_OUT_OF_DEVICE_MEMORY && handle == ExternalHandle::OpaqueFd);
    if !refused {
        return vk_device_err("vkAllocateMemory")(result).into();
    }
    MemoryError::InvalidExternalHandle {
        object: object.to_string(),
        handle,
        detail: format!("vkAllocateMemory: {result:?}"),
    }
}

/// The allocation size and memory type of an export (the buffer's requirements, the first
/// device-local type) or an import (what the caller said, checked against the requirements
/// and the types the fd allows: `KILN-E164`).
fn size_and_type(
    shared: &Shared,
    desc: &BufferDesc<'_>,
    handle: ExternalHandle,
    req: vk::MemoryRequirements,
    import: Option<&ImportCheck<'_>>,
) -> Result<(u64, u32), MemoryError> {
    let Some(c) = import else {
        let t = memory_type(shared, req.memory_type_bits).ok_or_else(|| {
            MemoryError::ExternalHandleUnsupported {
                object: desc.label.to_string(),
                what: "export",
                handle,
                device: shared.info.name.clone(),
                why: "no memory type allows the buffer".into(),
            }
        })?;
        return Ok((req.size, t));
    };
    let m = c.memory;
    let bits = req.memory_type_bits & c.allowed;
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

/// A new fd of an exportable buffer's or image's memory (`vkGetMemoryFdKHR`), owned by
/// the caller, and what an importer needs. `external` is the object's memory, how it is
/// shared and whether it was made exportable (`None`: not external); `made_by` names the
/// function that makes it exportable, for the error.
///
/// Errors: `KILN-E163` not made exportable (an imported object cannot be exported again);
/// `KILN-E106`, `KILN-E104` from the driver.
pub(super) fn export_fd(
    shared: &Shared,
    label: &str,
    external: Option<(vk::DeviceMemory, ExternalMemory, bool)>,
    made_by: &str,
) -> Result<(OwnedFd, ExternalMemory), MemoryError> {
    let Some((memory, info, true)) = external else {
        return Err(MemoryError::ExternalHandleUnsupported {
            object: label.to_string(),
            what: "export",
            handle: external.map_or(ExternalHandle::OpaqueFd, |e| e.1.handle),
            device: shared.info.name.clone(),
            why: format!("it was not created by {made_by}"),
        });
    };
    let Some(bits) = info.handle.memory_bits() else {
        return Err(DeviceError::Internal {
            what: "an exported memory of a semaphore handle type",
        }
        .into());
    };
    let fns = super::loader::walking(|| {
        ash::khr::external_memory_fd::Device::new(&shared.instance.raw, &shared.raw)
    });
    let get = vk::MemoryGetFdInfoKHR::default()
        .memory(memory)
        .handle_type(bits);
    // SAFETY: the memory was allocated exportable as `bits` on this device (the extension
    // is enabled: checked at creation); the new fd is the caller's.
    let fd = unsafe { fns.get_memory_fd(&get) }.map_err(vk_device_err("vkGetMemoryFdKHR"))?;
    // SAFETY: vkGetMemoryFdKHR returned a new fd that nothing else owns.
    let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    if info.handle == ExternalHandle::OpaqueFd {
        fd_kind::learn(shared, std::os::fd::AsFd::as_fd(&fd));
    }
    Ok((fd, info))
}

impl Buffer {
    /// A new fd of this buffer's memory (`vkGetMemoryFdKHR`), owned by the caller (close
    /// it, or hand it to an importer: `Device::import_buffer`, CUDA's
    /// `cuImportExternalMemory`, which then owns it), and what the importer needs.
    ///
    /// Errors: `KILN-E163` the buffer was not made by
    /// [`Device::exportable_buffer`](crate::Device::exportable_buffer) (an imported one
    /// cannot be exported again); `KILN-E106` out of fds or memory; `KILN-E104` other
    /// failures.
    pub fn export_memory(&self) -> Result<(OwnedFd, ExternalMemory), MemoryError> {
        let ext = self.external().map(|e| (e.memory, e.info, e.exportable));
        export_fd(
            self.shared(),
            self.label(),
            ext,
            "Device::exportable_buffer",
        )
    }

    /// How its memory is shared: `Some` for buffers made by
    /// [`Device::exportable_buffer`](crate::Device::exportable_buffer) or
    /// [`Device::import_buffer`](crate::Device::import_buffer).
    pub fn external_memory(&self) -> Option<ExternalMemory> {
        self.external().map(|e| e.info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_import_is_e165_whichever_way_the_driver_says_it() {
        for (result, code) in [
            (vk::Result::ERROR_INVALID_EXTERNAL_HANDLE, "KILN-E165"),
            // NVIDIA 580.159.04 on an fd that is none of its allocations.
            (vk::Result::ERROR_OUT_OF_DEVICE_MEMORY, "KILN-E165"),
            (vk::Result::ERROR_OUT_OF_HOST_MEMORY, "KILN-E106"),
            (vk::Result::ERROR_DEVICE_LOST, "KILN-E105"),
            (vk::Result::ERROR_UNKNOWN, "KILN-E104"),
        ] {
            let e = import_refused("x", ExternalHandle::OpaqueFd, result);
            assert_eq!(e.code(), code, "{result:?}: {e}");
            if code == "KILN-E165" {
                assert!(e.to_string().contains(&format!("{result:?}")), "{e}");
            }
        }
    }

    /// A DMA-BUF fd passed `vkGetMemoryFdPropertiesKHR` before its import: an
    /// out-of-memory then is memory running out (`KILN-E106`), not an fd kiln tells the
    /// caller is no importable memory (was `KILN-E165`); a refused handle stays `KILN-E165`.
    #[test]
    fn a_dma_buf_import_out_of_memory_is_out_of_memory() {
        for (result, code) in [
            (vk::Result::ERROR_OUT_OF_DEVICE_MEMORY, "KILN-E106"),
            (vk::Result::ERROR_INVALID_EXTERNAL_HANDLE, "KILN-E165"),
        ] {
            let e = import_refused("x", ExternalHandle::DmaBuf, result);
            assert_eq!(e.code(), code, "{result:?}: {e}");
        }
    }
}
