//! Graphics pipelines for dynamic rendering (Vulkan 1.3 §10.2, `VkPipelineRenderingCreateInfo`):
//! the pipeline layout comes from reflection of both stages, the vertex input state from the
//! reflected vertex inputs checked against the caller's vertex buffer layouts, and the
//! attachment formats from the render targets. Viewport and scissor are dynamic state.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::sync::Arc;

use ash::vk;

use super::access::{uses_addresses, PipelineAccess};
use super::compute::{shader_module, spec_data};
use super::dynamic::DynamicState;
use super::layout::{PipelineLayout, PipelineLayoutDesc};
use super::stages::{self, Stage};
use super::state;
use super::statistics::{self, PipelineExecutable};
use super::Pipeline;
use crate::descriptors::DescriptorSet;
use crate::device::{format_info, FaultSite, NumClass, Shared};
use crate::error::{
    vk_device_err, DescriptorError, DeviceError, PipelineError, Result, ShaderError,
};
use crate::shaders::EntryPoint;

mod desc;

pub use desc::{GraphicsPipelineDesc, VertexAttribute, VertexBufferLayout};

/// A graphics `VkPipeline` with its interned layout.
pub struct GraphicsPipeline {
    shared: Arc<Shared>,
    raw: vk::Pipeline,
    layout: Arc<PipelineLayout>,
    access: PipelineAccess,
    /// Per set number, the index of its binding names in its set layout.
    names: Vec<u32>,
    formats: RenderingFormats,
    /// `desc.vertex_buffers.len()`.
    vertex_bindings: u32,
    label: String,
    /// A stage declares `PhysicalStorageBufferAddresses` (see `Pipeline`).
    device_addresses: bool,
    /// Created with CAPTURE_STATISTICS (`GraphicsPipelineDesc::capture_statistics`).
    captures_statistics: bool,
    /// Task and mesh stages instead of vertex input (`GraphicsPipelineDesc::mesh`).
    mesh_shading: bool,
    /// A task stage before the mesh stage.
    task_stage: bool,
    /// The state recorded at each bind (`dynamic.rs`).
    dynamic: DynamicState,
}

impl std::fmt::Debug for GraphicsPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphicsPipeline")
            .field("label", &self.label)
            .field("layout", &self.layout)
            .field("formats", &self.formats)
            .finish()
    }
}

/// Checks the caller's vertex buffer layouts against the reflected vertex inputs and
/// returns the Vulkan descriptions (attributes the shader does not read are left out).
fn vertex_input(
    entry: &str,
    ep: &EntryPoint,
    buffers: &[VertexBufferLayout],
    pipeline: &str,
) -> Result<
    (
        Vec<vk::VertexInputBindingDescription>,
        Vec<vk::VertexInputAttributeDescription>,
    ),
    PipelineError,
