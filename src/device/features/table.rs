//! The feature structs kiln queries and enables, as one table: one `Option` per Vulkan
//! version or extension, `Some` where the device has it (and the validation layer knows
//! it). The same table is chained into `vkGetPhysicalDeviceFeatures2` and, once
//! [`settle`](FeatureTable::settle)d (features kiln does not enable cleared, entries whose
//! feature is off set to `None`), into `vkCreateDevice`; each entry's extension names are
//! enabled exactly when the entry is `Some` at creation.
//!
//! Adding an extension with a feature struct: a field here, a line in
//! [`new`](FeatureTable::new) (when it is queried), [`link`](FeatureTable::link) and
//! [`unlink`](FeatureTable::unlink) (the chain), [`extension_names`](FeatureTable::extension_names),
//! and what [`settle`](FeatureTable::settle) keeps.

use std::ffi::{c_char, c_void, CStr};

use ash::vk;

use super::bfloat16::Bfloat16Features;
use super::descriptors::LAYER_KNOWS_LOCAL_READ;
use super::fault::LAYER_KNOWS_DEVICE_FAULT;
use super::{BFLOAT16_NAME, LAYER_KNOWS_BFLOAT16, LAYER_KNOWS_COOPERATIVE_MATRIX};
use crate::device::coopmat2::{self, CooperativeMatrix2Features};
use crate::error::{vk_err, Result};

/// Every feature struct of a device, one entry per Vulkan version or extension (module
/// docs). `core` is `VkPhysicalDeviceFeatures`, always there.
#[derive(Default)]
pub(super) struct FeatureTable {
    pub core: vk::PhysicalDeviceFeatures,
    /// Vulkan 1.1 and 1.2 (queried together, on a Vulkan 1.2 device).
    pub v11: Option<vk::PhysicalDeviceVulkan11Features<'static>>,
    pub v12: Option<vk::PhysicalDeviceVulkan12Features<'static>>,
    pub v13: Option<vk::PhysicalDeviceVulkan13Features<'static>>,
    pub cooperative_matrix: Option<vk::PhysicalDeviceCooperativeMatrixFeaturesKHR<'static>>,
    pub bfloat16: Option<Bfloat16Features>,
    pub cooperative_matrix2: Option<coopmat2::RawFeatures>,
    pub executable: Option<vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR<'static>>,
    pub mesh: Option<vk::PhysicalDeviceMeshShaderFeaturesEXT<'static>>,
    /// VK_KHR_acceleration_structure (with VK_KHR_deferred_host_operations).
    pub acceleration: Option<vk::PhysicalDeviceAccelerationStructureFeaturesKHR<'static>>,
    pub ray_query: Option<vk::PhysicalDeviceRayQueryFeaturesKHR<'static>>,
    pub local_read: Option<vk::PhysicalDeviceDynamicRenderingLocalReadFeaturesKHR<'static>>,
    pub fault: Option<vk::PhysicalDeviceFaultFeaturesEXT<'static>>,
}

/// What [`FeatureTable::settle`] found enabled besides the core structs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Settled {
    pub cooperative_matrix: bool,
    /// `shaderBFloat16Type`, `…DotProduct`, `…CooperativeMatrix` as reported (the
    /// extension is enabled with the first).
    pub bfloat16: [bool; 3],
    pub cooperative_matrix2: CooperativeMatrix2Features,
    pub pipeline_executable_info: bool,
    pub mesh_shader: bool,
    pub task_shader: bool,
    /// `accelerationStructure` and `rayQuery`: both or neither
    /// (`acceleration_structure/features.rs`).
    pub ray_query: bool,
    pub local_read: bool,
    pub device_fault: bool,
}

fn b(v: vk::Bool32) -> bool {
    v == vk::TRUE
}

/// `s` as the start of a Vulkan struct that extends both feature chains.
fn base<T: vk::ExtendsPhysicalDeviceFeatures2 + vk::ExtendsDeviceCreateInfo>(
    s: &mut T,
) -> *mut vk::BaseOutStructure<'static> {
    (s as *mut T).cast()
}

