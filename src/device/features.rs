//! Which device features kiln enables, and the logical device's creation.
//!
//! kiln enables every core feature the device reports (Vulkan 1.0–1.3 feature structs),
//! except those that cost speed everywhere (`robustBufferAccess`, `robustImageAccess`) or
//! exist for tooling (`bufferDeviceAddressCaptureReplay`, `…MultiDevice`). Extensions:
//! `VK_KHR_swapchain` when present and the instance has surface extensions (windowing);
//! `VK_EXT_external_memory_host` when present (importing host memory);
//! `VK_KHR_external_memory_fd`, `VK_EXT_external_memory_dma_buf`,
//! `VK_KHR_external_semaphore_fd` when present (`features/external.rs`);
//! `VK_KHR_cooperative_matrix`, `VK_KHR_shader_bfloat16` and `VK_NV_cooperative_matrix2`
//! (with every feature the device reports; the NV one only on top of the KHR one) unless
//! the validation layer predates them (`KILN-W004`);
//! `VK_KHR_pipeline_executable_properties` with its `pipelineExecutableInfo` feature when
//! present (pipelines may then capture their statistics: `capture_statistics` of the
//! pipeline descriptions); `VK_KHR_acceleration_structure` (with
//! `VK_KHR_deferred_host_operations`) and `VK_KHR_ray_query` when present
//! (`acceleration_structure/features.rs`); `VK_EXT_device_fault` when present
//! (`features/fault.rs`); `VK_AMD_buffer_marker` when present and breadcrumbs are on,
//! unless `KILN_BREADCRUMB_MARKERS=fill` (`device::breadcrumbs`: the markers' writer).
//!
//! The feature structs are one table (`features/table.rs`): one `Option` per Vulkan version
//! or extension, queried, settled and chained into `vkCreateDevice` from it.

use std::ffi::{c_char, CStr};

use ash::vk;

use super::acceleration_structure::{self as accel, AccelerationStructureLimits};
use super::capabilities::{FloatControls, Supported};
use super::coopmat2::{self, CooperativeMatrix2Features};
use super::instance::Instance;
use super::properties::{ComputeProperties, CooperativeMatrixConfig};
use super::DeviceInfo;
use crate::error::{vk_err, Result};

mod bfloat16;
mod descriptors;
mod external;
mod fault;
mod mesh;
mod table;

use self::mesh::mesh_limits;
pub use self::mesh::MeshShaderLimits;
use self::table::{FeatureTable, Settled};

pub(crate) use self::descriptors::local_read_missing;
pub use self::descriptors::{InlineUniformBlockLimits, UpdateAfterBindLimits};

/// `VK_KHR_shader_bfloat16`'s name; ash (headers 1.3.281) predates the extension.
const BFLOAT16_NAME: &CStr = c"VK_KHR_shader_bfloat16";
/// Validation-layer versions that know the extensions' structs.
const LAYER_KNOWS_COOPERATIVE_MATRIX: u32 = vk::make_api_version(0, 1, 3, 255);
const LAYER_KNOWS_BFLOAT16: u32 = vk::make_api_version(0, 1, 4, 311);

/// What `create_device` made and found: the device, the [`Features`] it enabled, every
/// supported feature (for the capability check) and the compute properties.
pub(crate) struct Created {
    pub raw: ash::Device,
    pub features: Features,
    pub supported: Supported,
    pub compute: ComputeProperties,
}

