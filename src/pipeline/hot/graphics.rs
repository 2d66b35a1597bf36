//! Hot reload of graphics pipelines: [`HotGraphicsDesc`] is a [`GraphicsPipelineDesc`] with
//! source files in place of modules; [`HotGraphicsPipeline`] recompiles the stages whose
//! files changed and swaps under the rule of the module docs of `hot.rs`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ash::vk;

use super::watch::StageWatch;
use super::{Hot, ReloadEvent};
use crate::device::{Device, Image};
use crate::error::{PipelineError, Result, ShaderError};
use crate::pipeline::{
    BlendMode, ColorBlendAttachment, DepthBias, DepthState, GraphicsPipeline, GraphicsPipelineDesc,
    PendingPipeline, PipelineLayoutDesc, StencilState, Tessellation, VertexBufferLayout,
};
use crate::shaders::{ShaderModule, SpecValue};

/// The tessellation stages of a [`HotGraphicsDesc`] (entry points `main`).
#[derive(Clone, Debug)]
pub struct HotTessellation {
    /// The tessellation control source (compiled as a `tesc` stage).
    pub control: PathBuf,
    /// The tessellation evaluation source (compiled as a `tese` stage).
    pub evaluation: PathBuf,
    /// Control points per patch: 1 ..= `maxTessellationPatchSize`.
    pub patch_control_points: u32,
}

/// How to build and watch a [`HotGraphicsPipeline`]: the fields of
/// [`GraphicsPipelineDesc`] (same names, same defaults, same meaning) with source files
/// in place of modules. Each source is compiled as the stage of its field, whatever its
/// name; `*.hlsl` files as HLSL. Mesh-shading pipelines are not hot-reloadable.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HotGraphicsDesc {
    /// Name in errors, validation messages and reload logs (default
    /// `vertex-file+fragment-file`).
    pub label: String,
    /// The vertex stage's source.
    pub vertex: PathBuf,
    /// The vertex entry point (default `main`).
    pub vertex_entry: String,
    /// Tessellation stages (topology `PATCH_LIST`; set with
    /// [`tessellation`](Self::tessellation)).
    pub tessellation: Option<HotTessellation>,
    /// A geometry stage's source.
    pub geometry: Option<PathBuf>,
    /// The geometry entry point (default `main`).
    pub geometry_entry: String,
    /// The fragment stage's source; `None` for depth-only pipelines.
    pub fragment: Option<PathBuf>,
    /// The fragment entry point (default `main`).
    pub fragment_entry: String,
    /// As [`GraphicsPipelineDesc::vertex_buffers`].
    pub vertex_buffers: Vec<VertexBufferLayout>,
    /// As [`GraphicsPipelineDesc::color_formats`].
    pub color_formats: Vec<vk::Format>,
    /// As [`GraphicsPipelineDesc::depth_format`].
    pub depth_format: Option<vk::Format>,
    /// As [`GraphicsPipelineDesc::samples`].
    pub samples: vk::SampleCountFlags,
    /// As [`GraphicsPipelineDesc::topology`].
    pub topology: vk::PrimitiveTopology,
    /// As [`GraphicsPipelineDesc::polygon_mode`].
    pub polygon_mode: vk::PolygonMode,
    /// As [`GraphicsPipelineDesc::cull_mode`].
    pub cull_mode: vk::CullModeFlags,
    /// As [`GraphicsPipelineDesc::front_face`].
    pub front_face: vk::FrontFace,
    /// As [`GraphicsPipelineDesc::blend`].
    pub blend: BlendMode,
    /// As [`GraphicsPipelineDesc::color_blend`].
    pub color_blend: Vec<ColorBlendAttachment>,
    /// As [`GraphicsPipelineDesc::depth`].
    pub depth: DepthState,
    /// As [`GraphicsPipelineDesc::stencil`].
    pub stencil: StencilState,
    /// As [`GraphicsPipelineDesc::depth_bias`].
    pub depth_bias: Option<DepthBias>,
    /// As [`GraphicsPipelineDesc::spec`].
    pub spec: Vec<(u32, SpecValue)>,
    /// As [`GraphicsPipelineDesc::layout`]: a given layout keeps every version's layout
    /// equal, as long as each fits in it.
    pub layout: Option<PipelineLayoutDesc>,
    /// As [`GraphicsPipelineDesc::capture_statistics`].
    pub capture_statistics: bool,
    /// How often the watcher reads the sources and the files they include (default
    /// 100 ms).
    pub poll_interval: Duration,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { HotGraphicsDesc {
    label: String,
    vertex: PathBuf,
    vertex_entry: String,
    geometry: Option<PathBuf>,
    geometry_entry: String,
    fragment: Option<PathBuf>,
    fragment_entry: String,
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
    poll_interval: Duration,
} }

