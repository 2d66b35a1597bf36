//! `VK_EXT_device_fault`: after a device loss the driver describes the fault (addresses,
//! vendor codes; `device::breadcrumbs`). Enabled where the device has the extension and
//! its `deviceFault` feature, never required; `deviceFaultVendorBinary` (crash dumps) is
//! left off: kiln does not read them.

use ash::vk;

/// The first validation layer whose headers know VK_EXT_device_fault (headers 1.3.236);
/// the struct and its feature are entries of `table.rs` (`deviceFaultVendorBinary` cleared
/// there).
pub(super) const LAYER_KNOWS_DEVICE_FAULT: u32 = vk::make_api_version(0, 1, 3, 236);