/// Device features that kiln enabled (each true only when the device supports it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features {
    /// Timeline semaphores (Vulkan 1.2; kiln requires them).
    pub timeline_semaphore: bool,
    /// synchronization2 barriers and submits (Vulkan 1.3; kiln requires it).
    pub synchronization2: bool,
    /// Dynamic rendering (Vulkan 1.3): rendering without render pass objects.
    pub dynamic_rendering: bool,
    /// `bufferDeviceAddress` (Vulkan 1.2).
    pub buffer_device_address: bool,
    /// Descriptor indexing as a whole (Vulkan 1.2).
    pub descriptor_indexing: bool,
    /// `runtimeDescriptorArray`: unsized descriptor arrays in shaders.
    pub runtime_descriptor_array: bool,
    /// `descriptorBindingPartiallyBound`: descriptors left unwritten when not used.
    pub descriptor_binding_partially_bound: bool,
    /// `descriptorBindingVariableDescriptorCount`: a set picks its last binding's count.
    pub descriptor_binding_variable_descriptor_count: bool,
    /// UPDATE_AFTER_BIND support per descriptor type family.
    pub update_after_bind_storage_buffer: bool,
    /// UPDATE_AFTER_BIND for uniform buffers.
    pub update_after_bind_uniform_buffer: bool,
    /// UPDATE_AFTER_BIND for sampled images.
    pub update_after_bind_sampled_image: bool,
    /// UPDATE_AFTER_BIND for storage images.
    pub update_after_bind_storage_image: bool,
    /// `shaderFloat64`: `double` in shaders.
    pub shader_float64: bool,
    /// `shaderInt64`: 64-bit integers in shaders.
    pub shader_int64: bool,
    /// `shaderInt16`: 16-bit integers in shaders.
    pub shader_int16: bool,
    /// `shaderFloat16`: 16-bit floats in shaders.
    pub shader_float16: bool,
    /// `shaderInt8`: 8-bit integers in shaders.
    pub shader_int8: bool,
    /// `storageBuffer16BitAccess`: 16-bit types in storage buffers.
    pub storage_buffer_16bit_access: bool,
    /// `storageBuffer8BitAccess`: 8-bit types in storage buffers.
    pub storage_buffer_8bit_access: bool,
    /// `scalarBlockLayout`: the scalar block layout (GL_EXT_scalar_block_layout).
    pub scalar_block_layout: bool,
    /// `vulkanMemoryModel`.
    pub vulkan_memory_model: bool,
    /// Geometry shaders.
    pub geometry_shader: bool,
    /// Tessellation shaders.
    pub tessellation_shader: bool,
    /// Storage image writes without a declared format.
    pub shader_storage_image_write_without_format: bool,
    /// Storage image reads without a declared format.
    pub shader_storage_image_read_without_format: bool,
    /// Stores and atomics in vertex, tessellation and geometry stages.
    pub vertex_pipeline_stores_and_atomics: bool,
    /// Stores and atomics in fragment shaders.
    pub fragment_stores_and_atomics: bool,
    /// Anisotropic filtering.
    pub sampler_anisotropy: bool,
    /// `independentBlend`: colour attachments of one pipeline with different blend states.
    pub independent_blend: bool,
    /// `depthBiasClamp`: a non-zero depth bias clamp.
    pub depth_bias_clamp: bool,
    /// `meshShader` (VK_EXT_mesh_shader): graphics pipelines of mesh (and task) shaders,
    /// drawn with `draw_mesh_tasks`.
    pub mesh_shader: bool,
    /// `taskShader` (VK_EXT_mesh_shader): a task stage before the mesh stage.
    pub task_shader: bool,
    /// VK_EXT_mesh_shader's workgroup-count limits (zero without the extension).
    pub mesh_shader_limits: MeshShaderLimits,
    /// `accelerationStructure` (VK_KHR_acceleration_structure): acceleration structures
    /// ([`Device::acceleration_structure`](crate::Device::acceleration_structure)), built by
    /// [`Recorder::build_acceleration_structures`](crate::Recorder::build_acceleration_structures).
    pub acceleration_structure: bool,
    /// `rayQuery` (VK_KHR_ray_query): shaders with ray queries (`GL_EXT_ray_query`, SPIR-V
    /// capability `RayQueryKHR`).
    pub ray_query: bool,
    /// VK_KHR_acceleration_structure's limits (zero without the extension).
    pub acceleration_structure_limits: AccelerationStructureLimits,
    /// `textureCompressionBC`: BC1–BC7 images (sampled, copied).
    pub texture_compression_bc: bool,
    /// `textureCompressionETC2`: ETC2 and EAC images.
    pub texture_compression_etc2: bool,
    /// `textureCompressionASTC_LDR`: ASTC LDR images.
    pub texture_compression_astc_ldr: bool,
    /// `imageCubeArray`: images with a CUBE_ARRAY view.
    pub image_cube_array: bool,
    /// `multiDrawIndirect`: indirect draws with a draw count above 1.
    pub multi_draw_indirect: bool,
    /// `drawIndirectCount` (Vulkan 1.2): `draw_indirect_count` and
    /// `draw_indexed_indirect_count`.
    pub draw_indirect_count: bool,
    /// `VK_KHR_swapchain` was enabled (the instance had `VK_KHR_surface`).
    pub swapchain: bool,
    /// `VK_EXT_external_memory_host`: host memory can be imported
    /// ([`Device::import_host_memory`](crate::Device::import_host_memory)).
    pub external_memory_host: bool,
    /// `VK_KHR_external_memory_fd`: buffers exported and imported as opaque fds
    /// ([`Device::exportable_buffer`](crate::Device::exportable_buffer)).
    pub external_memory_fd: bool,
    /// `VK_EXT_external_memory_dma_buf`: buffers exported and imported as DMA-BUF fds.
    pub external_memory_dma_buf: bool,
    /// `VK_KHR_external_semaphore_fd`: timeline semaphores exported and imported as fds
    /// ([`Device::exportable_timeline_semaphore`](crate::Device::exportable_timeline_semaphore)).
    pub external_semaphore_fd: bool,
    /// `hostQueryReset` (Vulkan 1.2): query pools are reset on the host, so kiln's GPU timing
    /// reuses its query pools.
    pub host_query_reset: bool,
    /// `VK_KHR_calibrated_timestamps` or `VK_EXT_calibrated_timestamps` is enabled: GPU
    /// timestamps are placed on the CPU clock by reading both clocks at once.
    pub calibrated_timestamps: bool,
    /// `VK_KHR_push_descriptor`: pipelines may take a push-descriptor set.
    pub push_descriptor: bool,
    /// `subgroupSizeControl` (Vulkan 1.3): required subgroup sizes per pipeline.
    pub subgroup_size_control: bool,
    /// `computeFullSubgroups` (Vulkan 1.3).
    pub compute_full_subgroups: bool,
    /// `cooperativeMatrix` (VK_KHR_cooperative_matrix), enabled.
    pub cooperative_matrix: bool,
    /// `shaderBFloat16Type` (VK_KHR_shader_bfloat16), enabled.
    pub shader_bfloat16: bool,
    /// `pipelineExecutableInfo` (VK_KHR_pipeline_executable_properties), enabled: pipelines
    /// created with `capture_statistics` report their executables' statistics (registers,
    /// instruction counts, … as the driver names them;
    /// [`ComputePipeline::executable_statistics`](crate::ComputePipeline::executable_statistics)).
    pub pipeline_executable_info: bool,
    /// The VK_NV_cooperative_matrix2 features enabled (workgroup scope, flexible
    /// dimensions, tensor addressing, …; all false without the extension).
    pub cooperative_matrix2: CooperativeMatrix2Features,
    /// Update-after-bind descriptor limits (Vulkan 1.2 descriptor indexing properties);
    /// zero when descriptor indexing is unsupported.
    pub update_after_bind_limits: UpdateAfterBindLimits,
    /// `inlineUniformBlock` (Vulkan 1.3, VK_EXT_inline_uniform_block): uniform blocks whose
    /// bytes live in the descriptor set
    /// ([`PipelineLayoutDesc::with_inline_uniform_block`](crate::PipelineLayoutDesc::with_inline_uniform_block)).
    pub inline_uniform_block: bool,
    /// The inline uniform block limits (zero without the feature).
    pub inline_uniform_block_limits: InlineUniformBlockLimits,
    /// `dynamicRenderingLocalRead` (VK_KHR_dynamic_rendering_local_read, core in Vulkan
    /// 1.4): a fragment shader reads, through an input attachment, the colour attachment
    /// an earlier draw of the same rendering scope wrote
    /// ([`ColorAttachment::local_read`](crate::ColorAttachment::local_read),
    /// [`Recorder::local_read_barrier`](crate::Recorder::local_read_barrier)).
    pub dynamic_rendering_local_read: bool,
    /// `deviceFault` (VK_EXT_device_fault): a lost device's `KILN-E105` carries the
    /// driver's description of the fault ([`PostMortem::fault`](crate::PostMortem::fault)).
    pub device_fault: bool,
    /// VK_AMD_buffer_marker, enabled where present when breadcrumbs are on (and
    /// `KILN_BREADCRUMB_MARKERS` is not `fill`): breadcrumb markers are written with
    /// `vkCmdWriteBufferMarkerAMD`, inside rendering scopes too (`PostMortem`).
    pub buffer_marker: bool,
}

