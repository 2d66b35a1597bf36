//! VK_NV_cooperative_matrix2: workgroup-scope cooperative matrices, flexible dimensions,
//! reductions, conversions, per-element operations, tensor addressing and block loads
//! (Vulkan spec, VK_NV_cooperative_matrix2; SPV_NV_cooperative_matrix2 and
//! SPV_NV_tensor_addressing). The Vulkan headers kiln builds with (ash, 1.3.281) predate
//! the extension, so its structs are declared here as the headers lay them out.
//!
//! kiln enables the extension with every feature the device reports when it also enabled
//! VK_KHR_cooperative_matrix (which it extends), except under a validation layer older than
//! the extension (`KILN-W004`, as for the KHR one). [`CooperativeMatrix2Features`] says what
//! was enabled ([`Features::cooperative_matrix2`](crate::Features::cooperative_matrix2));
//! [`CooperativeMatrix2Properties`] holds the limits and the flexible-dimension
//! configurations
//! ([`ComputeProperties::cooperative_matrix2`](crate::ComputeProperties::cooperative_matrix2)).

use std::ffi::CStr;

use ash::vk;

use super::instance::Instance;

/// The extension's name.
pub(crate) const NAME: &CStr = c"VK_NV_cooperative_matrix2";
/// The first validation-layer version kiln enables the extension under. Headers have it
/// from 1.4.303, but layer 1.4.309 rejects kiln's workgroup-scope matrices whose sizes are
/// specialization constants (VUID-RuntimeSpirv-cooperativeMatrixFlexibleDimensions-10165,
/// "rows: 1, cols: 0" / "cols: 128": the constants' default values, not the specialized
/// ones) though the driver runs them exactly: so not under
/// layers up to 1.4.309 (`KILN-W004`).
pub(crate) const LAYER_KNOWS: u32 = vk::make_api_version(0, 1, 4, 310);

/// The features of VK_NV_cooperative_matrix2 that kiln enabled (all false without the
/// extension). SPIR-V capabilities map to them (`capabilities.rs`): `CooperativeMatrix
/// ReductionsNV` → `reductions`, `…ConversionsNV` → `conversions`,
/// `…PerElementOperationsNV` → `per_element_operations`, `…TensorAddressingNV` and
/// `TensorAddressingNV` → `tensor_addressing`, `…BlockLoadsNV` → `block_loads`;
/// `workgroup_scope` allows `OpTypeCooperativeMatrixKHR` with Scope `Workgroup`,
/// `flexible_dimensions` sizes that are multiples of a flexible-dimension configuration's
/// granularity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CooperativeMatrix2Features {
    /// `cooperativeMatrixWorkgroupScope`.
    pub workgroup_scope: bool,
    /// `cooperativeMatrixFlexibleDimensions`.
    pub flexible_dimensions: bool,
    /// `cooperativeMatrixReductions`.
    pub reductions: bool,
    /// `cooperativeMatrixConversions`.
    pub conversions: bool,
    /// `cooperativeMatrixPerElementOperations`.
    pub per_element_operations: bool,
    /// `cooperativeMatrixTensorAddressing`.
    pub tensor_addressing: bool,
    /// `cooperativeMatrixBlockLoads`.
    pub block_loads: bool,
}

/// One flexible-dimension configuration (`VkCooperativeMatrixFlexibleDimensionsPropertiesNV`):
/// matrices of these types and scope may have any M, N, K that are multiples of the
/// granularities (up to `flexible_dimensions_max_dimension`), in workgroups of exactly
/// `workgroup_invocations` invocations when the scope is `WORKGROUP`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlexibleDimensionsConfig {
    /// `MGranularity`.
    pub m_granularity: u32,
    /// `NGranularity`.
    pub n_granularity: u32,
    /// `KGranularity`.
    pub k_granularity: u32,
    /// Component type of A.
    pub a_type: vk::ComponentTypeKHR,
    /// Component type of B.
    pub b_type: vk::ComponentTypeKHR,
    /// Component type of C.
    pub c_type: vk::ComponentTypeKHR,
    /// Component type of the result.
    pub result_type: vk::ComponentTypeKHR,
    /// Integer accumulation saturates.
    pub saturating_accumulation: bool,
    /// `SUBGROUP` or `WORKGROUP`.
    pub scope: vk::ScopeKHR,
    /// The workgroup size this configuration needs (workgroup scope).
    pub workgroup_invocations: u32,
}

/// The limits of VK_NV_cooperative_matrix2 (`VkPhysicalDeviceCooperativeMatrix2PropertiesNV`)
/// and its flexible-dimension configurations; all zero and empty without the extension.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CooperativeMatrix2Properties {
    /// `cooperativeMatrixWorkgroupScopeMaxWorkgroupSize`: the most invocations in a
    /// workgroup that uses workgroup-scope matrices.
    pub workgroup_scope_max_workgroup_size: u32,
    /// `cooperativeMatrixFlexibleDimensionsMaxDimension`.
    pub flexible_dimensions_max_dimension: u32,
    /// `cooperativeMatrixWorkgroupScopeReservedSharedMemory`: bytes of shared memory the
    /// driver keeps for itself in such a workgroup (out of `maxComputeSharedMemorySize`).
    pub workgroup_scope_reserved_shared_memory: u32,
    /// `vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV`.
    pub flexible_dimensions: Vec<FlexibleDimensionsConfig>,
}

/// `VkPhysicalDeviceCooperativeMatrix2FeaturesNV`, as the headers lay it out.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawFeatures {
    s_type: vk::StructureType,
    pub p_next: *mut std::ffi::c_void,
    flags: [vk::Bool32; 7],
}

