//! VK_KHR_acceleration_structure and VK_KHR_ray_query at device creation: which features
//! kiln queries and enables, the extensions they need, and the limits
//! (`VkPhysicalDeviceAccelerationStructurePropertiesKHR`).
//!
//! kiln enables `accelerationStructure` (with VK_KHR_acceleration_structure and the
//! VK_KHR_deferred_host_operations it requires) and `rayQuery` (VK_KHR_ray_query) together,
//! where the device has all three extensions and both features;
//! `descriptorBindingAccelerationStructureUpdateAfterBind` where reported. Ray queries are
//! the only way kiln's shaders read a structure (kiln has no ray-tracing pipelines), and
//! before Vulkan 1.3.2xx's spec `vkGetAccelerationStructureBuildSizesKHR` required the
//! `rayTracingPipeline` or `rayQuery` feature (VUID-vkGetAccelerationStructureBuildSizesKHR-rayTracingPipeline-03617,
//! which layer 1.3.239 reports): a device with acceleration structures but no ray queries
//! (NVIDIA's driver 580.159.04 is one) gets neither, and its structures are `KILN-E107`. Capture/replay,
//! indirect builds and host commands stay off: kiln builds on the device only. The feature
//! structs are entries of the device's feature table (`features/table.rs`).

use ash::vk;

/// The limits of acceleration-structure builds and descriptors
/// (`VkPhysicalDeviceAccelerationStructurePropertiesKHR`; zero without the extension).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccelerationStructureLimits {
    /// `maxGeometryCount`: geometries of one bottom-level acceleration structure.
    pub max_geometry_count: u64,
    /// `maxInstanceCount`: instances of one top-level acceleration structure.
    pub max_instance_count: u64,
    /// `maxPrimitiveCount`: triangles of all geometries of one bottom-level acceleration
    /// structure.
    pub max_primitive_count: u64,
    /// `maxPerStageDescriptorAccelerationStructures`.
    pub max_per_stage_descriptor_acceleration_structures: u32,
    /// `maxDescriptorSetAccelerationStructures`.
    pub max_descriptor_set_acceleration_structures: u32,
    /// `minAccelerationStructureScratchOffsetAlignment`: the alignment in bytes of the
    /// scratch memory of a build (kiln allocates it).
    pub min_scratch_offset_alignment: u32,
}

/// The acceleration-structure limits of `physical`, which has VK_KHR_acceleration_structure.
pub(crate) fn limits(
    ir: &ash::Instance,
    physical: vk::PhysicalDevice,
) -> AccelerationStructureLimits {
    let mut pa = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut pa);
    // SAFETY: the chain holds one local struct of the right sType; the device has the
    // extension.
    unsafe { ir.get_physical_device_properties2(physical, &mut p2) };
    AccelerationStructureLimits {
        max_geometry_count: pa.max_geometry_count,
        max_instance_count: pa.max_instance_count,
        max_primitive_count: pa.max_primitive_count,
        max_per_stage_descriptor_acceleration_structures: pa
            .max_per_stage_descriptor_acceleration_structures,
        max_descriptor_set_acceleration_structures: pa.max_descriptor_set_acceleration_structures,
        min_scratch_offset_alignment: pa.min_acceleration_structure_scratch_offset_alignment,
    }
}