> {
    let invalid = |detail: String| PipelineError::InvalidGraphicsPipeline {
        pipeline: pipeline.to_string(),
        detail,
    };
    let mut by_location: BTreeMap<u32, (u32, VertexAttribute)> = BTreeMap::new();
    for (binding, b) in buffers.iter().enumerate() {
        for a in &b.attributes {
            if format_info(a.format).is_none_or(|i| i.aspect != vk::ImageAspectFlags::COLOR) {
                return Err(invalid(format!(
                    "vertex attribute at location {} has format {:?}, which kiln does not know as a vertex format",
                    a.location, a.format
                )));
            }
            if by_location
                .insert(a.location, (binding as u32, *a))
                .is_some()
            {
                return Err(invalid(format!(
                    "two vertex attributes feed location {} (VUID-VkPipelineVertexInputStateCreateInfo-pVertexAttributeDescriptions-00617)",
                    a.location
                )));
            }
        }
    }
    let mut attributes = Vec::new();
    for input in &ep.inputs {
        let name = input.name.clone().unwrap_or_else(|| "<unnamed>".into());
        let Some((binding, a)) = by_location.get(&input.location) else {
            return Err(PipelineError::VertexInputMissing {
                entry: entry.to_string(),
                name,
                location: input.location,
                shader: input.format,
            });
        };
        if let (Some(s), Some(g)) = (format_info(input.format), format_info(a.format)) {
            let hint = if s.class != g.class {
                Some(match s.class {
                    NumClass::Float => "the shader reads floats: use an SFLOAT/UNORM/SNORM format",
                    NumClass::Uint => "the shader reads unsigned integers: use a UINT format",
                    NumClass::Sint => "the shader reads signed integers: use a SINT format",
                })
            } else if s.wide != g.wide {
                Some("64-bit shader inputs need 64-bit formats and the other way round")
            } else if g.components < s.components {
                Some("the format has fewer components than the shader reads; use one with as many")
            } else {
                None
            };
            if let Some(hint) = hint {
                log::debug!(
                    "kiln: vertex input {name} is {} x{}, format gives {} x{}",
                    stages::class_name(s.class),
                    s.components,
                    stages::class_name(g.class),
                    g.components
                );
                return Err(PipelineError::VertexFormatMismatch {
                    entry: entry.to_string(),
                    name,
                    location: input.location,
                    shader: input.format,
                    given: a.format,
                    hint,
                });
            }
        }
        attributes.push(vk::VertexInputAttributeDescription {
            location: a.location,
            binding: *binding,
            format: a.format,
            offset: a.offset,
        });
    }
    let bindings = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| vk::VertexInputBindingDescription {
            binding: i as u32,
            stride: b.stride,
            input_rate: b.input_rate,
        })
        .collect();
    Ok((bindings, attributes))
}

/// One `VkPipelineShaderStageCreateInfo` per created module, with `spec` where the
/// pipeline has specialization constants.
fn stage_infos<'a>(
    modules: &[(vk::ShaderStageFlags, vk::ShaderModule)],
    names: &'a [CString],
    spec: Option<&'a vk::SpecializationInfo<'a>>,
) -> Vec<vk::PipelineShaderStageCreateInfo<'a>> {
    modules
        .iter()
        .zip(names)
        .map(|((stage, sm), name)| {
            let s = vk::PipelineShaderStageCreateInfo::default()
                .stage(*stage)
                .module(*sm)
                .name(name);
            match spec {
                Some(spec) => s.specialization_info(spec),
                None => s,
            }
        })
        .collect()
}

