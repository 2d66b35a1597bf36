//! [`DeviceDesc`], the options of [`Device::new`](super::Device::new), and how the
//! environment variables that stand in for some of them are read.

use std::ffi::CStr;
use std::sync::Arc;

use super::{FaultInjector, LayerFeatures, EXECUTE_TIMEOUT, MAX_TRANSFER_QUEUES};
use crate::error::{Error, Result};

/// Options for [`Device::new`](crate::Device::new).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DeviceDesc {
    /// Application name given to the driver.
    pub app_name: String,
    /// Force the validation layer on/off; `None` = `KILN_VALIDATION` or debug build.
    pub validation: Option<bool>,
    /// Pick a device by index, name substring or `uuid:<32 hex digits>` (its
    /// [`DeviceInfo::device_uuid`](crate::DeviceInfo::device_uuid), as `nvidia-smi -L` prints it too); `None` = `KILN_DEVICE`
    /// or the best one. Several `Device`s, on one GPU or several, live side by side.
    pub device: Option<String>,
    /// Extra instance extensions, e.g. `VK_KHR_surface` + a platform surface extension
    /// for windows (`kiln::window::surface_extensions`). With `VK_KHR_surface` present the
    /// device also enables `VK_KHR_swapchain`. A missing one is `KILN-E107`.
    pub instance_extensions: Vec<&'static CStr>,
    /// Async-compute queues to create ([`QueueKind::Compute`](crate::QueueKind::Compute)), where the device has queues
    /// for them (see [`Device::queue`](crate::Device::queue)); default 1, at most [`MAX_COMPUTE_QUEUES`](crate::MAX_COMPUTE_QUEUES).
    pub compute_queues: u32,
    /// Transfer queues to create ([`QueueKind::Transfer`](crate::QueueKind::Transfer)); default 2 (uploads use the
    /// first, readbacks the last, so both directions of the bus run at once), at most
    /// [`MAX_TRANSFER_QUEUES`].
    pub transfer_queues: u32,
    /// Kinds the device has no queue of its own for get an emulated queue (a timeline of
    /// their own on the main `VkQueue`) instead of the main queue: for tests of the
    /// cross-queue paths on single-queue devices. Unstable.
    #[doc(hidden)]
    pub emulate_queues: bool,
    /// Validation-layer features (shader printf, GPU-assisted, synchronization validation);
    /// `None` = the list in `KILN_VALIDATION` (e.g. `KILN_VALIDATION=printf`), else
    /// [`LayerFeatures::default`] (synchronization validation only). Used only while the
    /// layer is on. Printf together with GPU-assisted validation is `KILN-E126`.
    pub layer_features: Option<LayerFeatures>,
    /// Make a submission during which the validation layer reported an error fail with
    /// `KILN-E121` (its messages) when it is waited for (`Device::execute`,
    /// `Submission::wait`, `Recording::execute`); `None` = `KILN_VALIDATION_FAIL=1`, else
    /// off (errors are logged, or written to stderr without a logger, and counted).
    pub validation_fail: Option<bool>,
    /// How long kiln's waits for the GPU last before `KILN-E108` (`execute`, `wait`,
    /// host access, descriptor-set rewrites); `None` = `KILN_WAIT_TIMEOUT_MS`, else
    /// [`EXECUTE_TIMEOUT`] (120 s). A bad `KILN_WAIT_TIMEOUT_MS` is `KILN-E128`.
    pub wait_timeout: Option<std::time::Duration>,
    /// Time every submission on the GPU (two timestamp queries each;
    /// `Submission::gpu_timings`); `None` = `KILN_TIMING=1` or `KILN_TRACE` set, else off.
    /// Recordings that open scopes (`Recorder::scope`) are timed either way.
    pub timing: Option<bool>,
    /// Allow one buffer larger than the device's `maxMemoryAllocationSize` (off: such a
    /// buffer is `KILN-E162`). Only for drivers that document larger allocations (NVIDIA's
    /// allocate beyond it); the validation layer's warning about it is then not counted.
    pub allocations_beyond_limit: bool,
    /// Test-only fault injection: makes chosen Vulkan calls of this device fail (see
    /// `kiln::hooks::FaultInjector`). Unstable.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub faults: Option<Arc<FaultInjector>>,
    /// Breadcrumbs: markers the GPU writes at every timing scope's start and end, so a
    /// lost device (`KILN-E105`) or a timed-out wait (`KILN-E108`) names the last scope
    /// that started and the first that did not finish ([`PostMortem`](crate::PostMortem)); `None` =
    /// `KILN_BREADCRUMBS=1|0`, else on in debug builds of kiln and off in release builds
    /// (each scope end then drains the GPU).
    pub breadcrumbs: Option<bool>,
    /// Load RenderDoc's in-application API (`librenderdoc`) before the instance, so
    /// [`Device::capture`](crate::Device::capture) can capture this device; `None` = when
    /// `KILN_CAPTURE` is set, and a RenderDoc already in the process (the application
    /// launched from RenderDoc) is used either way; `Some(false)` never touches it. Missing
    /// RenderDoc is the warning `KILN-W018`, never an error. Loading it hooks every
    /// instance made later in the process, and labels are recorded on this device.
    pub renderdoc: Option<bool>,
    /// The option structs of the layers above `device`, by type (the transfer layer's
    /// `TransferDesc`, set by `DeviceDesc::transfers` and its shorthands).
    pub(crate) layers: super::LayerOptions,
}

