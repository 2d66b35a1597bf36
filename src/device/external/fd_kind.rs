//! What kind of file an opaque fd is, against what this device's own exports are.
//!
//! An opaque fd (`VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT`) may only be imported if
//! it was exported by a compatible driver for the same physical device
//! (VUID-VkImportMemoryFdInfoKHR-fd-00668/01746; Vulkan spec §11.2.7, "External Memory
//! Handle Types Compatibility"): anything else is undefined behaviour, which no driver has
//! to catch. NVIDIA 580.159.04 answered `/dev/null` with `VK_ERROR_OUT_OF_DEVICE_MEMORY`,
//! and the same process's next allocations failed with it too (the H200, 2026-12-05).
//!
//! A driver's opaque fds are all one kind of file: lavapipe's are memfds (regular files of
//! the kernel's internal shm mount), NVIDIA's are its driver's character device or an
//! anonymous inode. So before the driver sees an imported opaque fd, kiln compares the
//! fd's kind — its file type, the device of its file system and, for a device node, the
//! device it stands for — with the kind of this device's own exports, learnt from the first
//! export (or from a 256-byte probe export made for an import that comes first). A fd of
//! another kind (`/dev/null`, a file on disk, another driver's memory) is `KILN-E165`
//! before any Vulkan call. A fd of the same kind can still be none of the driver's
//! allocations; that is the caller's promise, as the spec says.
//!
//! A DMA-BUF (`ExternalHandle::DmaBuf`) may come from any driver or device, so it is not
//! compared with the device's exports: it must only be a DMA-BUF, a file of the kernel's
//! dma-buf file system (`check_dma_buf`), before `vkGetMemoryFdPropertiesKHR` sees it.
//!
//! Opaque fds of semaphore payloads (`Device::import_timeline_semaphore`) are checked the
//! same way (VUID-VkImportSemaphoreFdInfoKHR-fd-01544) against the kind of the device's
//! own semaphore exports, learnt apart (a driver's semaphore fds need not be the kind of
//! its memory fds): from the first `TimelineSemaphore::export`, or a probe semaphore's.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, OnceLock};

use gpu_allocator::MemoryLocation;

use super::{ExternalHandle, Shared};
use crate::device::BufferDesc;
use crate::error::MemoryError;

/// The kind of file an fd names: `st_mode`'s file type bits, `st_dev`, and `st_rdev` for
/// device nodes (0 otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FdKind {
    file_type: u32,
    dev: u64,
    rdev: u64,
}

/// `S_IFMT`, `S_IFCHR`, `S_IFBLK` (POSIX `<sys/stat.h>`).
const S_IFMT: u32 = 0o170_000;
const S_IFCHR: u32 = 0o020_000;
const S_IFBLK: u32 = 0o060_000;

impl FdKind {
    /// The kind of `fd`, read through `/proc/self/fd` (no new fd is opened).
    pub(crate) fn of(fd: BorrowedFd<'_>) -> std::io::Result<FdKind> {
        let m = std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd()))?;
        Ok(FdKind::from_stat(m.mode(), m.dev(), m.rdev()))
    }

    fn from_stat(mode: u32, dev: u64, rdev: u64) -> FdKind {
        let file_type = mode & S_IFMT;
        let node = file_type == S_IFCHR || file_type == S_IFBLK;
        FdKind {
            file_type,
            dev,
            rdev: if node { rdev } else { 0 },
        }
    }
}

impl std::fmt::Display for FdKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Linux's dev_t layout (minor bits 0-7 and 20-39, major bits 8-19 and 40-63), not
        // the old 16-bit one: /dev/userfaultfd is 10:257.
        let (major, minor) = (libc::major(self.rdev), libc::minor(self.rdev));
        match self.file_type {
            S_IFCHR => write!(f, "the character device {major}:{minor}"),
            S_IFBLK => write!(f, "the block device {major}:{minor}"),
            0o100_000 => write!(f, "a regular file of file system {:#x}", self.dev),
            0 => write!(f, "an anonymous inode"),
            t => write!(f, "a file of type {t:#o} on {:#x}", self.dev),
        }
    }
}

/// Remembers the kind of an opaque fd of memory this device exported (the first one
/// counts).
pub(crate) fn learn(shared: &Shared, fd: BorrowedFd<'_>) {
    learn_into(&shared.opaque_fd_kind, fd);
}

/// Remembers the kind of an opaque fd of a semaphore payload this device exported (the
/// first one counts): a driver's semaphore fds need not be the kind of its memory fds.
pub(crate) fn learn_semaphore(shared: &Shared, fd: BorrowedFd<'_>) {
    learn_into(&shared.opaque_semaphore_fd_kind, fd);
}

fn learn_into(cell: &OnceLock<FdKind>, fd: BorrowedFd<'_>) {
    if cell.get().is_none() {
        if let Ok(kind) = FdKind::of(fd) {
            let _ = cell.set(kind);
        }
    }
}

