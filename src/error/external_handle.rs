//! The OS handle types external memory and semaphores are shared as: a value the device
//! layer's exports and imports take (`device/external.rs`, `queue/external.rs`) and the
//! errors about them name (`KILN-E163`, `KILN-E165`), so it lives at the bottom layer.

use ash::vk;

/// The OS handle a buffer's memory or a semaphore's payload is shared as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExternalHandle {
    /// An opaque POSIX fd (`*_OPAQUE_FD_BIT`): meaningful only to the same driver on the
    /// same physical device (another `VkDevice`, another process, CUDA on the same GPU).
    /// Memory and semaphores (`VK_KHR_external_memory_fd`, `VK_KHR_external_semaphore_fd`).
    OpaqueFd,
    /// A Linux DMA-BUF fd (`VK_EXT_external_memory_dma_buf`): memory only.
    DmaBuf,
    /// A Linux sync file (`SYNC_FD`): binary semaphores only, which kiln does not make;
    /// a timeline semaphore cannot be one (VUID-VkSemaphoreGetFdInfoKHR-handleType-03253).
    SyncFd,
}

impl ExternalHandle {
    pub(crate) fn memory_bits(self) -> Option<vk::ExternalMemoryHandleTypeFlags> {
        match self {
            ExternalHandle::OpaqueFd => Some(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD),
            ExternalHandle::DmaBuf => Some(vk::ExternalMemoryHandleTypeFlags::DMA_BUF_EXT),
            ExternalHandle::SyncFd => None,
        }
    }
}
