//! Host memory the GPU copies from and to at bus speed: [`HostBuffer`] (CUDA's pinned
//! memory) and imported user memory (`VK_EXT_external_memory_host`).
//!
//! A host buffer is a `VkBuffer` in host-visible, host-coherent memory (host-cached where
//! the device has it: `MemoryLocation::GpuToCpu`, system RAM), mapped for its whole life.
//! The host reads and writes it through slices; the GPU copies between it and device
//! buffers with the DMA engines ([`Queue::upload_from_host`](crate::Queue::upload_from_host),
//! [`Queue::read_to_host`](crate::Queue::read_to_host)): no staging copy, no memcpy by kiln.
//!
//! **Host access is ordered against the GPU by the buffer's stamps.** Every submission that
//! copies from or to a host buffer stamps it (per queue, used and written);
//! [`HostBuffer::as_slice`] first waits for the submissions that write it,
//! [`HostBuffer::as_mut_slice`] for all that use it. A copy *into* a host buffer takes it
//! by `&mut` (no slice of it can be alive when the copy is submitted), a copy *from* it by
//! `&` (other readers may stay). So a slice never aliases memory the GPU may write, nor
//! a mutable slice memory it may read, whether or not the returned
//! [`Transfer`](crate::Transfer) is kept, waited or forgotten.
//!
//! **Imported memory** ([`Device::import_host_memory`](crate::Device::import_host_memory))
//! wraps the caller's own page-aligned bytes for the length of a closure: at its end kiln
//! waits for every submission that used them and destroys the import, so the memory is
//! the caller's alone again however the handle was moved inside the closure. An imported
//! buffer has no host access of its own (`KILN-E161`): the caller reads and writes its
//! slice after the closure.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use gpu_allocator::vulkan::Allocation;
use gpu_allocator::MemoryLocation;

use super::host_memory::{HostBufferMemory, HostRegion};
use crate::device::{allocate_bound, free_bound, Device, ResourceStamps, Shared};
use crate::error::{vk_err, DeviceError, Error, Result};

/// Host memory of one host buffer.
enum Memory {
    /// Allocated by kiln (gpu-allocator), with its heap reservation.
    Allocated {
        allocation: Allocation,
        heap: (usize, u64),
    },
    /// The caller's memory, imported (`VkImportMemoryHostPointerInfoEXT`).
    Imported { memory: vk::DeviceMemory },
    /// Host pages kiln mapped itself, imported (`HostBufferMemory::Imported`), with the
    /// heap reservation; the region is unmapped after the memory is freed.
    Mapped {
        memory: vk::DeviceMemory,
        region: HostRegion,
        heap: (usize, u64),
    },
}

/// The Vulkan objects of a host buffer; `None` once destroyed (an import whose scope ended).
struct Objects {
    raw: vk::Buffer,
    memory: Memory,
}

pub(crate) struct HostInner {
    shared: Arc<Shared>,
    /// Held while a submission uses the buffer (checked alive, submitted, stamped) and
    /// while an import ends: no copy is submitted after its memory was released.
    objects: Mutex<Option<Objects>>,
    ptr: NonNull<u8>,
    len: u64,
    label: String,
    imported: bool,
    /// The property flags of its memory type.
    properties: vk::MemoryPropertyFlags,
    stamps: ResourceStamps,
}

// SAFETY: `ptr` is a mapping (or the caller's memory) that the inner owns or borrows for its
// whole life; host access through it is ordered by the stamps and by `&`/`&mut` of the
// owning `HostBuffer` (see the module docs), never by which thread holds the inner.
unsafe impl Send for HostInner {}
// SAFETY: as above; every shared mutable state is behind a mutex or atomics.
unsafe impl Sync for HostInner {}