impl GraphicsPipeline {
    /// Creates the pipeline on the device `shared` (see
    /// [`Device::graphics_pipeline`](crate::Device::graphics_pipeline)).
    pub(crate) fn new(
        shared: &Arc<Shared>,
        desc: &GraphicsPipelineDesc<'_>,
    ) -> Result<Self, PipelineError> {
        let pipeline = desc.label.as_str();
        let flags = statistics::create_flags(shared, pipeline, desc.capture_statistics)?;
        let invalid = |detail: String| PipelineError::InvalidGraphicsPipeline {
            pipeline: pipeline.to_string(),
            detail,
        };
        check_rendering_features(shared)?;
        let (vertex, stages) = stages::checked(shared, desc)?;
        // Each stage as specialized (array lengths checked; descriptor counts from
        // specialization constants at the given values, for the reflected layout).
        let specialized = stages
            .iter()
            .map(|(label, ep, module, entry)| {
                let stage = (*entry, ep.stage);
                super::checks::check_specialization(shared, label, module, stage, desc.spec)
            })
            .collect::<Result<Vec<_>, PipelineError>>()?;
        let stages: Vec<Stage<'_>> = stages
            .iter()
            .zip(&specialized)
            .map(|((label, _, module, entry), s)| (label.clone(), &s.entry, *module, *entry))
            .collect();
        check_targets(shared, desc).map_err(invalid)?;
        let (vi_bindings, vi_attributes) = match vertex {
            Some(vs) => vertex_input(&stages[0].0, vs, &desc.vertex_buffers, pipeline)?,
            None => Default::default(),
        };

        let (layout, access, set_names) = layout_and_access(shared, desc, &stages)?;
        check_input_attachments(shared, &layout)?;
        state::check_depth_bias(desc.depth_bias, &shared.features).map_err(invalid)?;
        let depth =
            state::depth_stencil(&desc.depth, &desc.stencil, desc.depth_format).map_err(invalid)?;
        let attachments = state::color_blend(
            desc.blend,
            &desc.color_blend,
            &desc.color_formats,
            &shared.features,
        )
        .map_err(invalid)?;
        let (entries, data) = spec_data(desc.spec);
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let (modules, names) = create_modules(shared, &stages)?;
        let spec = (!entries.is_empty()).then_some(&spec_info);
        let stage_infos = stage_infos(&modules, &names, spec);
        let created = create_raw(
            shared,
            desc,
            &Parts {
                flags,
                layout: layout.raw(),
                stages: &stage_infos,
                vertex_bindings: &vi_bindings,
                vertex_attributes: &vi_attributes,
                depth,
                blend: &attachments,
            },
        );
        for (_, sm) in modules {
            // SAFETY: modules are not needed once the pipeline exists (or failed).
            unsafe { shared.raw.destroy_shader_module(sm, None) };
        }
        let raw = created.map_err(|(_, e)| vk_device_err("vkCreateGraphicsPipelines")(e))?[0];
        shared.set_name(raw, pipeline);
        Ok(GraphicsPipeline {
            shared: shared.clone(),
            raw,
            layout,
            access,
            names: set_names,
            formats: RenderingFormats {
                color: desc.color_formats.clone(),
                depth: desc.depth_format,
                samples: desc.samples,
            },
            // At most maxVertexInputBindings (checked above).
            vertex_bindings: desc.vertex_buffers.len() as u32,
            label: pipeline.to_string(),
            device_addresses: stages
                .iter()
                .any(|(_, _, m, _)| super::uses_device_addresses(m)),
            dynamic: DynamicState::of(desc, &depth),
            mesh_shading: desc.mesh.is_some(),
            task_stage: desc.mesh.is_some() && desc.task.is_some(),
            captures_statistics: desc.capture_statistics,
        })
    }

    /// Per executable (one per stage or group of merged stages), what the driver compiled
    /// this pipeline into: see [`ComputePipeline::executable_statistics`](super::ComputePipeline::executable_statistics)
    /// (created with [`GraphicsPipelineDesc::capture_statistics`]).
    ///
    /// Errors: `KILN-E267`, `KILN-E268`, `KILN-E104`/`KILN-E111`, as there.
    pub fn executable_statistics(&self) -> Result<Vec<PipelineExecutable>, PipelineError> {
        let captured = self.captures_statistics;
        statistics::executables(&self.shared, self.raw, &self.label, captured)
    }

    /// The raw handle (owned by this object; destroyed with it).
    pub fn raw(&self) -> vk::Pipeline {
        self.raw
    }

    /// The interned pipeline layout.
    pub fn layout(&self) -> &Arc<PipelineLayout> {
        &self.layout
    }

    /// The reflected access of each binding of the layout (read / written, by which stage):
    /// what the recorder's automatic barriers order.
    pub fn access(&self) -> &PipelineAccess {
        &self.access
    }

    /// The colour attachment formats the pipeline was built for.
    pub fn color_formats(&self) -> &[vk::Format] {
        &self.formats.color
    }

    /// The depth attachment format the pipeline was built for.
    pub fn depth_format(&self) -> Option<vk::Format> {
        self.formats.depth
    }

    /// The attachment formats and sample count the pipeline draws into: a rendering scope
    /// it draws in must have exactly these (`KILN-E287`).
    pub fn rendering_formats(&self) -> &RenderingFormats {
        &self.formats
    }

