//! Pipeline descriptions that own what they name, to be created on another thread: every
//! module, entry name, specialization list and layout of a [`ComputePipelineDesc`] or
//! [`GraphicsPipelineDesc`] copied, and borrowed back as the same description there.
//!
//! Both are taken apart field by field without `..`, so a field added to a description
//! fails to compile here until it is carried across.

use ash::vk;

use crate::pipeline::{
    BlendMode, ColorBlendAttachment, ComputePipelineDesc, DepthBias, DepthState,
    GraphicsPipelineDesc, PipelineLayoutDesc, StencilState, Tessellation, VertexBufferLayout,
};
use crate::shaders::{ShaderModule, SpecValue};

/// A [`ComputePipelineDesc`] that owns what it names.
pub(super) struct OwnedCompute {
    module: ShaderModule,
    entry: String,
    spec: Vec<(u32, SpecValue)>,
    layout: Option<PipelineLayoutDesc>,
    required_subgroup_size: Option<u32>,
    full_subgroups: bool,
    push_descriptor_set: Option<u32>,
    capture_statistics: bool,
}

impl OwnedCompute {
    pub(super) fn new(d: &ComputePipelineDesc<'_>) -> OwnedCompute {
        let ComputePipelineDesc {
            module,
            entry,
            spec,
            layout,
            required_subgroup_size,
            full_subgroups,
            push_descriptor_set,
            capture_statistics,
        } = d;
        OwnedCompute {
            module: (*module).clone(),
            entry: entry.to_string(),
            spec: spec.to_vec(),
            layout: layout.cloned(),
            required_subgroup_size: *required_subgroup_size,
            full_subgroups: *full_subgroups,
            push_descriptor_set: *push_descriptor_set,
            capture_statistics: *capture_statistics,
        }
    }

    pub(super) fn desc(&self) -> ComputePipelineDesc<'_> {
        ComputePipelineDesc {
            module: &self.module,
            entry: &self.entry,
            spec: &self.spec,
            layout: self.layout.as_ref(),
            required_subgroup_size: self.required_subgroup_size,
            full_subgroups: self.full_subgroups,
            push_descriptor_set: self.push_descriptor_set,
            capture_statistics: self.capture_statistics,
        }
    }
}

/// A module and its entry point, owned.
type OwnedStage = (ShaderModule, String);

fn own(module: &ShaderModule, entry: &str) -> OwnedStage {
    (module.clone(), entry.to_string())
}

/// The tessellation stages, owned.
struct OwnedTessellation {
    control: OwnedStage,
    evaluation: OwnedStage,
    patch_control_points: u32,
}

/// A [`GraphicsPipelineDesc`] that owns what it names.
pub(super) struct OwnedGraphics {
    label: String,
    vertex: OwnedStage,
    tessellation: Option<OwnedTessellation>,
    geometry: Option<OwnedStage>,
    task: Option<OwnedStage>,
    mesh: Option<OwnedStage>,
    fragment: Option<OwnedStage>,
    /// The entry names of the stages that are absent (kept as given).
    absent_entries: [String; 4],
    vertex_buffers: Vec<VertexBufferLayout>,
    color_formats: Vec<vk::Format>,
    depth_format: Option<vk::Format>,
    samples: vk::SampleCountFlags,
    topology: vk::PrimitiveTopology,
    polygon_mode: vk::PolygonMode,
    cull_mode: vk::CullModeFlags,
    front_face: vk::FrontFace,
    blend: BlendMode,
    color_blend: Vec<ColorBlendAttachment>,
    depth: DepthState,
    stencil: StencilState,
    depth_bias: Option<DepthBias>,
    spec: Vec<(u32, SpecValue)>,
    layout: Option<PipelineLayoutDesc>,
    capture_statistics: bool,
}

impl OwnedGraphics {
    pub(super) fn new(d: &GraphicsPipelineDesc<'_>) -> OwnedGraphics {
        let GraphicsPipelineDesc {
            label,
            vertex,
            vertex_entry,
            tessellation,
            geometry,
            geometry_entry,
            task,
            task_entry,
            mesh,
            mesh_entry,
            fragment,
            fragment_entry,
            vertex_buffers,
            color_formats,
            depth_format,
            samples,
            topology,
            polygon_mode,
            cull_mode,
            front_face,
            blend,
            color_blend,
            depth,
            stencil,
            depth_bias,
            spec,
            layout,
            capture_statistics,
        } = d;
        OwnedGraphics {
            label: label.clone(),
            vertex: own(vertex, vertex_entry),
            tessellation: tessellation.as_ref().map(|t| OwnedTessellation {
                control: own(t.control, t.control_entry),
                evaluation: own(t.evaluation, t.evaluation_entry),
                patch_control_points: t.patch_control_points,
            }),
            geometry: geometry.map(|m| own(m, geometry_entry)),
            task: task.map(|m| own(m, task_entry)),
            mesh: mesh.map(|m| own(m, mesh_entry)),
            fragment: fragment.map(|m| own(m, fragment_entry)),
            absent_entries: [
                geometry_entry.to_string(),
                task_entry.to_string(),
                mesh_entry.to_string(),
                fragment_entry.to_string(),
            ],
            vertex_buffers: vertex_buffers.clone(),
            color_formats: color_formats.clone(),
            depth_format: *depth_format,
            samples: *samples,
            topology: *topology,
            polygon_mode: *polygon_mode,
            cull_mode: *cull_mode,
            front_face: *front_face,
            blend: *blend,
            color_blend: color_blend.clone(),
            depth: *depth,
            stencil: *stencil,
            depth_bias: *depth_bias,
            spec: spec.to_vec(),
            layout: layout.cloned(),
            capture_statistics: *capture_statistics,
        }
    }

    pub(super) fn label(&self) -> &str {
        &self.label
    }

    pub(super) fn desc(&self) -> GraphicsPipelineDesc<'_> {
        fn entry<'s>(s: &'s Option<OwnedStage>, absent: &'s str) -> &'s str {
            s.as_ref().map_or(absent, |s| &s.1)
        }
        let a = &self.absent_entries;
        GraphicsPipelineDesc {
            label: self.label.clone(),
            vertex: &self.vertex.0,
            vertex_entry: &self.vertex.1,
            tessellation: self.tessellation.as_ref().map(|t| Tessellation {
                control: &t.control.0,
                control_entry: &t.control.1,
                evaluation: &t.evaluation.0,
                evaluation_entry: &t.evaluation.1,
                patch_control_points: t.patch_control_points,
            }),
            geometry: self.geometry.as_ref().map(|s| &s.0),
            geometry_entry: entry(&self.geometry, &a[0]),
            task: self.task.as_ref().map(|s| &s.0),
            task_entry: entry(&self.task, &a[1]),
            mesh: self.mesh.as_ref().map(|s| &s.0),
            mesh_entry: entry(&self.mesh, &a[2]),
            fragment: self.fragment.as_ref().map(|s| &s.0),
            fragment_entry: entry(&self.fragment, &a[3]),
            vertex_buffers: self.vertex_buffers.clone(),
            color_formats: self.color_formats.clone(),
            depth_format: self.depth_format,
            samples: self.samples,
            topology: self.topology,
            polygon_mode: self.polygon_mode,
            cull_mode: self.cull_mode,
            front_face: self.front_face,
            blend: self.blend,
            color_blend: self.color_blend.clone(),
            depth: self.depth,
            stencil: self.stencil,
            depth_bias: self.depth_bias,
            spec: &self.spec,
            layout: self.layout.as_ref(),
            capture_statistics: self.capture_statistics,
        }
    }
}
