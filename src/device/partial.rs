//! The logical device while [`Shared::create`](super::Shared::create) builds it: one RAII
//! guard holds what was made so far (the device, then its queues' timelines), so every
//! early return cleans up the same way: the queues first, then the device (Vulkan spec
//! §5.2.1, VUID-vkDestroyDevice-device-05137: every child object is destroyed before the
//! device). [`finish`](PartialDevice::finish) hands the parts over once nothing can fail.
//! Beside it, the steps of the construction that `Shared::create` calls: the physical
//! device and queue plan ([`pick_device`]), the device, queues and allocator
//! ([`build_device`]).

use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};

use super::desc::{env_flag, DeviceDesc};
use super::instance::{Instance, LayerFeatures};
use super::queue::Queue;
use super::{
    capabilities, families, features, loader, physical, queue, ComputeProperties, DeviceInfo,
    Features,
};
use crate::error::{Error, Result};

/// A logical device under construction (module docs).
pub(super) struct PartialDevice {
    raw: ash::Device,
    /// The queues made so far; each owns a timeline semaphore of `raw`.
    pub queues: Vec<Queue>,
    /// Cleans up on drop (until [`finish`](Self::finish)).
    armed: bool,
}

impl PartialDevice {
    /// Guards `raw`, a device nothing has been created from yet, for which `queues`
    /// queues will be made.
    pub(super) fn new(raw: ash::Device, queues: usize) -> PartialDevice {
        PartialDevice {
            raw,
            queues: Vec::with_capacity(queues),
            armed: true,
        }
    }

    /// The device.
    pub(super) fn raw(&self) -> &ash::Device {
        &self.raw
    }

    /// The device and its queues, no longer cleaned up by the guard.
    pub(super) fn finish(mut self) -> (ash::Device, Vec<Queue>) {
        self.armed = false;
        (self.raw.clone(), std::mem::take(&mut self.queues))
    }
}

impl Drop for PartialDevice {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        for q in &self.queues {
            q.destroy(&self.raw);
        }
        let _loader = super::loader::exclusive();
        // SAFETY: nothing created from the device is alive: the guard holds every object
        // made from it so far (the queues' timelines, destroyed above) and was not
        // finished.
        unsafe { self.raw.destroy_device(None) }
    }
}

/// The physical device `desc` (or `KILN_DEVICE`) picks, its properties and queue
/// families, and the queues to create on it (`families::plan_queues`).
///
/// Errors: `KILN-E101` no device, `KILN-E102` `KILN_DEVICE` matched nothing, `KILN-E103`
/// no compute queue.
pub(super) fn pick_device(
    desc: &DeviceDesc,
    instance: &Instance,
) -> Result<(
    vk::PhysicalDevice,
    DeviceInfo,
    vk::PhysicalDeviceProperties,
    Vec<vk::QueueFamilyProperties>,
    families::QueuePlan,
)> {
    let wanted = desc
        .device
        .clone()
        .or_else(|| std::env::var("KILN_DEVICE").ok());
    let (physical, info, properties) = physical::pick_physical(instance, wanted.as_deref())?;
    log::info!("kiln: using {info}");
    let family = physical::main_queue_family(instance, physical, &info)?;
    // SAFETY: `physical` comes from this instance.
    let families = unsafe {
        instance
            .raw
            .get_physical_device_queue_family_properties(physical)
    };
    let plan = families::plan_queues(
        &families,
        family,
        desc.compute_queues,
        desc.transfer_queues,
        desc.emulate_queues,
    );
    Ok((physical, info, properties, families, plan))
}

/// `DeviceDesc::validation_fail`, else `KILN_VALIDATION_FAIL`.
pub(super) fn validation_fail(desc: &DeviceDesc) -> bool {
    desc.validation_fail
        .or_else(|| env_flag("KILN_VALIDATION_FAIL"))
        .unwrap_or(false)
}

/// Submissions are timed: `DeviceDesc::timing`, else `KILN_TIMING`; or `KILN_TRACE` is set.
pub(super) fn timing_on(desc: &DeviceDesc) -> bool {
    desc.timing
        .or_else(|| env_flag("KILN_TIMING"))
        .unwrap_or(false)
        || std::env::var_os("KILN_TRACE").is_some_and(|v| !v.is_empty())
}

/// An enabled extension's device functions (`load`, under the loader lock's walking
/// share, `loader` module docs), or `None` when it is not enabled.
pub(super) fn device_fns<T>(enabled: bool, load: impl FnOnce() -> T) -> Option<T> {
    enabled.then(|| loader::walking(load))
}