/// Host-visible, host-cached memory that the GPU copies from and to with its DMA engines:
/// the equivalent of CUDA's pinned (page-locked) memory. See the module docs for how host
/// access is ordered against the GPU.
///
/// Made by [`Device::host_buffer`], [`Device::host_buffer_from_slice`] or, wrapping the
/// caller's memory, [`Device::import_host_memory`]. Not `Clone`: its one handle is what
/// `&`/`&mut` borrow.
pub struct HostBuffer {
    inner: Arc<HostInner>,
}

impl std::fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuffer")
            .field("label", &self.inner.label)
            .field("len", &self.inner.len)
            .field("imported", &self.inner.imported)
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl HostInner {
    /// Waits until no submission uses the buffer, past the device's wait timeout: the GPU
    /// may still write imported memory that its owner frees once kiln lets go of it, so a
    /// timeout (a warning each time) is no end; the work finished, or the device was lost
    /// (a lost device writes nothing more).
    fn wait_unused(&self) -> std::result::Result<(), DeviceError> {
        loop {
            match self.shared.wait_stamps(&self.stamps.used) {
                Err(DeviceError::Timeout { .. }) => log::warn!(
                    "kiln: imported host memory `{}` still in use by the GPU after the wait \
                     timeout; waiting on (the memory is its owner's once kiln lets go)",
                    self.label
                ),
                done => return done,
            }
        }
    }

    /// Ends an import wherever its handle went: no new submission can use it once the
    /// objects are gone, and those made so far are waited for first ([`wait_unused`]). On
    /// a lost device the objects leak rather than being destroyed in its uncertain state (a
    /// lost device writes the caller's memory no more).
    ///
    /// [`wait_unused`]: Self::wait_unused
    fn end_import(&self) -> std::result::Result<(), DeviceError> {
        let mut objects = lock(&self.objects);
        let waited = self.wait_unused();
        if let Some(o) = objects.take() {
            if waited.is_ok() {
                Self::destroy(&self.shared, &self.label, o);
            } else {
                log::error!(
                    "kiln: leaking imported host memory `{}` after a failed wait",
                    self.label
                );
                std::mem::forget(o);
            }
        }
        waited
    }

    /// Destroys the objects (none of whose submissions may be pending).
    fn destroy(shared: &Shared, label: &str, objects: Objects) {
        match objects.memory {
            Memory::Allocated { allocation, heap } => {
                free_bound(shared, objects.raw, allocation, heap, label)
            }
            Memory::Imported { memory } => {
                // SAFETY: no pending submission uses the buffer or the memory (the caller
                // waited for its stamps); neither is used again.
                unsafe {
                    shared.raw.destroy_buffer(objects.raw, None);
                    shared.raw.free_memory(memory, None);
                }
            }
            Memory::Mapped {
                memory,
                region,
                heap,
            } => {
                // SAFETY: as above (the buffer was retired: every submission made before
                // its drop finished); the region is unmapped only after the import is freed.
                unsafe {
                    shared.raw.destroy_buffer(objects.raw, None);
                    shared.raw.free_memory(memory, None);
                }
                drop(region);
                shared.heaps.release(heap.0, heap.1);
            }
        }
    }
}

impl Drop for HostInner {
    fn drop(&mut self) {
        let Some(objects) = lock(&self.objects).take() else {
            return;
        };
        if self.imported {
            // An import ends with its scope (`EndImport`), which took the objects: not
            // reached. Were it, leaking is the one safe end (the caller's memory is theirs).
            log::error!("kiln: leaking imported host buffer `{}`", self.label);
            std::mem::forget(objects);
            return;
        }
        let label = std::mem::take(&mut self.label);
        // Deferred like a buffer's: destroyed once every submission made so far finished.
        self.shared
            .retire(move |s| HostInner::destroy(s, &label, objects));
    }
}

/// A host buffer held for one submission: alive (not an ended import) until dropped.
pub(crate) struct HostUse<'h> {
    objects: MutexGuard<'h, Option<Objects>>,
    inner: &'h HostInner,
}