fn b(v: vk::Bool32) -> bool {
    v == vk::TRUE
}

/// Creates the logical device of `physical` with queues `queues` (`(family, count)`):
/// queries its extensions and the feature table (`features/table.rs`), enables what the
/// module docs say, and reports what it enabled and supports.
pub(crate) fn create_device(
    instance: &Instance,
    physical: vk::PhysicalDevice,
    queues: &[(u32, u32)],
    info: &DeviceInfo,
    breadcrumbs: bool,
) -> Result<Created> {
    let ir = &instance.raw;
    // SAFETY: plain query.
    let exts = unsafe { ir.enumerate_device_extension_properties(physical) }
        .map_err(vk_err("vkEnumerateDeviceExtensionProperties"))?;
    let has = |n: &CStr| {
        exts.iter()
            .any(|e| e.extension_name_as_c_str().is_ok_and(|x| x == n))
    };
    let layer = instance.validation_layer_version;
    warn_layer_predates(&info.name, layer, &has);
    let mut table = FeatureTable::new(&has, layer, info.used_api_version);
    table.query(ir, physical);
    let settled = table.settle();
    let mut plain = Vec::new();
    let extensions = PlainExtensions::enable(instance, &has, breadcrumbs, &mut plain);
    let supported = Supported {
        f10: table.core,
        f11: table.v11.unwrap_or_default(),
        f12: table.v12.unwrap_or_default(),
        f13: table.v13.unwrap_or_default(),
        p12: FloatControls::default(),
        cooperative_matrix: settled.cooperative_matrix,
        bfloat16: settled.bfloat16,
        cooperative_matrix2: settled.cooperative_matrix2,
        mesh_shader: [settled.mesh_shader, settled.task_shader],
        ray_query: settled.ray_query,
    };
    let (mut supported, mut compute) =
        query_properties(instance, physical, supported, extensions.push_descriptor);
    if table.cooperative_matrix2.is_some() {
        compute.cooperative_matrix2 = coopmat2::query(instance, physical);
    }
    let mut features = enabled_features(ir, physical, &table, &settled, &extensions);
    // One priority per queue, all equal (at most MAX_QUEUES queues per family).
    let priorities = [1.0f32; super::MAX_QUEUES];
    let queue_infos: Vec<_> = queues
        .iter()
        .map(|&(family, n)| {
            vk::DeviceQueueCreateInfo::default()
                .queue_family_index(family)
                .queue_priorities(&priorities[..(n as usize).clamp(1, super::MAX_QUEUES)])
        })
        .collect();
    let raw = match table.create(ir, physical, &queue_infos, &plain) {
        Ok(raw) => raw,
        Err(e) if table.cooperative_matrix2.is_some() => {
            // A driver that lists VK_NV_cooperative_matrix2 but refuses it (or a struct
            // kiln lays out differently from the driver) must not cost the device: retry
            // without it, and say so.
            log::warn!(
                "KILN-W004: {} refused VK_NV_cooperative_matrix2 ({e}); kiln leaves it off, \
                 so workgroup-scope cooperative matrices are refused (KILN-E112)",
                info.name
            );
            table.cooperative_matrix2 = None;
            features.cooperative_matrix2 = CooperativeMatrix2Features::default();
            supported.cooperative_matrix2 = CooperativeMatrix2Features::default();
            compute.cooperative_matrix2 = Default::default();
            table.create(ir, physical, &queue_infos, &plain)?
        }
        Err(e) => return Err(e),
    };
    Ok(Created {
        raw,
        features,
        supported,
        compute,
    })
}