    /// The label (shown in errors and validation messages).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Allocates a descriptor set for set number `set` of this pipeline's layout; it binds
    /// to every pipeline (graphics or compute) with an equal set layout at that number.
    ///
    /// Errors: `KILN-E205` no such set.
    pub fn descriptor_set(&self, set: u32) -> Result<DescriptorSet, DescriptorError> {
        let (names, label) = (&self.names, self.label());
        super::pipeline_set(&self.shared, &self.layout, names, label, (set, None))
    }
}

impl Pipeline for GraphicsPipeline {
    fn raw(&self) -> vk::Pipeline {
        self.raw
    }
    fn layout(&self) -> &Arc<PipelineLayout> {
        &self.layout
    }
    fn bind_point(&self) -> vk::PipelineBindPoint {
        vk::PipelineBindPoint::GRAPHICS
    }
    fn access(&self) -> &PipelineAccess {
        &self.access
    }
    fn device_addresses(&self) -> bool {
        self.device_addresses
    }
    fn label(&self) -> &str {
        GraphicsPipeline::label(self)
    }
    fn rendering_formats(&self) -> Option<&RenderingFormats> {
        Some(&self.formats)
    }
    fn vertex_bindings(&self) -> u32 {
        self.vertex_bindings
    }
    fn mesh_shading(&self) -> bool {
        self.mesh_shading
    }
    fn task_stage(&self) -> bool {
        self.task_stage
    }
    fn dynamic_state(&self) -> Option<&DynamicState> {
        Some(&self.dynamic)
    }
}

/// The attachments a graphics pipeline draws into, or a rendering scope has: colour formats
/// by location, the depth format and the samples per pixel (`VkPipelineRenderingCreateInfo`
/// and `rasterizationSamples`; a draw needs them equal, VUID-vkCmdDraw-colorAttachmentCount-06180,
/// -pDepthAttachment-06181, -multisampledRenderToSingleSampled-07285).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderingFormats {
    /// Colour attachment formats, by fragment output location.
    pub color: Vec<vk::Format>,
    /// The depth attachment's format, if any.
    pub depth: Option<vk::Format>,
    /// Samples per pixel (empty in a scope with no attachment yet).
    pub samples: vk::SampleCountFlags,
}

impl std::fmt::Display for RenderingFormats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "colour {:?}, depth ", self.color)?;
        match self.depth {
            Some(d) => write!(f, "{d:?}")?,
            None => f.write_str("none")?,
        }
        write!(f, ", {:?}", self.samples)
    }
}

/// The attachment formats, sample count and vertex buffer count of `desc` against the
/// device; the error text is the detail of `KILN-E282`.
fn check_targets(
    shared: &Shared,
    desc: &GraphicsPipelineDesc<'_>,
) -> std::result::Result<(), String> {
    let max_colors = shared.limits().max_color_attachments as usize;
    if desc.color_formats.len() > max_colors {
        // VUID-VkPipelineRenderingCreateInfo-colorAttachmentCount-09533.
        return Err(format!(
            "{} colour attachments exceed maxColorAttachments ({max_colors})",
            desc.color_formats.len()
        ));
    }
    for cf in &desc.color_formats {
        if format_info(*cf).is_none_or(|i| i.aspect != vk::ImageAspectFlags::COLOR) {
            return Err(format!(
                "colour attachment format {cf:?} is not a colour format kiln knows"
            ));
        }
    }
    if let Some(df) = desc.depth_format {
        if format_info(df).is_none_or(|i| !i.aspect.contains(vk::ImageAspectFlags::DEPTH)) {
            return Err(format!(
                "depth attachment format {df:?} is not a depth format"
            ));
        }
    }
    state::check_samples(shared, desc)?;
    state::check_fixed_state(desc)?;
    let max_bindings = shared.limits().max_vertex_input_bindings as usize;
    if desc.vertex_buffers.len() > max_bindings {
        return Err(format!(
            "{} vertex buffers exceed maxVertexInputBindings {max_bindings}",
            desc.vertex_buffers.len()
        ));
    }
    Ok(())
}

