//! The shader stages of a graphics pipeline, checked before anything is created (Vulkan
//! spec §10.1 "Graphics Pipelines", §28 "Tessellation", §29 "Geometry Shading"):
//!
//! - vertex shading: the vertex stage, optional tessellation control and evaluation stages
//!   ([`Tessellation`]; the `tessellationShader` feature, patch lists of
//!   1 ..= `maxTessellationPatchSize` control points) and an optional geometry stage (the
//!   `geometryShader` feature);
//! - or mesh shading: an optional task stage and the mesh stage (`mesh.rs`), which take the
//!   place of all of those;
//! - then the fragment stage, whose outputs must match the colour attachments.
//!
//! Each entry point must be of its stage (`KILN-E251`), its capabilities enabled on the
//! device (`checks.rs`); a stage the device lacks is `KILN-E107`, a topology or patch size
//! that does not fit the stages `KILN-E282`.

use ash::vk;

use super::checks::check_capabilities;
use super::graphics::GraphicsPipelineDesc;
use crate::device::{format_info, NumClass, Shared};
use crate::error::{DeviceError, PipelineError, Result};
use crate::shaders::{EntryPoint, ShaderModule};

/// A stage of a graphics pipeline: its label (`entry in module`), entry point, module and
/// entry name.
pub(crate) type Stage<'d> = (String, &'d EntryPoint, &'d ShaderModule, &'d str);

/// The tessellation stages of a graphics pipeline
/// ([`GraphicsPipelineDesc::tessellation`]): a control and an evaluation shader, and the
/// control points per patch. Such a pipeline draws `PATCH_LIST`s: every
/// `patch_control_points` vertices of a draw are one patch.
#[derive(Clone, Copy, Debug)]
pub struct Tessellation<'a> {
    /// The module holding the tessellation control entry point (`*.tesc`).
    pub control: &'a ShaderModule,
    /// The control entry point (default `main`).
    pub control_entry: &'a str,
    /// The module holding the tessellation evaluation entry point (`*.tese`).
    pub evaluation: &'a ShaderModule,
    /// The evaluation entry point (default `main`).
    pub evaluation_entry: &'a str,
    /// Control points per patch (`VkPipelineTessellationStateCreateInfo::patchControlPoints`):
    /// 1 ..= `maxTessellationPatchSize`.
    pub patch_control_points: u32,
}

impl<'a> Tessellation<'a> {
    /// `control` and `evaluation` (entry points `main`) over patches of
    /// `patch_control_points` vertices.
    pub fn new(
        control: &'a ShaderModule,
        evaluation: &'a ShaderModule,
        patch_control_points: u32,
    ) -> Self {
        Tessellation {
            control,
            control_entry: "main",
            evaluation,
            evaluation_entry: "main",
            patch_control_points,
        }
    }
}

/// The entry point `entry` of `module`, which must be of `stage` (`KILN-E251` naming
/// `what`), with its capabilities enabled on the device; as a [`Stage`].
pub(crate) fn stage<'d>(
    shared: &Shared,
    module: &'d ShaderModule,
    entry: &'d str,
    stage: vk::ShaderStageFlags,
    what: &'static str,
) -> Result<Stage<'d>, PipelineError> {
    let ep = module.reflection().entry_point(entry)?;
    if ep.stage != stage {
        return Err(PipelineError::WrongStage {
            entry: ep.name.clone(),
            stage: ep.stage,
            what,
        });
    }
    check_capabilities(shared, module, ep.stage)?;
    Ok((
        format!("{} in {}", ep.name, module.label()),
        ep,
        module,
        entry,
    ))
}

/// `KILN-E107`: the device lacks `feature` (`Features::field`), which `pipeline` needs;
/// `instead` says what to do on such a device.
pub(crate) fn missing(
    shared: &Shared,
    (feature, field): (&str, &str),
    pipeline: &str,
    instead: &str,
) -> PipelineError {
    DeviceError::MissingFeature {
        device: shared.info.name.clone(),
        what: format!(
            "{feature} (Features::{field}), which pipeline `{pipeline}` needs; {instead}"
        ),
    }
    .into()
}

fn invalid(pipeline: &str, detail: impl Into<String>) -> PipelineError {
    PipelineError::InvalidGraphicsPipeline {
        pipeline: pipeline.to_string(),
        detail: detail.into(),
    }
}