/// `KILN-W004` for each extension the device has but the validation layer of version
/// `layer` (0: none) predates: kiln leaves it off (the feature table does not query it).
fn warn_layer_predates(device: &str, layer: u32, has: &impl Fn(&CStr) -> bool) {
    let layer_knows = |since: u32| layer == 0 || layer >= since;
    for (name, since) in [
        (
            ash::khr::cooperative_matrix::NAME,
            LAYER_KNOWS_COOPERATIVE_MATRIX,
        ),
        (BFLOAT16_NAME, LAYER_KNOWS_BFLOAT16),
        (coopmat2::NAME, coopmat2::LAYER_KNOWS),
    ] {
        if has(name) && !layer_knows(since) {
            log::warn!(
                "KILN-W004: {device} has {name:?} but the validation layer ({}.{}.{}) predates \
                 it, so kiln leaves it off and modules using it are refused (KILN-E107); run \
                 with KILN_VALIDATION=0 or a newer layer to use it",
                vk::api_version_major(layer),
                vk::api_version_minor(layer),
                vk::api_version_patch(layer)
            );
        }
    }
}

/// The extensions kiln enables that have no feature struct.
struct PlainExtensions {
    swapchain: bool,
    external_memory_host: bool,
    external: external::ExternalExtensions,
    calibrated_timestamps: bool,
    push_descriptor: bool,
    buffer_marker: bool,
}