impl FeatureTable {
    /// The entries a device of API version `api` whose extensions `has` answers for gets
    /// queried, under a validation layer of version `layer` (0: none; a layer older than
    /// an extension's structs leaves the extension out, `KILN-W004`).
    pub(super) fn new(has: &impl Fn(&CStr) -> bool, layer: u32, api: u32) -> FeatureTable {
        let knows = |since: u32| layer == 0 || layer >= since;
        let v12 = api >= vk::API_VERSION_1_2;
        let coopmat =
            has(ash::khr::cooperative_matrix::NAME) && knows(LAYER_KNOWS_COOPERATIVE_MATRIX);
        let acceleration = has(ash::khr::acceleration_structure::NAME)
            && has(ash::khr::deferred_host_operations::NAME);
        FeatureTable {
            core: Default::default(),
            v11: when(v12),
            v12: when(v12),
            v13: when(api >= vk::API_VERSION_1_3),
            cooperative_matrix: when(coopmat),
            bfloat16: when(has(BFLOAT16_NAME) && knows(LAYER_KNOWS_BFLOAT16)),
            cooperative_matrix2: when(
                coopmat && has(coopmat2::NAME) && knows(coopmat2::LAYER_KNOWS),
            ),
            executable: when(has(ash::khr::pipeline_executable_properties::NAME)),
            mesh: when(has(ash::ext::mesh_shader::NAME)),
            acceleration: when(acceleration),
            ray_query: when(acceleration && has(ash::khr::ray_query::NAME)),
            local_read: when(
                has(ash::khr::dynamic_rendering_local_read::NAME) && knows(LAYER_KNOWS_LOCAL_READ),
            ),
            fault: when(has(ash::ext::device_fault::NAME) && knows(LAYER_KNOWS_DEVICE_FAULT)),
        }
    }

    /// Links every `Some` entry into one `pNext` chain, in table order; returns its head
    /// (null: no entry). The chain points into `self`: it is valid while `self` is neither
    /// moved nor changed, and [`unlink`](Self::unlink) ends it.
    fn link(&mut self) -> *mut c_void {
        let structs = [
            self.v11.as_mut().map(base),
            self.v12.as_mut().map(base),
            self.v13.as_mut().map(base),
            self.cooperative_matrix.as_mut().map(base),
            self.bfloat16.as_mut().map(base),
            self.cooperative_matrix2.as_mut().map(base),
            self.executable.as_mut().map(base),
            self.mesh.as_mut().map(base),
            self.acceleration.as_mut().map(base),
            self.ray_query.as_mut().map(base),
            self.local_read.as_mut().map(base),
            self.fault.as_mut().map(base),
        ];
        let mut head: *mut vk::BaseOutStructure<'static> = std::ptr::null_mut();
        for s in structs.into_iter().rev().flatten() {
            // SAFETY: `s` points to a live entry of `self` (borrowed mutably for this call),
            // a Vulkan struct that starts with sType and pNext (`base`'s bounds).
            unsafe { (*s).p_next = head };
            head = s;
        }
        head.cast()
    }

    /// Sets every entry's `pNext` back to null (no pointer into `self` is kept).
    fn unlink(&mut self) {
        let null = std::ptr::null_mut();
        self.v11.iter_mut().for_each(|s| s.p_next = null);
        self.v12.iter_mut().for_each(|s| s.p_next = null);
        self.v13.iter_mut().for_each(|s| s.p_next = null);
        self.cooperative_matrix
            .iter_mut()
            .for_each(|s| s.p_next = null);
        self.bfloat16.iter_mut().for_each(|s| s.p_next = null);
        self.cooperative_matrix2
            .iter_mut()
            .for_each(|s| s.p_next = null);
        self.executable.iter_mut().for_each(|s| s.p_next = null);
        self.mesh.iter_mut().for_each(|s| s.p_next = null);
        self.acceleration.iter_mut().for_each(|s| s.p_next = null);
        self.ray_query.iter_mut().for_each(|s| s.p_next = null);
        self.local_read.iter_mut().for_each(|s| s.p_next = null);
        self.fault.iter_mut().for_each(|s| s.p_next = null);
    }

