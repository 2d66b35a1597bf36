//! External timeline semaphores (issue 28; Vulkan spec §7.4.5 "Semaphore Import and
//! Export", `VK_KHR_external_semaphore_fd`): a [`TimelineSemaphore`] created exportable
//! ([`Device::exportable_timeline_semaphore`]) hands out fds of its payload
//! ([`TimelineSemaphore::export`]); [`Device::import_timeline_semaphore`] makes one that
//! shares the payload of an fd (a permanent import). Submissions wait for and signal them
//! ([`After::timeline`](super::After::timeline), [`After::signal`](super::After::signal)),
//! so work of two `VkDevice`s, or of kiln and CUDA (`cuImportExternalSemaphore` with
//! `CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD`), is ordered on the GPU.
//!
//! Fds are owned as for memory (`device::external`): an import passes Vulkan a duplicate,
//! released to it on success (§7.4.5: a successful import of an fd transfers its
//! ownership) and closed by kiln on failure; the caller's fd is never closed by kiln.
//!
//! Only opaque fds: a timeline semaphore cannot be exported as a sync fd (sync fds are
//! binary payloads, VUID-VkSemaphoreGetFdInfoKHR-handleType-03253), which is `KILN-E163`.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

use ash::vk;

use super::TimelineSemaphore;
use crate::device::{create_timeline, Device, ExternalHandle, Shared};
use crate::error::{vk_device_err, MemoryError, Result, SubmissionError};

/// Refuses a timeline semaphore of `handle` the device cannot `what` ("export",
/// "import") before any Vulkan call that would fail; asks the driver
/// (`vkGetPhysicalDeviceExternalSemaphoreProperties` with the timeline type).
fn check(
    shared: &Shared,
    label: &str,
    handle: ExternalHandle,
    what: &'static str,
) -> Result<vk::ExternalSemaphoreHandleTypeFlags, SubmissionError> {
    let unsupported = |why: String| MemoryError::ExternalHandleUnsupported {
        object: label.to_string(),
        what,
        handle,
        device: shared.info.name.clone(),
        why,
    };
    let bits = match handle {
        ExternalHandle::OpaqueFd => vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD,
        ExternalHandle::SyncFd => {
            return Err(unsupported(
                "a sync fd is a binary semaphore payload; a timeline semaphore is shared as \
                 an opaque fd (VUID-VkSemaphoreGetFdInfoKHR-handleType-03253)"
                    .into(),
            )
            .into())
        }
        ExternalHandle::DmaBuf => {
            return Err(
                unsupported("it is a memory handle type, not a semaphore one".into()).into(),
            )
        }
    };
    if !shared.features.external_semaphore_fd {
        return Err(unsupported("the device lacks VK_KHR_external_semaphore_fd".into()).into());
    }
    let mut ty = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
    let info = vk::PhysicalDeviceExternalSemaphoreInfo::default()
        .handle_type(bits)
        .push_next(&mut ty);
    let mut props = vk::ExternalSemaphoreProperties::default();
    // SAFETY: a plain query on the device's physical device; locals outlive the call.
    unsafe {
        shared
            .instance
            .raw
            .get_physical_device_external_semaphore_properties(shared.physical, &info, &mut props)
    };
    let needed = if what == "export" {
        vk::ExternalSemaphoreFeatureFlags::EXPORTABLE
    } else {
        vk::ExternalSemaphoreFeatureFlags::IMPORTABLE
    };
    if !props.external_semaphore_features.contains(needed) {
        return Err(unsupported(format!(
            "vkGetPhysicalDeviceExternalSemaphoreProperties gives {:?} for timeline \
             semaphores, without {needed:?}",
            props.external_semaphore_features
        ))
        .into());
    }
    Ok(bits)
}

fn fd_fns(shared: &Shared) -> ash::khr::external_semaphore_fd::Device {
    crate::device::loader::walking(|| {
        ash::khr::external_semaphore_fd::Device::new(&shared.instance.raw, &shared.raw)
    })
}

impl Device {
    /// A timeline semaphore (counter `initial`) whose payload can be exported as `handle`
    /// ([`TimelineSemaphore::export`]); otherwise as
    /// [`timeline_semaphore`](Self::timeline_semaphore).
    ///
    /// Errors: `KILN-E163` the device cannot export timeline semaphores as `handle` (no
    /// `VK_KHR_external_semaphore_fd`, the driver does not offer it, `SyncFd`, `DmaBuf`);
    /// `KILN-E106` out of memory; `KILN-E104` other failures.
    pub fn exportable_timeline_semaphore(
        &self,
        label: &str,
        initial: u64,
        handle: ExternalHandle,
    ) -> Result<TimelineSemaphore, SubmissionError> {
        let shared = &self.shared;
        let bits = check(shared, label, handle, "export")?;
        let mut export = vk::ExportSemaphoreCreateInfo::default().handle_types(bits);
        let mut ty = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(initial);
        let info = vk::SemaphoreCreateInfo::default()
            .push_next(&mut ty)
            .push_next(&mut export);
        // SAFETY: a timeline semaphore exportable as a handle type the device offers for
        // timeline semaphores (checked); locals outlive the call.
        let raw = unsafe { shared.raw.create_semaphore(&info, None) }
            .map_err(vk_device_err("vkCreateSemaphore"))?;
        shared.set_name(raw, label);
        Ok(TimelineSemaphore::wrap(shared, raw, label, Some(handle)))
    }

