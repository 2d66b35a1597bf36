//! Acceleration structure builds (`vkCmdBuildAccelerationStructuresKHR`, Vulkan spec §37.3
//! "Acceleration Structure Building"), through [`Recorder::record`] like every command.
//!
//! A build names what it uses, so the automatic barriers order it like a dispatch or a
//! copy (Vulkan spec §7.1.3, the build's access types): the structure's storage is written
//! at `ACCELERATION_STRUCTURE_BUILD` (`ACCELERATION_STRUCTURE_WRITE`), its vertex, index
//! and instance buffers are read there as shader data (`SHADER_READ`), a top-level build
//! reads the bottom-level structures it places (`ACCELERATION_STRUCTURE_READ`), and the
//! scratch memory kiln allocates for the command is read and written there. A dispatch
//! that reads a structure through a descriptor reads its storage and that of the
//! bottom-level structures it places (`ACCELERATION_STRUCTURE_READ` at the shader's
//! stages: `automatic::shader_use`), so it waits for the build; a build after a dispatch
//! that wrote its vertices waits for that dispatch.

use ash::vk;
use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;

use super::command::{Bound, BufferAccess, Command, Manual, Place};
use super::hazards::Use;
use super::Recorder;
use crate::device::{
    acceleration_structure_functions, AccelerationStructure, AccelerationStructureInputs, Buffer,
    BufferDesc, BuildInput, MemoryLocation,
};
use crate::error::{DeviceError, MemoryError, RecordingError, Result};

/// The `KILN-E283` message of a build inside a rendering scope.
const INSIDE_SCOPE: &str =
    "an acceleration structure build inside a rendering scope; call end_rendering first";

/// The structure a build writes.
const WRITTEN: Use = Use {
    stage: S::ACCELERATION_STRUCTURE_BUILD_KHR,
    read: A::NONE,
    write: A::ACCELERATION_STRUCTURE_WRITE_KHR,
};

/// Vertices, indices and instances a build reads.
const INPUT: Use = Use {
    stage: S::ACCELERATION_STRUCTURE_BUILD_KHR,
    read: A::SHADER_READ,
    write: A::NONE,
};

/// A bottom-level structure a top-level build reads.
const PLACED: Use = Use {
    stage: S::ACCELERATION_STRUCTURE_BUILD_KHR,
    read: A::ACCELERATION_STRUCTURE_READ_KHR,
    write: A::NONE,
};

/// The scratch memory of a build.
const SCRATCH: Use = Use {
    stage: S::ACCELERATION_STRUCTURE_BUILD_KHR,
    read: A::ACCELERATION_STRUCTURE_READ_KHR,
    write: A::ACCELERATION_STRUCTURE_WRITE_KHR,
};

impl Recorder<'_, '_> {
    /// Builds `structure` from its inputs' current contents: as
    /// [`build_acceleration_structures`](Self::build_acceleration_structures) with one.
    ///
    /// Errors: as `build_acceleration_structures`.
    #[track_caller]
    pub fn build_acceleration_structure(
        &mut self,
        structure: &AccelerationStructure,
    ) -> Result<(), RecordingError> {
        self.build_acceleration_structures(&[structure])
    }

    /// Builds `structures` (mode BUILD) from their inputs' current contents: the
    /// bottom-level ones first, in one `vkCmdBuildAccelerationStructuresKHR`, then the
    /// top-level ones in another, ordered after the first by the automatic barriers (so a
    /// top-level structure may be built with the bottom-level ones it places). kiln
    /// allocates the scratch memory (`build_scratch_size` of each, aligned to
    /// `minAccelerationStructureScratchOffsetAlignment`) for the command and keeps it, the
    /// structures and their inputs alive until the submission completes. Barriers before
    /// and after are automatic (module docs); in manual mode a build is ordered like a
    /// copy (after earlier dispatches, then a full barrier).
    ///
    /// Errors: `KILN-E120` a queue without compute
    /// (VUID-vkCmdBuildAccelerationStructuresKHR-commandBuffer-cmdpool), `KILN-E283` inside
    /// a rendering scope (-renderpass), `KILN-E109` a structure of another device,
    /// `KILN-E170` a structure given twice
    /// (-dstAccelerationStructure-03698) or a top-level structure placing a bottom-level
    /// one that was never built (by this call, earlier in this recording, or by a recording
    /// submitted before: one dropped unsubmitted built nothing), and the errors of
    /// buffer creation for the scratch memory (`KILN-E150`, `KILN-E154`).
    #[track_caller]
    pub fn build_acceleration_structures(
        &mut self,
        structures: &[&AccelerationStructure],
    ) -> Result<(), RecordingError> {
        self.outside_rendering(INSIDE_SCOPE)?;
        if !self.caps.queue_flags.contains(vk::QueueFlags::COMPUTE) {
            return Err(
                self.unsupported("an acceleration structure build", vk::QueueFlags::COMPUTE)
            );
        }
        for (i, s) in structures.iter().enumerate() {
            self.own(s.storage())
                .map_err(|_| DeviceError::ForeignObject {
                    object: format!("acceleration structure `{}`", s.label()),
                })?;
            if structures[..i].iter().any(|o| o.same(s)) {
                return Err(MemoryError::AccelerationStructureInput {
                    object: s.label().to_string(),
                    detail: "given twice to one build; build it once".into(),
                }
                .into());
            }
        }
        let (bottom, top): (Vec<_>, Vec<_>) = structures
            .iter()
            .copied()
            .partition(|s| s.ty() == vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL);
        for t in &top {
            let AccelerationStructureInputs::Instances { bottom: placed, .. } = t.geometry() else {
                continue;
            };
            if let Some(b) = placed.iter().find(|b| {
                !b.built()
                    && !bottom.iter().any(|o| o.same(b))
                    && !self.built.iter().any(|o| o.same(b))
            }) {
                return Err(MemoryError::AccelerationStructureInput {
                    object: t.label().to_string(),
                    detail: format!(
                        "places `{}`, which no recording built (a build counts once its \
                         recording is submitted); build it first (earlier in this recording, \
                         in the same call, or in a recording submitted before)",
                        b.label()
                    ),
                }
                .into());
            }
        }
        for group in [bottom, top] {
            if !group.is_empty() {
                self.build_group(&group)?;
            }
        }
        Ok(())
    }

