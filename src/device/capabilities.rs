//! SPIR-V capabilities → the Vulkan feature, extension or property that provides each
//! (Vulkan spec appendix "SPIR-V Capabilities", table "List of SPIR-V Capabilities and
//! corresponding Vulkan features, extensions, or core version"), and the check of a
//! module's capabilities against what the device has.
//!
//! kiln enables every feature of this table that the device reports (`features.rs`), so a
//! capability is usable exactly when [`need`] says so for the device's [`Supported`]
//! set. The check runs before any Vulkan call of pipeline creation:
//!
//! - a capability whose feature, extension or property the device lacks is `KILN-E107`
//!   naming the capability, the feature (with the struct it lives in) and the device;
//! - subgroup capabilities also need the entry point's stage in
//!   `subgroupSupportedStages` (VUID-RuntimeSpirv-None-06343), `GroupNonUniformQuad` outside
//!   fragment and compute needs `subgroupQuadOperationsInAllStages` (-06342), and
//!   `CooperativeMatrixKHR` needs the stage in `cooperativeMatrixSupportedStages`
//!   (VUID-RuntimeSpirv-cooperativeMatrixSupportedStages-08985);
//! - VK_NV_cooperative_matrix2's capabilities (`CooperativeMatrixReductionsNV`,
//!   `…ConversionsNV`, `…PerElementOperationsNV`, `…TensorAddressingNV`,
//!   `TensorAddressingNV`, `…BlockLoadsNV`) need its features; a cooperative matrix of
//!   `Workgroup` scope needs its `cooperativeMatrixWorkgroupScope` ([`check_scope`],
//!   `KILN-E112`, from the module's reflected scopes);
//! - an OpenCL-only capability (`Kernel`, `Addresses`, …) is `KILN-E111`;
//! - a capability this table does not list is `KILN-E110` (it would be
//!   VUID-VkShaderModuleCreateInfo-pCode-08740 in the driver), except an extension- or
//!   vendor-suffixed one, which needs a device extension kiln does not enable: `KILN-E107`.
//!
//! The device layer knows nothing of shader modules: callers pass capability names (as
//! rspirv prints them, e.g. `"GroupNonUniformArithmetic"`) and the entry point's stage.

use ash::vk;

use super::properties::ComputeProperties;
use crate::error::{DeviceError, Result};

/// Every feature the device reported, in Vulkan's own structs (their `p_next` null), plus
/// the extension features kiln enables. What kiln enabled is this set minus the features
/// listed in `features.rs` (robustness, capture/replay), none of which a capability needs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Supported {
    pub f10: vk::PhysicalDeviceFeatures,
    pub f11: vk::PhysicalDeviceVulkan11Features<'static>,
    pub f12: vk::PhysicalDeviceVulkan12Features<'static>,
    pub f13: vk::PhysicalDeviceVulkan13Features<'static>,
    /// Float-controls properties (Vulkan 1.2).
    pub p12: FloatControls,
    /// `VK_KHR_cooperative_matrix`'s `cooperativeMatrix`, when kiln enabled the extension.
    pub cooperative_matrix: bool,
    /// `VK_KHR_shader_bfloat16`'s `shaderBFloat16Type`, `…DotProduct`,
    /// `…CooperativeMatrix`, when kiln enabled the extension.
    pub bfloat16: [bool; 3],
    /// VK_NV_cooperative_matrix2's features, when kiln enabled the extension.
    pub cooperative_matrix2: super::coopmat2::CooperativeMatrix2Features,
    /// VK_EXT_mesh_shader's `meshShader` and `taskShader`, when kiln enabled the extension.
    pub mesh_shader: [bool; 2],
    /// VK_KHR_ray_query's `rayQuery`, when kiln enabled the extension.
    pub ray_query: bool,
}

/// The float-controls booleans of `VkPhysicalDeviceVulkan12Properties` that capabilities
/// need (any width suffices for the capability; the execution mode's width is the
/// driver's VUID).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FloatControls {
    pub denorm_preserve: bool,
    pub denorm_flush_to_zero: bool,
    pub signed_zero_inf_nan_preserve: bool,
    pub rounding_mode_rte: bool,
    pub rounding_mode_rtz: bool,
}