impl HostUse<'_> {
    /// The `VkBuffer`.
    pub(crate) fn raw(&self) -> vk::Buffer {
        self.objects.as_ref().map_or(vk::Buffer::null(), |o| o.raw)
    }

    /// The stamps to record the submission in.
    pub(crate) fn stamps(&self) -> &ResourceStamps {
        &self.inner.stamps
    }
}

impl HostBuffer {
    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.inner.len
    }

    /// Whether the buffer has no bytes (never: a host buffer has at least one).
    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    /// The label given at creation (shown in errors and validation messages).
    pub fn label(&self) -> &str {
        &self.inner.label
    }

    /// Whether the buffer's memory is imported host memory (`VK_EXT_external_memory_host`,
    /// `VkImportMemoryHostPointerInfoEXT`): the caller's own memory
    /// ([`Device::import_host_memory`]) or host pages kiln mapped itself
    /// ([`HostBufferMemory::Imported`](crate::HostBufferMemory::Imported)). Which of the
    /// two is [`is_caller_memory`](Self::is_caller_memory); `false` for the driver's memory
    /// ([`HostBufferMemory::Driver`](crate::HostBufferMemory::Driver)).
    pub fn is_imported(&self) -> bool {
        self.inner.imported
            || matches!(
                lock(&self.inner.objects).as_ref().map(|o| &o.memory),
                Some(Memory::Mapped { .. })
            )
    }

    /// Whether the buffer wraps the caller's memory ([`Device::import_host_memory`]): it
    /// has no host access of its own (`KILN-E161`; the caller reads and writes the slice it
    /// was imported from) and ends with the import closure. Host buffers in kiln's own
    /// memory, imported or not, are not.
    pub fn is_caller_memory(&self) -> bool {
        self.inner.imported
    }

    /// The property flags of the memory type behind the buffer (`HOST_VISIBLE |
    /// HOST_COHERENT`, with `HOST_CACHED` where the device has such a type; Vulkan spec
    /// §11.2.1): whether host reads of it are cached.
    pub fn memory_properties(&self) -> vk::MemoryPropertyFlags {
        self.inner.properties
    }

    /// Holds the buffer for a submission. Errors: `KILN-E161` an import whose scope ended;
    /// `KILN-E109` a host buffer of another device.
    pub(crate) fn hold(&self, shared: &Shared) -> Result<HostUse<'_>> {
        if !std::ptr::eq(&*self.inner.shared, shared) {
            return Err(Error::ForeignObject {
                object: format!("host buffer `{}`", self.inner.label),
            });
        }
        let objects = lock(&self.inner.objects);
        if objects.is_none() {
            return Err(self.ended());
        }
        Ok(HostUse {
            objects,
            inner: &self.inner,
        })
    }

    fn ended(&self) -> Error {
        Error::ImportedHostMemory {
            object: self.inner.label.clone(),
            detail: "its import scope has ended; import the memory again",
        }
    }

    /// Host access: imported memory has none (the importer reads and writes its own slice).
    fn host_access(&self) -> Result<()> {
        if self.inner.imported {
            return Err(Error::ImportedHostMemory {
                object: self.inner.label.clone(),
                detail: "it has no host access of its own; read or write the slice it was \
                         imported from once the import closure has returned",
            });
        }
        Ok(())
    }

    /// The bytes, once every pending submission that writes them (a readback into this
    /// buffer) has finished. No copy into the buffer can be submitted while the slice is
    /// alive (that takes `&mut self`).
    ///
    /// Errors: `KILN-E161` imported memory; `KILN-E105`/`KILN-E108` the wait failed.
    pub fn as_slice(&self) -> Result<&[u8]> {
        self.host_access()?;
        self.inner.shared.wait_stamps(&self.inner.stamps.written)?;
        // SAFETY: the mapping covers `len` bytes for the buffer's life; no submission that
        // writes it is pending (waited above) and none can be made while `&self` is
        // borrowed (they take `&mut`). Host-coherent memory: device writes are visible
        // after the wait (each submission ends with a device→host barrier).
        Ok(unsafe { std::slice::from_raw_parts(self.inner.ptr.as_ptr(), self.inner.len as usize) })
    }

    /// The bytes for writing, once every pending submission that uses them has finished.
    ///
    /// Errors: `KILN-E161` imported memory; `KILN-E105`/`KILN-E108` the wait failed.
    pub fn as_mut_slice(&mut self) -> Result<&mut [u8]> {
        self.host_access()?;
        self.inner.shared.wait_stamps(&self.inner.stamps.used)?;
        // SAFETY: as in `as_slice`; `&mut self` excludes every other slice and every new
        // submission that uses the buffer; host-coherent memory needs no flush.
        Ok(unsafe {
            std::slice::from_raw_parts_mut(self.inner.ptr.as_ptr(), self.inner.len as usize)
        })
    }

    /// Copies `data` to byte `offset` (several threads for large copies; see
    /// `parallel_copy`).
    ///
    /// Errors: `KILN-E151` past the end; as [`as_mut_slice`](Self::as_mut_slice).
    pub fn write<T: bytemuck::Pod>(&mut self, offset: u64, data: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let range = self.range(offset, bytes.len())?;
        let threads = super::chunks::threads(&self.inner.shared);
        super::chunks::parallel_copy(&mut self.as_mut_slice()?[range], bytes, threads);
        Ok(())
    }

    /// Copies `size_of_val(out)` bytes from byte `offset` into `out`.
    ///
    /// Errors: `KILN-E151` past the end; as [`as_slice`](Self::as_slice).
    pub fn read_into<T: bytemuck::Pod>(&self, offset: u64, out: &mut [T]) -> Result<()> {
        let out: &mut [u8] = bytemuck::cast_slice_mut(out);
        let range = self.range(offset, out.len())?;
        let threads = super::chunks::threads(&self.inner.shared);
        super::chunks::parallel_copy(out, &self.as_slice()?[range], threads);
        Ok(())
    }

    /// `offset..offset + len` as indices, inside the buffer. Errors: `KILN-E151`.
    pub(crate) fn range(&self, offset: u64, len: usize) -> Result<std::ops::Range<usize>> {
        match offset.checked_add(len as u64) {
            Some(end) if end <= self.inner.len => Ok(offset as usize..end as usize),
            _ => Err(Error::BufferOverflow {
                object: self.inner.label.clone(),
                capacity: self.inner.len,
                offset,
                requested: len as u64,
            }),
        }
    }
}

