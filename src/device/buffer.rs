//! Buffers with memory from `gpu-allocator`: creation, labels, heap accounting and the
//! mapped memory that host transfers use directly (uploads and readbacks themselves live in
//! the submission layer, which stages through reusable buffers what the host cannot map).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

use super::{FaultSite, ResourceStamps, Shared};
use crate::error::{vk_device_err, DeviceError, MemoryError, Result};

/// How to create a [`Buffer`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BufferDesc<'a> {
    /// Name shown in errors and validation messages.
    pub label: &'a str,
    /// Size in bytes (at least 1).
    pub size: u64,
    /// Usage; kiln adds TRANSFER_SRC | TRANSFER_DST so upload/readback always work.
    pub usage: vk::BufferUsageFlags,
    /// `GpuOnly` (device-local), `CpuToGpu` (upload, mapped), `GpuToCpu` (readback, mapped).
    pub location: MemoryLocation,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { BufferDesc<'a> {
    label: &'a str,
    size: u64,
    usage: vk::BufferUsageFlags,
    location: MemoryLocation,
} }

impl Default for BufferDesc<'_> {
    /// An unlabelled device-local storage buffer of size 0: set at least `size`
    /// (`BufferDesc::default().label("x").size(1024)`).
    fn default() -> Self {
        BufferDesc {
            label: "",
            size: 0,
            usage: vk::BufferUsageFlags::STORAGE_BUFFER,
            location: MemoryLocation::GpuOnly,
        }
    }
}

/// A `VkBuffer` and its memory: a cheap-to-clone handle. The buffer is destroyed (and its
/// memory freed) when the last handle drops, including those that descriptor sets hold, so
/// a set never refers to a destroyed buffer.
#[derive(Clone)]
pub struct Buffer(Arc<BufferInner>);

struct BufferInner {
    shared: Arc<Shared>,
    raw: vk::Buffer,
    allocation: Option<Allocation>,
    /// (heap index, bytes reserved in kiln's heap budget).
    heap: (usize, u64),
    size: u64,
    usage: vk::BufferUsageFlags,
    location: MemoryLocation,
    label: String,
    /// Per queue, the last submissions that used and wrote the buffer (cross-queue
    /// ordering; see `device::queue`).
    stamps: ResourceStamps,
    /// The id of the recording that last kept this buffer (`Recorder::keep`), so that a
    /// recording keeps each buffer once however many commands use it.
    kept_by: AtomicU64,
    /// Held across a host transfer through the mapping (`upload_at`: written, `read_into_at`:
    /// read): clones of the buffer on several threads never copy into and out of the
    /// mapping at once.
    host_access: RwLock<()>,
    /// An object living in the buffer's memory (an acceleration structure), destroyed right
    /// before the buffer: keeping the buffer alive keeps it alive ([`Buffer::new_owning`]).
    dependent: Option<Dependent>,
    /// The dedicated memory of an exportable or imported buffer (`device::external`),
    /// freed right after the buffer.
    external: Option<External>,
}

/// The memory of an external buffer (`device::external`) and how it is shared.
pub(crate) struct External {
    pub memory: vk::DeviceMemory,
    pub info: super::ExternalMemory,
    /// Made by `Device::exportable_buffer` (an imported buffer cannot be exported).
    pub exportable: bool,
}

/// Destroys an object that lives in a buffer's memory (see [`Buffer::new_owning`]).
pub(crate) type Dependent = Box<dyn FnOnce(&Shared) + Send + Sync>;

/// Buffer usages of VK_KHR_acceleration_structure (valid only with the extension enabled).
const ACCELERATION_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR.as_raw()
        | vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR.as_raw(),
);

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.0;
        f.debug_struct("Buffer")
            .field("label", &s.label)
            .field("size", &s.size)
            .field("usage", &s.usage)
            .field("location", &s.location)
            .finish()
    }
}

