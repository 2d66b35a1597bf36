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
//! indirect builds and host commands stay off: kiln builds on the device only.

use std::ffi::{c_char, CStr};

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

/// The feature structs of the two extensions, chained into the feature query and into
/// `vkCreateDevice` when the device has the extensions.
#[derive(Default)]
pub(crate) struct RayFeatures {
    acceleration: vk::PhysicalDeviceAccelerationStructureFeaturesKHR<'static>,
    query: vk::PhysicalDeviceRayQueryFeaturesKHR<'static>,
    /// The device lists VK_KHR_acceleration_structure and VK_KHR_deferred_host_operations.
    has_acceleration: bool,
    /// ... and VK_KHR_ray_query.
    has_query: bool,
}

impl RayFeatures {
    /// The structs for a device whose extensions `has` answers for.
    pub(crate) fn new(has: impl Fn(&CStr) -> bool) -> RayFeatures {
        let has_acceleration = has(ash::khr::acceleration_structure::NAME)
            && has(ash::khr::deferred_host_operations::NAME);
        RayFeatures {
            has_acceleration,
            has_query: has_acceleration && has(ash::khr::ray_query::NAME),
            ..Default::default()
        }
    }

    /// `f2` with the structs of the extensions the device has chained (for the query).
    pub(crate) fn chain_query<'a>(
        &'a mut self,
        mut f2: vk::PhysicalDeviceFeatures2<'a>,
    ) -> vk::PhysicalDeviceFeatures2<'a> {
        self.acceleration.p_next = std::ptr::null_mut();
        self.query.p_next = std::ptr::null_mut();
        if self.has_acceleration {
            f2 = f2.push_next(&mut self.acceleration);
        }
        if self.has_query {
            f2 = f2.push_next(&mut self.query);
        }
        f2
    }

    /// After the query: clears what kiln does not enable and what the device did not
    /// report, and appends the extensions to enable to `names`. Returns
    /// `(accelerationStructure, rayQuery)` as enabled.
    pub(crate) fn settle(&mut self, names: &mut Vec<*const c_char>) -> (bool, bool) {
        let a = &mut self.acceleration;
        a.p_next = std::ptr::null_mut();
        a.acceleration_structure_capture_replay = vk::FALSE;
        a.acceleration_structure_indirect_build = vk::FALSE;
        a.acceleration_structure_host_commands = vk::FALSE;
        self.query.p_next = std::ptr::null_mut();
        // Both or neither (module docs).
        let query = self.has_acceleration
            && a.acceleration_structure == vk::TRUE
            && self.has_query
            && self.query.ray_query == vk::TRUE;
        let acceleration = query;
        self.has_acceleration = acceleration;
        self.has_query = query;
        if acceleration {
            names.push(ash::khr::deferred_host_operations::NAME.as_ptr());
            names.push(ash::khr::acceleration_structure::NAME.as_ptr());
        }
        if query {
            names.push(ash::khr::ray_query::NAME.as_ptr());
        }
        (acceleration, query)
    }

    /// `info` with the structs of the enabled extensions chained (their `pNext` reset).
    pub(crate) fn chain_create<'a>(
        &'a mut self,
        mut info: vk::DeviceCreateInfo<'a>,
    ) -> vk::DeviceCreateInfo<'a> {
        self.acceleration.p_next = std::ptr::null_mut();
        self.query.p_next = std::ptr::null_mut();
        if self.has_acceleration {
            info = info.push_next(&mut self.acceleration);
        }
        if self.has_query {
            info = info.push_next(&mut self.query);
        }
        info
    }
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
