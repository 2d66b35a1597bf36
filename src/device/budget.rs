//! Per-heap accounting: kiln refuses an allocation that would exceed the heap it comes
//! from, with a coded error and no Vulkan call. Drivers such as lavapipe do not fail
//! over-committed heaps themselves (they would page or abort later); a single allocation
//! larger than its heap is also invalid usage (VUID-vkAllocateMemory-pAllocateInfo-01713).
//!
//! The heap of a location is the one gpu-allocator picks first for it: `GpuOnly` →
//! DEVICE_LOCAL; `CpuToGpu` → HOST_VISIBLE|HOST_COHERENT (DEVICE_LOCAL preferred);
//! `GpuToCpu` → HOST_VISIBLE|HOST_COHERENT (HOST_CACHED preferred).

use std::sync::atomic::{AtomicU64, Ordering};

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::error::{MemoryError, Result};

/// One memory heap in [`Device::heap_usage`](crate::Device::heap_usage).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapUsage {
    /// Bytes kiln holds in buffers on this heap.
    pub used: u64,
    /// The heap's size (`VkMemoryHeap::size`).
    pub size: u64,
}

pub(crate) struct HeapBudget {
    sizes: Vec<u64>,
    used: Vec<AtomicU64>,
    /// Heap index for GpuOnly, CpuToGpu, GpuToCpu.
    by_location: [usize; 3],
}

fn heap_of(
    props: &vk::PhysicalDeviceMemoryProperties,
    preferred: &[vk::MemoryPropertyFlags],
) -> usize {
    let types = &props.memory_types[..props.memory_type_count as usize];
    for want in preferred {
        if let Some(t) = types.iter().find(|t| t.property_flags.contains(*want)) {
            return t.heap_index as usize;
        }
    }
    0
}

impl HeapBudget {
    pub(crate) fn new(instance: &ash::Instance, physical: vk::PhysicalDevice) -> Self {
        // SAFETY: plain query on a physical device of this instance.
        let props = unsafe { instance.get_physical_device_memory_properties(physical) };
        use vk::MemoryPropertyFlags as M;
        let hv = M::HOST_VISIBLE | M::HOST_COHERENT;
        let by_location = [
            heap_of(&props, &[M::DEVICE_LOCAL, M::empty()]),
            heap_of(&props, &[hv | M::DEVICE_LOCAL, hv]),
            heap_of(&props, &[hv | M::HOST_CACHED, hv]),
        ];
        let heaps = &props.memory_heaps[..props.memory_heap_count as usize];
        HeapBudget {
            sizes: heaps.iter().map(|h| h.size).collect(),
            used: heaps.iter().map(|_| AtomicU64::new(0)).collect(),
            by_location,
        }
    }

    fn heap_for(&self, location: MemoryLocation) -> usize {
        match location {
            MemoryLocation::CpuToGpu => self.by_location[1],
            MemoryLocation::GpuToCpu => self.by_location[2],
            _ => self.by_location[0],
        }
    }

    /// Reserves `size` bytes on the location's heap; returns the heap index.
    pub(crate) fn reserve(
        &self,
        object: &str,
        location: MemoryLocation,
        size: u64,
    ) -> Result<usize, MemoryError> {
        let heap = self.heap_for(location);
        let (Some(used), Some(&heap_size)) = (self.used.get(heap), self.sizes.get(heap)) else {
            return Ok(heap);
        };
        let mut cur = used.load(Ordering::Acquire);
        loop {
            let available = heap_size.saturating_sub(cur);
            if size > available {
                return Err(MemoryError::HeapExhausted {
                    object: object.to_string(),
                    requested: size,
                    available,
                    heap_size,
                    heap,
                });
            }
            match used.compare_exchange(cur, cur + size, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(heap),
                Err(now) => cur = now,
            }
        }
    }

    pub(crate) fn release(&self, heap: usize, size: u64) {
        if let Some(u) = self.used.get(heap) {
            u.fetch_sub(size, Ordering::AcqRel);
        }
    }

    pub(crate) fn usage(&self) -> Vec<HeapUsage> {
        self.used
            .iter()
            .zip(&self.sizes)
            .map(|(u, s)| HeapUsage {
                used: u.load(Ordering::Acquire),
                size: *s,
            })
            .collect()
    }
}
