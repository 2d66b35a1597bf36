//! Instance, validation, physical-device choice, logical device, queue, memory and
//! one-shot command execution.
//!
//! A [`Device`] is cheap to clone (an `Arc`). Every kiln object holds the device's shared
//! state, so the `VkDevice` and `VkInstance` are destroyed only after the last object that
//! uses them, in the right order (Vulkan spec §5.2.1 "Device destruction").

mod budget;
mod buffer;
mod features;
mod image;
mod instance;
mod interner;
mod recording;
mod sampler;
mod staging;
mod submit;

use std::ffi::{CStr, CString};
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};

pub use buffer::{Buffer, BufferDesc};
pub use features::{Features, UpdateAfterBindLimits};
pub use gpu_allocator::MemoryLocation;
pub(crate) use image::{format_info, NumClass};
pub use image::{Image, ImageDesc};
pub use instance::{validation_wanted, ValidationReport, ValidationWatch};
pub(crate) use interner::Interner;
pub use recording::Recording;
pub use sampler::{Sampler, SamplerDesc};
pub use staging::STAGING_CHUNK;
pub use submit::{Submission, DEFAULT_SPIN, EXECUTE_TIMEOUT};

use crate::descriptors::SetLayoutCache;
use crate::error::{vk_err, Error, Result};
use crate::pipeline::{PipelineCache, PipelineCacheStatus, PipelineLayoutCache};
use budget::HeapBudget;
use instance::Instance;
use submit::Tracker;

/// What the chosen physical device is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// `VkPhysicalDeviceProperties::deviceName`.
    pub name: String,
    pub device_type: vk::PhysicalDeviceType,
    /// `VkPhysicalDeviceDriverProperties::driverName` (Vulkan 1.2), or empty.
    pub driver_name: String,
    /// `VkPhysicalDeviceDriverProperties::driverInfo` (Vulkan 1.2), or empty.
    pub driver_info: String,
    /// The device's `apiVersion`.
    pub api_version: u32,
    /// The version kiln uses (min of instance and device, capped at 1.3).
    pub used_api_version: u32,
    pub vendor_id: u32,
    /// Index in `vkEnumeratePhysicalDevices` order (what `KILN_DEVICE=<n>` names).
    pub index: usize,
    pub pipeline_cache_uuid: [u8; vk::UUID_SIZE],
    pub driver_version: u32,
}

impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({:?}, driver {} {}, Vulkan {}.{}.{})",
            self.name,
            self.device_type,
            self.driver_name,
            self.driver_info,
            vk::api_version_major(self.api_version),
            vk::api_version_minor(self.api_version),
            vk::api_version_patch(self.api_version)
        )
    }
}

/// Options for [`Device::new`].
#[derive(Clone, Debug)]
pub struct DeviceDesc {
    /// Application name given to the driver.
    pub app_name: String,
    /// Force the validation layer on/off; `None` = `KILN_VALIDATION` or debug build.
    pub validation: Option<bool>,
    /// Pick a device by index or name substring; `None` = `KILN_DEVICE` or the best one.
    pub device: Option<String>,
    /// Extra instance extensions, e.g. `VK_KHR_surface` + a platform surface extension
    /// for windows (`kiln::window::surface_extensions`). With `VK_KHR_surface` present the
    /// device also enables `VK_KHR_swapchain`. A missing one is `KILN-E107`.
    pub instance_extensions: Vec<&'static CStr>,
}

impl Default for DeviceDesc {
    fn default() -> Self {
        DeviceDesc {
            app_name: "kiln".into(),
            validation: None,
            device: None,
            instance_extensions: Vec::new(),
        }
    }
}

/// State shared by the device and every object made from it. Field order is drop order.
pub(crate) struct Shared {
    pub samplers: sampler::SamplerCache,
    pub set_layouts: SetLayoutCache,
    pub pipeline_layouts: PipelineLayoutCache,
    pub tracker: Tracker,
    /// Idle staging buffers (raw handles + allocations); destroyed in `Drop` after the
    /// tracker's retired objects, before the allocator.
    pub staging: staging::StagingCache,
    /// Tests and benchmarks: stage GpuOnly buffers even where their memory is mappable.
    pub force_staging: std::sync::atomic::AtomicBool,
    /// Saved and destroyed explicitly in `Drop`, after the tracker's retired objects.
    pub pipeline_cache: PipelineCache,
    pub allocator: ManuallyDrop<Mutex<Allocator>>,
    pub raw: ash::Device,
    pub queue: Mutex<vk::Queue>,
    pub queue_family: u32,
    pub physical: vk::PhysicalDevice,
    pub properties: vk::PhysicalDeviceProperties,
    pub features: Features,
    pub info: DeviceInfo,
    pub heaps: HeapBudget,
    debug_utils: Option<ash::ext::debug_utils::Device>,
    pub instance: Instance,
}

