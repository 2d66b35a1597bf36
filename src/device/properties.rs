//! What a compute user asks a device before writing a kernel: subgroups, subgroup size
//! control, shared memory, workgroup limits, buffer limits, push descriptors and the
//! cooperative-matrix configurations ([`ComputeProperties`], from
//! [`Device::compute_properties`](crate::Device::compute_properties)).
//!
//! Queried once at device creation from `VkPhysicalDeviceVulkan11Properties` (subgroups),
//! `VkPhysicalDeviceVulkan13Properties` (subgroup size control, `maxBufferSize`),
//! `VkPhysicalDevicePushDescriptorPropertiesKHR` and
//! `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR` (Vulkan spec §"Limits",
//! VK_KHR_cooperative_matrix), and VK_NV_cooperative_matrix2's properties and
//! flexible-dimension configurations (`coopmat2.rs`).

use ash::vk;

use super::coopmat2::CooperativeMatrix2Properties;

/// One cooperative-matrix configuration the device runs at full speed
/// (`VkCooperativeMatrixPropertiesKHR`): `result (M×N) = A (M×K) · B (K×N) + C (M×N)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CooperativeMatrixConfig {
    /// Rows of A, C and the result.
    pub m: u32,
    /// Columns of B, C and the result.
    pub n: u32,
    /// Columns of A, rows of B.
    pub k: u32,
    /// Component type of A.
    pub a_type: vk::ComponentTypeKHR,
    /// Component type of B.
    pub b_type: vk::ComponentTypeKHR,
    /// Component type of C.
    pub c_type: vk::ComponentTypeKHR,
    /// Component type of the result.
    pub result_type: vk::ComponentTypeKHR,
    /// Integer accumulation saturates instead of wrapping.
    pub saturating_accumulation: bool,
    /// The scope the matrices live in (`SUBGROUP` on every known device).
    pub scope: vk::ScopeKHR,
}

/// `VK_COMPONENT_TYPE_BFLOAT16_KHR` (VK_KHR_shader_bfloat16), which the Vulkan headers kiln
/// builds with (ash, 1.3.281) predate.
pub const COMPONENT_TYPE_BFLOAT16_KHR: vk::ComponentTypeKHR =
    vk::ComponentTypeKHR::from_raw(1_000_141_000);

/// The compute-related properties of a device (see the module docs for where each comes
/// from). Units: bytes for sizes, invocations for subgroup sizes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComputeProperties {
    /// `subgroupSize`: the default subgroup size (lavapipe 8, NVIDIA 32).
    pub subgroup_size: u32,
    /// `subgroupSupportedStages`.
    pub subgroup_stages: vk::ShaderStageFlags,
    /// `subgroupSupportedOperations` (BASIC, VOTE, ARITHMETIC, BALLOT, SHUFFLE, …).
    pub subgroup_operations: vk::SubgroupFeatureFlags,
    /// `subgroupQuadOperationsInAllStages`.
    pub subgroup_quad_operations_in_all_stages: bool,
    /// Feature `subgroupSizeControl`: a pipeline may ask for a subgroup size in
    /// `min_subgroup_size..=max_subgroup_size`
    /// ([`ComputePipelineDesc::required_subgroup_size`](crate::ComputePipelineDesc::required_subgroup_size)).
    pub subgroup_size_control: bool,
    /// Feature `computeFullSubgroups`
    /// ([`ComputePipelineDesc::full_subgroups`](crate::ComputePipelineDesc::full_subgroups)).
    pub compute_full_subgroups: bool,
    /// `minSubgroupSize` (VkPhysicalDeviceVulkan13Properties).
    pub min_subgroup_size: u32,
    /// `maxSubgroupSize`.
    pub max_subgroup_size: u32,
    /// `maxComputeWorkgroupSubgroups`.
    pub max_compute_workgroup_subgroups: u32,
    /// `requiredSubgroupSizeStages`.
    pub required_subgroup_size_stages: vk::ShaderStageFlags,
    /// `maxComputeSharedMemorySize`, bytes of `shared` variables per workgroup.
    pub max_compute_shared_memory_size: u32,
    /// `maxComputeWorkGroupCount`.
    pub max_compute_work_group_count: [u32; 3],
    /// `maxComputeWorkGroupSize`.
    pub max_compute_work_group_size: [u32; 3],
    /// `maxComputeWorkGroupInvocations`.
    pub max_compute_work_group_invocations: u32,
    /// `maxStorageBufferRange`: the largest storage-buffer descriptor range; beyond it use
    /// device addresses.
    pub max_storage_buffer_range: u32,
    /// `maxBufferSize` (VkPhysicalDeviceVulkan13Properties, maintenance4).
    pub max_buffer_size: u64,
    /// `maxMemoryAllocationSize` (VkPhysicalDeviceVulkan11Properties, maintenance3): the
    /// largest single allocation the driver promises; a buffer beyond it is `KILN-E162`
    /// unless `DeviceDesc::allocations_beyond_limit`.
    pub max_memory_allocation_size: u64,
    /// Feature `bufferDeviceAddress`: `Buffer::device_address` works.
    pub buffer_device_address: bool,
    /// `VK_KHR_push_descriptor` is enabled.
    pub push_descriptor: bool,
    /// `maxPushDescriptors` (0 without the extension).
    pub max_push_descriptors: u32,
    /// The cooperative-matrix configurations (empty without VK_KHR_cooperative_matrix, or
    /// when kiln could not enable it; see `Features::cooperative_matrix`).
    pub cooperative_matrix: Vec<CooperativeMatrixConfig>,
    /// `cooperativeMatrixSupportedStages`.
    pub cooperative_matrix_stages: vk::ShaderStageFlags,
    /// VK_NV_cooperative_matrix2's limits and flexible-dimension configurations (zero and
    /// empty unless kiln enabled the extension, `Features::cooperative_matrix2`).
    pub cooperative_matrix2: CooperativeMatrix2Properties,
}

impl ComputeProperties {
    /// The cooperative-matrix configurations with these input (`ab`) and accumulator
    /// (`c`, also the result) types at subgroup scope, largest `m·n·k` first.
    pub fn cooperative_matrix_for(
        &self,
        ab: vk::ComponentTypeKHR,
        c: vk::ComponentTypeKHR,
    ) -> Vec<CooperativeMatrixConfig> {
        let mut v: Vec<_> = self
            .cooperative_matrix
            .iter()
            .filter(|m| {
                m.a_type == ab
                    && m.b_type == ab
                    && m.c_type == c
                    && m.result_type == c
                    && m.scope == vk::ScopeKHR::SUBGROUP
            })
            .copied()
            .collect();
        v.sort_by_key(|m| std::cmp::Reverse(m.m as u64 * m.n as u64 * m.k as u64));
        v
    }
}
