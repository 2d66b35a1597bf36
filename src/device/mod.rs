//! The bottom layer: instance and validation messenger, physical-device choice, features,
//! the logical device, its queues (as handles, each with a timeline), memory, the
//! `Buffer`/`Image`/`Sampler` objects, object lifetime and deferred destruction, the
//! generic interner and the slots through which the layers above keep per-device state.
//!
//! A [`Device`] is cheap to clone (an `Arc`). Every kiln object holds the device's shared
//! state, so the `VkDevice` and `VkInstance` are destroyed only after the last object that
//! uses them, in the right order (Vulkan spec §5.2.1 "Device destruction"; the order is in
//! the docs of `slots`).
//!
//! Nothing here names a type of the layers above (`shaders`, `descriptors`, `pipeline`,
//! `commands`, `queue`, `transfer`, `window`): their per-device registries are layer slots,
//! and their options on a [`DeviceDesc`] are kept by type (`slots::LayerOptions`).

mod acceleration_structure;
mod breadcrumbs;
mod budget;
mod buffer;
mod buffer_view;
mod capabilities;
mod capture;
mod coopmat2;
mod desc;
mod external;
mod families;
mod faults;
mod features;
mod format;
mod image;
mod image_desc;
mod image_view;
mod instance;
mod interner;
mod layer_settings;
mod layout_usage;
mod lifetime;
pub(crate) mod loader;
pub(crate) use layout_usage::layout_usage_ok;
mod messages;
mod partial;
mod physical;
mod properties;
mod queue;
mod queue_order;
mod sampler;
mod slots;
mod subresources;
mod texel_block;
mod timestamps;

use std::ffi::CString;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::vulkan::Allocator;

pub use crate::error::post_mortem::{
    Breadcrumb, DeviceFault, FaultAddress, PostMortem, VendorFault,
};
pub(crate) use acceleration_structure::{
    functions as acceleration_structure_functions, BuildInput,
    Geometry as AccelerationStructureInputs,
};
pub use acceleration_structure::{
    AccelerationStructure, AccelerationStructureDesc, AccelerationStructureGeometry,
    AccelerationStructureInstance, AccelerationStructureLimits, AccelerationStructureTriangles,
};
pub(crate) use breadcrumbs::{
    CrumbScope, Crumbs, Event as CrumbEvent, Writer as CrumbWriter, MAX_PER_RECORDING, SUBMISSION,
};
pub use budget::HeapUsage;
pub(crate) use buffer::{allocate_bound, check_copy, check_size as check_buffer_size, free_bound};
pub use buffer::{Buffer, BufferDesc};
pub use buffer_view::BufferView;
pub use capabilities::{capability_name, capability_requirement, known_capabilities};
#[cfg(feature = "window")]
pub(crate) use capture::presented as capture_presented;
pub(crate) use capture::register_run_capture;
pub use capture::CaptureReport;
pub use coopmat2::{
    CooperativeMatrix2Features, CooperativeMatrix2Properties, FlexibleDimensionsConfig,
};
pub(crate) use desc::env_flag;
use desc::wait_timeout;
pub use desc::DeviceDesc;
pub(crate) use external::{
    check_fd, check_opaque_semaphore, import_image_memory, learn_semaphore, release_failed_import,
};
pub use external::{ExternalHandle, ExternalMemory};
pub(crate) use families::{supported_stages, Sharing};
pub use families::{QueueInfo, QueueKind, QueueSource, MAX_COMPUTE_QUEUES, MAX_TRANSFER_QUEUES};
pub use faults::{FaultInjector, FaultSite};
pub(crate) use features::local_read_missing;
pub use features::{Features, InlineUniformBlockLimits, MeshShaderLimits, UpdateAfterBindLimits};
pub(crate) use format::{format_info, NumClass};
pub use gpu_allocator::MemoryLocation;
pub use image::Image;
pub use image_desc::ImageDesc;
pub use image_view::{ImageView, ImageViewDesc};
#[cfg(feature = "unstable-hooks")]
pub(crate) use instance::caller;
pub(crate) use instance::{set_caller, SubmitContext};
pub use instance::{LayerFeatures, ValidationReport, ValidationWatch};
pub(crate) use interner::Interner;
pub use physical::DeviceInfo;
pub use properties::{ComputeProperties, CooperativeMatrixConfig, COMPONENT_TYPE_BFLOAT16_KHR};
pub(crate) use queue::{create_timeline, Queue, QueueGuard, QueueStamps, ResourceStamps};
pub use queue::{DEFAULT_SPIN, EXECUTE_TIMEOUT, MAX_QUEUES};
pub(crate) use queue_order::QueueOrder;
pub use sampler::{Sampler, SamplerDesc};
pub(crate) use slots::{LayerOptions, LayerSlot};
pub(crate) use subresources::SubresourceMap;
pub use subresources::Subresources;
pub(crate) use timestamps::QueryLease;

