//! Mesh-shading graphics pipelines (VK_EXT_mesh_shader; Vulkan spec §10.1.3 "Mesh
//! Shading"): an optional task stage and a mesh stage take the place of vertex input and
//! the vertex stage. They are [`GraphicsPipeline`](super::GraphicsPipeline)s made from a
//! [`GraphicsPipelineDesc`] whose `mesh` is set ([`GraphicsPipelineDesc::mesh_shading`]),
//! with layouts reflected across every stage like any other, and drawn with
//! `Recorder::draw_mesh_tasks` and its indirect forms.

use ash::vk;

use super::graphics::GraphicsPipelineDesc;
use super::stages::{missing, stage, Stage};
use crate::device::Shared;
use crate::error::{PipelineError, Result};

/// The task (if any) and mesh stages of `desc` (whose `mesh` is set), checked: the
/// device's `meshShader`/`taskShader` features (`KILN-E107`), the entry points' stages
/// (`KILN-E251`), their capabilities, and no vertex buffers (`KILN-E282`: a mesh pipeline
/// has no vertex input).
pub(crate) fn stages<'d>(
    shared: &Shared,
    desc: &'d GraphicsPipelineDesc<'_>,
) -> Result<Vec<Stage<'d>>, PipelineError> {
    let features = &shared.features;
    let pipeline = desc.label.as_str();
    if !features.mesh_shader {
        return Err(missing(
            shared,
            ("meshShader (VK_EXT_mesh_shader)", "mesh_shader"),
            pipeline,
            "draw with vertex shaders on this device",
        ));
    }
    if desc.task.is_some() && !features.task_shader {
        return Err(missing(
            shared,
            ("taskShader (VK_EXT_mesh_shader)", "task_shader"),
            pipeline,
            "make the mesh workgroups' work in the mesh shader on this device",
        ));
    }
    if !desc.vertex_buffers.is_empty() {
        return Err(PipelineError::InvalidGraphicsPipeline {
            pipeline: pipeline.to_string(),
            detail: "a mesh-shading pipeline has no vertex input; its mesh shader reads \
                     buffers through descriptors (remove the vertex buffer layouts)"
                .into(),
        });
    }
    let mut out = Vec::new();
    if let Some(task) = desc.task {
        out.push(stage(
            shared,
            task,
            desc.task_entry,
            vk::ShaderStageFlags::TASK_EXT,
            "the task stage of a mesh pipeline needs a TaskEXT entry point",
        )?);
    }
    if let Some(mesh) = desc.mesh {
        out.push(stage(
            shared,
            mesh,
            desc.mesh_entry,
            vk::ShaderStageFlags::MESH_EXT,
            "the mesh stage of a mesh pipeline needs a MeshEXT entry point",
        )?);
    }
    Ok(out)
}
