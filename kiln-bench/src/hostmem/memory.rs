//! The host memory of the sweep: regions the bench maps or allocates and imports, driver
//! memory of a chosen type, and what `/proc/self/smaps` and `numa_maps` say about a mapping.

use ash::vk;

use crate::raw::Raw;
use crate::BenchResult;

/// Host memory the bench owns (for importing), freed on drop.
pub(super) struct Region {
    ptr: *mut u8,
    len: usize,
    how: How,
}

enum How {
    Alloc(std::alloc::Layout),
    Mmap { base: *mut u8, len: usize },
}

impl Region {
    pub(super) fn alloc(len: usize) -> BenchResult<Region> {
        let layout = std::alloc::Layout::from_size_align(len, 1 << 16)?;
        // SAFETY: len > 0.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err("out of host memory".into());
        }
        Ok(Region {
            ptr,
            len,
            how: How::Alloc(layout),
        })
    }

    /// Anonymous private memory, 2 MiB-aligned; `advice` for `madvise` (0: none);
    /// `hugetlb`: `MAP_HUGETLB` (fails where the kernel has no reserved huge pages).
    pub(super) fn mmap(len: usize, advice: i32, hugetlb: bool) -> BenchResult<Region> {
        const ALIGN: usize = 2 << 20;
        let map_len = if hugetlb {
            len.div_ceil(ALIGN) * ALIGN
        } else {
            len + ALIGN
        };
        let flags =
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | if hugetlb { libc::MAP_HUGETLB } else { 0 };
        // SAFETY: an anonymous mapping at an address of the kernel's choice.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(format!("mmap: {}", std::io::Error::last_os_error()).into());
        }
        let base = base.cast::<u8>();
        let ptr = base.wrapping_add(base.align_offset(ALIGN));
        if advice != 0 {
            // SAFETY: the range lies inside the mapping made above.
            if unsafe { libc::madvise(ptr.cast(), len, advice) } != 0 {
                let e = std::io::Error::last_os_error();
                // SAFETY: the mapping made above, unused.
                unsafe { libc::munmap(base.cast(), map_len) };
                return Err(format!("madvise({advice}): {e}").into());
            }
        }
        Ok(Region {
            ptr,
            len,
            how: How::Mmap { base, len: map_len },
        })
    }

    pub(super) fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: a live mapping of at least `len` bytes owned by `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        match self.how {
            // SAFETY: allocated with this layout in `alloc`.
            How::Alloc(layout) => unsafe { std::alloc::dealloc(self.ptr, layout) },
            // SAFETY: the mapping made in `mmap`; no import of it is alive.
            How::Mmap { base, len } => unsafe {
                libc::munmap(base.cast(), len);
            },
        }
    }
}

/// A host buffer of the raw side: a `VkBuffer` over driver memory or an import.
pub(super) struct Host {
    pub what: String,
    pub buf: vk::Buffer,
    mem: vk::DeviceMemory,
    pub ptr: *mut u8,
    len: usize,
    /// The imported region (kept alive while the import lives), `None` for driver memory.
    region: Option<Region>,
}

impl Host {
    pub(super) fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: mapped (or imported) for `len` bytes; no GPU copy is pending when the bench
        // touches it (every copy is waited on).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    pub(super) fn drop_in(self, raw: &Raw) {
        // SAFETY: no pending GPU work uses the buffer (every copy was waited on).
        unsafe {
            raw.d.destroy_buffer(self.buf, None);
            if self.region.is_none() {
                raw.d.unmap_memory(self.mem);
            }
            raw.d.free_memory(self.mem, None);
        }
        drop(self.region);
    }
}

pub(super) fn describe_type(raw: &Raw, index: u32) -> String {
    let props = raw.memory_properties();
    let t = props.memory_types[index as usize];
    let heap = props.memory_heaps[t.heap_index as usize];
    format!(
        "memory type {index} [{:?}] heap {} ({} MiB, {:?})",
        t.property_flags,
        t.heap_index,
        heap.size >> 20,
        heap.flags
    )
}

pub(super) fn transfer_buffer(
    raw: &Raw,
    len: u64,
    families: &[u32],
    import: bool,
) -> BenchResult<vk::Buffer> {
    let handle = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
    let mut ext = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
    let mut info = vk::BufferCreateInfo::default().size(len).usage(
        vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST
            | vk::BufferUsageFlags::STORAGE_BUFFER,
    );
    if families.len() > 1 {
        info = info
            .sharing_mode(vk::SharingMode::CONCURRENT)
            .queue_family_indices(families);
    }
    if import {
        info = info.push_next(&mut ext);
    }
    // SAFETY: plain create; memory is bound before any use.
    Ok(unsafe { raw.d.create_buffer(&info, None) }?)
}

/// Driver memory of type `index` (mapped whole).
pub(super) fn driver(raw: &Raw, len: usize, index: u32, families: &[u32]) -> BenchResult<Host> {
    let buf = transfer_buffer(raw, len as u64, families, false)?;
    // SAFETY: `buf` is alive.
    let req = unsafe { raw.d.get_buffer_memory_requirements(buf) };
    let alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(req.size)
        .memory_type_index(index);
    // SAFETY: a valid allocation for `buf`'s requirements (the caller picked an allowed
    // host-visible type), bound and mapped whole; on failure the buffer is destroyed.
    unsafe {
        let mem = match raw.d.allocate_memory(&alloc, None) {
            Ok(m) => m,
            Err(e) => {
                raw.d.destroy_buffer(buf, None);
                return Err(format!("vkAllocateMemory(type {index}): {e}").into());
            }
        };
        raw.d.bind_buffer_memory(buf, mem, 0)?;
        let ptr = raw
            .d
            .map_memory(mem, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())?;
        Ok(Host {
            what: format!(
                "driver {}{}",
                describe_type(raw, index),
                if families.len() > 1 {
                    ", CONCURRENT"
                } else {
                    ""
                }
            ),
            buf,
            mem,
            ptr: ptr.cast(),
            len,
            region: None,
        })
    }
}

/// `region` imported (the host-cached type where the pointer allows it).
pub(super) fn import(raw: &Raw, mut region: Region, label: &str) -> BenchResult<Host> {
    let handle = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
    let len = region.len;
    region.bytes().fill(1); // first touch, by this thread
    let buf = transfer_buffer(raw, len as u64, &[], true)?;
    // SAFETY: `buf` is alive.
    let req = unsafe { raw.d.get_buffer_memory_requirements(buf) };
    let fns = raw.external_memory_host();
    let mut props = vk::MemoryHostPointerPropertiesEXT::default();
    // SAFETY: the extension is enabled (checked by the caller); the pointer is a live,
    // 64 KiB-aligned allocation.
    unsafe {
        (fns.fp().get_memory_host_pointer_properties_ext)(
            raw.d.handle(),
            handle,
            region.ptr.cast(),
            &mut props,
        )
    }
    .result()?;
    let bits = req.memory_type_bits & props.memory_type_bits;
    let host = vk::MemoryPropertyFlags::HOST_VISIBLE;
    let ty = raw
        .memory_type(bits, host | vk::MemoryPropertyFlags::HOST_CACHED)
        .or_else(|| raw.memory_type(bits, host))
        .ok_or_else(|| format!("no memory type imports it (bits {bits:#x})"))?;
    let mut info = vk::ImportMemoryHostPointerInfoEXT::default()
        .handle_type(handle)
        .host_pointer(region.ptr.cast());
    let alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(len as u64)
        .memory_type_index(ty)
        .push_next(&mut info);
    // SAFETY: aligned pointer and size; the region outlives the import (`Host` holds it
    // and frees the memory first).
    unsafe {
        let mem = match raw.d.allocate_memory(&alloc, None) {
            Ok(m) => m,
            Err(e) => {
                raw.d.destroy_buffer(buf, None);
                return Err(format!("vkAllocateMemory(import): {e}").into());
            }
        };
        raw.d.bind_buffer_memory(buf, mem, 0)?;
        Ok(Host {
            what: format!(
                "{label} ({}; importable types {:#x})",
                describe_type(raw, ty),
                props.memory_type_bits
            ),
            buf,
            mem,
            ptr: region.ptr,
            len,
            region: Some(region),
        })
    }
}

/// Page size, huge pages and NUMA nodes of the mapping holding `ptr`, from
/// `/proc/self/smaps` and `/proc/self/numa_maps`.
pub(super) fn mapping(ptr: *const u8) -> String {
    let addr = ptr as usize;
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return "no /proc/self/smaps".into();
    };
    let mut out = String::new();
    let mut inside = false;
    let mut start = 0usize;
    for line in smaps.lines() {
        let head = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = head.split_once('-') {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                if inside {
                    break;
                }
                inside = (a..b).contains(&addr);
                if inside {
                    start = a;
                    let path = line.split_whitespace().nth(5).unwrap_or("[anon]");
                    out.push_str(&format!("vma {} MiB {path}", (b - a) >> 20));
                }
                continue;
            }
        }
        if inside {
            for key in [
                "Rss:",
                "AnonHugePages:",
                "KernelPageSize:",
                "MMUPageSize:",
                "Locked:",
            ] {
                if let Some(v) = line.strip_prefix(key) {
                    out.push_str(&format!(", {} {}", key.trim_end_matches(':'), v.trim()));
                }
            }
        }
    }
    if out.is_empty() {
        return "mapping not found".into();
    }
    if let Ok(numa) = std::fs::read_to_string("/proc/self/numa_maps") {
        let key = format!("{start:x} ");
        if let Some(line) = numa.lines().find(|l| l.starts_with(&key)) {
            let nodes: Vec<&str> = line
                .split_whitespace()
                .filter(|t| {
                    t.starts_with('N') && t.contains('=')
                        || t.starts_with("kernelpagesize")
                        || *t == "huge"
                        || t.starts_with("bind")
                        || t.starts_with("interleave")
                        || t.starts_with("default")
                        || t.starts_with("prefer")
                })
                .collect();
            out.push_str(&format!(", numa {}", nodes.join(" ")));
        }
    }
    out
}