/// Shader modules by stage.
type Modules = Vec<(vk::ShaderStageFlags, vk::ShaderModule)>;

/// The shader modules of `stages` (destroyed again if one fails) and their entry names.
fn create_modules(
    shared: &Shared,
    stages: &[Stage<'_>],
) -> Result<(Modules, Vec<CString>), PipelineError> {
    let mut modules = Vec::new();
    let mut names = Vec::new();
    for (_, ep, m, entry) in stages {
        names.push(
            CString::new(*entry).map_err(|_| ShaderError::EntryPointNotFound {
                name: entry.to_string(),
                available: String::new(),
            })?,
        );
        match shader_module(shared, m) {
            Ok(sm) => modules.push((ep.stage, sm)),
            Err(e) => {
                for (_, sm) in modules {
                    // SAFETY: created above, used by nothing.
                    unsafe { shared.raw.destroy_shader_module(sm, None) };
                }
                return Err(e);
            }
        }
    }
    Ok((modules, names))
}

/// Per set of a layout, the index of its binding names in its set layout.
type SetNames = Vec<u32>;

/// The pipeline's layout (the given one, or reflected from `stages`), interned; the
/// reflected access of its bindings; the binding names of each set.
fn layout_and_access(
    shared: &Arc<Shared>,
    desc: &GraphicsPipelineDesc<'_>,
    stages: &[Stage<'_>],
) -> Result<(Arc<PipelineLayout>, PipelineAccess, SetNames), PipelineError> {
    let reflected;
    let layout_desc = match desc.layout {
        Some(d) => d,
        None => {
            let eps: Vec<(&str, &EntryPoint)> =
                stages.iter().map(|(l, e, _, _)| (l.as_str(), *e)).collect();
            reflected = PipelineLayoutDesc::from_entry_points(&eps)?;
            &reflected
        }
    };
    let layout = PipelineLayout::get_or_create(shared, layout_desc)?;
    let addresses = stages
        .iter()
        .filter(|(_, _, m, _)| uses_addresses(&m.reflection().capabilities))
        .fold(vk::ShaderStageFlags::empty(), |acc, (_, e, _, _)| {
            acc | e.stage
        });
    let access = PipelineAccess::new(
        shared,
        &layout,
        stages.iter().map(|(_, e, _, _)| *e),
        addresses,
    )?;
    let names = super::set_name_ids(&layout, &layout_desc.names);
    Ok((layout, access, names))
}

/// What `create_raw` builds a pipeline from besides its description.
struct Parts<'p> {
    flags: vk::PipelineCreateFlags,
    layout: vk::PipelineLayout,
    stages: &'p [vk::PipelineShaderStageCreateInfo<'p>],
    vertex_bindings: &'p [vk::VertexInputBindingDescription],
    vertex_attributes: &'p [vk::VertexInputAttributeDescription],
    depth: vk::PipelineDepthStencilStateCreateInfo<'static>,
    blend: &'p [vk::PipelineColorBlendAttachmentState],
}