    /// One `vkCmdBuildAccelerationStructuresKHR` of `group` (all of one level, checked),
    /// with its scratch buffer, through `record`.
    #[track_caller]
    fn build_group(&mut self, group: &[&AccelerationStructure]) -> Result<(), RecordingError> {
        let shared = self.shared;
        let first = group[0];
        let fns = acceleration_structure_functions(shared, first.label())?;
        let align = u64::from(
            shared
                .features
                .acceleration_structure_limits
                .min_scratch_offset_alignment,
        )
        .max(1);
        let mut offsets = Vec::with_capacity(group.len());
        let mut total = 0u64;
        for s in group {
            offsets.push(total);
            // Saturated sums are refused by the buffer's size checks (KILN-E159).
            total = total.saturating_add(s.build_scratch_size().max(1).next_multiple_of(align));
        }
        let scratch = Buffer::new(
            first.storage().shared(),
            &BufferDesc {
                label: "kiln acceleration structure build scratch",
                size: total.saturating_add(align),
                usage: vk::BufferUsageFlags::STORAGE_BUFFER,
                location: MemoryLocation::GpuOnly,
            },
        )?;
        let base = scratch.device_address()?.next_multiple_of(align);
        let mut accesses = Vec::with_capacity(group.len() * 3 + 1);
        let mut geometries = Vec::with_capacity(group.len());
        let mut ranges = Vec::with_capacity(group.len());
        for s in group {
            accesses.push(BufferAccess::new(s.storage(), 0, s.size(), WRITTEN));
            s.for_each_input(|buffer, offset, size, how| {
                let use_ = if how == BuildInput::Structure {
                    PLACED
                } else {
                    INPUT
                };
                accesses.push(BufferAccess::new(buffer, offset, size, use_));
            });
            let (g, counts) = s.geometry().build_geometry();
            geometries.push(g);
            ranges.push(
                counts
                    .iter()
                    .map(|&n| {
                        vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(n)
                    })
                    .collect::<Vec<_>>(),
            );
        }
        accesses.push(BufferAccess::new(&scratch, 0, scratch.size(), SCRATCH));
        let infos: Vec<_> = group
            .iter()
            .zip(&geometries)
            .zip(&offsets)
            .map(|((s, g), offset)| {
                vk::AccelerationStructureBuildGeometryInfoKHR::default()
                    .ty(s.ty())
                    .flags(s.flags())
                    .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
                    .dst_acceleration_structure(s.raw())
                    .geometries(g)
                    .scratch_data(vk::DeviceOrHostAddressKHR {
                        device_address: base + offset,
                    })
            })
            .collect();
        let range_refs: Vec<&[vk::AccelerationStructureBuildRangeInfoKHR]> =
            ranges.iter().map(Vec::as_slice).collect();
        let command = Command {
            place: Place::Outside(INSIDE_SCOPE),
            bound: Bound::None,
            buffers: &accesses,
            images: &[],
            manual: Manual::Fenced,
        };
        self.record(command, |_, cb| {
            // SAFETY: every structure is of this device and was created for exactly these
            // geometries (types, formats, counts checked at creation; the sizes came from
            // vkGetAccelerationStructureBuildSizesKHR for them); no structure is given twice;
            // the input addresses are of live buffers with build-input and device-address
            // usage that the command keeps alive, as it keeps the structures' storage; each
            // scratch range is `build_scratch_size` bytes of a STORAGE_BUFFER buffer, aligned
            // to minAccelerationStructureScratchOffsetAlignment and disjoint from the others;
            // the bottom-level structures a top-level build places were built by an earlier
            // command (checked); the queue supports compute and no rendering scope is open;
            // the automatic barriers (or manual mode's) order the accesses.
            unsafe { fns.cmd_build_acceleration_structures(cb, &infos, &range_refs) }
        })?;
        // Built once the recording is submitted (`RecordedWork::commit_layouts`); until
        // then only this recording's later builds may place them.
        for s in group {
            if !self.built.iter().any(|o| o.same(s)) {
                self.built.push((*s).clone());
            }
        }
        Ok(())
    }
}