/// Refuses a buffer of `size` bytes beyond the device's limits before any Vulkan call:
/// `maxBufferSize` (`KILN-E159`, VUID-VkBufferCreateInfo-size-06409), then
/// `maxMemoryAllocationSize` (`KILN-E162`) unless the device allows allocations beyond it.
pub(crate) fn check_size(shared: &Shared, label: &str, size: u64) -> Result<(), MemoryError> {
    let max = shared.compute.max_buffer_size;
    if max > 0 && size > max {
        return Err(MemoryError::BufferTooLarge {
            object: label.to_string(),
            size,
            max,
            device: shared.info.name.clone(),
        });
    }
    let limit = shared.compute.max_memory_allocation_size;
    if limit > 0 && size > limit && !shared.allocations_beyond_limit {
        return Err(MemoryError::AllocationTooLarge {
            object: label.to_string(),
            size,
            max: limit,
            device: shared.info.name.clone(),
        });
    }
    Ok(())
}

impl Buffer {
    pub(crate) fn new(shared: &Arc<Shared>, desc: &BufferDesc<'_>) -> Result<Buffer, MemoryError> {
        Ok(Buffer(Arc::new(Self::new_inner(shared, desc)?)))
    }

    /// A buffer like [`new`](Self::new) whose memory holds an object `make` creates on it
    /// (an acceleration structure): `make`'s [`Dependent`] destroys it, right before the
    /// buffer, once every submission that kept the buffer has finished. On an error of
    /// `make` the buffer is destroyed and the error returned.
    pub(crate) fn new_owning<E: From<MemoryError>>(
        shared: &Arc<Shared>,
        desc: &BufferDesc<'_>,
        make: impl FnOnce(vk::Buffer) -> Result<Dependent, E>,
    ) -> Result<Buffer, E> {
        let mut inner = Self::new_inner(shared, desc)?;
        inner.dependent = Some(make(inner.raw)?);
        Ok(Buffer(Arc::new(inner)))
    }

