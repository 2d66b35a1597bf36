//! Pipeline-layout descriptions and their interner, compatibility, compute and graphics
//! pipelines, the persisted pipeline cache.

mod bindless;
pub mod cache;
mod checks;
mod compute;
mod graphics;
mod layout;

pub(crate) use cache::PipelineCache;
pub use cache::PipelineCacheStatus;
use std::sync::Arc;

use ash::vk;

pub use compute::{ComputePipeline, ComputePipelineDesc};
pub use graphics::{
    BlendMode, DepthState, GraphicsPipeline, GraphicsPipelineDesc, VertexAttribute,
    VertexBufferLayout,
};
pub(crate) use layout::PipelineLayoutCache;
pub use layout::{
    PipelineLayout, PipelineLayoutDesc, PushConstantRange, Visibility, DEFAULT_BINDLESS_MAX,
};

/// What [`Recorder::bind_pipeline`](crate::Recorder::bind_pipeline) needs from a pipeline:
/// implemented by [`ComputePipeline`] and [`GraphicsPipeline`].
pub trait Pipeline {
    /// The raw `VkPipeline` (owned by the pipeline object).
    fn raw(&self) -> vk::Pipeline;
    /// The interned pipeline layout.
    fn layout(&self) -> &Arc<PipelineLayout>;
    /// COMPUTE or GRAPHICS.
    fn bind_point(&self) -> vk::PipelineBindPoint;
    /// Workgroup size for `dispatch_threads` (`[1, 1, 1]` for graphics).
    fn workgroup_size(&self) -> [u32; 3] {
        [1, 1, 1]
    }
}

impl Pipeline for ComputePipeline {
    fn raw(&self) -> vk::Pipeline {
        ComputePipeline::raw(self)
    }
    fn layout(&self) -> &Arc<PipelineLayout> {
        ComputePipeline::layout(self)
    }
    fn bind_point(&self) -> vk::PipelineBindPoint {
        vk::PipelineBindPoint::COMPUTE
    }
    fn workgroup_size(&self) -> [u32; 3] {
        ComputePipeline::workgroup_size(self)
    }
}
