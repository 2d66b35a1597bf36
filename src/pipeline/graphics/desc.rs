//! How to build a graphics pipeline: [`GraphicsPipelineDesc`] and the vertex buffer layouts
//! it takes ([`VertexBufferLayout`], [`VertexAttribute`]).

use ash::vk;

use super::super::layout::PipelineLayoutDesc;
use super::super::stages::Tessellation;
use super::super::state::{BlendMode, ColorBlendAttachment, DepthBias, DepthState, StencilState};
use crate::device::{format_info, Image};
use crate::shaders::{ShaderModule, SpecValue};

/// One vertex attribute: the shader `location` it feeds, its format and its byte offset in
/// a vertex (`VkVertexInputAttributeDescription` without the binding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexAttribute {
    /// The vertex shader input location (`layout(location = n) in`).
    pub location: u32,
    /// The format of the attribute in the buffer (e.g. R32G32B32_SFLOAT for a `vec3`).
    pub format: vk::Format,
    /// Byte offset of the attribute within one vertex.
    pub offset: u32,
}

/// One vertex buffer binding: its stride in bytes, step rate and attributes. The index of
/// the layout in [`GraphicsPipelineDesc::vertex_buffers`] is the binding number used with
/// [`Recorder::bind_vertex_buffer`](crate::Recorder::bind_vertex_buffer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexBufferLayout {
    /// Bytes from one vertex (or instance) to the next.
    pub stride: u32,
    /// Per vertex or per instance.
    pub input_rate: vk::VertexInputRate,
    /// The attributes read from this buffer.
    pub attributes: Vec<VertexAttribute>,
}

impl VertexBufferLayout {
    /// Per-vertex data; attributes packed in order (offsets computed from the formats).
    pub fn packed(formats_by_location: &[(u32, vk::Format)]) -> Self {
        let mut offset = 0;
        let mut attributes = Vec::new();
        for &(location, format) in formats_by_location {
            attributes.push(VertexAttribute {
                location,
                format,
                offset,
            });
            offset += format_info(format).map_or(0, |i| i.bytes);
        }
        VertexBufferLayout {
            stride: offset,
            input_rate: vk::VertexInputRate::VERTEX,
            attributes,
        }
    }
}

/// How to build a [`GraphicsPipeline`](crate::GraphicsPipeline). Start from [`new`](Self::new) and set fields.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GraphicsPipelineDesc<'a> {
    /// Name in errors and validation messages (default: the modules' labels).
    pub label: String,
    /// The module holding the vertex entry point (ignored when `mesh` is set).
    pub vertex: &'a ShaderModule,
    /// The vertex entry point (default `main`).
    pub vertex_entry: &'a str,
    /// Tessellation control and evaluation stages after the vertex stage (the
    /// `tessellationShader` feature; topology `PATCH_LIST`): set it with
    /// [`tessellation`](Self::tessellation), which sets the topology too.
    pub tessellation: Option<Tessellation<'a>>,
    /// A geometry stage before rasterization (the `geometryShader` feature).
    pub geometry: Option<&'a ShaderModule>,
    /// The geometry entry point (default `main`).
    pub geometry_entry: &'a str,
    /// A task stage before the mesh stage (mesh-shading pipelines only; the `taskShader`
    /// feature).
    pub task: Option<&'a ShaderModule>,
    /// The task entry point (default `main`).
    pub task_entry: &'a str,
    /// The mesh stage: set, the pipeline is a mesh-shading one (VK_EXT_mesh_shader, the
    /// `meshShader` feature), with no vertex input, drawn with `draw_mesh_tasks`.
    pub mesh: Option<&'a ShaderModule>,
    /// The mesh entry point (default `main`).
    pub mesh_entry: &'a str,
    /// `None` for depth-only pipelines.
    pub fragment: Option<&'a ShaderModule>,
    /// The fragment entry point (default `main`).
    pub fragment_entry: &'a str,
    /// Vertex buffer bindings 0, 1, … (see [`VertexBufferLayout`]).
    pub vertex_buffers: Vec<VertexBufferLayout>,
    /// Colour attachment formats, by fragment output location.
    pub color_formats: Vec<vk::Format>,
    /// The depth attachment format, if any.
    pub depth_format: Option<vk::Format>,
    /// Samples per pixel of the attachments (`rasterizationSamples`; default TYPE_1; at
    /// most the device's `framebufferColorSampleCounts` / `framebufferDepthSampleCounts`).
    pub samples: vk::SampleCountFlags,
    /// Primitive topology (default TRIANGLE_LIST).
    pub topology: vk::PrimitiveTopology,
    /// Fill, line or point (default FILL).
    pub polygon_mode: vk::PolygonMode,
    /// Default: no culling.
    pub cull_mode: vk::CullModeFlags,
    /// Default: counter-clockwise is front.
    pub front_face: vk::FrontFace,
    /// Colour blending of every attachment (default opaque), unless `color_blend` is given.
    pub blend: BlendMode,
    /// Blending and write mask per colour attachment, in order (default empty: `blend`
    /// and every component for each).
    pub color_blend: Vec<ColorBlendAttachment>,
    /// Depth test and write (default: test and write, LESS).
    pub depth: DepthState,
    /// The stencil test (default off).
    pub stencil: StencilState,
    /// Depth bias (default none).
    pub depth_bias: Option<DepthBias>,
    /// Specialization constants (SpecId, value), given to both stages.
    pub spec: &'a [(u32, SpecValue)],
    /// Use this layout instead of the reflected one (it must be a superset).
    pub layout: Option<&'a PipelineLayoutDesc>,
    /// Create with `VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR`, for
    /// [`GraphicsPipeline::executable_statistics`](crate::GraphicsPipeline::executable_statistics) (as
    /// [`ComputePipelineDesc::capture_statistics`](crate::ComputePipelineDesc::capture_statistics);
    /// default false).
    pub capture_statistics: bool,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { GraphicsPipelineDesc<'a> {
    label: String,
    vertex: &'a ShaderModule,
    vertex_entry: &'a str,
    geometry: Option<&'a ShaderModule>,
    geometry_entry: &'a str,
    task: Option<&'a ShaderModule>,
    task_entry: &'a str,
    mesh: Option<&'a ShaderModule>,
    mesh_entry: &'a str,
    fragment: Option<&'a ShaderModule>,
    fragment_entry: &'a str,
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
    spec: &'a [(u32, SpecValue)],
    layout: Option<&'a PipelineLayoutDesc>,
    capture_statistics: bool,
} }