impl Default for RawFeatures {
    fn default() -> Self {
        RawFeatures {
            // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV
            s_type: vk::StructureType::from_raw(1_000_593_000),
            p_next: std::ptr::null_mut(),
            flags: [vk::FALSE; 7],
        }
    }
}

impl RawFeatures {
    /// What the struct says, in the headers' member order.
    pub(crate) fn get(&self) -> CooperativeMatrix2Features {
        let f = self.flags.map(|x| x == vk::TRUE);
        CooperativeMatrix2Features {
            workgroup_scope: f[0],
            flexible_dimensions: f[1],
            reductions: f[2],
            conversions: f[3],
            per_element_operations: f[4],
            tensor_addressing: f[5],
            block_loads: f[6],
        }
    }
}

// SAFETY: the struct starts with sType and pNext like every Vulkan input/output struct and
// extends both chains per the VK_NV_cooperative_matrix2 spec.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for RawFeatures {}
// SAFETY: as above.
unsafe impl vk::ExtendsDeviceCreateInfo for RawFeatures {}

/// `VkPhysicalDeviceCooperativeMatrix2PropertiesNV`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct RawProperties {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    max_workgroup_size: u32,
    max_dimension: u32,
    reserved_shared_memory: u32,
}

// SAFETY: sType/pNext first; extends VkPhysicalDeviceProperties2 per the extension.
unsafe impl vk::ExtendsPhysicalDeviceProperties2 for RawProperties {}

/// `VkCooperativeMatrixFlexibleDimensionsPropertiesNV`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct RawFlexible {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    m_granularity: u32,
    n_granularity: u32,
    k_granularity: u32,
    a_type: vk::ComponentTypeKHR,
    b_type: vk::ComponentTypeKHR,
    c_type: vk::ComponentTypeKHR,
    result_type: vk::ComponentTypeKHR,
    saturating_accumulation: vk::Bool32,
    scope: vk::ScopeKHR,
    workgroup_invocations: u32,
}

impl Default for RawFlexible {
    fn default() -> Self {
        RawFlexible {
            // VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV
            s_type: vk::StructureType::from_raw(1_000_593_001),
            p_next: std::ptr::null_mut(),
            m_granularity: 0,
            n_granularity: 0,
            k_granularity: 0,
            a_type: vk::ComponentTypeKHR::default(),
            b_type: vk::ComponentTypeKHR::default(),
            c_type: vk::ComponentTypeKHR::default(),
            result_type: vk::ComponentTypeKHR::default(),
            saturating_accumulation: vk::FALSE,
            scope: vk::ScopeKHR::default(),
            workgroup_invocations: 0,
        }
    }
}

type GetFlexible =
    unsafe extern "system" fn(vk::PhysicalDevice, *mut u32, *mut RawFlexible) -> vk::Result;

/// The properties of a device that has the extension (call only then).
pub(crate) fn query(
    instance: &Instance,
    physical: vk::PhysicalDevice,
) -> CooperativeMatrix2Properties {
    let ir = &instance.raw;
    let mut raw = RawProperties {
        // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV
        s_type: vk::StructureType::from_raw(1_000_593_002),
        p_next: std::ptr::null_mut(),
        max_workgroup_size: 0,
        max_dimension: 0,
        reserved_shared_memory: 0,
    };
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut raw);
    // SAFETY: the chain holds one local struct of the extension's sType; the device has
    // the extension (the caller's contract).
    unsafe { ir.get_physical_device_properties2(physical, &mut p2) };
    let name = c"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV";
    // SAFETY: a plain lookup of an instance-level command by its name.
    let pfn = unsafe {
        instance
            .entry
            .get_instance_proc_addr(ir.handle(), name.as_ptr())
    };
    let mut flexible = Vec::new();
    if let Some(pfn) = pfn {
        // SAFETY: the loader returned this command for this name; its signature is the
        // one the extension declares (PFN_vkGetPhysicalDeviceCooperativeMatrixFlexible
        // DimensionsPropertiesNV).
        let get: GetFlexible =
            unsafe { std::mem::transmute::<unsafe extern "system" fn(), GetFlexible>(pfn) };
        let mut n = 0u32;
        // SAFETY: the two-call idiom: count first, then an array of `n` initialised
        // structs with their sType.
        let r = unsafe { get(physical, &mut n, std::ptr::null_mut()) };
        if r == vk::Result::SUCCESS && n > 0 {
            let mut list = vec![RawFlexible::default(); n as usize];
            // SAFETY: as above; `list` has room for `n`.
            let r = unsafe { get(physical, &mut n, list.as_mut_ptr()) };
            if r == vk::Result::SUCCESS || r == vk::Result::INCOMPLETE {
                list.truncate(n as usize);
                flexible = list
                    .iter()
                    .map(|p| FlexibleDimensionsConfig {
                        m_granularity: p.m_granularity,
                        n_granularity: p.n_granularity,
                        k_granularity: p.k_granularity,
                        a_type: p.a_type,
                        b_type: p.b_type,
                        c_type: p.c_type,
                        result_type: p.result_type,
                        saturating_accumulation: p.saturating_accumulation == vk::TRUE,
                        scope: p.scope,
                        workgroup_invocations: p.workgroup_invocations,
                    })
                    .collect();
            }
        }
        if r != vk::Result::SUCCESS && r != vk::Result::INCOMPLETE {
            log::warn!(
                "kiln: vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV: {r}"
            );
        }
    }
    CooperativeMatrix2Properties {
        workgroup_scope_max_workgroup_size: raw.max_workgroup_size,
        flexible_dimensions_max_dimension: raw.max_dimension,
        workgroup_scope_reserved_shared_memory: raw.reserved_shared_memory,
        flexible_dimensions: flexible,
    }
}