impl Shared {
    /// Names an object for validation messages (no-op without VK_EXT_debug_utils).
    pub fn set_name<H: vk::Handle>(&self, handle: H, name: &str) {
        let Some(du) = &self.debug_utils else { return };
        let Ok(cname) = CString::new(name) else {
            return;
        };
        let info = vk::DebugUtilsObjectNameInfoEXT::default()
            .object_handle(handle)
            .object_name(&cname);
        // SAFETY: `handle` is a live object of this device; `cname` outlives the call.
        let _ = unsafe { du.set_debug_utils_object_name(&info) };
    }

    pub fn limits(&self) -> &vk::PhysicalDeviceLimits {
        &self.properties.limits
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: this is the last reference; no other thread can use the device. Waiting
        // for idle first makes destroying everything below valid.
        unsafe {
            let _ = self.raw.device_wait_idle();
        }
        self.tracker.destroy(self);
        // Idle on an idle device; leases cannot exist (each borrows a live `Device`).
        self.staging.trim(self);
        self.samplers.clear();
        // Every pipeline holds an Arc<Shared> or was retired above; save the cache now.
        self.pipeline_cache.save_and_destroy(&self.raw);
        self.set_layouts.clear();
        self.pipeline_layouts.clear();
        // SAFETY: the allocator is dropped exactly once, here, before the device.
        unsafe { ManuallyDrop::drop(&mut self.allocator) };
        // SAFETY: every child object was destroyed above or by its owner's Drop (each owner
        // holds an Arc<Shared>, so none is left).
        unsafe { self.raw.destroy_device(None) };
        // `instance` drops after this (messenger, then instance).
    }
}

/// A Vulkan logical device with one queue that supports compute (and graphics where the
/// device has it). Clone to share; all clones are the same device.
#[derive(Clone)]
pub struct Device {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("info", &self.shared.info)
            .finish()
    }
}