impl PlainExtensions {
    /// Those `has` reports (the swapchain only with the instance's surface extensions,
    /// VK_AMD_buffer_marker only for `breadcrumbs`: `marker_writer`), their names
    /// appended to `names`.
    fn enable(
        instance: &Instance,
        has: &impl Fn(&CStr) -> bool,
        breadcrumbs: bool,
        names: &mut Vec<*const c_char>,
    ) -> PlainExtensions {
        let swapchain = instance.surface && has(ash::khr::swapchain::NAME);
        if swapchain {
            names.push(ash::khr::swapchain::NAME.as_ptr());
        }
        let external_memory_host = has(ash::ext::external_memory_host::NAME);
        if external_memory_host {
            names.push(ash::ext::external_memory_host::NAME.as_ptr());
        }
        let external = external::enable(has, names);
        // The EXT extension where present, else the KHR one (same functions). EXT first: the
        // Khronos validation layer 1.3.239 (Debian 12's) does not know the KHR name and warns
        // "Device Extension VK_KHR_calibrated_timestamps is not supported by this layer" on
        // every device creation, which fails every test that
        // asserts a clean validation report; drivers that have KHR also keep EXT.
        let calibrated = [
            ash::ext::calibrated_timestamps::NAME,
            ash::khr::calibrated_timestamps::NAME,
        ]
        .into_iter()
        .find(|&n| has(n));
        names.extend(calibrated.map(CStr::as_ptr));
        let push_descriptor = has(ash::khr::push_descriptor::NAME);
        if push_descriptor {
            names.push(ash::khr::push_descriptor::NAME.as_ptr());
        }
        let buffer_marker = super::breadcrumbs::amd_writer(
            breadcrumbs,
            has(ash::amd::buffer_marker::NAME),
            std::env::var("KILN_BREADCRUMB_MARKERS").ok().as_deref(),
        );
        if buffer_marker {
            names.push(ash::amd::buffer_marker::NAME.as_ptr());
        }
        PlainExtensions {
            swapchain,
            external_memory_host,
            external,
            calibrated_timestamps: calibrated.is_some(),
            push_descriptor,
            buffer_marker,
        }
    }
}