    fn new_inner(shared: &Arc<Shared>, desc: &BufferDesc<'_>) -> Result<BufferInner, MemoryError> {
        if desc.size == 0 {
            return Err(MemoryError::ZeroSizedBuffer {
                object: desc.label.to_string(),
            });
        }
        check_size(shared, desc.label, desc.size)?;
        if desc
            .usage
            .contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS)
            && !shared.features.buffer_device_address
        {
            return Err(DeviceError::MissingFeature {
                device: shared.info.name.clone(),
                what: format!(
                    "bufferDeviceAddress, needed by buffer `{}` (SHADER_DEVICE_ADDRESS usage)",
                    desc.label
                ),
            }
            .into());
        }
        if desc.usage.intersects(ACCELERATION_USAGE) && !shared.features.acceleration_structure {
            // The usage bits of an extension not enabled are invalid
            // (VUID-VkBufferCreateInfo-usage-parameter).
            return Err(DeviceError::MissingFeature {
                device: shared.info.name.clone(),
                what: format!(
                    "accelerationStructure (VK_KHR_acceleration_structure), needed by buffer \
                     `{}` (usage {:?})",
                    desc.label,
                    desc.usage & ACCELERATION_USAGE
                ),
            }
            .into());
        }
        let usage = desc.usage
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST
            | if shared.features.buffer_device_address
                && desc.usage.intersects(
                    vk::BufferUsageFlags::STORAGE_BUFFER
                        | vk::BufferUsageFlags::UNIFORM_BUFFER
                        | vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR,
                )
            {
                vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
            } else {
                vk::BufferUsageFlags::empty()
            };
        let (raw, allocation, heap) =
            allocate_bound(shared, desc.label, desc.size, usage, desc.location, 1)?;
        shared.set_name(raw, desc.label);
        Ok(BufferInner {
            shared: shared.clone(),
            raw,
            allocation: Some(allocation),
            heap,
            size: desc.size,
            usage,
            location: desc.location,
            label: desc.label.to_string(),
            stamps: ResourceStamps::default(),
            kept_by: AtomicU64::new(0),
            host_access: RwLock::new(()),
            dependent: None,
            external: None,
        })
    }

    /// A buffer bound at offset 0 to the dedicated memory of `external` (an export or an
    /// import, `device::external`), reserved in the heap budget as `heap`; both are freed
    /// when it is retired.
    pub(crate) fn from_external(
        shared: &Arc<Shared>,
        desc: &BufferDesc<'_>,
        raw: vk::Buffer,
        usage: vk::BufferUsageFlags,
        external: External,
        heap: (usize, u64),
    ) -> Buffer {
        Buffer(Arc::new(BufferInner {
            shared: shared.clone(),
            raw,
            allocation: None,
            heap,
            size: desc.size,
            usage,
            location: desc.location,
            label: desc.label.to_string(),
            stamps: ResourceStamps::default(),
            kept_by: AtomicU64::new(0),
            host_access: RwLock::new(()),
            dependent: None,
            external: Some(external),
        }))
    }

    /// The external memory, for buffers made by `device::external`.
    pub(crate) fn external(&self) -> Option<&External> {
        self.0.external.as_ref()
    }

    /// The submissions that used and wrote this buffer, per queue.
    #[inline]
    pub(crate) fn stamps(&self) -> &ResourceStamps {
        &self.0.stamps
    }

    /// Marks the buffer as kept by the recording `id`; false when that recording kept it
    /// already (then it need not be kept again). Recording ids are never 0 and never
    /// reused; a race with another recording only makes a buffer kept twice.
    #[inline]
    pub(crate) fn mark_kept(&self, id: u64) -> bool {
        if self.0.kept_by.load(Ordering::Relaxed) == id {
            return false;
        }
        self.0.kept_by.store(id, Ordering::Relaxed);
        true
    }

    /// The device state this buffer belongs to.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.0.shared
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.0.size
    }

    /// Usage flags the buffer was created with (including the added transfer bits, and
    /// SHADER_DEVICE_ADDRESS for storage, uniform and acceleration-structure build input
    /// buffers where the device has `bufferDeviceAddress`).
    pub fn usage(&self) -> vk::BufferUsageFlags {
        self.0.usage
    }

    /// The buffer's device address (`vkGetBufferDeviceAddress`, Vulkan spec §12.7): a
    /// 64-bit pointer to byte 0 that shaders dereference through GLSL `buffer_reference`
    /// (SPIR-V `PhysicalStorageBuffer`), passed in push constants or a uniform buffer. It
    /// has no range limit: the whole buffer, even beyond `maxStorageBufferRange`, is
    /// reachable. Valid while the buffer lives; a submission that reaches the buffer only
    /// through its address does not keep it alive or order it across queues: keep the
    /// buffer and bind it (or wait) yourself.
    ///
    /// Errors: `KILN-E158` the buffer lacks SHADER_DEVICE_ADDRESS usage or the device
    /// lacks `bufferDeviceAddress`.
    pub fn device_address(&self) -> Result<vk::DeviceAddress, MemoryError> {
        let reason = if !self.0.shared.features.buffer_device_address {
            Some(format!(
                "device `{}` lacks bufferDeviceAddress",
                self.0.shared.info.name
            ))
        } else if !self
            .0
            .usage
            .contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS)
        {
            Some(format!(
                "it was created with usage {:?}, without SHADER_DEVICE_ADDRESS",
                self.0.usage
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(MemoryError::NoDeviceAddress {
                object: self.0.label.clone(),
                reason,
            });
        }
        let info = vk::BufferDeviceAddressInfo::default().buffer(self.0.raw);
        // SAFETY: the buffer is alive, was created with SHADER_DEVICE_ADDRESS usage on a
        // device with bufferDeviceAddress enabled, and its memory (bound at creation) was
        // allocated with the DEVICE_ADDRESS flag (gpu-allocator's buffer_device_address).
        Ok(unsafe { self.0.shared.raw.get_buffer_device_address(&info) })
    }

    /// Where the memory lives (`GpuOnly`, `CpuToGpu`, `GpuToCpu`).
    pub fn location(&self) -> MemoryLocation {
        self.0.location
    }

    /// The property flags of the memory type the buffer's memory came from (Vulkan spec
    /// §11.2.1, "Device Memory Properties"): e.g. whether a `CpuToGpu` buffer is also
    /// `DEVICE_LOCAL` (device memory the host writes through the PCIe BAR, read by shaders
    /// at device speed) or plain host memory (read by shaders over the bus). Empty for a
    /// buffer without memory of its own.
    pub fn memory_properties(&self) -> vk::MemoryPropertyFlags {
        self.0
            .allocation
            .as_ref()
            .map_or(vk::MemoryPropertyFlags::empty(), |a| a.memory_properties())
    }

    /// The label given at creation (shown in errors and validation messages).
    pub fn label(&self) -> &str {
        &self.0.label
    }

    /// The raw handle (owned by this object: do not destroy it).
    pub fn raw(&self) -> vk::Buffer {
        self.0.raw
    }

    /// The memory's host mapping as bytes, if the memory is host-visible (`CpuToGpu`,
    /// `GpuToCpu`, and `GpuOnly` on devices whose device-local memory the host can map).
    /// Host access must not race a submission that uses the buffer.
    pub(crate) fn mapped_bytes(&self) -> Option<&[u8]> {
        self.0.allocation.as_ref()?.mapped_slice()
    }

    /// The lock of host transfers through the mapping ([`mapped_bytes`](Self::mapped_bytes),
    /// [`mapped_ptr`](Self::mapped_ptr)): write for a copy into it, read for a copy out. A
    /// lock poisoned by a panicking copy is taken as it is (the bytes are plain data).
    pub(crate) fn host_write_lock(&self) -> RwLockWriteGuard<'_, ()> {
        self.0
            .host_access
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// See [`host_write_lock`](Self::host_write_lock).
    pub(crate) fn host_read_lock(&self) -> RwLockReadGuard<'_, ()> {
        self.0
            .host_access
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The host mapping's address, if the memory is host-visible (see
    /// [`mapped_bytes`](Self::mapped_bytes)).
    pub(crate) fn mapped_ptr(&self) -> Option<std::ptr::NonNull<std::ffi::c_void>> {
        self.0.allocation.as_ref()?.mapped_ptr()
    }
}

