//! Mesh-task draws (VK_EXT_mesh_shader; Vulkan spec §21.3 "Drawing Mesh Tasks"):
//! `vkCmdDrawMeshTasksEXT` and its indirect forms, of the bound mesh-shading pipeline
//! ([`GraphicsPipelineDesc::mesh_shading`](crate::GraphicsPipelineDesc::mesh_shading)).
//!
//! They go through `Recorder::record` like every draw: inside a rendering scope, the
//! bound pipeline, sets and push constants checked, the sets' resources tracked at the task
//! and mesh stages, an indirect buffer's commands and count read at DRAW_INDIRECT. A
//! device without VK_EXT_mesh_shader refuses them with `KILN-E107`.

use super::command::Command;
use super::indirect::Commands;
use super::Recorder;
use crate::device::{Buffer, Shared};
use crate::error::{DeviceError, RecordingError, Result};

/// Bytes of a `VkDrawMeshTasksIndirectCommandEXT`: `groupCountX`, `Y`, `Z`, three `u32`.
pub const DRAW_MESH_TASKS_INDIRECT_SIZE: u64 = 12;

/// The mesh-shader function table of `shared`. Errors: `KILN-E107` without
/// VK_EXT_mesh_shader.
fn mesh_table<'s>(
    shared: &'s Shared,
    what: &str,
) -> Result<&'s ash::ext::mesh_shader::Device, RecordingError> {
    shared.mesh_shader.as_ref().ok_or_else(|| {
        DeviceError::MissingFeature {
            device: shared.info.name.clone(),
            what: format!(
                "meshShader (VK_EXT_mesh_shader, Features::mesh_shader), which {what} needs; \
                 draw with vertex shaders on this device"
            ),
        }
        .into()
    })
}

impl Recorder<'_, '_> {
    /// `vkCmdDrawMeshTasksEXT`: `x`×`y`×`z` workgroups of the bound pipeline's task stage
    /// (or, without one, of its mesh stage).
    ///
    /// Errors: `KILN-E107` a device without VK_EXT_mesh_shader, `KILN-E260` more
    /// workgroups than `maxTaskWorkGroupCount` / `maxMeshWorkGroupCount` and their totals,
    /// `KILN-E283` outside a rendering scope or with a pipeline that is not mesh-shading,
    /// and the bound-state errors of [`draw`](Self::draw).
    #[track_caller]
    pub fn draw_mesh_tasks(&mut self, x: u32, y: u32, z: u32) -> Result<(), RecordingError> {
        let what = "draw_mesh_tasks";
        let table = mesh_table(self.shared, what)?;
        self.check_mesh_groups([x, y, z])?;
        self.record(Command::mesh_draw(what, &[]), |_, cb| {
            // SAFETY: a mesh-shading pipeline is bound with its sets and push constants
            // inside a rendering scope (`record`); the counts are within the device's
            // limits for the pipeline's first stage (checked).
            unsafe { table.cmd_draw_mesh_tasks(cb, x, y, z) }
        })
    }

    /// `vkCmdDrawMeshTasksIndirectEXT`: `draw_count` mesh-task draws whose
    /// `VkDrawMeshTasksIndirectCommandEXT`s ([`DRAW_MESH_TASKS_INDIRECT_SIZE`] bytes each)
    /// are `stride` bytes apart from `offset` of `buffer` (a dispatch earlier in the
    /// recording may write them). The counts in the buffer must be within the limits of
    /// `draw_mesh_tasks`: kiln cannot see them at record time.
    ///
    /// Errors: as [`draw_indirect`](Self::draw_indirect), and `KILN-E107`.
    #[track_caller]
    pub fn draw_mesh_tasks_indirect(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        draw_count: u32,
        stride: u32,
    ) -> Result<(), RecordingError> {
        let what = "draw_mesh_tasks_indirect";
        let table = mesh_table(self.shared, what)?;
        let cmds = Commands {
            what,
            buffer,
            offset,
            count: draw_count,
            stride,
            size: DRAW_MESH_TASKS_INDIRECT_SIZE,
        };
        let access = [self.indirect_access(&cmds, false)?];
        self.record(Command::mesh_draw(what, &access), |_, cb| {
            // SAFETY: as in `draw_mesh_tasks`; the buffer is of this device, has
            // INDIRECT_BUFFER usage and holds the commands at the checked offset and
            // stride; it is kept alive until the submission completes (`record`).
            unsafe {
                table.cmd_draw_mesh_tasks_indirect(cb, buffer.raw(), offset, draw_count, stride)
            }
        })
    }

    /// `vkCmdDrawMeshTasksIndirectCountEXT`: as
    /// [`draw_mesh_tasks_indirect`](Self::draw_mesh_tasks_indirect) with the draw count a
    /// `u32` at `count_offset` of `count_buffer`, at most `max_draw_count`.
    ///
    /// Errors: as [`draw_indirect_count`](Self::draw_indirect_count), and `KILN-E107`.
    #[track_caller]
    pub fn draw_mesh_tasks_indirect_count(
        &mut self,
        buffer: &Buffer,
        offset: u64,
        count_buffer: &Buffer,
        count_offset: u64,
        max_draw_count: u32,
        stride: u32,
    ) -> Result<(), RecordingError> {
        let what = "draw_mesh_tasks_indirect_count";
        let table = mesh_table(self.shared, what)?;
        let cmds = Commands {
            what,
            buffer,
            offset,
            count: max_draw_count,
            stride,
            size: DRAW_MESH_TASKS_INDIRECT_SIZE,
        };
        let access = [
            self.indirect_access(&cmds, true)?,
            self.count_access(what, count_buffer, count_offset)?,
        ];
        self.record(Command::mesh_draw(what, &access), |_, cb| {
            // SAFETY: as in `draw_mesh_tasks_indirect`; drawIndirectCount is enabled and the
            // count buffer is of this device, has INDIRECT_BUFFER usage and holds the
            // aligned count (checked), kept alive like the command buffer.
            unsafe {
                table.cmd_draw_mesh_tasks_indirect_count(
                    cb,
                    buffer.raw(),
                    offset,
                    count_buffer.raw(),
                    count_offset,
                    max_draw_count,
                    stride,
                )
            }
        })
    }

    /// Checks `groups` against the limits of the bound pipeline's first stage (task if it
    /// has one, else mesh). Errors: `KILN-E260`.
    fn check_mesh_groups(&self, groups: [u32; 3]) -> Result<(), RecordingError> {
        let l = &self.shared.features.mesh_shader_limits;
        let (limit, total, limit_name, stage) = if self.state.pipeline_task {
            let (l, t) = (
                l.max_task_work_group_count,
                l.max_task_work_group_total_count,
            );
            (l, t, "maxTaskWorkGroupCount", "task")
        } else {
            let (l, t) = (
                l.max_mesh_work_group_count,
                l.max_mesh_work_group_total_count,
            );
            (l, t, "maxMeshWorkGroupCount", "mesh")
        };
        let product = groups.iter().map(|&g| u64::from(g)).product::<u64>();
        if groups.iter().zip(limit).any(|(g, m)| *g > m) || product > u64::from(total) {
            return Err(RecordingError::MeshTasksTooLarge {
                groups,
                limit,
                total,
                limit_name,
                stage,
            });
        }
        Ok(())
    }
}
