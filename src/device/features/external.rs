//! External memory and semaphores (issue 28): which of `VK_KHR_external_memory_fd`,
//! `VK_EXT_external_memory_dma_buf` and `VK_KHR_external_semaphore_fd` a device gets.
//!
//! Each is enabled when the device has it (Vulkan 1.1 made their base extensions,
//! `VK_KHR_external_memory` and `VK_KHR_external_semaphore`, core). DMA-BUF needs the fd
//! extension too (its `vkGetMemoryFdKHR`; the spec lists it as a dependency).

use std::ffi::{c_char, CStr};

/// The external-handle extensions a device got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ExternalExtensions {
    pub memory_fd: bool,
    pub memory_dma_buf: bool,
    pub semaphore_fd: bool,
}

/// Picks the extensions `has` reports and adds their names to `names`.
pub(crate) fn enable(
    has: impl Fn(&CStr) -> bool,
    names: &mut Vec<*const c_char>,
) -> ExternalExtensions {
    let memory_fd = has(ash::khr::external_memory_fd::NAME);
    let memory_dma_buf = memory_fd && has(ash::ext::external_memory_dma_buf::NAME);
    let semaphore_fd = has(ash::khr::external_semaphore_fd::NAME);
    for (on, name) in [
        (memory_fd, ash::khr::external_memory_fd::NAME),
        (memory_dma_buf, ash::ext::external_memory_dma_buf::NAME),
        (semaphore_fd, ash::khr::external_semaphore_fd::NAME),
    ] {
        if on {
            names.push(name.as_ptr());
        }
    }
    ExternalExtensions {
        memory_fd,
        memory_dma_buf,
        semaphore_fd,
    }
}