/// What a capability needs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Need {
    /// Core Vulkan 1.3 without a feature (kiln requires 1.3).
    Core,
    /// A feature (or property) bit: its Vulkan name with the struct, and how to read it.
    Feature(&'static str, fn(&Supported) -> bool),
    /// One of `subgroupSupportedOperations`, plus the stage in `subgroupSupportedStages`.
    Subgroup(vk::SubgroupFeatureFlags),
    /// `cooperativeMatrix` (VK_KHR_cooperative_matrix) and the stage in
    /// `cooperativeMatrixSupportedStages`.
    CooperativeMatrix,
    /// A device extension kiln does not enable.
    Extension(&'static str),
    /// Not in Vulkan's table of SPIR-V capabilities (OpenCL kernels, OpenGL, FPGA,
    /// provisional ones): never valid in a Vulkan module.
    NotVulkan,
}

macro_rules! feature {
    ($name:literal, $s:ident . $field:ident) => {
        Need::Feature($name, |d: &Supported| d.$s.$field == vk::TRUE)
    };
}

/// The table: (capability, need). Capabilities promoted to core are listed by their core
/// names, which is how rspirv prints them. One line per capability (not formatted).
#[rustfmt::skip]
const TABLE: &[(&str, Need)] = &[
    ("Matrix", Need::Core),
    ("Shader", Need::Core),
    ("InputAttachment", Need::Core),
    ("Sampled1D", Need::Core),
    ("Image1D", Need::Core),
    ("SampledBuffer", Need::Core),
    ("ImageBuffer", Need::Core),
    ("ImageQuery", Need::Core),
    ("DerivativeControl", Need::Core),
    ("DeviceGroup", Need::Core),
    ("ShaderNonUniform", Need::Core),
    ("Geometry", feature!("geometryShader (VkPhysicalDeviceFeatures)", f10.geometry_shader)),
    ("Tessellation", feature!("tessellationShader (VkPhysicalDeviceFeatures)", f10.tessellation_shader)),
    ("Float64", feature!("shaderFloat64 (VkPhysicalDeviceFeatures)", f10.shader_float64)),
    ("Int64", feature!("shaderInt64 (VkPhysicalDeviceFeatures)", f10.shader_int64)),
    ("Int16", feature!("shaderInt16 (VkPhysicalDeviceFeatures)", f10.shader_int16)),
    (
        "Int64Atomics",
        Need::Feature(
            "shaderBufferInt64Atomics or shaderSharedInt64Atomics (VkPhysicalDeviceVulkan12Features)",
            |d| d.f12.shader_buffer_int64_atomics == vk::TRUE || d.f12.shader_shared_int64_atomics == vk::TRUE,
        ),
    ),
    ("TessellationPointSize", feature!("shaderTessellationAndGeometryPointSize (VkPhysicalDeviceFeatures)", f10.shader_tessellation_and_geometry_point_size)),
    ("GeometryPointSize", feature!("shaderTessellationAndGeometryPointSize (VkPhysicalDeviceFeatures)", f10.shader_tessellation_and_geometry_point_size)),
    ("ImageGatherExtended", feature!("shaderImageGatherExtended (VkPhysicalDeviceFeatures)", f10.shader_image_gather_extended)),
    ("StorageImageMultisample", feature!("shaderStorageImageMultisample (VkPhysicalDeviceFeatures)", f10.shader_storage_image_multisample)),
    ("ImageMSArray", feature!("shaderStorageImageMultisample (VkPhysicalDeviceFeatures)", f10.shader_storage_image_multisample)),
    ("UniformBufferArrayDynamicIndexing", feature!("shaderUniformBufferArrayDynamicIndexing (VkPhysicalDeviceFeatures)", f10.shader_uniform_buffer_array_dynamic_indexing)),
    ("SampledImageArrayDynamicIndexing", feature!("shaderSampledImageArrayDynamicIndexing (VkPhysicalDeviceFeatures)", f10.shader_sampled_image_array_dynamic_indexing)),
    ("StorageBufferArrayDynamicIndexing", feature!("shaderStorageBufferArrayDynamicIndexing (VkPhysicalDeviceFeatures)", f10.shader_storage_buffer_array_dynamic_indexing)),
    ("StorageImageArrayDynamicIndexing", feature!("shaderStorageImageArrayDynamicIndexing (VkPhysicalDeviceFeatures)", f10.shader_storage_image_array_dynamic_indexing)),
    ("ClipDistance", feature!("shaderClipDistance (VkPhysicalDeviceFeatures)", f10.shader_clip_distance)),
    ("CullDistance", feature!("shaderCullDistance (VkPhysicalDeviceFeatures)", f10.shader_cull_distance)),
    ("ImageCubeArray", feature!("imageCubeArray (VkPhysicalDeviceFeatures)", f10.image_cube_array)),
    ("SampledCubeArray", feature!("imageCubeArray (VkPhysicalDeviceFeatures)", f10.image_cube_array)),
    ("SampleRateShading", feature!("sampleRateShading (VkPhysicalDeviceFeatures)", f10.sample_rate_shading)),
    ("InterpolationFunction", feature!("sampleRateShading (VkPhysicalDeviceFeatures)", f10.sample_rate_shading)),
    ("SparseResidency", feature!("shaderResourceResidency (VkPhysicalDeviceFeatures)", f10.shader_resource_residency)),
    ("MinLod", feature!("shaderResourceMinLod (VkPhysicalDeviceFeatures)", f10.shader_resource_min_lod)),
    ("StorageImageExtendedFormats", feature!("shaderStorageImageExtendedFormats (VkPhysicalDeviceFeatures)", f10.shader_storage_image_extended_formats)),
    ("StorageImageReadWithoutFormat", feature!("shaderStorageImageReadWithoutFormat (VkPhysicalDeviceFeatures)", f10.shader_storage_image_read_without_format)),
    ("StorageImageWriteWithoutFormat", feature!("shaderStorageImageWriteWithoutFormat (VkPhysicalDeviceFeatures)", f10.shader_storage_image_write_without_format)),
    ("MultiViewport", feature!("multiViewport (VkPhysicalDeviceFeatures)", f10.multi_viewport)),
    ("TransformFeedback", Need::Extension("VK_EXT_transform_feedback")),
    ("GeometryStreams", Need::Extension("VK_EXT_transform_feedback")),
    ("DrawParameters", feature!("shaderDrawParameters (VkPhysicalDeviceVulkan11Features)", f11.shader_draw_parameters)),
    ("MultiView", feature!("multiview (VkPhysicalDeviceVulkan11Features)", f11.multiview)),
    ("VariablePointersStorageBuffer", feature!("variablePointersStorageBuffer (VkPhysicalDeviceVulkan11Features)", f11.variable_pointers_storage_buffer)),
    ("VariablePointers", feature!("variablePointers (VkPhysicalDeviceVulkan11Features)", f11.variable_pointers)),
    ("StorageBuffer16BitAccess", feature!("storageBuffer16BitAccess (VkPhysicalDeviceVulkan11Features)", f11.storage_buffer16_bit_access)),
    ("UniformAndStorageBuffer16BitAccess", feature!("uniformAndStorageBuffer16BitAccess (VkPhysicalDeviceVulkan11Features)", f11.uniform_and_storage_buffer16_bit_access)),
    ("StoragePushConstant16", feature!("storagePushConstant16 (VkPhysicalDeviceVulkan11Features)", f11.storage_push_constant16)),
    ("StorageInputOutput16", feature!("storageInputOutput16 (VkPhysicalDeviceVulkan11Features)", f11.storage_input_output16)),
    ("GroupNonUniform", Need::Subgroup(vk::SubgroupFeatureFlags::BASIC)),
    ("GroupNonUniformVote", Need::Subgroup(vk::SubgroupFeatureFlags::VOTE)),
    ("GroupNonUniformArithmetic", Need::Subgroup(vk::SubgroupFeatureFlags::ARITHMETIC)),
    ("GroupNonUniformBallot", Need::Subgroup(vk::SubgroupFeatureFlags::BALLOT)),
    ("GroupNonUniformShuffle", Need::Subgroup(vk::SubgroupFeatureFlags::SHUFFLE)),
    ("GroupNonUniformShuffleRelative", Need::Subgroup(vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE)),
    ("GroupNonUniformClustered", Need::Subgroup(vk::SubgroupFeatureFlags::CLUSTERED)),
    ("GroupNonUniformQuad", Need::Subgroup(vk::SubgroupFeatureFlags::QUAD)),
    ("GroupNonUniformRotateKHR", Need::Extension("VK_KHR_shader_subgroup_rotate")),
    ("GroupNonUniformPartitionedEXT", Need::Extension("VK_NV_shader_subgroup_partitioned")),
    ("SubgroupBallotKHR", Need::Extension("VK_EXT_shader_subgroup_ballot")),
    ("SubgroupVoteKHR", Need::Extension("VK_EXT_shader_subgroup_vote")),
    ("ShaderLayer", feature!("shaderOutputLayer (VkPhysicalDeviceVulkan12Features)", f12.shader_output_layer)),
    ("ShaderViewportIndex", feature!("shaderOutputViewportIndex (VkPhysicalDeviceVulkan12Features)", f12.shader_output_viewport_index)),
    ("ShaderViewportIndexLayerEXT", Need::Extension("VK_EXT_shader_viewport_index_layer")),
    ("Float16", feature!("shaderFloat16 (VkPhysicalDeviceVulkan12Features)", f12.shader_float16)),
    ("Int8", feature!("shaderInt8 (VkPhysicalDeviceVulkan12Features)", f12.shader_int8)),
    ("StorageBuffer8BitAccess", feature!("storageBuffer8BitAccess (VkPhysicalDeviceVulkan12Features)", f12.storage_buffer8_bit_access)),
    ("UniformAndStorageBuffer8BitAccess", feature!("uniformAndStorageBuffer8BitAccess (VkPhysicalDeviceVulkan12Features)", f12.uniform_and_storage_buffer8_bit_access)),
    ("StoragePushConstant8", feature!("storagePushConstant8 (VkPhysicalDeviceVulkan12Features)", f12.storage_push_constant8)),
    ("DenormPreserve", Need::Feature("shaderDenormPreserveFloat16/32/64 (VkPhysicalDeviceVulkan12Properties)", |d| d.p12.denorm_preserve)),
    ("DenormFlushToZero", Need::Feature("shaderDenormFlushToZeroFloat16/32/64 (VkPhysicalDeviceVulkan12Properties)", |d| d.p12.denorm_flush_to_zero)),
    ("SignedZeroInfNanPreserve", Need::Feature("shaderSignedZeroInfNanPreserveFloat16/32/64 (VkPhysicalDeviceVulkan12Properties)", |d| d.p12.signed_zero_inf_nan_preserve)),
    ("RoundingModeRTE", Need::Feature("shaderRoundingModeRTEFloat16/32/64 (VkPhysicalDeviceVulkan12Properties)", |d| d.p12.rounding_mode_rte)),
    ("RoundingModeRTZ", Need::Feature("shaderRoundingModeRTZFloat16/32/64 (VkPhysicalDeviceVulkan12Properties)", |d| d.p12.rounding_mode_rtz)),
    ("RuntimeDescriptorArray", feature!("runtimeDescriptorArray (VkPhysicalDeviceVulkan12Features)", f12.runtime_descriptor_array)),
    ("InputAttachmentArrayDynamicIndexing", feature!("shaderInputAttachmentArrayDynamicIndexing (VkPhysicalDeviceVulkan12Features)", f12.shader_input_attachment_array_dynamic_indexing)),
    ("UniformTexelBufferArrayDynamicIndexing", feature!("shaderUniformTexelBufferArrayDynamicIndexing (VkPhysicalDeviceVulkan12Features)", f12.shader_uniform_texel_buffer_array_dynamic_indexing)),
    ("StorageTexelBufferArrayDynamicIndexing", feature!("shaderStorageTexelBufferArrayDynamicIndexing (VkPhysicalDeviceVulkan12Features)", f12.shader_storage_texel_buffer_array_dynamic_indexing)),
    ("UniformBufferArrayNonUniformIndexing", feature!("shaderUniformBufferArrayNonUniformIndexing (VkPhysicalDeviceVulkan12Features)", f12.shader_uniform_buffer_array_non_uniform_indexing)),
    ("SampledImageArrayNonUniformIndexing", feature!("shaderSampledImageArrayNonUniformIndexing (VkPhysicalDeviceVulkan12Features)", f12.shader_sampled_image_array_non_uniform_indexing)),
    ("StorageBufferArrayNonUniformIndexing", feature!("shaderStorageBufferArrayNonUniformIndexing (VkPhysicalDeviceVulkan12Features)", f12.shader_storage_buffer_array_non_uniform_indexing)),
    ("StorageImageArrayNonUniformIndexing", feature!("shaderStorageImageArrayNonUniformIndexing (VkPhysicalDeviceVulkan12Features)", f12.shader_storage_image_array_non_uniform_indexing)),
    ("InputAttachmentArrayNonUniformIndexing", feature!("shaderInputAttachmentArrayNonUniformIndexing (VkPhysicalDeviceVulkan12Features)", f12.shader_input_attachment_array_non_uniform_indexing)),
    ("UniformTexelBufferArrayNonUniformIndexing", feature!("shaderUniformTexelBufferArrayNonUniformIndexing (VkPhysicalDeviceVulkan12Features)", f12.shader_uniform_texel_buffer_array_non_uniform_indexing)),
    ("StorageTexelBufferArrayNonUniformIndexing", feature!("shaderStorageTexelBufferArrayNonUniformIndexing (VkPhysicalDeviceVulkan12Features)", f12.shader_storage_texel_buffer_array_non_uniform_indexing)),
    ("VulkanMemoryModel", feature!("vulkanMemoryModel (VkPhysicalDeviceVulkan12Features)", f12.vulkan_memory_model)),
    ("VulkanMemoryModelDeviceScope", feature!("vulkanMemoryModelDeviceScope (VkPhysicalDeviceVulkan12Features)", f12.vulkan_memory_model_device_scope)),
    ("PhysicalStorageBufferAddresses", feature!("bufferDeviceAddress (VkPhysicalDeviceVulkan12Features)", f12.buffer_device_address)),
    ("DemoteToHelperInvocation", feature!("shaderDemoteToHelperInvocation (VkPhysicalDeviceVulkan13Features)", f13.shader_demote_to_helper_invocation)),
    ("DotProductInputAll", feature!("shaderIntegerDotProduct (VkPhysicalDeviceVulkan13Features)", f13.shader_integer_dot_product)),
    ("DotProductInput4x8Bit", feature!("shaderIntegerDotProduct (VkPhysicalDeviceVulkan13Features)", f13.shader_integer_dot_product)),
    ("DotProductInput4x8BitPacked", feature!("shaderIntegerDotProduct (VkPhysicalDeviceVulkan13Features)", f13.shader_integer_dot_product)),
    ("DotProduct", feature!("shaderIntegerDotProduct (VkPhysicalDeviceVulkan13Features)", f13.shader_integer_dot_product)),
    ("CooperativeMatrixKHR", Need::CooperativeMatrix),
    ("BFloat16TypeKHR", Need::Feature("shaderBFloat16Type (VK_KHR_shader_bfloat16)", |d| d.bfloat16[0])),
    ("BFloat16DotProductKHR", Need::Feature("shaderBFloat16DotProduct (VK_KHR_shader_bfloat16)", |d| d.bfloat16[1])),
    ("BFloat16CooperativeMatrixKHR", Need::Feature("shaderBFloat16CooperativeMatrix (VK_KHR_shader_bfloat16)", |d| d.bfloat16[2])),
    ("AtomicFloat32AddEXT", Need::Extension("VK_EXT_shader_atomic_float")),
    ("AtomicFloat64AddEXT", Need::Extension("VK_EXT_shader_atomic_float")),
    ("AtomicFloat16AddEXT", Need::Extension("VK_EXT_shader_atomic_float2")),
    ("AtomicFloat16MinMaxEXT", Need::Extension("VK_EXT_shader_atomic_float2")),
    ("AtomicFloat32MinMaxEXT", Need::Extension("VK_EXT_shader_atomic_float2")),
    ("AtomicFloat64MinMaxEXT", Need::Extension("VK_EXT_shader_atomic_float2")),
    ("Int64ImageEXT", Need::Extension("VK_EXT_shader_image_atomic_int64")),
    ("ShaderClockKHR", Need::Extension("VK_KHR_shader_clock")),
    ("StencilExportEXT", Need::Extension("VK_EXT_shader_stencil_export")),
    ("FragmentShadingRateKHR", Need::Extension("VK_KHR_fragment_shading_rate")),
    ("FragmentBarycentricKHR", Need::Extension("VK_KHR_fragment_shader_barycentric")),
    ("FragmentDensityEXT", Need::Extension("VK_EXT_fragment_density_map")),
    ("FragmentFullyCoveredEXT", Need::Extension("VK_EXT_conservative_rasterization")),
    ("FragmentShaderSampleInterlockEXT", Need::Extension("VK_EXT_fragment_shader_interlock")),
    ("FragmentShaderPixelInterlockEXT", Need::Extension("VK_EXT_fragment_shader_interlock")),
    ("FragmentShaderShadingRateInterlockEXT", Need::Extension("VK_EXT_fragment_shader_interlock")),
    ("SampleMaskPostDepthCoverage", Need::Extension("VK_EXT_post_depth_coverage")),
    ("WorkgroupMemoryExplicitLayoutKHR", Need::Extension("VK_KHR_workgroup_memory_explicit_layout")),
    ("WorkgroupMemoryExplicitLayout8BitAccessKHR", Need::Extension("VK_KHR_workgroup_memory_explicit_layout")),
    ("WorkgroupMemoryExplicitLayout16BitAccessKHR", Need::Extension("VK_KHR_workgroup_memory_explicit_layout")),
    ("ComputeDerivativeGroupQuadsKHR", Need::Extension("VK_KHR_compute_shader_derivatives")),
    ("ComputeDerivativeGroupLinearKHR", Need::Extension("VK_KHR_compute_shader_derivatives")),
    ("RayQueryKHR", Need::Feature("rayQuery (VkPhysicalDeviceRayQueryFeaturesKHR, VK_KHR_ray_query)", |s| s.ray_query)),
    ("RayTracingKHR", Need::Extension("VK_KHR_ray_tracing_pipeline")),
    ("RayTraversalPrimitiveCullingKHR", Need::Extension("VK_KHR_ray_tracing_pipeline")),
    ("RayCullMaskKHR", Need::Extension("VK_KHR_ray_tracing_maintenance1")),
    (
        "MeshShadingEXT",
        Need::Feature(
            "meshShader (VkPhysicalDeviceMeshShaderFeaturesEXT, VK_EXT_mesh_shader)",
            |s| s.mesh_shader[0],
        ),
    ),
    ("MeshShadingNV", Need::Extension("VK_NV_mesh_shader")),
    ("CooperativeMatrixNV", Need::Extension("VK_NV_cooperative_matrix")),
    ("CooperativeMatrixReductionsNV", Need::Feature("cooperativeMatrixReductions (VK_NV_cooperative_matrix2)", |d| d.cooperative_matrix2.reductions)),
    ("CooperativeMatrixConversionsNV", Need::Feature("cooperativeMatrixConversions (VK_NV_cooperative_matrix2)", |d| d.cooperative_matrix2.conversions)),
    ("CooperativeMatrixPerElementOperationsNV", Need::Feature("cooperativeMatrixPerElementOperations (VK_NV_cooperative_matrix2)", |d| d.cooperative_matrix2.per_element_operations)),
    ("CooperativeMatrixTensorAddressingNV", Need::Feature("cooperativeMatrixTensorAddressing (VK_NV_cooperative_matrix2)", |d| d.cooperative_matrix2.tensor_addressing)),
    ("TensorAddressingNV", Need::Feature("cooperativeMatrixTensorAddressing (VK_NV_cooperative_matrix2)", |d| d.cooperative_matrix2.tensor_addressing)),
    ("CooperativeMatrixBlockLoadsNV", Need::Feature("cooperativeMatrixBlockLoads (VK_NV_cooperative_matrix2)", |d| d.cooperative_matrix2.block_loads)),
    ("ShaderSMBuiltinsNV", Need::Extension("VK_NV_shader_sm_builtins")),
    ("ExpectAssumeKHR", Need::Extension("VK_KHR_shader_expect_assume")),
    ("FloatControls2", Need::Extension("VK_KHR_shader_float_controls2")),
    ("QuadControlKHR", Need::Extension("VK_KHR_shader_quad_control")),
    ("ReplicatedCompositesEXT", Need::Extension("VK_EXT_shader_replicated_composites")),
    ("Shader64BitIndexingEXT", Need::Extension("VK_EXT_shader_64bit_indexing")),
    ("Groups", Need::Extension("VK_AMD_shader_ballot")),
    ("Float16ImageAMD", Need::Extension("VK_AMD_gpu_shader_half_float_fetch")),
    ("ImageGatherBiasLodAMD", Need::Extension("VK_AMD_texture_gather_bias_lod")),
    ("FragmentMaskAMD", Need::Extension("VK_AMD_shader_fragment_mask")),
    ("ImageReadWriteLodAMD", Need::Extension("VK_AMD_shader_image_load_store_lod")),
    ("Addresses", Need::NotVulkan),
    ("Linkage", Need::NotVulkan),
    ("Kernel", Need::NotVulkan),
    ("Vector16", Need::NotVulkan),
    ("Float16Buffer", Need::NotVulkan),
    ("ImageBasic", Need::NotVulkan),
    ("ImageReadWrite", Need::NotVulkan),
    ("ImageMipmap", Need::NotVulkan),
    ("Pipes", Need::NotVulkan),
    ("DeviceEnqueue", Need::NotVulkan),
    ("LiteralSampler", Need::NotVulkan),
    ("AtomicStorage", Need::NotVulkan),
    ("ImageRect", Need::NotVulkan),
    ("SampledRect", Need::NotVulkan),
    ("GenericPointer", Need::NotVulkan),
    ("SubgroupDispatch", Need::NotVulkan),
    ("NamedBarrier", Need::NotVulkan),
    ("PipeStorage", Need::NotVulkan),
    ("UniformDecoration", Need::Core),
    // Device extensions kiln does not enable (issue 30: the rest of SPIR-V's grammar).
    ("CoreBuiltinsARM", Need::Extension("VK_ARM_shader_core_builtins")),
    ("TileImageColorReadAccessEXT", Need::Extension("VK_EXT_shader_tile_image")),
    ("TileImageDepthReadAccessEXT", Need::Extension("VK_EXT_shader_tile_image")),
    ("TileImageStencilReadAccessEXT", Need::Extension("VK_EXT_shader_tile_image")),
    ("TensorsARM", Need::Extension("VK_ARM_tensors")),
    ("StorageTensorArrayDynamicIndexingARM", Need::Extension("VK_ARM_tensors")),
    ("StorageTensorArrayNonUniformIndexingARM", Need::Extension("VK_ARM_tensors")),
    ("GraphARM", Need::Extension("VK_ARM_data_graph")),
    ("CooperativeMatrixLayoutsARM", Need::Extension("VK_ARM_cooperative_matrix_layouts")),
    ("Float8EXT", Need::Extension("VK_EXT_shader_float8")),
    ("Float8CooperativeMatrixEXT", Need::Extension("VK_EXT_shader_float8")),
    ("UntypedPointersKHR", Need::Extension("VK_KHR_shader_untyped_pointers")),
    ("TextureSampleWeightedQCOM", Need::Extension("VK_QCOM_image_processing")),
    ("TextureBoxFilterQCOM", Need::Extension("VK_QCOM_image_processing")),
    ("TextureBlockMatchQCOM", Need::Extension("VK_QCOM_image_processing")),
    ("TileShadingQCOM", Need::Extension("VK_QCOM_tile_shading")),
    ("CooperativeMatrixConversionQCOM", Need::Extension("VK_QCOM_cooperative_matrix_conversion")),
    ("TextureBlockMatch2QCOM", Need::Extension("VK_QCOM_image_processing2")),
    ("ShaderEnqueueAMDX", Need::Extension("VK_AMDX_shader_enqueue")),
    ("DescriptorHeapEXT", Need::Extension("VK_EXT_descriptor_heap")),
    ("SampleMaskOverrideCoverageNV", Need::Extension("VK_NV_sample_mask_override_coverage")),
    ("GeometryShaderPassthroughNV", Need::Extension("VK_NV_geometry_shader_passthrough")),
    ("ShaderViewportMaskNV", Need::Extension("VK_NV_viewport_array2")),
    ("PerViewAttributesNV", Need::Extension("VK_NVX_multiview_per_view_attributes")),
    ("ImageFootprintNV", Need::Extension("VK_NV_shader_image_footprint")),
    ("RayTracingPositionFetchKHR", Need::Extension("VK_KHR_ray_tracing_position_fetch")),
    ("RayTracingNV", Need::Extension("VK_NV_ray_tracing")),
    ("RayTracingMotionBlurNV", Need::Extension("VK_NV_ray_tracing_motion_blur")),
    ("DisplacementMicromapNV", Need::Extension("VK_NV_displacement_micromap")),
    ("RayTracingOpacityMicromapEXT", Need::Extension("VK_EXT_opacity_micromap")),
    ("ShaderInvocationReorderNV", Need::Extension("VK_NV_ray_tracing_invocation_reorder")),
    ("ShaderInvocationReorderEXT", Need::Extension("VK_EXT_ray_tracing_invocation_reorder")),
    ("RayQueryPositionFetchKHR", Need::Extension("VK_KHR_ray_tracing_position_fetch")),
    ("CooperativeVectorNV", Need::Extension("VK_NV_cooperative_vector")),
    ("AtomicFloat16VectorNV", Need::Extension("VK_NV_shader_atomic_float16_vector")),
    ("RayTracingDisplacementMicromapNV", Need::Extension("VK_NV_displacement_micromap")),
    ("RawAccessChainsNV", Need::Extension("VK_NV_raw_access_chains")),
    ("RayTracingSpheresGeometryNV", Need::Extension("VK_NV_ray_tracing_linear_swept_spheres")),
    ("RayTracingLinearSweptSpheresGeometryNV", Need::Extension("VK_NV_ray_tracing_linear_swept_spheres")),
    ("PushConstantBanksNV", Need::Extension("VK_NV_push_constant_bank")),
    ("LongVectorEXT", Need::Extension("VK_EXT_shader_long_vector")),
    ("CooperativeVectorTrainingNV", Need::Extension("VK_NV_cooperative_vector")),
    ("RayTracingClusterAccelerationStructureNV", Need::Extension("VK_NV_cluster_acceleration_structure")),
    ("IntegerFunctions2INTEL", Need::Extension("VK_INTEL_shader_integer_functions2")),
    // Not in Vulkan's table of SPIR-V capabilities: OpenCL, OpenGL, FPGA, provisional.
    ("AtomicStorageOps", Need::NotVulkan),
    ("RayQueryProvisionalKHR", Need::NotVulkan),
    ("Int4TypeINTEL", Need::NotVulkan),
    ("Int4CooperativeMatrixINTEL", Need::NotVulkan),
    ("ShaderStereoViewNV", Need::NotVulkan),
    ("RayTracingProvisionalKHR", Need::NotVulkan),
    ("BindlessTextureNV", Need::NotVulkan),
    ("SubgroupShuffleINTEL", Need::NotVulkan),
    ("SubgroupBufferBlockIOINTEL", Need::NotVulkan),
    ("SubgroupImageBlockIOINTEL", Need::NotVulkan),
    ("SubgroupImageMediaBlockIOINTEL", Need::NotVulkan),
    ("RoundToInfinityINTEL", Need::NotVulkan),
    ("FloatingPointModeINTEL", Need::NotVulkan),
    ("FunctionPointersINTEL", Need::NotVulkan),
    ("IndirectReferencesINTEL", Need::NotVulkan),
    ("AsmINTEL", Need::NotVulkan),
    ("VectorComputeINTEL", Need::NotVulkan),
    ("VectorAnyINTEL", Need::NotVulkan),
    ("SubgroupAvcMotionEstimationINTEL", Need::NotVulkan),
    ("SubgroupAvcMotionEstimationIntraINTEL", Need::NotVulkan),
    ("SubgroupAvcMotionEstimationChromaINTEL", Need::NotVulkan),
    ("VariableLengthArrayINTEL", Need::NotVulkan),
    ("FunctionFloatControlINTEL", Need::NotVulkan),
    ("FPGAMemoryAttributesALTERA", Need::NotVulkan),
    ("FPFastMathModeINTEL", Need::NotVulkan),
    ("ArbitraryPrecisionIntegersALTERA", Need::NotVulkan),
    ("ArbitraryPrecisionFloatingPointALTERA", Need::NotVulkan),
    ("UnstructuredLoopControlsINTEL", Need::NotVulkan),
    ("FPGALoopControlsALTERA", Need::NotVulkan),
    ("KernelAttributesINTEL", Need::NotVulkan),
    ("FPGAKernelAttributesINTEL", Need::NotVulkan),
    ("FPGAMemoryAccessesALTERA", Need::NotVulkan),
    ("FPGAClusterAttributesALTERA", Need::NotVulkan),
    ("LoopFuseALTERA", Need::NotVulkan),
    ("FPGADSPControlALTERA", Need::NotVulkan),
    ("MemoryAccessAliasingINTEL", Need::NotVulkan),
    ("FPGAInvocationPipeliningAttributesALTERA", Need::NotVulkan),
    ("FPGABufferLocationALTERA", Need::NotVulkan),
    ("ArbitraryPrecisionFixedPointALTERA", Need::NotVulkan),
    ("USMStorageClassesALTERA", Need::NotVulkan),
    ("RuntimeAlignedAttributeALTERA", Need::NotVulkan),
    ("IOPipesALTERA", Need::NotVulkan),
    ("BlockingPipesALTERA", Need::NotVulkan),
    ("FPGARegALTERA", Need::NotVulkan),
    ("BitInstructions", Need::NotVulkan),
    ("FMAKHR", Need::NotVulkan),
    ("LongCompositesINTEL", Need::NotVulkan),
    ("OptNoneEXT", Need::NotVulkan),
    ("DebugInfoModuleINTEL", Need::NotVulkan),
    ("BFloat16ConversionINTEL", Need::NotVulkan),
    ("SplitBarrierINTEL", Need::NotVulkan),
    ("ArithmeticFenceEXT", Need::NotVulkan),
    ("FPGAClusterAttributesV2ALTERA", Need::NotVulkan),
    ("FPGAKernelAttributesv2INTEL", Need::NotVulkan),
    ("TaskSequenceALTERA", Need::NotVulkan),
    ("FPMaxErrorINTEL", Need::NotVulkan),
    ("FPGALatencyControlALTERA", Need::NotVulkan),
    ("FPGAArgumentInterfacesALTERA", Need::NotVulkan),
    ("GlobalVariableHostAccessINTEL", Need::NotVulkan),
    ("GlobalVariableFPGADecorationsALTERA", Need::NotVulkan),
    ("SubgroupBufferPrefetchINTEL", Need::NotVulkan),
    ("Subgroup2DBlockIOINTEL", Need::NotVulkan),
    ("Subgroup2DBlockTransformINTEL", Need::NotVulkan),
    ("Subgroup2DBlockTransposeINTEL", Need::NotVulkan),
    ("SubgroupMatrixMultiplyAccumulateINTEL", Need::NotVulkan),
    ("TernaryBitwiseFunctionINTEL", Need::NotVulkan),
    ("UntypedVariableLengthArrayINTEL", Need::NotVulkan),
    ("SpecConditionalINTEL", Need::NotVulkan),
    ("FunctionVariantsINTEL", Need::NotVulkan),
    ("GroupUniformArithmeticKHR", Need::NotVulkan),
    ("TensorFloat32RoundingINTEL", Need::NotVulkan),
    ("MaskedGatherScatterINTEL", Need::NotVulkan),
    ("CacheControlsINTEL", Need::NotVulkan),
    ("RegisterLimitsINTEL", Need::NotVulkan),
    ("BindlessImagesINTEL", Need::NotVulkan),
];

/// Suffixes of SPIR-V capability names that come from extensions.
const EXTENSION_SUFFIXES: [&str; 11] = [
    "EXT", "KHR", "NV", "AMD", "AMDX", "INTEL", "GOOGLE", "ARM", "QCOM", "HUAWEI", "NVX",
];

/// The name kiln gives SPIR-V capability `value`, as reflection lists it
/// ([`ModuleReflection::capabilities`](crate::reflect::ModuleReflection::capabilities)): rspirv's
/// name (`1` is `"Shader"`; kiln's capability table, [`known_capabilities`], lists every
/// one), else the number in decimal (`"6912"`: newer than kiln's SPIR-V grammar), which
/// pipeline creation refuses with `KILN-E107` naming the module's `OpExtension`s, or
/// `KILN-E110` without any.
pub fn capability_name(value: u32) -> String {
    match rspirv::spirv::Capability::from_u32(value) {
        Some(c) => format!("{c:?}"),
        None => value.to_string(),
    }
}

/// What `capability` needs, `None` when the table does not list it.
pub(crate) fn need(capability: &str) -> Option<Need> {
    TABLE
        .iter()
        .find(|(name, _)| *name == capability)
        .map(|(_, need)| *need)
}

/// The capabilities the table lists, in table order (for `kiln devices` and tests).
pub fn known_capabilities() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|(name, _)| *name)
}