use crate::error::{DeviceError, MemoryError, Result};
use budget::HeapBudget;
use instance::Instance;
use lifetime::Graveyard;

/// What [`Device::memory_report`] returns: gpu-allocator's view of kiln's device memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// Live allocations (buffers, images, staging buffers).
    pub allocations: usize,
    /// Bytes of those allocations.
    pub allocated_bytes: u64,
    /// Bytes of the memory blocks gpu-allocator reserved for them.
    pub reserved_bytes: u64,
}

/// State shared by the device and every object made from it. Teardown order: see `Drop`
/// and the docs of `slots`.
pub(crate) struct Shared {
    /// Per-device state of the layers above (torn down first, in reverse order).
    slots: slots::Slots,
    pub samplers: sampler::SamplerCache,
    /// The kind of file this device's opaque fd exports are (`external::fd_kind`).
    opaque_fd_kind: std::sync::OnceLock<external::FdKind>,
    /// The kind of file this device's opaque fd semaphore exports are (`external::fd_kind`).
    opaque_semaphore_fd_kind: std::sync::OnceLock<external::FdKind>,
    /// Retired objects waiting for their submissions.
    graveyard: Graveyard,
    pub allocator: ManuallyDrop<Mutex<Allocator>>,
    pub raw: ash::Device,
    /// The device's kiln queues ([`Queue::MAIN`] first), each with its own timeline.
    pub queues: Vec<Queue>,
    /// kiln queue indices per [`QueueKind`] (`[Main, Compute, Transfer]`, by
    /// `QueueKind::slot`); a kind without queues of its own lists the main queue.
    pub queues_by_kind: [Vec<usize>; 3],
    /// Held while a submission derives its waits on other queues, submits and stamps the
    /// resources it uses (devices with more than one kiln queue), so two submissions on two
    /// queues that use one resource are always ordered (`queue::submit`).
    pub cross_queue: Mutex<()>,
    /// Semaphore waits on other queues' timelines that submissions made so far (for tests:
    /// `Device::debug_cross_queue_waits`).
    pub cross_queue_waits: std::sync::atomic::AtomicU64,
    /// How buffers and images are shared between the queue families.
    pub sharing: Sharing,
    /// `minImportedHostPointerAlignment` when `VK_EXT_external_memory_host` is enabled.
    pub host_import_alignment: Option<u64>,
    pub physical: vk::PhysicalDevice,
    pub properties: vk::PhysicalDeviceProperties,
    pub features: Features,
    /// Every supported feature, for the capability check (`capabilities.rs`).
    pub supported: capabilities::Supported,
    /// [`Device::compute_properties`].
    pub compute: ComputeProperties,
    pub info: DeviceInfo,
    pub heaps: HeapBudget,
    /// Per queue, the last submission with commands whose resources kiln cannot see (raw
    /// commands, pipelines using buffer device addresses): host access to any mapped
    /// buffer waits for it as well as for the buffer's own stamps.
    pub opaque: QueueStamps,
    /// The test-only fault injector (`DeviceDesc::faults`).
    faults: Option<Arc<FaultInjector>>,
    /// Set once a call reported VK_ERROR_DEVICE_LOST: submissions and waits are refused
    /// from then on (Vulkan spec §5.2.3 "Lost Device").
    lost: AtomicBool,
    debug_utils: Option<ash::ext::debug_utils::Device>,
    /// Debug-utils labels on command buffers and queues (validation on, or `KILN_LABELS=1`,
    /// with VK_EXT_debug_utils present).
    pub labels: bool,
    /// Submissions that report validation errors fail (`DeviceDesc::validation_fail`).
    pub validation_fail: bool,
    /// The timeout of kiln's waits (`DeviceDesc::wait_timeout`).
    pub wait_timeout: std::time::Duration,
    /// `DeviceDesc::allocations_beyond_limit`.
    pub allocations_beyond_limit: bool,
    /// Time every submission (`DeviceDesc::timing`; `Device::start_trace` turns it on).
    pub timing: std::sync::atomic::AtomicBool,
    /// Per kiln queue: timestamps and the reused query pools (`timestamps`).
    pub timestamps: timestamps::Timestamps,
    /// `vkCmdPushDescriptorSetKHR` & co. when VK_KHR_push_descriptor is enabled.
    pub push_descriptor: Option<ash::khr::push_descriptor::Device>,
    /// `vkCmdDrawMeshTasksEXT` & co. when VK_EXT_mesh_shader is enabled.
    pub mesh_shader: Option<ash::ext::mesh_shader::Device>,
    /// `vkCmdBuildAccelerationStructuresKHR` & co. when VK_KHR_acceleration_structure is
    /// enabled.
    pub acceleration_structure: Option<ash::khr::acceleration_structure::Device>,
    /// Marker rings and VK_EXT_device_fault (`breadcrumbs`).
    breadcrumbs: breadcrumbs::Breadcrumbs,
    pub instance: Instance,
}

