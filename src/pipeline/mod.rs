//! Pipeline-layout descriptions and their interner, compatibility, compute pipelines, the
//! persisted pipeline cache.

pub mod cache;
mod compute;
mod layout;

pub(crate) use cache::PipelineCache;
pub use cache::PipelineCacheStatus;
pub use compute::{ComputePipeline, ComputePipelineDesc};
pub(crate) use layout::PipelineLayoutCache;
pub use layout::{PipelineLayout, PipelineLayoutDesc, PushConstantRange, DEFAULT_BINDLESS_MAX};
