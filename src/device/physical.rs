//! Physical-device choice: what each device is ([`DeviceInfo`]) and which one kiln uses.

use ash::vk;

use super::instance::Instance;
use crate::error::{vk_err, Error, Result};

/// What the chosen physical device is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// `VkPhysicalDeviceProperties::deviceName`.
    pub name: String,
    /// Discrete, integrated, virtual or CPU (lavapipe is CPU).
    pub device_type: vk::PhysicalDeviceType,
    /// `VkPhysicalDeviceDriverProperties::driverName` (Vulkan 1.2), or empty.
    pub driver_name: String,
    /// `VkPhysicalDeviceDriverProperties::driverInfo` (Vulkan 1.2), or empty.
    pub driver_info: String,
    /// The device's `apiVersion`.
    pub api_version: u32,
    /// The version kiln uses (min of instance and device, capped at 1.3).
    pub used_api_version: u32,
    /// `VkPhysicalDeviceProperties::vendorID` (0x10DE NVIDIA, 0x1002 AMD, 0x8086 Intel, 0x10005 Mesa).
    pub vendor_id: u32,
    /// Index in `vkEnumeratePhysicalDevices` order (what `KILN_DEVICE=<n>` names).
    pub index: usize,
    /// `pipelineCacheUUID`: a pipeline cache file is only given to a driver with the same one.
    pub pipeline_cache_uuid: [u8; vk::UUID_SIZE],
    /// `VkPhysicalDeviceProperties::driverVersion` (vendor-specific encoding).
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

fn rank(t: vk::PhysicalDeviceType) -> u32 {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

pub(super) fn pick_physical(
    instance: &Instance,
    wanted: Option<&str>,
) -> Result<(vk::PhysicalDevice, DeviceInfo, vk::PhysicalDeviceProperties)> {
    let ir = &instance.raw;
    let devices = {
        // It may unload drivers: `loader` module docs.
        let _loader = super::loader::exclusive();
        // SAFETY: plain query on a live instance.
        unsafe { ir.enumerate_physical_devices() }
    }
    .map_err(vk_err("vkEnumeratePhysicalDevices"))?;
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

/// The queue family of the main queue: compute and graphics where one family has both,
/// else compute alone. Errors: `KILN-E103` no family supports compute.
pub(super) fn main_queue_family(
    instance: &Instance,
    physical: vk::PhysicalDevice,
    info: &DeviceInfo,
) -> Result<u32> {
    // SAFETY: `physical` comes from this instance.
    let families = unsafe {
        instance
            .raw
            .get_physical_device_queue_family_properties(physical)
    };
    families
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
        .map(|i| i as u32)
        .ok_or_else(|| Error::NoComputeQueue {
            device: info.name.clone(),
        })
}