/// `KILN-E165` when `fd`, to be imported as an opaque fd, is another kind of file than this
/// device's own opaque exports (see the module docs). Without an export yet, one probe
/// buffer of 256 bytes is exported and dropped to learn it; where the device cannot export,
/// nothing is compared (the import is refused anyway, `KILN-E163`).
pub(crate) fn check_opaque(
    shared: &Arc<Shared>,
    object: &str,
    fd: BorrowedFd<'_>,
    handle: ExternalHandle,
) -> Result<(), MemoryError> {
    let probe = || {
        let desc = BufferDesc {
            label: "kiln opaque fd probe",
            size: 256,
            usage: ash::vk::BufferUsageFlags::TRANSFER_DST,
            location: MemoryLocation::GpuOnly,
        };
        super::exportable(shared, &desc, handle)
            .and_then(|b| b.export_memory().map(|(fd, _)| fd))
            .ok()
    };
    let own = &shared.opaque_fd_kind;
    check_learnt(own, probe, (object, fd, handle), Payload::Memory)
}

/// [`check_opaque`] for a semaphore payload (`Device::import_timeline_semaphore`): the same
/// undefined behaviour (VUID-VkImportSemaphoreFdInfoKHR-fd-01544; §7.4.5, "External
/// Semaphore Handle Types Compatibility"). Without a semaphore export yet, `probe` makes
/// one (an exportable timeline semaphore's fd, learnt by its export; `None`: the device
/// cannot export, and nothing is compared).
pub(crate) fn check_opaque_semaphore(
    shared: &Shared,
    object: &str,
    fd: BorrowedFd<'_>,
    handle: ExternalHandle,
    probe: impl FnOnce() -> Option<OwnedFd>,
) -> Result<(), MemoryError> {
    let own = &shared.opaque_semaphore_fd_kind;
    check_learnt(own, probe, (object, fd, handle), Payload::Semaphore)
}

/// The check of both: for an opaque fd, `own` (learnt from `probe`'s fd when still empty)
/// against the kind of the imported `fd`.
fn check_learnt(
    own: &OnceLock<FdKind>,
    probe: impl FnOnce() -> Option<OwnedFd>,
    (object, fd, handle): (&str, BorrowedFd<'_>, ExternalHandle),
    payload: Payload,
) -> Result<(), MemoryError> {
    if handle != ExternalHandle::OpaqueFd {
        return Ok(());
    }
    if own.get().is_none() {
        if let Some(probed) = probe() {
            learn_into(own, probed.as_fd());
        }
    }
    let Some(own) = own.get() else {
        return Ok(());
    };
    let kind = FdKind::of(fd).map_err(|e| uninspectable(object, handle, &e))?;
    compare(*own, kind, object, handle, payload)
}

/// `KILN-E165` when `fd`, to be imported as a DMA-BUF, is no DMA-BUF: before
/// `vkGetMemoryFdPropertiesKHR` sees it, which requires one
/// (VUID-vkGetMemoryFdPropertiesKHR-fd-00673: anything else is undefined behaviour). Every
/// DMA-BUF, whichever driver or device exported it, is a file of the kernel's dma-buf
/// pseudo file system, named `/dmabuf:<name>` in `/proc/self/fd` (`anon_inode:dmabuf`
/// before Linux 5.3).
pub(crate) fn check_dma_buf(
    object: &str,
    fd: BorrowedFd<'_>,
    handle: ExternalHandle,
) -> Result<(), MemoryError> {
    if handle != ExternalHandle::DmaBuf {
        return Ok(());
    }
    let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .map_err(|e| uninspectable(object, handle, &e))?;
    if is_dma_buf_name(&link.to_string_lossy()) {
        return Ok(());
    }
    let kind = FdKind::of(fd).map_err(|e| uninspectable(object, handle, &e))?;
    Err(MemoryError::InvalidExternalHandle {
        object: object.to_string(),
        handle,
        detail: format!(
            "it is {kind} ({}), not a DMA-BUF (importing it would be undefined behaviour, \
             VUID-vkGetMemoryFdPropertiesKHR-fd-00673)",
            link.display()
        ),
    })
}

/// Whether `/proc/self/fd`'s link of a file names a DMA-BUF.
fn is_dma_buf_name(link: &str) -> bool {
    link.starts_with("/dmabuf:") || link == "anon_inode:dmabuf"
}

fn uninspectable(object: &str, handle: ExternalHandle, e: &std::io::Error) -> MemoryError {
    MemoryError::InvalidExternalHandle {
        object: object.to_string(),
        handle,
        detail: format!("the fd cannot be inspected: {e}"),
    }
}

/// What an opaque fd carries: the kinds of the two are learnt apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Payload {
    Memory,
    Semaphore,
}

