//! Pipeline-layout descriptions and their interner, compatibility, compute pipelines.

mod compute;
mod layout;

pub use compute::{ComputePipeline, ComputePipelineDesc};
pub(crate) use layout::PipelineLayoutCache;
pub use layout::{PipelineLayout, PipelineLayoutDesc, PushConstantRange, DEFAULT_BINDLESS_MAX};