/// The [`Features`] of a device whose settled table is `table`, `settled`, with the
/// extensions `plain`; queries the limits of what is enabled.
fn enabled_features(
    ir: &ash::Instance,
    physical: vk::PhysicalDevice,
    table: &FeatureTable,
    settled: &Settled,
    plain: &PlainExtensions,
) -> Features {
    // A missing version's struct reads all false (the `v12 &&` of each feature).
    let f10 = &table.core;
    let f11 = table.v11.unwrap_or_default();
    let f12 = table.v12.unwrap_or_default();
    let f13 = table.v13.unwrap_or_default();
    let mesh_shader = settled.mesh_shader;
    let acceleration_structure = settled.ray_query;
    let inline_uniform_block = b(f13.inline_uniform_block);
    Features {
        timeline_semaphore: b(f12.timeline_semaphore),
        synchronization2: b(f13.synchronization2),
        dynamic_rendering: b(f13.dynamic_rendering),
        buffer_device_address: b(f12.buffer_device_address),
        descriptor_indexing: b(f12.descriptor_indexing),
        runtime_descriptor_array: b(f12.runtime_descriptor_array),
        descriptor_binding_partially_bound: b(f12.descriptor_binding_partially_bound),
        descriptor_binding_variable_descriptor_count: b(
            f12.descriptor_binding_variable_descriptor_count
        ),
        update_after_bind_storage_buffer: b(f12.descriptor_binding_storage_buffer_update_after_bind),
        update_after_bind_uniform_buffer: b(f12.descriptor_binding_uniform_buffer_update_after_bind),
        update_after_bind_sampled_image: b(f12.descriptor_binding_sampled_image_update_after_bind),
        update_after_bind_storage_image: b(f12.descriptor_binding_storage_image_update_after_bind),
        shader_float64: b(f10.shader_float64),
        shader_int64: b(f10.shader_int64),
        shader_int16: b(f10.shader_int16),
        shader_float16: b(f12.shader_float16),
        shader_int8: b(f12.shader_int8),
        storage_buffer_16bit_access: b(f11.storage_buffer16_bit_access),
        storage_buffer_8bit_access: b(f12.storage_buffer8_bit_access),
        scalar_block_layout: b(f12.scalar_block_layout),
        vulkan_memory_model: b(f12.vulkan_memory_model),
        geometry_shader: b(f10.geometry_shader),
        tessellation_shader: b(f10.tessellation_shader),
        shader_storage_image_write_without_format: b(f10.shader_storage_image_write_without_format),
        shader_storage_image_read_without_format: b(f10.shader_storage_image_read_without_format),
        vertex_pipeline_stores_and_atomics: b(f10.vertex_pipeline_stores_and_atomics),
        fragment_stores_and_atomics: b(f10.fragment_stores_and_atomics),
        sampler_anisotropy: b(f10.sampler_anisotropy),
        independent_blend: b(f10.independent_blend),
        depth_bias_clamp: b(f10.depth_bias_clamp),
        mesh_shader,
        task_shader: settled.task_shader,
        mesh_shader_limits: if mesh_shader {
            mesh_limits(ir, physical)
        } else {
            MeshShaderLimits::default()
        },
        acceleration_structure,
        ray_query: settled.ray_query,
        acceleration_structure_limits: if acceleration_structure {
            accel::limits(ir, physical)
        } else {
            AccelerationStructureLimits::default()
        },
        texture_compression_bc: b(f10.texture_compression_bc),
        texture_compression_etc2: b(f10.texture_compression_etc2),
        texture_compression_astc_ldr: b(f10.texture_compression_astc_ldr),
        image_cube_array: b(f10.image_cube_array),
        multi_draw_indirect: b(f10.multi_draw_indirect),
        draw_indirect_count: b(f12.draw_indirect_count),
        swapchain: plain.swapchain,
        external_memory_host: plain.external_memory_host,
        external_memory_fd: plain.external.memory_fd,
        external_memory_dma_buf: plain.external.memory_dma_buf,
        external_semaphore_fd: plain.external.semaphore_fd,
        host_query_reset: b(f12.host_query_reset),
        calibrated_timestamps: plain.calibrated_timestamps,
        push_descriptor: plain.push_descriptor,
        subgroup_size_control: b(f13.subgroup_size_control),
        compute_full_subgroups: b(f13.compute_full_subgroups),
        cooperative_matrix: settled.cooperative_matrix,
        shader_bfloat16: settled.bfloat16[0],
        pipeline_executable_info: settled.pipeline_executable_info,
        cooperative_matrix2: settled.cooperative_matrix2,
        update_after_bind_limits: if table.v12.is_some() {
            descriptors::update_after_bind_limits(ir, physical)
        } else {
            UpdateAfterBindLimits::default()
        },
        inline_uniform_block,
        inline_uniform_block_limits: if inline_uniform_block {
            descriptors::inline_uniform_block_limits(ir, physical)
        } else {
            InlineUniformBlockLimits::default()
        },
        dynamic_rendering_local_read: settled.local_read,
        device_fault: settled.device_fault,
        buffer_marker: plain.buffer_marker,
    }
}

