//! Pipeline-layout descriptions and their interner, compatibility, compute and graphics
//! pipelines, the persisted pipeline cache.

mod access;
mod background;
mod bindless;
pub(crate) mod cache;
mod checks;
mod compute;
mod device;
mod dynamic;
mod graphics;
#[cfg(feature = "hot-reload")]
mod hot;
mod layout;
mod mesh;
mod stages;
mod state;
pub(crate) mod statistics;

use std::sync::Arc;

use ash::vk;

pub(crate) use access::set_in_mask;
pub use access::{BindingAccess, PipelineAccess};
pub use background::{NotReady, PendingPipeline};
pub use bindless::DEFAULT_BINDLESS_MAX;
pub use cache::PipelineCacheStatus;
pub use compute::{ComputePipeline, ComputePipelineDesc};
pub(crate) use dynamic::topology_class;
pub use dynamic::{DynamicState, StencilOps};
pub use graphics::{
    GraphicsPipeline, GraphicsPipelineDesc, RenderingFormats, VertexAttribute, VertexBufferLayout,
};
#[cfg(feature = "hot-reload")]
pub use hot::{
    HotComputePipeline, HotDesc, HotGraphicsDesc, HotGraphicsPipeline, HotTessellation, ReloadEvent,
};
pub use layout::{PipelineLayout, PipelineLayoutDesc, PushConstantRange, Visibility};
pub use stages::Tessellation;
pub use state::{BlendMode, ColorBlendAttachment, DepthBias, DepthState, StencilState};
pub use statistics::{PipelineExecutable, PipelineExecutableStatistic, StatisticValue};

use crate::device::Shared;
use crate::error::Result;

/// What [`Recorder::bind_pipeline`](crate::Recorder::bind_pipeline) needs from a pipeline:
/// implemented by [`ComputePipeline`] and [`GraphicsPipeline`].
pub trait Pipeline {
    /// The raw `VkPipeline` (owned by the pipeline object).
    fn raw(&self) -> vk::Pipeline;
    /// The interned pipeline layout.
    fn layout(&self) -> &Arc<PipelineLayout>;
    /// COMPUTE or GRAPHICS.
    fn bind_point(&self) -> vk::PipelineBindPoint;
    /// The reflected access of each binding of the layout: what the recorder's automatic
    /// barriers order.
    fn access(&self) -> &PipelineAccess;
    /// Workgroup size for `dispatch_threads` (`[1, 1, 1]` for graphics).
    fn workgroup_size(&self) -> [u32; 3] {
        [1, 1, 1]
    }
    /// Its shaders declare `PhysicalStorageBufferAddresses`: they may reach any buffer by
    /// its device address, which kiln cannot see.
    fn device_addresses(&self) -> bool {
        false
    }
    /// The pipeline's name (its debug-utils object name: `module:entry` for compute
    /// pipelines), which shader printf lines and submission-time messages are tagged with.
    fn label(&self) -> &str {
        ""
    }
    /// A mesh-shading graphics pipeline (drawn with `draw_mesh_tasks`).
    fn mesh_shading(&self) -> bool {
        false
    }
    /// A mesh-shading pipeline with a task stage.
    fn task_stage(&self) -> bool {
        false
    }
    /// A graphics pipeline's values of the rasterization and depth/stencil state kiln keeps
    /// dynamic, recorded when it is bound (`None` for compute).
    fn dynamic_state(&self) -> Option<&DynamicState> {
        None
    }
    /// Vertex buffer bindings a graphics pipeline reads (0 for compute).
    fn vertex_bindings(&self) -> u32 {
        0
    }
    /// A graphics pipeline's attachment formats and sample count (`None` for compute).
    fn rendering_formats(&self) -> Option<&RenderingFormats> {
        None
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
    fn access(&self) -> &PipelineAccess {
        ComputePipeline::access(self)
    }
    fn workgroup_size(&self) -> [u32; 3] {
        ComputePipeline::workgroup_size(self)
    }
    fn device_addresses(&self) -> bool {
        self.device_addresses
    }
    fn label(&self) -> &str {
        ComputePipeline::label(self)
    }
}

/// Whether `module` declares `PhysicalStorageBufferAddresses` (its shaders may reach any
/// buffer by device address).
pub(crate) fn uses_device_addresses(module: &crate::shaders::ShaderModule) -> bool {
    module
        .reflection()
        .capabilities
        .iter()
        .any(|c| c.starts_with("PhysicalStorageBufferAddresses"))
}

/// A descriptor set for set number `set` of a pipeline's `layout` (`names`: each set's
/// index of its binding names in its set layout, [`set_name_ids`]), with the actual count
/// of a variable-count binding (`None`: its maximum); named `<label> set <set>` when labels
/// are on. Shared by compute and graphics pipelines' `descriptor_set`.
///
/// Errors: `KILN-E205` no such set, then those of the set's allocation.
#[inline(always)]
pub(crate) fn pipeline_set(
    shared: &Arc<Shared>,
    layout: &layout::PipelineLayout,
    names: &[u32],
    label: &str,
    (set, variable_count): (u32, Option<u32>),
) -> std::result::Result<crate::descriptors::DescriptorSet, crate::error::DescriptorError> {
    let layouts = layout.set_layouts();
    // `let else`, not `ok_or`: an eagerly built error is dropped on every call.
    let Some(set_layout) = layouts.get(set as usize) else {
        return Err(crate::error::DescriptorError::NoSuchSet {
            set,
            set_count: layouts.len() as u32,
        });
    };
    let names = names.get(set as usize).copied().unwrap_or(0);
    if !shared.labels {
        // Made in place in the caller's result (no copy of the `Result`).
        return crate::descriptors::allocate_set_in(shared, set_layout, set, names, variable_count);
    }
    let made = crate::descriptors::allocate_set_in(shared, set_layout, set, names, variable_count);
    // Named for the layer's messages and capture tools when labels are on.
    if let Ok(s) = &made {
        shared.set_name(s.raw(), &format!("{label} set {set}"));
    }
    made
}

/// Each set's index of the binding names `names` (a pipeline layout description's, set
/// after set) in the set layout of `layout` at that number: what a pipeline keeps for
/// [`pipeline_set`].
pub(crate) fn set_name_ids(
    layout: &layout::PipelineLayout,
    names: &[crate::descriptors::BindingNames],
) -> Vec<u32> {
    layout
        .set_layouts()
        .iter()
        .zip(names)
        .map(|(l, n)| l.names.id(n))
        .collect()
}

/// Registers this layer's slots (the pipeline-layout and set-access interners, then the
/// pipeline cache, loaded from disk now) on a device being created.
pub(crate) fn register_slots(shared: &mut Shared) -> Result<()> {
    shared.register_slot(layout::PipelineLayoutCache::default())?;
    shared.register_slot(access::SetAccessCache::default())?;
    let cache = cache::PipelineCache::open(&shared.raw, &shared.properties)?;
    shared.register_slot(cache)?;
    shared.register_slot(background::PipelineThreads::default())
}