/// `vkCreateGraphicsPipelines` for a checked `desc` and its `p`arts: the fixed-function
/// state, dynamic rendering's formats and the dynamic states every kiln pipeline has.
fn create_raw(
    shared: &Shared,
    desc: &GraphicsPipelineDesc<'_>,
    p: &Parts<'_>,
) -> std::result::Result<Vec<vk::Pipeline>, (Vec<vk::Pipeline>, vk::Result)> {
    let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
        .vertex_binding_descriptions(p.vertex_bindings)
        .vertex_attribute_descriptions(p.vertex_attributes);
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(desc.topology);
    let tessellation = vk::PipelineTessellationStateCreateInfo::default().patch_control_points(
        desc.tessellation
            .as_ref()
            .map_or(0, |t| t.patch_control_points),
    );
    let viewport = vk::PipelineViewportStateCreateInfo::default()
        .viewport_count(1)
        .scissor_count(1);
    let bias = desc.depth_bias.unwrap_or_default();
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(desc.polygon_mode)
        .cull_mode(desc.cull_mode)
        .front_face(desc.front_face)
        .depth_bias_enable(desc.depth_bias.is_some())
        .depth_bias_constant_factor(bias.constant_factor)
        .depth_bias_clamp(bias.clamp)
        .depth_bias_slope_factor(bias.slope_factor)
        .line_width(1.0);
    let multisample =
        vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(desc.samples);
    let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(p.blend);
    // The stencil reference is dynamic in every kiln pipeline: begin_rendering sets it
    // to 0 with the viewport and scissor, so no pipeline bind invalidates it; the
    // rasterization and depth/stencil state `dynamic.rs` lists is recorded at each bind.
    let dynamic_states = DynamicState::declared(desc.mesh.is_some());
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
    let mut rendering = vk::PipelineRenderingCreateInfo::default()
        .color_attachment_formats(&desc.color_formats)
        .depth_attachment_format(desc.depth_format.unwrap_or(vk::Format::UNDEFINED))
        .stencil_attachment_format(state::stencil_format(desc.depth_format));
    let mut info = vk::GraphicsPipelineCreateInfo::default()
        .flags(p.flags)
        .stages(p.stages)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .depth_stencil_state(&p.depth)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic)
        .layout(p.layout)
        .push_next(&mut rendering);
    if desc.mesh.is_none() {
        // A mesh-shading pipeline has neither (VUID-VkGraphicsPipelineCreateInfo-pStages-02098
        // is for pipelines with a vertex stage).
        info = info
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly);
    }
    if desc.tessellation.is_some() {
        // Checked: 1 ..= maxTessellationPatchSize control points (`stages`).
        info = info.tessellation_state(&tessellation);
    }
    match shared.inject(FaultSite::CreatePipeline) {
        // SAFETY: modules and layout are alive; every pointer refers to locals alive
        // for the call; the vertex input state was checked against the vertex shader's
        // inputs and the attachment formats against the fragment outputs.
        Ok(()) => unsafe {
            shared
                .raw
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
        },
        Err(e) => Err((Vec::new(), e)),
    }
}

impl Drop for GraphicsPipeline {
    fn drop(&mut self) {
        let raw = self.raw;
        // SAFETY: retire runs this after every kiln submission that may use `raw` finished;
        // presenter frames are waited for before their resources may drop.
        self.shared
            .retire(move |s| unsafe { s.raw.destroy_pipeline(raw, None) });
    }
}

/// `KILN-E107` without dynamicRendering and synchronization2 (Vulkan 1.3).
fn check_rendering_features(shared: &Shared) -> Result<(), PipelineError> {
    let f = &shared.features;
    if !(f.dynamic_rendering && f.synchronization2) {
        return Err(DeviceError::MissingFeature {
            device: shared.info.name.clone(),
            what: "dynamicRendering and synchronization2 (Vulkan 1.3), which kiln's graphics pipelines use".into(),
        }.into());
    }
    Ok(())
}

/// `KILN-E107` for a layout with input attachments on a device without
/// dynamicRenderingLocalRead: with dynamic rendering, input attachments need local read
/// (VUID-VkGraphicsPipelineCreateInfo-renderPass-06061).
fn check_input_attachments(shared: &Shared, layout: &PipelineLayout) -> Result<(), PipelineError> {
    let input_attachments = layout
        .set_layouts()
        .iter()
        .flat_map(|s| s.desc().bindings())
        .any(|b| b.descriptor_type == vk::DescriptorType::INPUT_ATTACHMENT);
    if input_attachments && !shared.features.dynamic_rendering_local_read {
        return Err(crate::device::local_read_missing(&shared.info.name).into());
    }
    Ok(())
}