/// Queries the compute properties (and the float controls of `supported`) of `physical`.
fn query_properties(
    instance: &Instance,
    physical: vk::PhysicalDevice,
    mut supported: Supported,
    push_descriptor: bool,
) -> (Supported, ComputeProperties) {
    let ir = &instance.raw;
    let mut p11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
    let mut p13 = vk::PhysicalDeviceVulkan13Properties::default();
    let mut ppd = vk::PhysicalDevicePushDescriptorPropertiesKHR::default();
    let mut pcm = vk::PhysicalDeviceCooperativeMatrixPropertiesKHR::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut p11)
        .push_next(&mut p12)
        .push_next(&mut p13);
    if push_descriptor {
        p2 = p2.push_next(&mut ppd);
    }
    if supported.cooperative_matrix {
        p2 = p2.push_next(&mut pcm);
    }
    // SAFETY: the chain holds locals alive for the call, of the right sTypes; the
    // extension structs only with the extension present. kiln requires Vulkan 1.3.
    unsafe { ir.get_physical_device_properties2(physical, &mut p2) };
    let limits = p2.properties.limits;
    supported.p12 = float_controls(&p12);
    let cooperative_matrix = if supported.cooperative_matrix {
        cooperative_matrix_configs(instance, physical)
    } else {
        Vec::new()
    };
    let f13 = &supported.f13;
    let compute = ComputeProperties {
        subgroup_size: p11.subgroup_size,
        subgroup_stages: p11.subgroup_supported_stages,
        subgroup_operations: p11.subgroup_supported_operations,
        subgroup_quad_operations_in_all_stages: b(p11.subgroup_quad_operations_in_all_stages),
        subgroup_size_control: b(f13.subgroup_size_control),
        compute_full_subgroups: b(f13.compute_full_subgroups),
        min_subgroup_size: p13.min_subgroup_size,
        max_subgroup_size: p13.max_subgroup_size,
        max_compute_workgroup_subgroups: p13.max_compute_workgroup_subgroups,
        required_subgroup_size_stages: p13.required_subgroup_size_stages,
        max_compute_shared_memory_size: limits.max_compute_shared_memory_size,
        max_compute_work_group_count: limits.max_compute_work_group_count,
        max_compute_work_group_size: limits.max_compute_work_group_size,
        max_compute_work_group_invocations: limits.max_compute_work_group_invocations,
        max_storage_buffer_range: limits.max_storage_buffer_range,
        max_buffer_size: p13.max_buffer_size,
        max_memory_allocation_size: p11.max_memory_allocation_size,
        buffer_device_address: b(supported.f12.buffer_device_address),
        push_descriptor,
        max_push_descriptors: if push_descriptor {
            ppd.max_push_descriptors
        } else {
            0
        },
        cooperative_matrix,
        cooperative_matrix_stages: if supported.cooperative_matrix {
            pcm.cooperative_matrix_supported_stages
        } else {
            vk::ShaderStageFlags::empty()
        },
        cooperative_matrix2: Default::default(),
    };
    (supported, compute)
}

/// The float-controls booleans of `p12`: each true when any of the three widths has it.
fn float_controls(p12: &vk::PhysicalDeviceVulkan12Properties<'_>) -> FloatControls {
    let any = |v: [vk::Bool32; 3]| v.iter().any(|&x| b(x));
    FloatControls {
        denorm_preserve: any([
            p12.shader_denorm_preserve_float16,
            p12.shader_denorm_preserve_float32,
            p12.shader_denorm_preserve_float64,
        ]),
        denorm_flush_to_zero: any([
            p12.shader_denorm_flush_to_zero_float16,
            p12.shader_denorm_flush_to_zero_float32,
            p12.shader_denorm_flush_to_zero_float64,
        ]),
        signed_zero_inf_nan_preserve: any([
            p12.shader_signed_zero_inf_nan_preserve_float16,
            p12.shader_signed_zero_inf_nan_preserve_float32,
            p12.shader_signed_zero_inf_nan_preserve_float64,
        ]),
        rounding_mode_rte: any([
            p12.shader_rounding_mode_rte_float16,
            p12.shader_rounding_mode_rte_float32,
            p12.shader_rounding_mode_rte_float64,
        ]),
        rounding_mode_rtz: any([
            p12.shader_rounding_mode_rtz_float16,
            p12.shader_rounding_mode_rtz_float32,
            p12.shader_rounding_mode_rtz_float64,
        ]),
    }
}

/// The cooperative matrix configurations of `physical`, which has VK_KHR_cooperative_matrix
/// (none, with a log line, when the query fails).
fn cooperative_matrix_configs(
    instance: &Instance,
    physical: vk::PhysicalDevice,
) -> Vec<CooperativeMatrixConfig> {
    let ir = &instance.raw;
    let ext = ash::khr::cooperative_matrix::Instance::new(&instance.entry, ir);
    // SAFETY: the extension is present on `physical`; a plain query.
    match unsafe { ext.get_physical_device_cooperative_matrix_properties(physical) } {
        Ok(list) => list
            .iter()
            .map(|p| CooperativeMatrixConfig {
                m: p.m_size,
                n: p.n_size,
                k: p.k_size,
                a_type: p.a_type,
                b_type: p.b_type,
                c_type: p.c_type,
                result_type: p.result_type,
                saturating_accumulation: b(p.saturating_accumulation),
                scope: p.scope,
            })
            .collect(),
        Err(e) => {
            log::warn!("kiln: vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR: {e}");
            Vec::new()
        }
    }
}