/// The device functions of the extensions kiln calls through their own tables (`None`:
/// not enabled), and the breadcrumbs made from two of them.
pub(super) struct ExtensionFns {
    pub push_descriptor: Option<ash::khr::push_descriptor::Device>,
    pub mesh_shader: Option<ash::ext::mesh_shader::Device>,
    pub acceleration_structure: Option<ash::khr::acceleration_structure::Device>,
    pub breadcrumbs: super::breadcrumbs::Breadcrumbs,
}

/// Loads the [`ExtensionFns`] of the extensions `features` enabled on `raw`;
/// `breadcrumbs_on`: the breadcrumbs were asked for.
pub(super) fn extension_fns(
    instance: &Instance,
    raw: &ash::Device,
    features: &Features,
    breadcrumbs_on: bool,
) -> ExtensionFns {
    let ir = &instance.raw;
    let fault = device_fns(features.device_fault, || {
        ash::ext::device_fault::Device::new(ir, raw)
    });
    let marker = device_fns(features.buffer_marker, || {
        ash::amd::buffer_marker::Device::new(ir, raw)
    });
    ExtensionFns {
        push_descriptor: device_fns(features.push_descriptor, || {
            ash::khr::push_descriptor::Device::new(ir, raw)
        }),
        mesh_shader: device_fns(features.mesh_shader, || {
            ash::ext::mesh_shader::Device::new(ir, raw)
        }),
        acceleration_structure: device_fns(features.acceleration_structure, || {
            ash::khr::acceleration_structure::Device::new(ir, raw)
        }),
        breadcrumbs: super::breadcrumbs::Breadcrumbs::new(breadcrumbs_on, fault, marker),
    }
}

/// What [`build_device`] made: the device, its queues and allocator, and what it found.
pub(super) struct Built {
    pub raw: ash::Device,
    pub queues: Vec<Queue>,
    pub allocator: Allocator,
    pub features: Features,
    pub supported: capabilities::Supported,
    pub compute: ComputeProperties,
    pub host_import_alignment: Option<u64>,
}

/// Creates the logical device of `physical` with the queues of `plan` and its allocator.
/// On an error everything made so far is destroyed by one guard
/// ([`partial::PartialDevice`]): the queues, then the device.
///
/// Errors: `KILN-E107` no synchronization2 or timeline semaphores, `KILN-E104` Vulkan
/// failures, the allocator's error.
pub(super) fn build_device(
    instance: &Instance,
    physical: vk::PhysicalDevice,
    info: &DeviceInfo,
    properties: &vk::PhysicalDeviceProperties,
    plan: &families::QueuePlan,
    layer: LayerFeatures,
    breadcrumbs: bool,
) -> Result<Built> {
    let features::Created {
        raw,
        features,
        supported,
        compute,
    } = features::create_device(instance, physical, &plan.create, info, breadcrumbs)?;
    // From here on an error destroys what was made (the queues, then the device).
    let mut partial = PartialDevice::new(raw, plan.queues.len());
    if !(features.synchronization2 && features.timeline_semaphore) {
        return Err(Error::MissingFeature {
            device: info.name.clone(),
            what: "synchronization2 and timelineSemaphore (Vulkan 1.3), which kiln's \
                   barriers and submissions use"
                .into(),
        });
    }
    let spin = queue::spin_budget(properties);
    let layer_waits = instance.validation && (layer.shader_printf || layer.gpu_assisted);
    for planned in &plan.queues {
        let q = Queue::create(
            partial.raw(),
            *planned,
            partial.queues.first(),
            spin,
            layer_waits,
        )?;
        partial.queues.push(q);
    }
    let host_import_alignment = features
        .external_memory_host
        .then(|| host_import_alignment(instance, physical));
    let allocator = Allocator::new(&AllocatorCreateDesc {
        instance: instance.raw.clone(),
        device: partial.raw().clone(),
        physical_device: physical,
        debug_settings: Default::default(),
        buffer_device_address: features.buffer_device_address,
        allocation_sizes: Default::default(),
    })
    .map_err(|source| Error::Allocation {
        object: "allocator".into(),
        source,
    })?;
    let (raw, queues) = partial.finish();
    Ok(Built {
        raw,
        queues,
        allocator,
        features,
        supported,
        compute,
        host_import_alignment,
    })
}

/// `minImportedHostPointerAlignment` of `physical`, which has VK_EXT_external_memory_host
/// enabled (at least 1).
pub(super) fn host_import_alignment(instance: &Instance, physical: vk::PhysicalDevice) -> u64 {
    let mut p = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p);
    // SAFETY: the chain holds one local struct of the right sType; the extension is
    // enabled on this device.
    unsafe {
        instance
            .raw
            .get_physical_device_properties2(physical, &mut p2)
    };
    p.min_imported_host_pointer_alignment.max(1)
}