fn poisoned() -> MemoryError {
    DeviceError::Internal {
        what: "the allocator's lock is poisoned (a thread panicked holding it)",
    }
    .into()
}

impl Drop for BufferInner {
    fn drop(&mut self) {
        let raw = self.raw;
        let allocation = self.allocation.take();
        let label = std::mem::take(&mut self.label);
        let heap = self.heap;
        let dependent = self.dependent.take();
        let memory = self.external.as_ref().map(|e| e.memory);
        // Deferred: destroyed once every submission that may use it has finished.
        self.shared.retire(move |s| {
            if let Some(destroy) = dependent {
                destroy(s);
            }
            match allocation {
                Some(a) => free_bound(s, raw, a, heap, &label),
                None => {
                    // SAFETY: retire runs this only after every submission that could
                    // reference `raw` completed; the buffer is not used again.
                    unsafe { s.raw.destroy_buffer(raw, None) };
                    if let Some(memory) = memory {
                        // SAFETY: the buffer bound to it is destroyed and no submission
                        // uses it; an imported allocation's fd is closed by the driver.
                        unsafe { s.raw.free_memory(memory, None) };
                    }
                    s.heaps.release(heap.0, heap.1);
                }
            }
        });
    }
}

/// Creates a `VkBuffer` of `size` bytes and `usage` (used as given), reserves it in kiln's
/// heap budget, allocates its memory at `location` (aligned to at least `min_align`) and
/// binds it. Nothing leaks on failure. If memory runs out while a layer slot holds memory it
/// can give back (the staging cache's idle buffers), that is freed and the allocation tried
/// once more.
///
/// Errors: `KILN-E154` heap budget exhausted, `KILN-E150` allocation failed.
pub(crate) fn allocate_bound(
    shared: &Shared,
    label: &str,
    size: u64,
    usage: vk::BufferUsageFlags,
    location: MemoryLocation,
    min_align: u64,
) -> Result<(vk::Buffer, Allocation, (usize, u64)), MemoryError> {
    match allocate_bound_once(shared, label, size, usage, location, min_align) {
        Err(e @ (MemoryError::HeapExhausted { .. } | MemoryError::Allocation { .. })) => {
            if shared.release_slot_memory() == 0 {
                return Err(e);
            }
            allocate_bound_once(shared, label, size, usage, location, min_align)
        }
        r => r,
    }
}