impl DeviceDesc {
    /// The fault injector (`faults`, feature `unstable-hooks`); `None` without the feature.
    pub(crate) fn fault_injector(&self) -> Option<Arc<FaultInjector>> {
        #[cfg(feature = "unstable-hooks")]
        return self.faults.clone();
        #[cfg(not(feature = "unstable-hooks"))]
        None
    }
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { DeviceDesc {
    app_name: String,
    validation: Option<bool>,
    device: Option<String>,
    instance_extensions: Vec<&'static CStr>,
    compute_queues: u32,
    transfer_queues: u32,
    #[doc(hidden)]
    emulate_queues: bool,
    layer_features: Option<LayerFeatures>,
    validation_fail: Option<bool>,
    wait_timeout: Option<std::time::Duration>,
    timing: Option<bool>,
    allocations_beyond_limit: bool,
    breadcrumbs: Option<bool>,
    renderdoc: Option<bool>,
} }

impl DeviceDesc {
    /// Sets [`DeviceDesc::faults`](#structfield.faults) (kiln's own tests and benchmarks;
    /// feature `unstable-hooks`).
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn faults(mut self, faults: Option<Arc<FaultInjector>>) -> Self {
        self.faults = faults;
        self
    }
}

impl Default for DeviceDesc {
    fn default() -> Self {
        DeviceDesc {
            app_name: "kiln".into(),
            validation: None,
            device: None,
            instance_extensions: Vec::new(),
            compute_queues: 1,
            transfer_queues: MAX_TRANSFER_QUEUES,
            emulate_queues: false,
            layer_features: None,
            validation_fail: None,
            wait_timeout: None,
            timing: None,
            allocations_beyond_limit: false,
            #[cfg(feature = "unstable-hooks")]
            faults: None,
            breadcrumbs: None,
            renderdoc: None,
            layers: Default::default(),
        }
    }
}

/// `true`/`false` from an environment flag (`1`, `true`, `on` / anything else), `None` unset.
pub(crate) fn env_flag(name: &str) -> Option<bool> {
    std::env::var(name)
        .ok()
        .map(|v| matches!(v.trim(), "1" | "true" | "on" | "yes"))
}

/// The wait timeout of `desc`. Errors: `KILN-E128`.
pub(super) fn wait_timeout(desc: &DeviceDesc) -> Result<std::time::Duration> {
    if let Some(t) = desc.wait_timeout {
        return Ok(t);
    }
    match std::env::var("KILN_WAIT_TIMEOUT_MS") {
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .map(std::time::Duration::from_millis)
            .map_err(|_| Error::WaitTimeoutSetting { value: v }),
        Err(_) => Ok(EXECUTE_TIMEOUT),
    }
}
