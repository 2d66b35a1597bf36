//! Where a host buffer's memory comes from ([`HostBufferMemory`]), and the host pages kiln
//! maps itself for one ([`HostRegion`]).
//!
//! A host buffer (`HostBuffer`, the pinned-memory type of the `queue` layer) is either
//! **driver memory** (gpu-allocator `GpuToCpu`: a host-visible, host-coherent, host-cached
//! memory type the driver allocates and maps) or **kiln-mapped memory imported** through
//! `VK_EXT_external_memory_host` (Vulkan spec §11.2.6): an anonymous private mapping,
//! 2 MiB-aligned, advised `MADV_HUGEPAGE` (transparent huge pages where the kernel has them)
//! and first touched by the creating thread (so its pages live on that thread's NUMA node),
//! then imported. The DMA engine reads host memory through the IOMMU / the GPU's page
//! tables: one 2 MiB page is one translation where 4 KiB pages are 512, which matters for
//! uploads (device reads of host memory wait for every translation; readbacks are posted
//! writes) — the hypothesis behind the imported variant. Measured on a PCIe 5 GPU (NVIDIA
//! 580.159.04), uploads ran at either ~38 or ~49 GB/s from driver memory and from imports
//! alike, with 4 KiB and with 2 MiB pages: the page size was not the cause.

use std::ptr::NonNull;

/// Where [`Device::host_buffer`](crate::Device::host_buffer) takes memory from
/// (`DeviceDesc::host_buffer_memory`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HostBufferMemory {
    /// kiln's choice: [`Driver`](Self::Driver), because kiln-mapped imported memory
    /// (transparent huge pages) uploaded no faster than the driver's host-cached memory
    /// where it was measured (a PCIe 5 GPU: 49.3 GB/s both at 256 MiB, 46.9–49.2 and
    /// 49.3–49.4 at 1 GiB; the slow 38 GB/s uploads came from both kinds).
    #[default]
    Auto,
    /// A host-visible, host-coherent (host-cached where the device has it) memory type
    /// allocated by the driver through gpu-allocator (`MemoryLocation::GpuToCpu`).
    Driver,
    /// Host pages kiln maps itself (2 MiB-aligned, `MADV_HUGEPAGE`, first touched by the
    /// creating thread) and imports with `VK_EXT_external_memory_host`. Linux only; a device
    /// without the extension makes `host_buffer` fail with `KILN-E107`.
    Imported,
}

impl HostBufferMemory {
    /// As the bench's knob stores it (`transfer::desc`'s `Knobs`).
    #[cfg(feature = "unstable-hooks")]
    pub(crate) fn to_u8(self) -> u8 {
        match self {
            HostBufferMemory::Auto => 0,
            HostBufferMemory::Driver => 1,
            HostBufferMemory::Imported => 2,
        }
    }

    #[cfg(feature = "unstable-hooks")]
    pub(crate) fn from_u8(v: u8) -> HostBufferMemory {
        match v {
            1 => HostBufferMemory::Driver,
            2 => HostBufferMemory::Imported,
            _ => HostBufferMemory::Auto,
        }
    }

    /// `Auto` resolved: whether kiln maps and imports the memory itself.
    pub(crate) fn imports(self) -> bool {
        match self {
            HostBufferMemory::Imported => true,
            HostBufferMemory::Driver | HostBufferMemory::Auto => false,
        }
    }
}

/// Alignment of a [`HostRegion`]: one transparent huge page.
pub(crate) const REGION_ALIGN: usize = 2 << 20;

/// An anonymous private mapping kiln owns: `len` bytes at a `REGION_ALIGN`-aligned address,
/// zero-filled, every page touched; unmapped on drop (after the import that used it was
/// freed: the owner's job).
pub(crate) struct HostRegion {
    ptr: NonNull<u8>,
    len: usize,
    /// The whole mapping (`ptr` lies inside it).
    base: *mut u8,
    map_len: usize,
}

// SAFETY: the region is plain memory owned by this value; who may touch it is ordered by
// its owner (the host buffer's stamps and borrows).
unsafe impl Send for HostRegion {}
// SAFETY: as above.
unsafe impl Sync for HostRegion {}

impl HostRegion {
    /// Maps `len` bytes rounded up to a multiple of `REGION_ALIGN` (a multiple of every
    /// `minImportedHostPointerAlignment` up to 2 MiB; `align` larger than that is refused),
    /// advises huge pages and touches every page from this thread.
    #[cfg(target_os = "linux")]
    pub(crate) fn map(len: u64, align: u64) -> Result<HostRegion, String> {
        if align as usize > REGION_ALIGN || !REGION_ALIGN.is_multiple_of(align.max(1) as usize) {
            return Err(format!(
                "minImportedHostPointerAlignment {align} does not divide {REGION_ALIGN}"
            ));
        }
        let len = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_next_multiple_of(REGION_ALIGN))
            .ok_or_else(|| format!("{len} bytes do not fit the address space"))?;
        let map_len = len + REGION_ALIGN;
        // SAFETY: an anonymous private mapping at an address of the kernel's choice; no
        // existing memory is affected.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(format!("mmap: {}", std::io::Error::last_os_error()));
        }
        let base = base.cast::<u8>();
        let start = base.wrapping_add(base.align_offset(REGION_ALIGN));
        // SAFETY: `start..start + len` lies inside the mapping made above. Advice only: a
        // kernel without transparent huge pages refuses it (EINVAL) and 4 KiB pages are
        // used, which is still correct memory.
        unsafe { libc::madvise(start.cast(), len, libc::MADV_HUGEPAGE) };
        let Some(ptr) = NonNull::new(start) else {
            // SAFETY: the mapping made above, unused.
            unsafe { libc::munmap(base.cast(), map_len) };
            return Err("mmap returned a null address".into());
        };
        // First touch from this thread: the pages are allocated now (on this thread's NUMA
        // node, as huge pages where the kernel gives them), not by the driver's import.
        for page in (0..len).step_by(4096) {
            // SAFETY: inside the mapping; writing zero keeps the zero-filled contents.
            unsafe { ptr.as_ptr().add(page).write_volatile(0) };
        }
        Ok(HostRegion {
            ptr,
            len,
            base,
            map_len,
        })
    }

    /// Not Linux: kiln maps no host memory itself.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn map(_len: u64, _align: u64) -> Result<HostRegion, String> {
        Err("kiln maps host memory itself only on Linux".into())
    }

    /// The start of the region.
    pub(crate) fn ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    /// Its length in bytes (a multiple of `REGION_ALIGN`).
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for HostRegion {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        // SAFETY: the mapping made in `map`; its owner freed the import that used it and
        // no slice of it outlives the owner.
        unsafe {
            libc::munmap(self.base.cast(), self.map_len);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (self.base, self.map_len);
    }
}