impl Device {
    /// Creates a host buffer of `size` bytes: host-visible, host-coherent (host-cached where
    /// the device has it) memory the GPU copies from and to at bus speed, zero-filled.
    /// Its memory is the driver's or host pages kiln maps and imports, as
    /// `DeviceDesc::host_buffer_memory` says ([`HostBufferMemory`]; `Auto` falls back to
    /// the driver's memory when mapping or importing fails).
    ///
    /// Errors: `KILN-E152` size 0, `KILN-E159` beyond `maxBufferSize`, `KILN-E162` beyond
    /// `maxMemoryAllocationSize`, `KILN-E154` more than the heap has left, `KILN-E150`
    /// the allocation failed; with `HostBufferMemory::Imported`: `KILN-E107` the device
    /// lacks `VK_EXT_external_memory_host`, `KILN-E166` the host pages could not be
    /// mapped, `KILN-E106`/`KILN-E104` the driver refused the import.
    pub fn host_buffer(&self, label: &str, size: u64) -> Result<HostBuffer> {
        if size == 0 {
            return Err(Error::ZeroSizedBuffer {
                object: label.to_string(),
            });
        }
        let shared = &self.shared;
        crate::device::check_buffer_size(shared, label, size)?;
        let mode = super::desc::settings(shared).host_buffer_memory();
        if mode.imports() {
            match mapped(shared, label, size) {
                Ok(h) => return Ok(h),
                Err(e) if mode == HostBufferMemory::Imported || e.code() == "KILN-E154" => {
                    return Err(e)
                }
                Err(e) => log::debug!("kiln: host buffer `{label}` in driver memory: {e}"),
            }
        }
        let usage = vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST
            | vk::BufferUsageFlags::STORAGE_BUFFER;
        let (raw, allocation, heap) =
            allocate_bound(shared, label, size, usage, MemoryLocation::GpuToCpu, 64)?;
        let Some(ptr) = allocation.mapped_ptr() else {
            free_bound(shared, raw, allocation, heap, label);
            return Err(Error::Internal {
                what: "host-buffer memory came back from the allocator unmapped",
            });
        };
        shared.set_name(raw, label);
        let properties = allocation.memory_properties();
        log::trace!("kiln: host buffer `{label}`: driver memory [{properties:?}]");
        Ok(HostBuffer {
            inner: Arc::new(HostInner {
                shared: shared.clone(),
                objects: Mutex::new(Some(Objects {
                    raw,
                    memory: Memory::Allocated { allocation, heap },
                })),
                ptr: ptr.cast(),
                len: size,
                label: label.to_string(),
                imported: false,
                properties,
                stamps: ResourceStamps::default(),
            }),
        })
    }

