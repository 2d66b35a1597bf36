//! `impl Device` of the pipeline layer: pipeline layouts, compute and graphics pipelines,
//! the persisted pipeline cache.

use std::sync::Arc;

use super::cache::{PipelineCache, PipelineCacheStatus};
use super::{
    ComputePipeline, ComputePipelineDesc, GraphicsPipeline, GraphicsPipelineDesc, PipelineLayout,
    PipelineLayoutDesc,
};
use crate::device::Device;
use crate::error::{PipelineError, Result};
use crate::shaders::ShaderModule;

impl Device {
    /// Creates (or returns the interned) pipeline layout for `desc`.
    ///
    /// Errors: `KILN-E053` push constants beyond `maxPushConstantsSize`, `KILN-E059` push
    /// constant ranges Vulkan rejects, `KILN-E209` an invalid set layout, `KILN-E057` a
    /// device limit exceeded, `KILN-E107` runtime arrays without descriptor indexing,
    /// `KILN-E104` Vulkan failures.
    pub fn pipeline_layout(
        &self,
        desc: &PipelineLayoutDesc,
    ) -> Result<Arc<PipelineLayout>, PipelineError> {
        PipelineLayout::get_or_create(&self.shared, desc)
    }

    /// Checks that this device has every feature, extension and property that the SPIR-V
    /// capabilities of `module` need for an entry point of `stage` (the first check
    /// [`compute_pipeline`](Self::compute_pipeline) and
    /// [`graphics_pipeline`](Self::graphics_pipeline) make), without creating anything:
    /// for tools such as `kiln diagnose`.
    ///
    /// Errors: `KILN-E107` naming the capability and the feature the device lacks,
    /// `KILN-E110` a capability kiln does not know, `KILN-E111` an OpenCL-only capability,
    /// `KILN-E112` workgroup-scope cooperative matrices without VK_NV_cooperative_matrix2.
    pub fn check_shader_capabilities(
        &self,
        module: &ShaderModule,
        stage: ash::vk::ShaderStageFlags,
    ) -> Result<(), PipelineError> {
        super::checks::check_capabilities(&self.shared, module, stage)
    }

    /// A compute pipeline for `entry` of `module`, layout from reflection.
    pub fn compute_pipeline(
        &self,
        module: &ShaderModule,
        entry: &str,
    ) -> Result<ComputePipeline, PipelineError> {
        self.compute_pipeline_with(&ComputePipelineDesc::new(module, entry))
    }

    /// A compute pipeline with options.
    ///
    /// Errors: `KILN-E050` no such entry point, `KILN-E251` not a compute shader,
    /// `KILN-E107` a SPIR-V capability whose feature the device lacks, `KILN-E112` a
    /// cooperative-matrix scope the device does not allow, `KILN-E058` a given
    /// layout that does not cover the shader, `KILN-E060` specialization values given twice
    /// or of the wrong size, `KILN-E054` workgroup size beyond the device limits,
    /// `KILN-E053` push constants too large, `KILN-E267` `capture_statistics` on a device
    /// without `pipelineExecutableInfo`, `KILN-E104` Vulkan failures.
    pub fn compute_pipeline_with(
        &self,
        desc: &ComputePipelineDesc<'_>,
    ) -> Result<ComputePipeline, PipelineError> {
        ComputePipeline::new(&self.shared, desc)
    }

    /// A graphics pipeline for dynamic rendering; layout from reflection of both stages.
    ///
    /// Errors: `KILN-E050` entry point missing, `KILN-E251` wrong stage, `KILN-E051`
    /// conflicting bindings between the stages, `KILN-E281` a vertex input with no
    /// attribute, `KILN-E280` an attribute whose format disagrees with the shader,
    /// `KILN-E282` other inconsistencies (fragment output without a colour attachment,
    /// bad attachment formats), `KILN-E107` no dynamic rendering, `KILN-E267`
    /// `capture_statistics` without `pipelineExecutableInfo`, `KILN-E104` Vulkan failures.
    pub fn graphics_pipeline(
        &self,
        desc: &GraphicsPipelineDesc<'_>,
    ) -> Result<GraphicsPipeline, PipelineError> {
        GraphicsPipeline::new(&self.shared, desc)
    }

    /// What happened to the persisted pipeline cache at device creation (see the crate
    /// docs, "Pipeline cache").
    pub fn pipeline_cache_status(&self) -> &PipelineCacheStatus {
        static NONE: PipelineCacheStatus = PipelineCacheStatus::Disabled;
        self.shared
            .slot::<PipelineCache>()
            .map_or(&NONE, PipelineCache::status)
    }

    /// The file the pipeline cache is saved to when the device drops, if persistence is on.
    pub fn pipeline_cache_path(&self) -> Option<&std::path::Path> {
        self.shared.slot::<PipelineCache>().ok()?.path()
    }

    /// Writes the pipeline cache to its file now (atomically) instead of waiting for the
    /// device to drop. Failures are logged (`KILN-W003`), never returned.
    pub fn save_pipeline_cache(&self) {
        if let Ok(c) = self.shared.slot::<PipelineCache>() {
            c.save(&self.shared.raw);
        }
    }
}