/// What SPIR-V `capability` needs beyond core Vulkan 1.3, as people read it: the feature
/// with its struct (`shaderFloat64 (VkPhysicalDeviceFeatures)`), the subgroup operations,
/// the extension; `None` for a core capability (every Vulkan 1.3 device has it) and for
/// one the table does not list. For tools that check modules against a profile
/// (`kiln diagnose`).
pub fn capability_requirement(capability: &str) -> Option<String> {
    match need(capability)? {
        Need::Core => None,
        Need::Feature(name, _) => Some(name.to_string()),
        Need::Subgroup(ops) => Some(format!("subgroupSupportedOperations {ops:?}")),
        Need::CooperativeMatrix => Some("cooperativeMatrix (VK_KHR_cooperative_matrix)".into()),
        Need::Extension(ext) => Some(format!("device extension {ext}")),
        Need::NotVulkan => Some("nothing Vulkan has (an OpenCL-only capability)".into()),
    }
}

/// A module's capabilities as [`check`] judges them: the names and the module's
/// `OpExtension` names (the extensions that may declare a capability kiln does not know).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ModuleCapabilities<'a> {
    /// A label for messages (usually the file name).
    pub module: &'a str,
    /// The `OpExtension` names of the module.
    pub extensions: &'a [String],
}