fn rank(t: vk::PhysicalDeviceType) -> u32 {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

impl Device {
    /// Creates a device with default options (see [`DeviceDesc`]).
    ///
    /// Errors: `KILN-E100` no loader, `KILN-E101` no driver/device, `KILN-E102`
    /// `KILN_DEVICE` matched nothing, `KILN-E103` no compute queue, `KILN-E104` other
    /// Vulkan failures.
    pub fn new() -> Result<Device> {
        Self::with_desc(&DeviceDesc::default())
    }

    /// Creates a device with explicit options.
    pub fn with_desc(desc: &DeviceDesc) -> Result<Device> {
        let app = CString::new(desc.app_name.clone()).unwrap_or_else(|_| c"kiln".into());
        let instance = Instance::new(&app, desc.validation, &desc.instance_extensions)?;
        let wanted = desc
            .device
            .clone()
            .or_else(|| std::env::var("KILN_DEVICE").ok());
        let (physical, info, properties) = pick_physical(&instance, wanted.as_deref())?;
        log::info!("kiln: using {info}");
        let ir = &instance.raw;
        // SAFETY: `physical` comes from this instance.
        let families = unsafe { ir.get_physical_device_queue_family_properties(physical) };
        let family = families
            .iter()
            .position(|f| {
                f.queue_flags
                    .contains(vk::QueueFlags::COMPUTE | vk::QueueFlags::GRAPHICS)
            })
            .or_else(|| {
                families
                    .iter()
                    .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            })
            .ok_or_else(|| Error::NoComputeQueue {
                device: info.name.clone(),
            })? as u32;
        let (raw, features) = features::create_device(&instance, physical, family, &info)?;
        // SAFETY: family/index 0 were requested in create_device.
        let queue = unsafe { raw.get_device_queue(family, 0) };
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.raw.clone(),
            device: raw.clone(),
            physical_device: physical,
            debug_settings: Default::default(),
            buffer_device_address: features.buffer_device_address,
            allocation_sizes: Default::default(),
        })
        .map_err(|source| {
            // SAFETY: nothing else was created from `raw` yet.
            unsafe { raw.destroy_device(None) };
            Error::Allocation {
                object: "allocator".into(),
                source,
            }
        })?;
        let mut pipeline_cache = match PipelineCache::open(&raw, &properties) {
            Ok(c) => c,
            Err(e) => {
                drop(allocator);
                // SAFETY: nothing else was created from `raw` (the allocator holds no memory).
                unsafe { raw.destroy_device(None) };
                return Err(e);
            }
        };
        let tracker = match Tracker::create(&raw, features.timeline_semaphore) {
            Ok(t) => t,
            Err(e) => {
                drop(allocator);
                pipeline_cache.save_and_destroy(&raw);
                // SAFETY: nothing else was created from `raw` yet.
                unsafe { raw.destroy_device(None) };
                return Err(e);
            }
        };
        let debug_utils = instance
            .has_debug_utils()
            .then(|| ash::ext::debug_utils::Device::new(&instance.raw, &raw));
        let shared = Shared {
            samplers: Default::default(),
            set_layouts: SetLayoutCache::default(),
            pipeline_layouts: PipelineLayoutCache::default(),
            tracker,
            staging: Default::default(),
            force_staging: Default::default(),
            pipeline_cache,
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            raw,
            queue: Mutex::new(queue),
            queue_family: family,
            physical,
            properties,
            features,
            info,
            heaps: HeapBudget::new(&instance.raw, physical),
            debug_utils,
            instance,
        };
        Ok(Device {
            shared: Arc::new(shared),
        })
    }

    #[doc(hidden)]
    pub fn debug_strong_count(&self) -> usize {
        Arc::strong_count(&self.shared)
    }

    /// The chosen physical device and driver.
    pub fn info(&self) -> &DeviceInfo {
        &self.shared.info
    }

    /// The device limits (Vulkan spec §33.1 "Limits").
    pub fn limits(&self) -> &vk::PhysicalDeviceLimits {
        self.shared.limits()
    }

    /// Features kiln enabled on this device.
    pub fn features(&self) -> &Features {
        &self.shared.features
    }

    /// Validation-layer message counts so far for this device's instance.
    pub fn validation_report(&self) -> ValidationReport {
        self.shared
            .instance
            .messenger
            .report(self.shared.instance.validation)
    }

    /// A handle on the validation counters that outlives the device (see
    /// [`ValidationWatch`]).
    pub fn validation_watch(&self) -> ValidationWatch {
        ValidationWatch {
            state: self.shared.instance.messenger.clone(),
            enabled: self.shared.instance.validation,
        }
    }

    /// gpu-allocator's view: (live allocations, allocated bytes, reserved block bytes).
    pub fn memory_report(&self) -> (usize, u64, u64) {
        match self.shared.allocator.lock() {
            Ok(a) => {
                let r = a.generate_report();
                (
                    r.allocations.len(),
                    r.total_allocated_bytes,
                    r.total_capacity_bytes,
                )
            }
            Err(_) => (0, 0, 0),
        }
    }

    /// Frees the idle staging buffers that [`Buffer::upload`] and [`Buffer::read`] keep for
    /// reuse (at most two [`STAGING_CHUNK`]s per direction); returns the bytes freed.
    /// Transfers in progress keep theirs. The next staged transfer allocates again.
    pub fn release_staging_memory(&self) -> u64 {
        self.shared.staging.trim(&self.shared)
    }

    /// (idle staging buffers, their bytes) held for reuse by this device.
    pub fn staging_usage(&self) -> (usize, u64) {
        self.shared.staging.usage()
    }

    /// Makes `upload`/`read` of `GpuOnly` buffers go through staging buffers even where the
    /// device maps that memory (CPU and integrated devices such as lavapipe, where the
    /// direct path is normally taken), so tests and benchmarks exercise the staged path.
    #[doc(hidden)]
    pub fn debug_force_staging(&self, on: bool) {
        self.shared
            .force_staging
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Sets the staging chunk size (default [`STAGING_CHUNK`]), so tests can exercise
    /// chunked transfers with small buffers.
    #[doc(hidden)]
    pub fn debug_set_staging_chunk(&self, bytes: u64) {
        self.shared.staging.set_chunk(bytes);
    }

    /// Bytes kiln holds in buffers per memory heap: `(used, heap size)` by heap index.
    pub fn heap_usage(&self) -> Vec<(u64, u64)> {
        self.shared.heaps.usage()
    }

    /// What happened to the persisted pipeline cache at device creation (see
    /// [`crate::pipeline::cache`]).
    pub fn pipeline_cache_status(&self) -> &PipelineCacheStatus {
        self.shared.pipeline_cache.status()
    }

    /// The file the pipeline cache is saved to when the device drops, if persistence is on.
    pub fn pipeline_cache_path(&self) -> Option<&std::path::Path> {
        self.shared.pipeline_cache.path()
    }

    /// Writes the pipeline cache to its file now (atomically) instead of waiting for the
    /// device to drop. Failures are logged (`KILN-W003`), never returned.
    pub fn save_pipeline_cache(&self) {
        self.shared.pipeline_cache.save(&self.shared.raw);
    }

    /// Waits until the device is idle (`vkDeviceWaitIdle`).
    pub fn wait_idle(&self) -> Result<()> {
        let _q = self.shared.queue.lock();
        // SAFETY: the queue mutex is held so no submission races the wait.
        unsafe { self.shared.raw.device_wait_idle() }.map_err(vk_err("vkDeviceWaitIdle"))
    }

    /// The raw `ash` device, for what kiln does not wrap.
    ///
    /// # Safety
    /// Objects created through it are the caller's to destroy before the last kiln object
    /// of this device is dropped; kiln's own objects must not be destroyed through it.
    pub unsafe fn raw(&self) -> &ash::Device {
        &self.shared.raw
    }

    /// The raw `ash` instance (same rules as [`raw`](Self::raw)).
    ///
    /// # Safety
    /// See [`raw`](Self::raw).
    pub unsafe fn raw_instance(&self) -> &ash::Instance {
        &self.shared.instance.raw
    }

    /// The raw physical device handle.
    pub fn raw_physical_device(&self) -> vk::PhysicalDevice {
        self.shared.physical
    }
}