    /// Fills every entry (and `core`) with what `physical` supports.
    pub(super) fn query(&mut self, ir: &ash::Instance, physical: vk::PhysicalDevice) {
        let mut f2 = vk::PhysicalDeviceFeatures2 {
            p_next: self.link(),
            ..Default::default()
        };
        // SAFETY: the chain holds only entries of `self`, alive and unmoved for the call,
        // each of its right sType, an extension's only when the device has the extension
        // (`new`).
        unsafe { ir.get_physical_device_features2(physical, &mut f2) };
        self.core = f2.features;
        self.unlink();
    }

    /// After [`query`](Self::query): clears the features kiln does not enable (module docs
    /// of `features.rs`), drops the entries whose feature the device did not report (their
    /// extensions are then not enabled) and says what is enabled.
    pub(super) fn settle(&mut self) -> Settled {
        self.core.robust_buffer_access = vk::FALSE;
        if let Some(f13) = &mut self.v13 {
            f13.robust_image_access = vk::FALSE;
        }
        if let Some(f12) = &mut self.v12 {
            f12.buffer_device_address_capture_replay = vk::FALSE;
            f12.buffer_device_address_multi_device = vk::FALSE;
        }
        let mut s = Settled::default();
        if let Some(fcm) = &mut self.cooperative_matrix {
            fcm.cooperative_matrix_robust_buffer_access = vk::FALSE;
            s.cooperative_matrix = b(fcm.cooperative_matrix);
        }
        keep(&mut self.cooperative_matrix, s.cooperative_matrix);
        if let Some(fbf) = &self.bfloat16 {
            s.bfloat16 = [
                b(fbf.shader_bfloat16_type),
                b(fbf.shader_bfloat16_dot_product),
                b(fbf.shader_bfloat16_cooperative_matrix),
            ];
        }
        keep(&mut self.bfloat16, s.bfloat16[0]);
        if let (Some(fcm2), true) = (&self.cooperative_matrix2, s.cooperative_matrix) {
            s.cooperative_matrix2 = fcm2.get();
        }
        let any_coopmat2 = s.cooperative_matrix2 != CooperativeMatrix2Features::default();
        keep(&mut self.cooperative_matrix2, any_coopmat2);
        s.pipeline_executable_info = self
            .executable
            .is_some_and(|f| b(f.pipeline_executable_info));
        keep(&mut self.executable, s.pipeline_executable_info);
        if let Some(fms) = &mut self.mesh {
            // Multiview and fragment-shading-rate mesh shading need features kiln does not
            // enable; mesh queries, queries kiln does not make.
            fms.multiview_mesh_shader = vk::FALSE;
            fms.primitive_fragment_shading_rate_mesh_shader = vk::FALSE;
            fms.mesh_shader_queries = vk::FALSE;
            s.mesh_shader = b(fms.mesh_shader);
            s.task_shader = s.mesh_shader && b(fms.task_shader);
        }
        keep(&mut self.mesh, s.mesh_shader);
        if let Some(a) = &mut self.acceleration {
            a.acceleration_structure_capture_replay = vk::FALSE;
            a.acceleration_structure_indirect_build = vk::FALSE;
            a.acceleration_structure_host_commands = vk::FALSE;
        }
        s.ray_query = self
            .acceleration
            .is_some_and(|a| b(a.acceleration_structure))
            && self.ray_query.is_some_and(|q| b(q.ray_query));
        keep(&mut self.acceleration, s.ray_query);
        keep(&mut self.ray_query, s.ray_query);
        s.local_read = self
            .local_read
            .is_some_and(|f| b(f.dynamic_rendering_local_read));
        keep(&mut self.local_read, s.local_read);
        if let Some(f) = &mut self.fault {
            f.device_fault_vendor_binary = vk::FALSE;
            s.device_fault = b(f.device_fault);
        }
        keep(&mut self.fault, s.device_fault);
        s
    }