/// `KILN-E165` when `kind` (the fd's) is not `own` (this driver's exports of `payload`).
fn compare(
    own: FdKind,
    kind: FdKind,
    object: &str,
    handle: ExternalHandle,
    payload: Payload,
) -> Result<(), MemoryError> {
    if kind == own {
        return Ok(());
    }
    let (what, vuid) = match payload {
        Payload::Memory => ("memory", "VUID-VkImportMemoryFdInfoKHR-fd-00668"),
        Payload::Semaphore => (
            "a semaphore payload",
            "VUID-VkImportSemaphoreFdInfoKHR-fd-01544",
        ),
    };
    let of = match payload {
        Payload::Memory => "",
        Payload::Semaphore => " semaphore",
    };
    Err(MemoryError::InvalidExternalHandle {
        object: object.to_string(),
        handle,
        detail: format!(
            "it is {kind}, while this driver's opaque{of} fds are {own}: not {what} this \
             driver exported (importing it would be undefined behaviour, {vuid})"
        ),
    })
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    #[test]
    fn only_a_dma_buf_passes_as_one() {
        assert!(is_dma_buf_name("/dmabuf:"));
        assert!(is_dma_buf_name("/dmabuf:kiln export"));
        assert!(is_dma_buf_name("anon_inode:dmabuf"));
        assert!(!is_dma_buf_name("/dev/null"));
        assert!(!is_dma_buf_name("/memfd:llvmpipe memory fd (deleted)"));
        assert!(!is_dma_buf_name("anon_inode:[eventfd]"));
        let null = std::fs::File::open("/dev/null").unwrap();
        let e = check_dma_buf("x", null.as_fd(), ExternalHandle::DmaBuf).unwrap_err();
        assert_eq!(e.code(), "KILN-E165");
        assert!(
            e.to_string()
                .contains("the character device 1:3 (/dev/null), not a DMA-BUF"),
            "{e}"
        );
        assert!(check_dma_buf("x", null.as_fd(), ExternalHandle::OpaqueFd).is_ok());
    }
    use super::*;

    #[test]
    fn kinds_compare_type_file_system_and_node() {
        let memfd = FdKind::from_stat(0o100_777, 0x1, 0);
        assert_eq!(memfd, FdKind::from_stat(0o100_600, 0x1, 0), "modes aside");
        let null = FdKind::from_stat(0o020_666, 0x5, (1 << 8) | 3);
        let nvidiactl = FdKind::from_stat(0o020_666, 0x5, (195 << 8) | 255);
        assert_ne!(null, nvidiactl, "another device node");
        assert_ne!(memfd, null);
        assert_ne!(
            memfd,
            FdKind::from_stat(0o100_644, 0x803, 0),
            "a file on disk"
        );
        assert_eq!(null.to_string(), "the character device 1:3");
        assert_eq!(
            FdKind::from_stat(0o600, 0xe, 0).to_string(),
            "an anonymous inode"
        );
    }

    #[test]
    fn device_numbers_are_decoded_as_linux_encodes_them() {
        // Linux's dev_t: minor bits 0-7 and 20-39, major bits 8-19 and 40-63 (glibc's
        // makedev). /dev/userfaultfd is 10:257, /dev/vga_arbiter 10:256; a loop device past
        // 255 is 7:256.
        for (mode, major, minor) in [
            (0o020_600, 10, 257),
            (0o020_600, 10, 256),
            (0o060_600, 7, 256),
            (0o020_666, 4095, 0x000f_ffff),
            (0o020_666, 4096, 1),
        ] {
            let rdev = libc::makedev(major, minor);
            let kind = FdKind::from_stat(mode, 0x5, rdev);
            let what = if mode == 0o060_600 {
                "block"
            } else {
                "character"
            };
            assert_eq!(
                kind.to_string(),
                format!("the {what} device {major}:{minor}"),
                "rdev {rdev:#x}"
            );
        }
    }

    #[test]
    fn another_kind_is_refused_naming_the_payload() {
        let memfd = FdKind::from_stat(0o100_777, 0x1, 0);
        let null = FdKind::from_stat(0o020_666, 0x5, (1 << 8) | 3);
        let h = ExternalHandle::OpaqueFd;
        assert!(compare(memfd, memfd, "s", h, Payload::Semaphore).is_ok());
        let e = compare(memfd, null, "s", h, Payload::Semaphore).unwrap_err();
        assert_eq!(e.code(), "KILN-E165");
        let text = e.to_string();
        assert!(text.contains("it is the character device 1:3, while this driver's opaque semaphore fds are a regular file"), "{text}");
        assert!(
            text.contains("VUID-VkImportSemaphoreFdInfoKHR-fd-01544"),
            "{text}"
        );
        let e = compare(memfd, null, "b", h, Payload::Memory).unwrap_err();
        assert!(
            e.to_string()
                .contains("driver's opaque fds are a regular file"),
            "{e}"
        );
        assert!(
            e.to_string().contains("not memory this driver exported"),
            "{e}"
        );
    }

    #[test]
    fn dev_null_is_a_character_device() {
        let f = std::fs::File::open("/dev/null").unwrap();
        let k = FdKind::of(f.as_fd()).unwrap();
        assert_eq!(k.to_string(), "the character device 1:3");
    }
}
