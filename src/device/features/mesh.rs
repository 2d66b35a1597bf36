//! VK_EXT_mesh_shader's workgroup-count limits.

use ash::vk;

/// The workgroup-count limits of `draw_mesh_tasks` (`VkPhysicalDeviceMeshShaderPropertiesEXT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeshShaderLimits {
    /// `maxTaskWorkGroupCount`: per dimension, with a task stage.
    pub max_task_work_group_count: [u32; 3],
    /// `maxTaskWorkGroupTotalCount`: their product, with a task stage.
    pub max_task_work_group_total_count: u32,
    /// `maxMeshWorkGroupCount`: per dimension, without a task stage.
    pub max_mesh_work_group_count: [u32; 3],
    /// `maxMeshWorkGroupTotalCount`: their product, without a task stage.
    pub max_mesh_work_group_total_count: u32,
}

/// VK_EXT_mesh_shader's workgroup-count limits of `physical` (which has the extension).
pub(super) fn mesh_limits(ir: &ash::Instance, physical: vk::PhysicalDevice) -> MeshShaderLimits {
    let mut pm = vk::PhysicalDeviceMeshShaderPropertiesEXT::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut pm);
    // SAFETY: the chain holds one local struct of the right sType; the device has the
    // extension.
    unsafe { ir.get_physical_device_properties2(physical, &mut p2) };
    MeshShaderLimits {
        max_task_work_group_count: pm.max_task_work_group_count,
        max_task_work_group_total_count: pm.max_task_work_group_total_count,
        max_mesh_work_group_count: pm.max_mesh_work_group_count,
        max_mesh_work_group_total_count: pm.max_mesh_work_group_total_count,
    }
}