    /// The extensions of the `Some` entries (after [`settle`](Self::settle): the enabled
    /// ones), appended to `names`.
    pub(super) fn extension_names(&self, names: &mut Vec<*const c_char>) {
        let entries: [(bool, &[&CStr]); 9] = [
            (
                self.cooperative_matrix.is_some(),
                &[ash::khr::cooperative_matrix::NAME],
            ),
            (self.bfloat16.is_some(), &[BFLOAT16_NAME]),
            (self.cooperative_matrix2.is_some(), &[coopmat2::NAME]),
            (
                self.executable.is_some(),
                &[ash::khr::pipeline_executable_properties::NAME],
            ),
            (
                self.local_read.is_some(),
                &[ash::khr::dynamic_rendering_local_read::NAME],
            ),
            (self.mesh.is_some(), &[ash::ext::mesh_shader::NAME]),
            (
                self.acceleration.is_some(),
                &[
                    ash::khr::deferred_host_operations::NAME,
                    ash::khr::acceleration_structure::NAME,
                ],
            ),
            (self.ray_query.is_some(), &[ash::khr::ray_query::NAME]),
            (self.fault.is_some(), &[ash::ext::device_fault::NAME]),
        ];
        for (on, list) in entries {
            if on {
                names.extend(list.iter().map(|n| n.as_ptr()));
            }
        }
    }