    /// Sets where later host buffers take their memory from (the bench's host-memory
    /// sweep compares the two). Unstable.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_set_host_buffer_memory(&self, memory: HostBufferMemory) {
        super::desc::settings(&self.shared).set_host_buffer_memory(memory);
    }

    /// A host buffer holding `data`.
    ///
    /// Errors: as [`host_buffer`](Self::host_buffer).
    pub fn host_buffer_from_slice<T: bytemuck::Pod>(
        &self,
        label: &str,
        data: &[T],
    ) -> Result<HostBuffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let mut host = self.host_buffer(label, bytes.len() as u64)?;
        host.write(0, bytes)?;
        Ok(host)
    }

    /// Imports `memory`, the caller's own bytes, as a host buffer for the length of `f`
    /// (`VK_EXT_external_memory_host`, Vulkan spec §11.2.6): copies from and to it run
    /// at bus speed with no staging copy. When `f` returns, kiln waits for every
    /// submission that used the import and destroys it; then `memory` holds what readbacks
    /// wrote. The import has no host access of its own (`KILN-E161`).
    ///
    /// `memory`'s address and length must be multiples of the device's
    /// `minImportedHostPointerAlignment` (4096 on most devices: allocate it page-aligned,
    /// e.g. `std::alloc::alloc` with `Layout::from_size_align(len, 4096)`).
    ///
    /// Errors: `KILN-E107` the device lacks `VK_EXT_external_memory_host` (use
    /// [`host_buffer`](Self::host_buffer)), `KILN-E160` misaligned address or length (or
    /// empty), `KILN-E106`/`KILN-E104` the driver refused the memory; whatever `f` returns;
    /// `KILN-E105` the device was lost before the final wait ended. The final wait has
    /// no timeout: a GPU still using the import after `DeviceDesc::wait_timeout` is waited
    /// for on (with a warning each time), as `memory` is the caller's to free once this
    /// returns.
    pub fn import_host_memory<R>(
        &self,
        label: &str,
        memory: &mut [u8],
        f: impl FnOnce(&mut HostBuffer) -> Result<R>,
    ) -> Result<R> {
        let mut host = import(&self.shared, label, memory)?;
        // Ends the import however the scope ends, a panic of `f` included: `memory` is the
        // caller's again once this frame is gone.
        let end = EndImport(Some(host.inner.clone()));
        let out = f(&mut host);
        drop(host);
        let waited = end.finish();
        let r = out?;
        waited?;
        Ok(r)
    }
}

/// The end of an import's scope ([`Device::import_host_memory`]): run by
/// [`finish`](Self::finish), or on drop when the scope unwinds.
struct EndImport(Option<Arc<HostInner>>);

impl EndImport {
    fn finish(mut self) -> std::result::Result<(), DeviceError> {
        self.0.take().map_or(Ok(()), |inner| inner.end_import())
    }
}