/// The vertex (or task and mesh) and fragment stages of `desc`, checked (module docs).
/// Returns every stage, the vertex stage first (none for mesh shading).
pub(crate) fn checked<'d>(
    shared: &Shared,
    desc: &'d GraphicsPipelineDesc<'_>,
) -> Result<(Option<&'d EntryPoint>, Vec<Stage<'d>>), PipelineError> {
    let (vertex, mut stages) = if desc.mesh.is_some() {
        if desc.tessellation.is_some() || desc.geometry.is_some() {
            return Err(invalid(
                &desc.label,
                "a mesh-shading pipeline has no tessellation or geometry stages; do that \
                 work in its task and mesh shaders",
            ));
        }
        (None, super::mesh::stages(shared, desc)?)
    } else {
        let stages = vertex_shading(shared, desc)?;
        (Some(stages[0].1), stages)
    };
    if let Some(fm) = desc.fragment {
        let fs = stage(
            shared,
            fm,
            desc.fragment_entry,
            vk::ShaderStageFlags::FRAGMENT,
            "the fragment stage of a graphics pipeline needs a Fragment entry point",
        )?;
        check_outputs(desc, fs.1)?;
        stages.push(fs);
    }
    Ok((vertex, stages))
}

/// The vertex, tessellation and geometry stages of `desc`, with the topology and patch size
/// checked against them.
fn vertex_shading<'d>(
    shared: &Shared,
    desc: &'d GraphicsPipelineDesc<'_>,
) -> Result<Vec<Stage<'d>>, PipelineError> {
    use vk::ShaderStageFlags as F;
    let pipeline = desc.label.as_str();
    let mut out = vec![stage(
        shared,
        desc.vertex,
        desc.vertex_entry,
        F::VERTEX,
        "the vertex stage of a graphics pipeline needs a Vertex entry point",
    )?];
    let patches = desc.topology == vk::PrimitiveTopology::PATCH_LIST;
    match &desc.tessellation {
        Some(t) => {
            if !shared.features.tessellation_shader {
                return Err(missing(
                    shared,
                    ("tessellationShader", "tessellation_shader"),
                    pipeline,
                    "on this device, subdivide on the CPU or in a compute pass",
                ));
            }
            let max = shared.limits().max_tessellation_patch_size;
            if !(1..=max).contains(&t.patch_control_points) {
                // VUID-VkPipelineTessellationStateCreateInfo-patchControlPoints-01214.
                return Err(invalid(
                    pipeline,
                    format!(
                        "patch_control_points {} is outside 1 ..= {max} \
                         (maxTessellationPatchSize)",
                        t.patch_control_points
                    ),
                ));
            }
            if !patches {
                // VUID-VkGraphicsPipelineCreateInfo-pStages-00736.
                return Err(invalid(
                    pipeline,
                    format!(
                        "a tessellation pipeline draws patches, but topology is {:?}; set \
                         topology to PATCH_LIST (GraphicsPipelineDesc::tessellation does)",
                        desc.topology
                    ),
                ));
            }
            out.push(stage(
                shared,
                t.control,
                t.control_entry,
                F::TESSELLATION_CONTROL,
                "the tessellation control stage needs a TessellationControl entry point",
            )?);
            out.push(stage(
                shared,
                t.evaluation,
                t.evaluation_entry,
                F::TESSELLATION_EVALUATION,
                "the tessellation evaluation stage needs a TessellationEvaluation entry point",
            )?);
        }
        // VUID-VkGraphicsPipelineCreateInfo-topology-08889.
        None if patches => return Err(invalid(
            pipeline,
            "topology PATCH_LIST needs tessellation stages (GraphicsPipelineDesc::tessellation)",
        )),
        None => {}
    }
    if let Some(gm) = desc.geometry {
        if !shared.features.geometry_shader {
            return Err(missing(
                shared,
                ("geometryShader", "geometry_shader"),
                pipeline,
                "on this device, make the primitives in a compute pass or draw them instanced",
            ));
        }
        out.push(stage(
            shared,
            gm,
            desc.geometry_entry,
            F::GEOMETRY,
            "the geometry stage of a graphics pipeline needs a Geometry entry point",
        )?);
    }
    Ok(out)
}

/// Each fragment output of `fs` against its colour attachment in `desc`.
fn check_outputs(desc: &GraphicsPipelineDesc<'_>, fs: &EntryPoint) -> Result<(), PipelineError> {
    let pipeline = desc.label.as_str();
    for out in &fs.outputs {
        let name = out.name.as_deref().unwrap_or("<unnamed>");
        let Some(&cf) = desc.color_formats.get(out.location as usize) else {
            return Err(invalid(
                pipeline,
                format!(
                    "fragment output `{name}` at location {} has no colour attachment ({} \
                     colour format(s) given)",
                    out.location,
                    desc.color_formats.len()
                ),
            ));
        };
        if let (Some(o), Some(c)) = (format_info(out.format), format_info(cf)) {
            if o.class != c.class {
                return Err(invalid(
                    pipeline,
                    format!(
                        "fragment output `{name}` at location {} writes {} values but its \
                         attachment is {cf:?}",
                        out.location,
                        class_name(o.class)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// How errors name a numeric class.
pub(crate) fn class_name(c: NumClass) -> &'static str {
    match c {
        NumClass::Float => "float",
        NumClass::Sint => "signed integer",
        NumClass::Uint => "unsigned integer",
    }
}