    /// `vkCreateDevice` with `core` and every `Some` entry chained, the extensions
    /// `plain` (those without a feature struct) and
    /// [`extension_names`](Self::extension_names).
    pub(super) fn create(
        &mut self,
        ir: &ash::Instance,
        physical: vk::PhysicalDevice,
        queue_infos: &[vk::DeviceQueueCreateInfo<'_>],
        plain: &[*const c_char],
    ) -> Result<ash::Device> {
        let mut names = plain.to_vec();
        self.extension_names(&mut names);
        let core = self.core;
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(queue_infos)
            .enabled_extension_names(&names)
            .enabled_features(&core);
        info.p_next = self.link().cast_const();
        // Under the loader lock: vkCreateDevice and ash's loading of every device function
        // (`loader` module docs).
        let loader = crate::device::loader::exclusive();
        // SAFETY: every pointer in `info` refers to locals, the caller's slices and the
        // entries of `self`, alive and unmoved for this call, linked into exactly one chain
        // (`link`); the features enabled are a subset of those the device reported
        // (`query`, `settle`), and an extension's struct is chained only with the
        // extension enabled (`extension_names`).
        let raw = unsafe { ir.create_device(physical, &info, None) };
        drop(loader);
        self.unlink();
        raw.map_err(vk_err("vkCreateDevice"))
    }
}

/// `Some(default)` when `on`.
fn when<T: Default>(on: bool) -> Option<T> {
    on.then(T::default)
}

/// Drops `entry` unless `on`.
fn keep<T>(entry: &mut Option<T>, on: bool) {
    if !on {
        *entry = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_follow_the_extensions_and_the_layer() {
        let all = |_: &CStr| true;
        let t = FeatureTable::new(&all, 0, vk::API_VERSION_1_3);
        assert!(t.v11.is_some() && t.v12.is_some() && t.v13.is_some());
        assert!(t.cooperative_matrix.is_some() && t.cooperative_matrix2.is_some());
        assert!(t.acceleration.is_some() && t.ray_query.is_some() && t.fault.is_some());
        // Layer 1.3.239 (Debian 12) knows device fault but none of the newer structs.
        let old = vk::make_api_version(0, 1, 3, 239);
        let t = FeatureTable::new(&all, old, vk::API_VERSION_1_3);
        assert!(t.fault.is_some() && t.cooperative_matrix.is_none());
        assert!(t.bfloat16.is_none() && t.local_read.is_none());
        // Ray queries need acceleration structures; cooperative matrix 2 the KHR one.
        let some = |n: &CStr| {
            n == ash::khr::ray_query::NAME
                || n == coopmat2::NAME
                || n == ash::khr::acceleration_structure::NAME
        };
        let t = FeatureTable::new(&some, 0, vk::API_VERSION_1_2);
        assert!(t.ray_query.is_none() && t.acceleration.is_none());
        assert!(t.cooperative_matrix2.is_none() && t.v13.is_none() && t.v12.is_some());
    }

    #[test]
    fn link_chains_every_entry_once_and_unlink_clears() {
        let all = |_: &CStr| true;
        let mut t = FeatureTable::new(&all, 0, vk::API_VERSION_1_3);
        let head = t.link();
        let mut types = Vec::new();
        let mut p = head.cast::<vk::BaseOutStructure<'static>>();
        while !p.is_null() {
            // SAFETY: the chain points into `t`, alive and unchanged.
            unsafe {
                types.push((*p).s_type);
                p = (*p).p_next;
            }
        }
        assert_eq!(types.len(), 12);
        assert_eq!(
            types[0],
            vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_1_FEATURES
        );
        assert_eq!(
            types[11],
            vk::StructureType::PHYSICAL_DEVICE_FAULT_FEATURES_EXT
        );
        t.unlink();
        assert!(t.v11.is_some_and(|f| f.p_next.is_null()));
        assert!(t.ray_query.is_some_and(|f| f.p_next.is_null()));
        let mut none = FeatureTable::default();
        assert!(none.link().is_null());
    }

    #[test]
    fn settle_keeps_what_is_reported_and_names_its_extensions() {
        let all = |_: &CStr| true;
        let mut t = FeatureTable::new(&all, 0, vk::API_VERSION_1_3);
        t.core.robust_buffer_access = vk::TRUE;
        if let Some(f) = &mut t.cooperative_matrix {
            f.cooperative_matrix = vk::TRUE;
            f.cooperative_matrix_robust_buffer_access = vk::TRUE;
        }
        if let Some(f) = &mut t.mesh {
            f.mesh_shader = vk::TRUE;
            f.task_shader = vk::TRUE;
            f.mesh_shader_queries = vk::TRUE;
        }
        // Acceleration structures without ray queries: neither.
        if let Some(f) = &mut t.acceleration {
            f.acceleration_structure = vk::TRUE;
        }
        if let Some(f) = &mut t.fault {
            f.device_fault = vk::TRUE;
            f.device_fault_vendor_binary = vk::TRUE;
        }
        let s = t.settle();
        assert!(s.cooperative_matrix && s.mesh_shader && s.task_shader && s.device_fault);
        assert!(!s.ray_query && !s.local_read && !s.pipeline_executable_info);
        assert_eq!(s.bfloat16, [false; 3]);
        assert_eq!(t.core.robust_buffer_access, vk::FALSE);
        assert!(t
            .cooperative_matrix
            .is_some_and(|f| f.cooperative_matrix_robust_buffer_access == vk::FALSE));
        assert!(t.mesh.is_some_and(|f| f.mesh_shader_queries == vk::FALSE));
        assert!(t
            .fault
            .is_some_and(|f| f.device_fault_vendor_binary == vk::FALSE));
        assert!(t.acceleration.is_none() && t.ray_query.is_none());
        assert!(t.bfloat16.is_none() && t.cooperative_matrix2.is_none());
        let mut names = Vec::new();
        t.extension_names(&mut names);
        // SAFETY: every name is a 'static C string of ash's.
        let names: Vec<&CStr> = names
            .iter()
            .map(|&n| unsafe { CStr::from_ptr(n) })
            .collect();
        assert_eq!(
            names,
            [
                ash::khr::cooperative_matrix::NAME,
                ash::ext::mesh_shader::NAME,
                ash::ext::device_fault::NAME
            ]
        );
    }
}
