//! `VK_EXT_device_fault`: after a device loss the driver describes the fault (addresses,
//! vendor codes; `device::breadcrumbs`). Enabled where the device has the extension and
//! its `deviceFault` feature, never required; `deviceFaultVendorBinary` (crash dumps) is
//! left off: kiln does not read them.

use ash::vk;

/// The first validation layer whose headers know VK_EXT_device_fault (headers 1.3.236).
const LAYER_KNOWS_DEVICE_FAULT: u32 = vk::make_api_version(0, 1, 3, 236);

/// `VkPhysicalDeviceFaultFeaturesEXT`, chained to the features query where the device has
/// the extension (and the layer knows it), and to `vkCreateDevice` where enabled.
#[derive(Default)]
pub(super) struct Fault {
    raw: vk::PhysicalDeviceFaultFeaturesEXT<'static>,
    has: bool,
    enabled: bool,
}

impl Fault {
    /// `has`: the device lists the extension; `layer`: the validation layer's version (0:
    /// none).
    pub(super) fn new(has: bool, layer: u32) -> Fault {
        Fault {
            has: has && (layer == 0 || layer >= LAYER_KNOWS_DEVICE_FAULT),
            ..Default::default()
        }
    }

    /// `f2` with the struct chained where the device has the extension.
    pub(super) fn chain_query<'a>(
        &'a mut self,
        f2: vk::PhysicalDeviceFeatures2<'a>,
    ) -> vk::PhysicalDeviceFeatures2<'a> {
        self.raw.p_next = std::ptr::null_mut();
        if self.has {
            f2.push_next(&mut self.raw)
        } else {
            f2
        }
    }

    /// After the query: enables `deviceFault` where reported (adding the extension's name
    /// to `ext_names`); returns whether.
    pub(super) fn enable(&mut self, ext_names: &mut Vec<*const std::ffi::c_char>) -> bool {
        self.raw.p_next = std::ptr::null_mut();
        self.enabled = self.has && self.raw.device_fault == vk::TRUE;
        self.raw.device_fault_vendor_binary = vk::FALSE;
        if self.enabled {
            ext_names.push(ash::ext::device_fault::NAME.as_ptr());
        }
        self.enabled
    }

    /// `info` with the struct chained where the feature is enabled.
    pub(super) fn chain_create<'a>(
        &'a mut self,
        info: vk::DeviceCreateInfo<'a>,
    ) -> vk::DeviceCreateInfo<'a> {
        self.raw.p_next = std::ptr::null_mut();
        if self.enabled {
            info.push_next(&mut self.raw)
        } else {
            info
        }
    }
}