impl Shared {
    /// Creates the instance, picks the physical device, creates the logical device with its
    /// queues and the allocator. The caller registers the upper layers' slots, then shares
    /// the result.
    ///
    /// Errors: `KILN-E100` no loader, `KILN-E101` no driver/device, `KILN-E102`
    /// `KILN_DEVICE` matched nothing, `KILN-E103` no compute queue, `KILN-E107` no
    /// synchronization2 or timeline semaphores (Vulkan 1.3), `KILN-E104` other Vulkan
    /// failures.
    pub(crate) fn create(desc: &DeviceDesc) -> Result<Shared> {
        // RenderDoc, when asked for, is loaded first (`capture.rs`).
        capture::create_device(desc.renderdoc, || Self::create_once(desc))
    }

    fn create_once(desc: &DeviceDesc) -> Result<Shared> {
        let app = CString::new(desc.app_name.clone()).unwrap_or_else(|_| c"kiln".into());
        let layer = instance::layer_features(desc.layer_features)?;
        let wait_timeout = wait_timeout(desc)?;
        let instance = Instance::new(&app, desc.validation, layer, &desc.instance_extensions)?;
        (instance.messenger.beyond_allocation_limit).store(
            desc.allocations_beyond_limit,
            std::sync::atomic::Ordering::Relaxed,
        );
        let (physical, info, properties, families, plan) = partial::pick_device(desc, &instance)?;
        let breadcrumbs_on = breadcrumbs::enabled(desc.breadcrumbs);
        let partial::Built {
            raw,
            queues,
            allocator,
            features,
            supported,
            compute,
            host_import_alignment,
        } = partial::build_device(
            &instance,
            physical,
            &info,
            &properties,
            &plan,
            layer,
            breadcrumbs_on,
        )?;
        let debug_utils = instance
            .has_debug_utils()
            .then(|| loader::walking(|| ash::ext::debug_utils::Device::new(&instance.raw, &raw)));
        let labels = debug_utils.is_some()
            && (instance.validation || env_flag("KILN_LABELS") == Some(true) || capture::loaded());
        let timestamps = timestamps::Timestamps::new(
            &instance,
            &raw,
            physical,
            &properties,
            &families,
            &queues,
            features.host_query_reset,
            features.calibrated_timestamps,
        );
        let partial::ExtensionFns {
            push_descriptor,
            mesh_shader,
            acceleration_structure,
            breadcrumbs,
        } = partial::extension_fns(&instance, &raw, &features, breadcrumbs_on);
        let shared = Shared {
            slots: Default::default(),
            samplers: Default::default(),
            opaque_fd_kind: Default::default(),
            opaque_semaphore_fd_kind: Default::default(),
            graveyard: Default::default(),
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            raw,
            sharing: Sharing::new(&queues),
            queues,
            queues_by_kind: plan.by_kind,
            cross_queue: Mutex::new(()),
            cross_queue_waits: Default::default(),
            host_import_alignment,
            physical,
            properties,
            features,
            supported,
            compute,
            info,
            heaps: HeapBudget::new(&instance.raw, physical),
            opaque: QueueStamps::default(),
            faults: desc.fault_injector(),
            lost: AtomicBool::new(false),
            debug_utils,
            labels,
            validation_fail: partial::validation_fail(desc),
            wait_timeout,
            allocations_beyond_limit: desc.allocations_beyond_limit,
            timing: AtomicBool::new(partial::timing_on(desc)),
            timestamps,
            push_descriptor,
            mesh_shader,
            acceleration_structure,
            breadcrumbs,
            instance,
        };
        // Validation messages name kiln's queues (`VkQueue 0x..[kiln queue 2 (Transfer)]`),
        // and the messenger reads the index back (`instance::ordered_note`).
        for (i, q) in shared.queues.iter().enumerate() {
            shared.set_name(q.raw_handle(), &Queue::debug_name(i, &shared.queues));
        }
        Ok(shared)
    }