impl<'a> GraphicsPipelineDesc<'a> {
    /// Entry points `main`, triangle lists, fill, no culling, opaque, depth LESS; no vertex
    /// buffers and no attachments yet.
    pub fn new(vertex: &'a ShaderModule, fragment: &'a ShaderModule) -> Self {
        GraphicsPipelineDesc {
            label: format!("{}+{}", vertex.label(), fragment.label()),
            vertex,
            vertex_entry: "main",
            tessellation: None,
            geometry: None,
            geometry_entry: "main",
            task: None,
            task_entry: "main",
            mesh: None,
            mesh_entry: "main",
            fragment: Some(fragment),
            fragment_entry: "main",
            vertex_buffers: Vec::new(),
            color_formats: Vec::new(),
            depth_format: None,
            samples: vk::SampleCountFlags::TYPE_1,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            polygon_mode: vk::PolygonMode::FILL,
            cull_mode: vk::CullModeFlags::NONE,
            front_face: vk::FrontFace::COUNTER_CLOCKWISE,
            blend: BlendMode::Opaque,
            color_blend: Vec::new(),
            depth: DepthState::default(),
            stencil: StencilState::default(),
            depth_bias: None,
            spec: &[],
            layout: None,
            capture_statistics: false,
        }
    }

    /// A mesh-shading pipeline of `mesh` and `fragment` (entry points `main`; add a task
    /// stage with `task`), otherwise as [`new`](Self::new).
    pub fn mesh_shading(mesh: &'a ShaderModule, fragment: &'a ShaderModule) -> Self {
        GraphicsPipelineDesc {
            label: format!("{}+{}", mesh.label(), fragment.label()),
            mesh: Some(mesh),
            ..Self::new(mesh, fragment)
        }
    }

    /// Adds tessellation stages: `tessellation`, with topology `PATCH_LIST`.
    pub fn tessellation(mut self, tessellation: Tessellation<'a>) -> Self {
        self.tessellation = Some(tessellation);
        self.topology = vk::PrimitiveTopology::PATCH_LIST;
        self
    }

    /// Takes the attachment formats and the sample count from the render targets.
    pub fn targets(mut self, color: &[&Image], depth: Option<&Image>) -> Self {
        self.color_formats = color.iter().map(|i| i.format()).collect();
        self.depth_format = depth.map(|d| d.format());
        if let Some(first) = color.first().or(depth.as_ref()) {
            self.samples = first.samples();
        }
        self
    }

    /// Adds a vertex buffer layout (binding = its index).
    pub fn vertex_buffer(mut self, layout: VertexBufferLayout) -> Self {
        self.vertex_buffers.push(layout);
        self
    }
}
