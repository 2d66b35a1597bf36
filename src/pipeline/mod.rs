//! Pipeline-layout descriptions and their interner, compatibility, compute pipelines, the
//! persisted pipeline cache.

mod bindless;
pub mod cache;
mod checks;
mod compute;
mod layout;

pub(crate) use cache::PipelineCache;
pub use cache::PipelineCacheStatus;
pub use compute::{ComputePipeline, ComputePipelineDesc};
pub(crate) use layout::PipelineLayoutCache;
pub use layout::{
    PipelineLayout, PipelineLayoutDesc, PushConstantRange, Visibility, DEFAULT_BINDLESS_MAX,
};