impl Drop for EndImport {
    fn drop(&mut self) {
        if let Some(inner) = self.0.take() {
            let _ = inner.end_import();
        }
    }
}

/// A host buffer in host pages kiln maps itself, imported (`HostBufferMemory::Imported`).
/// Errors: `KILN-E107` no `VK_EXT_external_memory_host`, `KILN-E154` more than the heap
/// has left, `KILN-E166` mapping failed, `KILN-E106`/`KILN-E104` the import failed.
fn mapped(shared: &Arc<Shared>, label: &str, size: u64) -> Result<HostBuffer> {
    let alignment = import_alignment(shared)?;
    let heap_index = shared
        .heaps
        .reserve(label, MemoryLocation::GpuToCpu, size)?;
    let heap = (heap_index, size);
    let region = match HostRegion::map(size, alignment) {
        Ok(r) => r,
        Err(detail) => {
            shared.heaps.release(heap.0, heap.1);
            return Err(Error::HostMemoryMap {
                object: label.to_string(),
                size,
                detail,
            });
        }
    };
    let ptr = region.ptr();
    let (raw, memory, properties) =
        match import_raw(shared, label, size, ptr.as_ptr(), region.len() as u64) {
            Ok(r) => r,
            Err(e) => {
                shared.heaps.release(heap.0, heap.1);
                return Err(e);
            }
        };
    log::trace!(
        "kiln: host buffer `{label}`: {} bytes mapped by kiln and imported [{properties:?}]",
        region.len()
    );
    Ok(HostBuffer {
        inner: Arc::new(HostInner {
            shared: shared.clone(),
            objects: Mutex::new(Some(Objects {
                raw,
                memory: Memory::Mapped {
                    memory,
                    region,
                    heap,
                },
            })),
            ptr,
            len: size,
            label: label.to_string(),
            imported: false,
            properties,
            stamps: ResourceStamps::default(),
        }),
    })
}

/// `minImportedHostPointerAlignment`. Errors: `KILN-E107` the device lacks the extension.
fn import_alignment(shared: &Shared) -> Result<u64> {
    shared
        .host_import_alignment
        .ok_or_else(|| Error::MissingFeature {
            device: shared.info.name.clone(),
            what: "VK_EXT_external_memory_host (importing host memory); use \
               Device::host_buffer for pinned memory instead (with \
               HostBufferMemory::Driver or Auto)"
                .into(),
        })
}

/// Imports `memory` (see [`Device::import_host_memory`]).
fn import(shared: &Arc<Shared>, label: &str, memory: &mut [u8]) -> Result<HostBuffer> {
    let alignment = import_alignment(shared)?;
    let address = memory.as_ptr() as u64;
    let len = memory.len() as u64;
    if len == 0 || !address.is_multiple_of(alignment) || !len.is_multiple_of(alignment) {
        return Err(Error::HostMemoryMisaligned {
            object: label.to_string(),
            address,
            len,
            alignment,
        });
    }
    let (raw, mem, properties) = import_raw(shared, label, len, memory.as_mut_ptr(), len)?;
    let ptr = NonNull::new(memory.as_mut_ptr()).unwrap_or(NonNull::dangling());
    Ok(HostBuffer {
        inner: Arc::new(HostInner {
            shared: shared.clone(),
            objects: Mutex::new(Some(Objects {
                raw,
                memory: Memory::Imported { memory: mem },
            })),
            ptr,
            len,
            label: label.to_string(),
            imported: true,
            properties,
            stamps: ResourceStamps::default(),
        }),
    })
}

