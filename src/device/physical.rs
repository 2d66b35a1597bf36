//! Physical-device choice: what each device is ([`DeviceInfo`]) and which one kiln uses.

use ash::vk;

use super::instance::Instance;
use crate::error::{vk_device_err, DeviceError, Result};

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
    /// `VkPhysicalDeviceIDProperties::deviceUUID` (Vulkan 1.1): the same GPU's UUID in
    /// every process and API (CUDA's `cuDeviceGetUuid`, `nvidia-smi -L`), so a device
    /// chosen by it (`DeviceDesc::device`, `KILN_DEVICE=uuid:<32 hex digits>`) is the
    /// one CUDA means; zeros where the driver predates 1.1.
    pub device_uuid: [u8; vk::UUID_SIZE],
}

/// The 16 bytes of `s` written as 32 hex digits, dashes allowed (`GPU-…` as `nvidia-smi`
/// prints it too), or `None`.
fn parse_uuid(s: &str) -> Option<[u8; vk::UUID_SIZE]> {
    let hex: Vec<u8> = s
        .trim_start_matches("GPU-")
        .bytes()
        .filter(|b| *b != b'-')
        .collect();
    if hex.len() != 2 * vk::UUID_SIZE {
        return None;
    }
    let mut out = [0u8; vk::UUID_SIZE];
    for (o, pair) in out.iter_mut().zip(hex.chunks(2)) {
        *o = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

/// `uuid` as 32 lower-case hex digits.
pub(crate) fn uuid_hex(uuid: &[u8; vk::UUID_SIZE]) -> String {
    uuid.iter().map(|b| format!("{b:02x}")).collect()
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

impl super::Device {
    /// Every Vulkan device of the machine, in the order `DeviceDesc::device` indexes them
    /// (`vkEnumeratePhysicalDevices`), with name, type and UUID
    /// ([`DeviceInfo::device_uuid`]): open each with its own [`Device::with_desc`](super::Device::with_desc)
    /// (`device: Some(info.index.to_string())`); several devices live side by side, each
    /// with its own queues, memory and objects (objects of one used with another are
    /// `KILN-E109`). Made without the validation layer (a short-lived instance of its own).
    ///
    /// Errors: `KILN-E100` no loader, `KILN-E101` no device, `KILN-E104` other failures.
    pub fn enumerate() -> Result<Vec<DeviceInfo>, DeviceError> {
        let instance = Instance::new(c"kiln", Some(false), super::LayerFeatures::default(), &[])?;
        Ok(list(&instance)?
            .into_iter()
            .map(|(_, info, _)| info)
            .collect())
    }
}

/// A physical device, what it is, and its properties.
pub(super) type Candidate = (vk::PhysicalDevice, DeviceInfo, vk::PhysicalDeviceProperties);

/// Every physical device of `instance`, in `vkEnumeratePhysicalDevices` order.
///
/// Errors: `KILN-E101` none, `KILN-E104` the enumeration failed.
pub(super) fn list(instance: &Instance) -> Result<Vec<Candidate>, DeviceError> {
    let ir = &instance.raw;
    let devices = {
        // It may unload drivers: `loader` module docs.
        let _loader = super::loader::exclusive();
        // SAFETY: plain query on a live instance.
        unsafe { ir.enumerate_physical_devices() }
    }
    .map_err(vk_device_err("vkEnumeratePhysicalDevices"))?;
    if devices.is_empty() {
        return Err(DeviceError::NoDevice);
    }
    let mut candidates = Vec::new();
    for (index, &pd) in devices.iter().enumerate() {
        // SAFETY: `pd` belongs to this instance.
        let props = unsafe { ir.get_physical_device_properties(pd) };
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut id = vk::PhysicalDeviceIDProperties::default();
        if props.api_version >= vk::API_VERSION_1_2 {
            let mut p2 = vk::PhysicalDeviceProperties2::default()
                .push_next(&mut driver)
                .push_next(&mut id);
            // SAFETY: `p2` chains only `driver` and `id` (core in 1.2), alive for the call.
            unsafe { ir.get_physical_device_properties2(pd, &mut p2) };
        }
        let text = |s: std::result::Result<&std::ffi::CStr, _>| {
            s.map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let info = DeviceInfo {
            name: text(props.device_name_as_c_str()),
            device_type: props.device_type,
            driver_name: text(driver.driver_name_as_c_str()),
            driver_info: text(driver.driver_info_as_c_str()),
            api_version: props.api_version,
            used_api_version: props.api_version.min(instance.api_version),
            vendor_id: props.vendor_id,
            index,
            pipeline_cache_uuid: props.pipeline_cache_uuid,
            driver_version: props.driver_version,
            device_uuid: id.device_uuid,
        };
        candidates.push((pd, info, props));
    }
    Ok(candidates)
}

/// The device `wanted` names (an index, `uuid:<hex>`, or a name substring), else the best
/// one (discrete first).
///
/// Errors: as [`list`]; `KILN-E102` `wanted` matched nothing (the message lists the
/// devices with their UUIDs).
pub(super) fn pick_physical(
    instance: &Instance,
    wanted: Option<&str>,
) -> Result<Candidate, DeviceError> {
    let candidates = list(instance)?;
    let available = candidates
        .iter()
        .map(|(_, i, _)| {
            format!(
                "{}: {} (uuid:{})",
                i.index,
                i.name,
                uuid_hex(&i.device_uuid)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let chosen = match wanted {
        Some(w) if !w.is_empty() => {
            let by_index = w.parse::<usize>().ok();
            let by_uuid = w.strip_prefix("uuid:").and_then(parse_uuid);
            let lw = w.to_lowercase();
            candidates.into_iter().find(|(_, i, _)| match by_uuid {
                Some(u) => i.device_uuid == u,
                None => by_index == Some(i.index) || i.name.to_lowercase().contains(&lw),
            })
        }
        _ => candidates
            .into_iter()
            .min_by_key(|(_, i, _)| (rank(i.device_type), i.index)),
    };
    chosen.ok_or_else(|| DeviceError::DeviceNotMatched {
        wanted: wanted.unwrap_or_default().to_string(),
        available,
    })
}

/// The queue family of the main queue: compute and graphics where one family has both,
/// else compute alone. Errors: `KILN-E103` no family supports compute.
pub(super) fn main_queue_family(
    instance: &Instance,
    physical: vk::PhysicalDevice,
    info: &DeviceInfo,
) -> Result<u32, DeviceError> {
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
        .ok_or_else(|| DeviceError::NoComputeQueue {
            device: info.name.clone(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_read_as_nvidia_smi_and_vulkan_write_them() {
        let want: [u8; 16] = [
            0x4f, 0x1c, 0x3e, 0x2a, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
            0xaa, 0xbb,
        ];
        assert_eq!(parse_uuid("4f1c3e2a00112233445566778899aabb"), Some(want));
        assert_eq!(
            parse_uuid("GPU-4f1c3e2a-0011-2233-4455-66778899AABB"),
            Some(want)
        );
        assert_eq!(uuid_hex(&want), "4f1c3e2a00112233445566778899aabb");
        assert_eq!(parse_uuid("4f1c"), None);
        assert_eq!(parse_uuid("zz1c3e2a00112233445566778899aabb"), None);
    }
}