    /// VK_EXT_debug_utils' device functions when labels are on (see `labels`).
    pub(crate) fn label_fns(&self) -> Option<&ash::ext::debug_utils::Device> {
        if self.labels {
            self.debug_utils.as_ref()
        } else {
            None
        }
    }

    /// Names an object for validation messages (no-op without VK_EXT_debug_utils).
    pub(crate) fn set_name<H: vk::Handle + Copy>(&self, handle: H, name: &str) {
        let Some(du) = &self.debug_utils else { return };
        // Naming VK_NULL_HANDLE is invalid (VUID-VkDebugUtilsObjectNameInfoEXT-objectType-02590)
        // and crashes validation layer 1.3.239: a transfer-only image has a null view.
        if handle.as_raw() == 0 {
            return;
        }
        let Ok(cname) = CString::new(name) else {
            return;
        };
        let info = vk::DebugUtilsObjectNameInfoEXT::default()
            .object_handle(handle)
            .object_name(&cname);
        // The loader's terminator walks every instance's drivers: `loader` module docs.
        let _loader = loader::shared();
        // SAFETY: `handle` is a live object of this device; `cname` outlives the call.
        let _ = unsafe { du.set_debug_utils_object_name(&info) };
    }

    pub(crate) fn limits(&self) -> &vk::PhysicalDeviceLimits {
        &self.properties.limits
    }

    /// Checks the cooperative-matrix scopes a module `module` (its label) uses against this
    /// device: `SUBGROUP` needs nothing beyond the capability (checked with the
    /// capabilities), `WORKGROUP` needs VK_NV_cooperative_matrix2's
    /// `cooperativeMatrixWorkgroupScope` enabled, any other scope is never valid.
    ///
    /// Errors: `KILN-E112` naming the scope and what is missing.
    pub(crate) fn check_cooperative_matrix_scopes(
        &self,
        module: &str,
        scopes: &[vk::ScopeKHR],
    ) -> Result<(), DeviceError> {
        for &scope in scopes {
            capabilities::check_scope(&self.info.name, &self.supported, module, scope)?;
        }
        Ok(())
    }