/// Checks one capability of the module `m` used by an entry point of `stage` against the
/// device `device` (its name) with `supported` features and `props` properties.
///
/// A capability given as a number (`"6912"`: newer than kiln's SPIR-V grammar, see
/// [`capability_name`]) needs a device extension kiln does not enable: when the module
/// declares `OpExtension`s, it is `KILN-E107` naming the number and those extensions (one
/// of them declares it); without any, `KILN-E110`.
///
/// Errors: `KILN-E107` the device lacks the feature, extension or property (or the stage
/// is not among the supported stages), `KILN-E110` a capability kiln's table does not
/// know, `KILN-E111` a capability no Vulkan environment allows.
pub(crate) fn check(
    device: &str,
    supported: &Supported,
    props: &ComputeProperties,
    m: ModuleCapabilities<'_>,
    capability: &str,
    stage: vk::ShaderStageFlags,
) -> Result<(), DeviceError> {
    let module = m.module;
    let missing = |feature: String| {
        Err(DeviceError::MissingFeature {
            device: device.to_string(),
            what: format!("{feature}, needed by SPIR-V capability {capability} of `{module}`"),
        })
    };
    let Some(need) = need(capability) else {
        if capability.parse::<u32>().is_ok() && !m.extensions.is_empty() {
            let which = match m.extensions {
                [one] => format!("OpExtension {one}"),
                all => format!("one of the OpExtensions {}", all.join(", ")),
            };
            return Err(DeviceError::MissingFeature {
                device: device.to_string(),
                what: format!(
                    "SPIR-V capability {capability} of `{module}`, newer than kiln's SPIR-V \
                     grammar and declared by the module's {which}: kiln enables no device \
                     extension for it; build the shader without that extension, or a kiln \
                     whose capability table maps it"
                ),
            });
        }
        if EXTENSION_SUFFIXES.iter().any(|s| capability.ends_with(s)) {
            return missing(
                "the device extension behind this capability (not enabled by kiln)".into(),
            );
        }
        return Err(DeviceError::UnknownCapability {
            module: module.to_string(),
            capability: capability.to_string(),
        });
    };
    match need {
        Need::Core => Ok(()),
        Need::Feature(_, has) if has(supported) => Ok(()),
        Need::Feature(name, _) => missing(format!("feature {name}")),
        Need::Subgroup(op) => {
            if !props.subgroup_operations.contains(op) {
                return missing(format!(
                    "subgroup operations {op:?} (VkPhysicalDeviceVulkan11Properties::\
                     subgroupSupportedOperations is {:?})",
                    props.subgroup_operations
                ));
            }
            if !props.subgroup_stages.contains(stage) {
                return missing(format!(
                    "subgroup operations in the {stage:?} stage \
                     (subgroupSupportedStages is {:?})",
                    props.subgroup_stages
                ));
            }
            let quad_stages = vk::ShaderStageFlags::FRAGMENT | vk::ShaderStageFlags::COMPUTE;
            if op == vk::SubgroupFeatureFlags::QUAD
                && !quad_stages.contains(stage)
                && !props.subgroup_quad_operations_in_all_stages
            {
                return missing(format!(
                    "quad operations in the {stage:?} stage \
                     (subgroupQuadOperationsInAllStages is false)"
                ));
            }
            Ok(())
        }
        Need::CooperativeMatrix => {
            if !supported.cooperative_matrix {
                return missing(
                    "feature cooperativeMatrix (VK_KHR_cooperative_matrix; not present, or \
                     not enabled under a validation layer older than the extension)"
                        .into(),
                );
            }
            if !props.cooperative_matrix_stages.contains(stage) {
                return missing(format!(
                    "cooperative matrices in the {stage:?} stage \
                     (cooperativeMatrixSupportedStages is {:?})",
                    props.cooperative_matrix_stages
                ));
            }
            Ok(())
        }
        Need::Extension(ext) => missing(format!("extension {ext} (not enabled by kiln)")),
        Need::NotVulkan => Err(DeviceError::CapabilityNotVulkan {
            module: module.to_string(),
            capability: capability.to_string(),
        }),
    }
}