impl HotGraphicsDesc {
    /// `vertex` and `fragment` (entry points `main`), read every 100 ms; the rest as
    /// [`GraphicsPipelineDesc::new`].
    pub fn new(vertex: impl AsRef<Path>, fragment: impl AsRef<Path>) -> Self {
        let (vertex, fragment) = (vertex.as_ref(), fragment.as_ref());
        let name = |p: &Path| {
            p.file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned())
        };
        // GraphicsPipelineDesc::new's defaults.
        HotGraphicsDesc {
            label: format!("{}+{}", name(vertex), name(fragment)),
            vertex: vertex.to_path_buf(),
            vertex_entry: "main".into(),
            tessellation: None,
            geometry: None,
            geometry_entry: "main".into(),
            fragment: Some(fragment.to_path_buf()),
            fragment_entry: "main".into(),
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
            spec: Vec::new(),
            layout: None,
            capture_statistics: false,
            poll_interval: Duration::from_millis(100),
        }
    }

    /// Adds tessellation stages, with topology `PATCH_LIST`.
    pub fn tessellation(mut self, tessellation: HotTessellation) -> Self {
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

    /// The sources with glslc's name of their stage, in pipeline order.
    fn stages(&self) -> Vec<(&Path, &'static str)> {
        let mut stages = vec![(self.vertex.as_path(), "vert")];
        if let Some(t) = &self.tessellation {
            stages.push((&t.control, "tesc"));
            stages.push((&t.evaluation, "tese"));
        }
        if let Some(g) = &self.geometry {
            stages.push((g, "geom"));
        }
        if let Some(f) = &self.fragment {
            stages.push((f, "frag"));
        }
        stages
    }

    /// The pipeline description of `modules`, one per [`stages`](Self::stages) entry.
    fn pipeline_desc<'a>(
        &'a self,
        modules: &[&'a ShaderModule],
    ) -> Option<GraphicsPipelineDesc<'a>> {
        let mut m = modules.iter().copied();
        let vertex = m.next()?;
        let tessellation = match &self.tessellation {
            Some(t) => Some(Tessellation::new(
                m.next()?,
                m.next()?,
                t.patch_control_points,
            )),
            None => None,
        };
        let geometry = match self.geometry {
            Some(_) => Some(m.next()?),
            None => None,
        };
        let fragment = match self.fragment {
            Some(_) => Some(m.next()?),
            None => None,
        };
        Some(GraphicsPipelineDesc {
            label: self.label.clone(),
            vertex_entry: &self.vertex_entry,
            tessellation,
            geometry,
            geometry_entry: &self.geometry_entry,
            fragment,
            fragment_entry: &self.fragment_entry,
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
            ..GraphicsPipelineDesc::new(vertex, fragment.unwrap_or(vertex))
        })
    }
}

/// A graphics pipeline that follows its stages' source files and the files they include
/// (feature `hot-reload`): watched, recompiled (only the stages whose files changed) and
/// swapped as a [`HotComputePipeline`](super::HotComputePipeline) is. Bind
/// [`pipeline`](Self::pipeline) as usual; call [`poll`](Self::poll) at a safe point (between
/// frames) to take a reloaded version: its layout must equal the running one, so the
/// descriptor sets made for the first version stay valid; draws already submitted keep the
/// old pipeline alive. Dropping it stops and joins the watcher thread (waiting for a
/// compile in progress).
pub struct HotGraphicsPipeline {
    hot: Hot<GraphicsPipeline>,
}

impl std::fmt::Debug for HotGraphicsPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotGraphicsPipeline")
            .field("current", self.hot.pipeline())
            .finish()
    }
}

impl HotGraphicsPipeline {
    /// Compiles every stage of `desc` now (the first versions must compile), creates the
    /// pipeline and starts watching the sources and the files they include.
    ///
    /// Errors: `KILN-E013` a source cannot be read or compiled (the compiler's messages in
    /// the error), then those of [`Device::graphics_pipeline`].
    pub fn new(device: &Device, desc: &HotGraphicsDesc) -> Result<Self, PipelineError> {
        let (stages, modules): (Vec<StageWatch>, Vec<ShaderModule>) = desc
            .stages()
            .into_iter()
            .map(|(path, stage)| StageWatch::first(path, Some(stage)))
            .collect::<Result<Vec<_>, PipelineError>>()?
            .into_iter()
            .unzip();
        let modules: Vec<&ShaderModule> = modules.iter().collect();
        let current = desc
            .pipeline_desc(&modules)
            .ok_or_else(|| {
                ShaderError::HotReloadCompile {
                    source_file: desc.vertex.clone(),
                    detail: format!(
                        "{} modules for the stages of `{}`",
                        modules.len(),
                        desc.label
                    ),
                }
                .into()
            })
            .and_then(|d| device.graphics_pipeline_async(&d))?
            .wait()?;
        let (device, owned) = (device.clone(), desc.clone());
        let build = move |m: &[&ShaderModule]| match owned.pipeline_desc(m) {
            Some(d) => device
                .graphics_pipeline_async(&d)
                .and_then(PendingPipeline::wait)
                .map_err(|e| e.to_string()),
            None => Err(format!(
                "{} modules for the stages of `{}`",
                m.len(),
                owned.label
            )),
        };
        Ok(HotGraphicsPipeline {
            hot: Hot::start(
                current,
                desc.label.clone(),
                stages,
                desc.poll_interval,
                build,
            )?,
        })
    }

    /// The pipeline to bind now.
    pub fn pipeline(&self) -> &GraphicsPipeline {
        self.hot.pipeline()
    }

    /// The files watched now: each stage's source, then the files its last compile
    /// included (directly or not), as the compiler named them.
    pub fn watched(&self) -> Vec<PathBuf> {
        self.hot.watched()
    }

    /// Takes what the watcher built since the last call, if anything: swaps in a new
    /// pipeline whose layout is equal to the running one, refuses one whose layout
    /// changed, reports a failed compile (of any stage) or a pipeline kiln refused. Of
    /// several versions built since the last call, each is handled in order, and the event
    /// of the last is returned. Never blocks.
    pub fn poll(&mut self) -> Option<ReloadEvent> {
        self.hot.poll()
    }

    /// Like [`poll`](Self::poll), but waits up to `timeout` for the watcher to build
    /// something.
    pub fn wait_for_reload(&mut self, timeout: Duration) -> Option<ReloadEvent> {
        self.hot.wait_for_reload(timeout)
    }
}