fn pick_physical(
    instance: &Instance,
    wanted: Option<&str>,
) -> Result<(vk::PhysicalDevice, DeviceInfo, vk::PhysicalDeviceProperties)> {
    let ir = &instance.raw;
    // SAFETY: plain query on a live instance.
    let devices =
        unsafe { ir.enumerate_physical_devices() }.map_err(vk_err("vkEnumeratePhysicalDevices"))?;
    if devices.is_empty() {
        return Err(Error::NoDevice);
    }
    let mut candidates = Vec::new();
    for (index, &pd) in devices.iter().enumerate() {
        // SAFETY: `pd` belongs to this instance.
        let props = unsafe { ir.get_physical_device_properties(pd) };
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        if props.api_version >= vk::API_VERSION_1_2 {
            let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
            // SAFETY: `p2` chains only `driver`, alive for the call.
            unsafe { ir.get_physical_device_properties2(pd, &mut p2) };
        }
        let name = props
            .device_name_as_c_str()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let info = DeviceInfo {
            name,
            device_type: props.device_type,
            driver_name: driver
                .driver_name_as_c_str()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            driver_info: driver
                .driver_info_as_c_str()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            api_version: props.api_version,
            used_api_version: props.api_version.min(instance.api_version),
            vendor_id: props.vendor_id,
            index,
            pipeline_cache_uuid: props.pipeline_cache_uuid,
            driver_version: props.driver_version,
        };
        candidates.push((pd, info, props));
    }
    let chosen = match wanted {
        Some(w) if !w.is_empty() => {
            let by_index = w.parse::<usize>().ok();
            let lw = w.to_lowercase();
            candidates
                .into_iter()
                .find(|(_, i, _)| by_index == Some(i.index) || i.name.to_lowercase().contains(&lw))
        }
        _ => candidates
            .into_iter()
            .min_by_key(|(_, i, _)| (rank(i.device_type), i.index)),
    };
    match chosen {
        Some(c) => Ok(c),
        None => {
            let available = devices
                .iter()
                .enumerate()
                .map(|(i, &pd)| {
                    // SAFETY: `pd` belongs to this instance.
                    let p = unsafe { ir.get_physical_device_properties(pd) };
                    let n = p
                        .device_name_as_c_str()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    format!("{i}: {n}")
                })
                .collect::<Vec<_>>()
                .join(", ");
            Err(Error::DeviceNotMatched {
                wanted: wanted.unwrap_or_default().to_string(),
                available,
            })
        }
    }
}