    /// A timeline semaphore sharing the payload of `fd` (an export of a timeline semaphore
    /// of this or another device on the same physical device, or of CUDA), permanently
    /// (`vkImportSemaphoreFdKHR`). Its counter is the shared one. `fd` stays the caller's
    /// (kiln imports a duplicate).
    ///
    /// Errors: `KILN-E163` as
    /// [`exportable_timeline_semaphore`](Self::exportable_timeline_semaphore), for importing; `KILN-E165` `fd` is not a
    /// payload this device can import (a pipe, socket or directory; an fd of another kind
    /// of file than this device's own semaphore exports, checked before the driver sees it,
    /// `device::external`'s `fd_kind`; the driver's refusal: nothing imported, the
    /// semaphore destroyed);
    /// `KILN-E106` out of memory or fds; `KILN-E104` other failures.
    pub fn import_timeline_semaphore(
        &self,
        label: &str,
        fd: BorrowedFd<'_>,
        handle: ExternalHandle,
    ) -> Result<TimelineSemaphore, SubmissionError> {
        let shared = &self.shared;
        let bits = check(shared, label, handle, "import")?;
        crate::device::check_fd(label, fd, handle)?;
        crate::device::check_opaque_semaphore(shared, label, fd, handle, || {
            let probe = self.exportable_timeline_semaphore("kiln opaque fd probe", 0, handle);
            probe.ok()?.export().ok()
        })?;
        let dup = fd
            .try_clone_to_owned()
            .map_err(|e| MemoryError::InvalidExternalHandle {
                object: label.to_string(),
                handle,
                detail: format!("the fd cannot be duplicated: {e}"),
            })?;
        let raw = create_timeline(&shared.raw, 0)?;
        let info = vk::ImportSemaphoreFdInfoKHR::default()
            .semaphore(raw)
            .handle_type(bits)
            .fd(dup.as_raw_fd());
        // SAFETY: `raw` is a new timeline semaphore of this device, in no submission; the
        // handle type is importable for timeline semaphores (checked); the fd is kiln's
        // duplicate, alive for the call.
        if let Err(e) = unsafe { fd_fns(shared).import_semaphore_fd(&info) } {
            // SAFETY: never submitted.
            unsafe { shared.raw.destroy_semaphore(raw, None) };
            // Not imported: kiln's duplicate is closed once, by kiln or by the driver.
            crate::device::release_failed_import(dup, fd);
            return Err(match e {
                vk::Result::ERROR_INVALID_EXTERNAL_HANDLE => MemoryError::InvalidExternalHandle {
                    object: label.to_string(),
                    handle,
                    detail: "vkImportSemaphoreFdKHR: VK_ERROR_INVALID_EXTERNAL_HANDLE".into(),
                }
                .into(),
                e => vk_device_err("vkImportSemaphoreFdKHR")(e).into(),
            });
        }
        // Imported: the implementation owns the duplicate now.
        let _owned_by_vulkan = dup.into_raw_fd();
        shared.set_name(raw, label);
        Ok(TimelineSemaphore::wrap(shared, raw, label, None))
    }
}

impl TimelineSemaphore {
    /// A new fd of the semaphore's payload (`vkGetSemaphoreFdKHR`, opaque fd), owned by the
    /// caller: close it, or hand it to an importer
    /// ([`Device::import_timeline_semaphore`], CUDA's `cuImportExternalSemaphore`), which
    /// then owns it.
    ///
    /// Errors: `KILN-E163` the semaphore was not made by
    /// [`Device::exportable_timeline_semaphore`]; `KILN-E106` out of fds or memory;
    /// `KILN-E104` other failures.
    pub fn export(&self) -> Result<OwnedFd, SubmissionError> {
        let Some(handle) = self.exportable else {
            return Err(MemoryError::ExternalHandleUnsupported {
                object: self.label.clone(),
                what: "export",
                handle: ExternalHandle::OpaqueFd,
                device: self.shared.info.name.clone(),
                why: "it was not created by Device::exportable_timeline_semaphore".into(),
            }
            .into());
        };
        let bits = check(&self.shared, &self.label, handle, "export")?;
        let info = vk::SemaphoreGetFdInfoKHR::default()
            .semaphore(self.raw)
            .handle_type(bits);
        // SAFETY: the semaphore was created exportable as `bits` (opaque fd, valid for
        // timeline semaphores); the new fd is the caller's.
        let fd = unsafe { fd_fns(&self.shared).get_semaphore_fd(&info) }
            .map_err(vk_device_err("vkGetSemaphoreFdKHR"))?;
        // SAFETY: vkGetSemaphoreFdKHR returned a new fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        crate::device::learn_semaphore(&self.shared, std::os::fd::AsFd::as_fd(&fd));
        Ok(fd)
    }
}