    /// Checks the SPIR-V capabilities of the module `module` (its label; `extensions`, its
    /// `OpExtension` names), used by an entry point of `stage`, against this device (the
    /// table in `capabilities.rs`).
    ///
    /// Errors: `KILN-E107`, `KILN-E110`, `KILN-E111` (see `capabilities::check`).
    pub(crate) fn check_capabilities<'a>(
        &self,
        module: &str,
        extensions: &[String],
        capabilities: impl IntoIterator<Item = &'a str>,
        stage: vk::ShaderStageFlags,
    ) -> Result<(), DeviceError> {
        let m = capabilities::ModuleCapabilities { module, extensions };
        // Capabilities newer than kiln's grammar (kept as numbers) first: no device
        // kiln opens has them, and they are what the module's author must hear about.
        let mut capabilities: Vec<&str> = capabilities.into_iter().collect();
        capabilities.sort_by_key(|c| c.parse::<u32>().is_err());
        for cap in capabilities {
            capabilities::check(
                &self.info.name,
                &self.supported,
                &self.compute,
                m,
                cap,
                stage,
            )?;
        }
        Ok(())
    }

    /// The main queue (every device has it).
    #[inline]
    pub(crate) fn main_queue(&self) -> &Queue {
        &self.queues[Queue::MAIN]
    }

    /// One call of fault site `site` (see `faults`): `Err` when the device's fault
    /// injector makes this call fail. Called just before the real Vulkan call.
    #[inline]
    pub(crate) fn inject(&self, site: FaultSite) -> std::result::Result<(), vk::Result> {
        match &self.faults {
            None => Ok(()),
            Some(f) => f.hit(site),
        }
    }

    /// Whether the device's loss was injected (`faults`), not reported by the driver.
    pub(crate) fn lost_injected(&self) -> bool {
        self.faults.as_ref().is_some_and(|f| f.lost_injected())
    }

    /// [`inject`](Self::inject) for the memory allocation of object `label`: an injected
    /// result is gpu-allocator's error for it (`KILN-E150`).
    pub(crate) fn inject_allocation(&self, label: &str) -> Result<(), MemoryError> {
        self.inject(FaultSite::AllocateMemory).map_err(|r| {
            let source = match r {
                vk::Result::ERROR_OUT_OF_DEVICE_MEMORY | vk::Result::ERROR_OUT_OF_HOST_MEMORY => {
                    gpu_allocator::AllocationError::OutOfMemory
                }
                r => gpu_allocator::AllocationError::Internal(format!("vkAllocateMemory: {r:?}")),
            };
            MemoryError::Allocation {
                object: label.to_string(),
                source,
            }
        })
    }

    /// Whether a call reported VK_ERROR_DEVICE_LOST.
    #[inline]
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Records the device as lost when `e` says so (with its post-mortem), and passes `e`
    /// on.
    pub(crate) fn note_device_error(&self, e: DeviceError) -> DeviceError {
        let e = self.with_post_mortem(e);
        if matches!(e, DeviceError::DeviceLost { .. }) && !self.lost.swap(true, Ordering::AcqRel) {
            log::error!("kiln: the device `{}` is lost: {e}", self.info.name);
        }
        e
    }

    /// `KILN-E105` for `call` when the device was lost earlier (naming the last submission
    /// of the main queue).
    pub(crate) fn check_lost(&self, call: &'static str) -> Result<(), DeviceError> {
        if self.is_lost() {
            return Err(self.with_post_mortem(DeviceError::DeviceLost {
                call,
                label: self.main_queue().last_label(),
                report: None,
            }));
        }
        Ok(())
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: this is the last reference; no other thread can use the device. Waiting
        // for idle first makes destroying everything below valid.
        unsafe {
            let _ = self.raw.device_wait_idle();
        }
        self.graveyard.destroy_all(self);
        self.destroy_marker_rings();
        // Reverse order of registration; each slot's own hook (see `slots`).
        self.teardown_slots();
        // Every query lease is held by a submission or recording, each holding the device.
        self.timestamps.destroy(&self.raw);
        // Every sampler holds an Arc<Shared> or was retired above.
        self.samplers.clear();
        for q in &self.queues {
            q.destroy(&self.raw);
        }
        // SAFETY: the allocator is dropped exactly once, here, before the device.
        unsafe { ManuallyDrop::drop(&mut self.allocator) };
        let _loader = loader::exclusive();
        // SAFETY: every child object was destroyed above or by its owner's Drop (each owner
        // holds an Arc<Shared>, so none is left).
        unsafe { self.raw.destroy_device(None) };
        // `instance` drops after this (messenger, then instance).
    }
}

/// A Vulkan logical device: its main queue (compute, and graphics where the device has
/// it) and, where the device has them, async-compute and transfer queues
/// ([`Device::queue`]). Clone to share; all clones are the same device.
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

impl Device {
    #[cfg(feature = "unstable-hooks")]
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

    /// Subgroups (size, operations, stages, size control range), shared memory, workgroup
    /// and buffer limits, push descriptors and the cooperative-matrix configurations
    /// (empty where the device has none, as on lavapipe).
    pub fn compute_properties(&self) -> &ComputeProperties {
        &self.shared.compute
    }