/// A transfer buffer of `size` bytes bound to `len` bytes of host memory at `ptr`, imported
/// (host-cached memory type where the pointer allows one): the buffer, the memory, the
/// type's flags. `ptr` and `len` are aligned (checked by the callers) and stay valid until
/// the memory is freed.
fn import_raw(
    shared: &Shared,
    label: &str,
    size: u64,
    ptr: *mut u8,
    len: u64,
) -> Result<(vk::Buffer, vk::DeviceMemory, vk::MemoryPropertyFlags)> {
    let d = &shared.raw;
    let handle_type = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
    let ext = crate::device::loader::walking(|| {
        ash::ext::external_memory_host::Device::new(&shared.instance.raw, d)
    });
    let mut host_props = vk::MemoryHostPointerPropertiesEXT::default();
    // SAFETY: the extension is enabled; `ptr` is a live host allocation of `len` bytes,
    // aligned as the device requires (checked by the callers); the out struct is a local.
    unsafe {
        (ext.fp().get_memory_host_pointer_properties_ext)(
            d.handle(),
            handle_type,
            ptr.cast_const().cast(),
            &mut host_props,
        )
    }
    .result()
    .map_err(vk_err("vkGetMemoryHostPointerPropertiesEXT"))?;
    let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle_type);
    let info = vk::BufferCreateInfo::default()
        .size(size)
        .usage(
            vk::BufferUsageFlags::TRANSFER_SRC
                | vk::BufferUsageFlags::TRANSFER_DST
                | vk::BufferUsageFlags::STORAGE_BUFFER,
        )
        .sharing_mode(shared.sharing.mode())
        .queue_family_indices(shared.sharing.families())
        .push_next(&mut external);
    // SAFETY: valid create info (size > 0, transfer usage, the handle type the memory will
    // be imported with); locals outlive the call.
    let raw = unsafe { d.create_buffer(&info, None) }.map_err(vk_err("vkCreateBuffer"))?;
    // SAFETY: `raw` was just created on this device.
    let req = unsafe { d.get_buffer_memory_requirements(raw) };
    // SAFETY: plain query on the physical device.
    let props = unsafe {
        shared
            .instance
            .raw
            .get_physical_device_memory_properties(shared.physical)
    };
    let bits = req.memory_type_bits & host_props.memory_type_bits;
    let types = &props.memory_types[..props.memory_type_count as usize];
    let host = vk::MemoryPropertyFlags::HOST_VISIBLE;
    let pick = |want: vk::MemoryPropertyFlags| {
        (0..types.len() as u32)
            .find(|&i| bits & (1 << i) != 0 && types[i as usize].property_flags.contains(want))
    };
    let type_index = pick(host | vk::MemoryPropertyFlags::HOST_CACHED)
        .or_else(|| pick(host))
        .or_else(|| pick(vk::MemoryPropertyFlags::empty()));
    let fail = |raw: vk::Buffer, e: Error| {
        // SAFETY: the buffer has no memory bound and is unused.
        unsafe { d.destroy_buffer(raw, None) };
        Err(e)
    };
    let (Some(type_index), true) = (type_index, req.size <= len) else {
        return fail(
            raw,
            Error::Vulkan {
                call: "vkAllocateMemory (no memory type can import this host memory)",
                result: vk::Result::ERROR_INVALID_EXTERNAL_HANDLE,
            },
        );
    };
    let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
        .handle_type(handle_type)
        .host_pointer(ptr.cast());
    let alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(len)
        .memory_type_index(type_index)
        .push_next(&mut import);
    // SAFETY: the pointer and size are aligned to minImportedHostPointerAlignment
    // (checked by the callers); the memory type is one the pointer's properties allow; the
    // host memory outlives the import (the callers free the import first).
    let mem = match unsafe { d.allocate_memory(&alloc, None) } {
        Ok(m) => m,
        Err(e) => return fail(raw, vk_err("vkAllocateMemory (host import)")(e)),
    };
    // SAFETY: the memory is large enough for `req` (checked) and of an allowed type.
    if let Err(e) = unsafe { d.bind_buffer_memory(raw, mem, 0) } {
        // SAFETY: the memory is unused.
        unsafe { d.free_memory(mem, None) };
        return fail(raw, vk_err("vkBindBufferMemory")(e));
    }
    shared.set_name(raw, label);
    Ok((raw, mem, types[type_index as usize].property_flags))
}
