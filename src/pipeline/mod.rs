//! Pipeline-layout descriptions and their interner, compatibility, compute pipelines.

mod bindless;
mod checks;
mod compute;
mod layout;

pub use compute::{ComputePipeline, ComputePipelineDesc};
pub(crate) use layout::PipelineLayoutCache;
pub use layout::{
    PipelineLayout, PipelineLayoutDesc, PushConstantRange, Visibility, DEFAULT_BINDLESS_MAX,
};