/// Checks one cooperative-matrix scope of the module `module` against the device `device`
/// with `supported` features: `SUBGROUP` always passes (the capability check covers it),
/// `WORKGROUP` needs VK_NV_cooperative_matrix2's `cooperativeMatrixWorkgroupScope`, any
/// other scope fails.
///
/// Errors: `KILN-E112` naming the scope and what is missing.
pub(crate) fn check_scope(
    device: &str,
    supported: &Supported,
    module: &str,
    scope: vk::ScopeKHR,
) -> Result<(), DeviceError> {
    let why = match scope {
        vk::ScopeKHR::SUBGROUP => return Ok(()),
        vk::ScopeKHR::WORKGROUP if supported.cooperative_matrix2.workgroup_scope => return Ok(()),
        vk::ScopeKHR::WORKGROUP => {
            "needs VK_NV_cooperative_matrix2's cooperativeMatrixWorkgroupScope (not present, \
             or not enabled under a validation layer older than the extension)"
        }
        _ => "Vulkan never allows (only Subgroup, and Workgroup with VK_NV_cooperative_matrix2)",
    };
    Err(DeviceError::CooperativeMatrixScope {
        module: module.to_string(),
        device: device.to_string(),
        scope: format!("{scope:?}"),
        why: why.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table keeps up with rspirv's grammar: every capability rspirv can decode has a
    /// line (issue 30; the test against the installed SPIRV-Headers grammar is
    /// `tests/root/capabilities.rs`).
    #[test]
    fn table_lists_every_capability_of_rspirvs_grammar() {
        let missing: Vec<String> = (0..=u16::MAX as u32)
            .filter_map(rspirv::spirv::Capability::from_u32)
            .map(|c| format!("{c:?}"))
            .filter(|name| need(name).is_none())
            .collect();
        assert!(missing.is_empty(), "not in TABLE: {missing:?}");
    }

    #[test]
    fn table_has_no_duplicates() {
        let names: Vec<_> = known_capabilities().collect();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} listed twice");
        }
    }

    fn run(cap: &str, supported: &Supported, props: &ComputeProperties) -> Result<(), DeviceError> {
        let m = ModuleCapabilities {
            module: "m",
            extensions: &[],
        };
        check(
            "dev",
            supported,
            props,
            m,
            cap,
            vk::ShaderStageFlags::COMPUTE,
        )
    }

    #[test]
    fn a_capability_newer_than_the_grammar_names_its_number_and_extension() {
        let (s, p) = (Supported::default(), ComputeProperties::default());
        assert_eq!(capability_name(1), "Shader");
        assert_eq!(capability_name(6912), "6912");
        let ext = ["SPV_VALVE_mixed_float_dot_product".to_string()];
        let m = ModuleCapabilities {
            module: "m.spv",
            extensions: &ext,
        };
        let e = check("dev", &s, &p, m, "6912", vk::ShaderStageFlags::COMPUTE).unwrap_err();
        assert_eq!(e.code(), "KILN-E107");
        let msg = e.to_string();
        for part in [
            "6912",
            "SPV_VALVE_mixed_float_dot_product",
            "`m.spv`",
            "`dev`",
        ] {
            assert!(msg.contains(part), "{part}: {msg}");
        }
        let e = run("6912", &s, &p).unwrap_err();
        assert_eq!(e.code(), "KILN-E110");
        assert!(e.to_string().contains("6912"), "{e}");
    }

    #[test]
    fn each_kind_of_need_is_checked() {
        let mut s = Supported::default();
        let mut p = ComputeProperties::default();
        assert!(run("Shader", &s, &p).is_ok());
        let e = run("Int8", &s, &p).unwrap_err();
        assert_eq!(e.code(), "KILN-E107");
        assert!(e.to_string().contains("shaderInt8"), "{e}");
        s.f12.shader_int8 = vk::TRUE;
        assert!(run("Int8", &s, &p).is_ok());
        let e = run("GroupNonUniformArithmetic", &s, &p).unwrap_err();
        assert!(e.to_string().contains("ARITHMETIC"), "{e}");
        p.subgroup_operations = vk::SubgroupFeatureFlags::ARITHMETIC;
        let e = run("GroupNonUniformArithmetic", &s, &p).unwrap_err();
        assert!(e.to_string().contains("COMPUTE stage"), "{e}");
        p.subgroup_stages = vk::ShaderStageFlags::COMPUTE;
        assert!(run("GroupNonUniformArithmetic", &s, &p).is_ok());
        let e = run("CooperativeMatrixKHR", &s, &p).unwrap_err();
        assert!(e.to_string().contains("cooperativeMatrix"), "{e}");
        assert_eq!(run("Kernel", &s, &p).unwrap_err().code(), "KILN-E111");
        assert_eq!(run("NoSuchThing", &s, &p).unwrap_err().code(), "KILN-E110");
        let e = run("SomethingNewINTEL", &s, &p).unwrap_err();
        assert_eq!(e.code(), "KILN-E107");
        let e = run("ShaderClockKHR", &s, &p).unwrap_err();
        assert!(e.to_string().contains("VK_KHR_shader_clock"), "{e}");
        // VK_NV_cooperative_matrix2's capabilities map to its features.
        for (cap, feature) in [
            (
                "CooperativeMatrixReductionsNV",
                "cooperativeMatrixReductions",
            ),
            (
                "CooperativeMatrixConversionsNV",
                "cooperativeMatrixConversions",
            ),
            (
                "CooperativeMatrixPerElementOperationsNV",
                "cooperativeMatrixPerElementOperations",
            ),
            (
                "CooperativeMatrixTensorAddressingNV",
                "cooperativeMatrixTensorAddressing",
            ),
            ("TensorAddressingNV", "cooperativeMatrixTensorAddressing"),
            (
                "CooperativeMatrixBlockLoadsNV",
                "cooperativeMatrixBlockLoads",
            ),
        ] {
            let e = run(cap, &s, &p).unwrap_err();
            assert_eq!(e.code(), "KILN-E107", "{cap}: {e}");
            assert!(e.to_string().contains(feature), "{cap}: {e}");
            assert!(
                e.to_string().contains("VK_NV_cooperative_matrix2"),
                "{cap}: {e}"
            );
        }
        s.cooperative_matrix2.tensor_addressing = true;
        assert!(run("TensorAddressingNV", &s, &p).is_ok());
        assert!(run("CooperativeMatrixTensorAddressingNV", &s, &p).is_ok());
        assert!(run("CooperativeMatrixBlockLoadsNV", &s, &p).is_err());
    }

    #[test]
    fn cooperative_matrix_scopes_are_checked() {
        let mut s = Supported::default();
        assert!(check_scope("dev", &s, "m", vk::ScopeKHR::SUBGROUP).is_ok());
        let e = check_scope("dev", &s, "m", vk::ScopeKHR::WORKGROUP).unwrap_err();
        assert_eq!(e.code(), "KILN-E112");
        let msg = e.to_string();
        assert!(
            msg.contains("`m`") && msg.contains("`dev`") && msg.contains("WORKGROUP"),
            "{msg}"
        );
        assert!(msg.contains("cooperativeMatrixWorkgroupScope"), "{msg}");
        s.cooperative_matrix2.workgroup_scope = true;
        assert!(check_scope("dev", &s, "m", vk::ScopeKHR::WORKGROUP).is_ok());
        let e = check_scope("dev", &s, "m", vk::ScopeKHR::DEVICE).unwrap_err();
        assert_eq!(e.code(), "KILN-E112");
        assert!(e.to_string().contains("never allows"), "{e}");
    }
}