fn allocate_bound_once(
    shared: &Shared,
    label: &str,
    size: u64,
    usage: vk::BufferUsageFlags,
    location: MemoryLocation,
    min_align: u64,
) -> Result<(vk::Buffer, Allocation, (usize, u64)), MemoryError> {
    let d = &shared.raw;
    // Concurrent over kiln's queue families when there are several (see `Sharing`).
    let info = vk::BufferCreateInfo::default()
        .size(size)
        .usage(usage)
        .sharing_mode(shared.sharing.mode())
        .queue_family_indices(shared.sharing.families());
    let raw = shared
        .inject(FaultSite::CreateBuffer)
        .and_then(|()| {
            // SAFETY: size > 0 (callers check) and usage non-empty; the families (if any)
            // are distinct families of this device's queues; valid create info.
            unsafe { d.create_buffer(&info, None) }
        })
        .map_err(vk_device_err("vkCreateBuffer"))?;
    // SAFETY: `raw` was just created on this device.
    let mut requirements = unsafe { d.get_buffer_memory_requirements(raw) };
    requirements.alignment = requirements.alignment.max(min_align);
    let heap = match shared.heaps.reserve(label, location, requirements.size) {
        Ok(h) => h,
        Err(e) => {
            // SAFETY: the buffer has no memory bound and is unused.
            unsafe { d.destroy_buffer(raw, None) };
            return Err(e);
        }
    };
    let alloc = shared
        .allocator
        .lock()
        .map_err(|_| poisoned())
        .and_then(|mut a| {
            shared.inject_allocation(label)?;
            a.allocate(&AllocationCreateDesc {
                name: label,
                requirements,
                location,
                linear: true,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            })
            .map_err(|source| MemoryError::Allocation {
                object: label.to_string(),
                source,
            })
        });
    let allocation = match alloc {
        Ok(a) => a,
        Err(e) => {
            shared.heaps.release(heap, requirements.size);
            // SAFETY: the buffer has no memory bound and is unused.
            unsafe { d.destroy_buffer(raw, None) };
            return Err(e);
        }
    };
    // SAFETY: the allocation satisfies `requirements` (gpu-allocator's contract).
    if let Err(e) = unsafe { d.bind_buffer_memory(raw, allocation.memory(), allocation.offset()) } {
        // SAFETY: unused buffer; the allocation is returned below.
        unsafe { d.destroy_buffer(raw, None) };
        if let Ok(mut a) = shared.allocator.lock() {
            let _ = a.free(allocation);
        }
        shared.heaps.release(heap, requirements.size);
        return Err(vk_device_err("vkBindBufferMemory")(e).into());
    }
    Ok((raw, allocation, (heap, requirements.size)))
}

/// Destroys a buffer made by [`allocate_bound`] and returns its memory and budget. No
/// submission may still use it.
pub(crate) fn free_bound(
    shared: &Shared,
    raw: vk::Buffer,
    allocation: Allocation,
    (heap, reserved): (usize, u64),
    label: &str,
) {
    // SAFETY: the caller guarantees no pending submission references `raw`; it is not used
    // again.
    unsafe { shared.raw.destroy_buffer(raw, None) };
    match shared.allocator.lock() {
        Ok(mut alloc) => {
            if let Err(e) = alloc.free(allocation) {
                log::error!("kiln: freeing memory of buffer `{label}` failed: {e}");
            }
        }
        Err(_) => log::error!("kiln: allocator lock poisoned; leaking `{label}`"),
    }
    shared.heaps.release(heap, reserved);
}

/// `KILN-E155` when a copy of `size` bytes from `src` at `src_offset` to `dst` at
/// `dst_offset` is empty, or copies between overlapping ranges of one buffer
/// (VUID-VkBufferCopy-size-01988, VUID-vkCmdCopyBuffer-pRegions-00117): the check of
/// `Recorder::copy_buffer` and `copy_between_devices`. The ranges are in bounds (checked
/// before), so the sums fit.
pub(crate) fn check_copy(
    src: &Buffer,
    src_offset: u64,
    dst: &Buffer,
    dst_offset: u64,
    size: u64,
) -> Result<(), MemoryError> {
    let overlap = Arc::ptr_eq(src.shared(), dst.shared())
        && src.raw() == dst.raw()
        && src_offset < dst_offset + size
        && dst_offset < src_offset + size;
    if size == 0 || overlap {
        return Err(MemoryError::InvalidCopy {
            src: src.label().to_string(),
            dst: dst.label().to_string(),
            src_offset,
            dst_offset,
            size,
            detail: if size == 0 {
                "the size must be greater than 0"
            } else {
                "source and destination ranges of one buffer overlap"
            },
        });
    }
    Ok(())
}