    /// Whether a module declaring SPIR-V capability `capability` (rspirv's name, e.g.
    /// `"GroupNonUniformArithmetic"`) can run in `stage` on this device: what pipeline
    /// creation checks for each capability, before any Vulkan call.
    ///
    /// Errors: `KILN-E107` the device lacks the feature, extension or property (the message
    /// names capability, feature and device), `KILN-E110` a capability kiln does not know,
    /// `KILN-E111` an OpenCL-only capability.
    pub fn check_capability(
        &self,
        capability: &str,
        stage: vk::ShaderStageFlags,
    ) -> Result<(), DeviceError> {
        self.shared
            .check_capabilities("(query)", &[], [capability], stage)
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

    /// gpu-allocator's view of the device memory kiln allocated.
    pub fn memory_report(&self) -> MemoryReport {
        match self.shared.allocator.lock() {
            Ok(a) => {
                let r = a.generate_report();
                MemoryReport {
                    allocations: r.allocations.len(),
                    allocated_bytes: r.total_allocated_bytes,
                    reserved_bytes: r.total_capacity_bytes,
                }
            }
            Err(_) => MemoryReport::default(),
        }
    }

    /// Bytes kiln holds in buffers per memory heap, by heap index.
    pub fn heap_usage(&self) -> Vec<HeapUsage> {
        self.shared.heaps.usage()
    }

    /// Waits until the device is idle (`vkDeviceWaitIdle`).
    ///
    /// Errors: `KILN-E105` device lost (naming the last submission; also when it was lost
    /// earlier: [`is_lost`](Self::is_lost)).
    pub fn wait_idle(&self) -> Result<(), DeviceError> {
        // Every `VkQueue`'s lock, in index order (the one order kiln takes several in);
        // emulated queues share the main queue's lock, taken once.
        let queues = &self.shared.queues;
        let guards: Vec<_> = queues
            .iter()
            .enumerate()
            .filter(|(i, q)| !queues[..*i].iter().any(|p| p.same_vk_queue(q)))
            .map(|(_, q)| q.lock())
            .collect();
        // SAFETY: every queue's mutex is held so no submission races the wait.
        let r = unsafe { self.shared.raw.device_wait_idle() };
        drop(guards);
        r.map_err(|e| {
            let e = self
                .shared
                .main_queue()
                .error("vkDeviceWaitIdle", self.shared.wait_timeout, e);
            self.shared.note_device_error(e)
        })?;
        self.shared.check_lost("vkDeviceWaitIdle")
    }

    /// Whether the device is lost: a submission or a wait reported VK_ERROR_DEVICE_LOST
    /// (Vulkan spec §5.2.3). A lost device refuses every later submission and wait with
    /// `KILN-E105`; objects may still be dropped (they are destroyed at teardown). Create a
    /// new device to carry on.
    pub fn is_lost(&self) -> bool {
        self.shared.is_lost()
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

    /// Creates a buffer. Errors: `KILN-E152` size 0, `KILN-E159` beyond `maxBufferSize`,
    /// `KILN-E162` beyond `maxMemoryAllocationSize` (see
    /// [`DeviceDesc::allocations_beyond_limit`]), `KILN-E154` more than the heap has left,
    /// `KILN-E150` out of memory for its memory, `KILN-E106` out of memory for the buffer.
    pub fn buffer(&self, desc: &BufferDesc<'_>) -> Result<Buffer, MemoryError> {
        Buffer::new(&self.shared, desc)
    }

    /// Creates a 2D image with a view of all its mips, in layout UNDEFINED. An image whose
    /// usage is only TRANSFER_SRC / TRANSFER_DST gets no view ([`Image::view`] is null;
    /// VUID-VkImageViewCreateInfo-image-04441).
    ///
    /// Errors: `KILN-E180` zero or too large extent, bad mip count, or a format/usage pair
    /// the device does not support; `KILN-E150` out of memory for its memory,
    /// `KILN-E106` out of memory for the image.
    pub fn image(&self, desc: &ImageDesc<'_>) -> Result<Image, MemoryError> {
        Image::new(&self.shared, desc)
    }

    /// The interned sampler for `desc`: the same `VkSampler` for equal descriptions.
    ///
    /// Errors: `KILN-E190` a description Vulkan would reject (LOD range, bias or anisotropy
    /// beyond the device limits, anisotropy without the feature).
    pub fn sampler(&self, desc: &SamplerDesc) -> Result<Sampler, MemoryError> {
        Sampler::get_or_create(&self.shared, desc)
    }
}
