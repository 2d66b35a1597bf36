//! The rasterization and depth/stencil state kiln graphics pipelines keep dynamic
//! (`pipeline/dynamic.rs`): binding a graphics pipeline records its values where they
//! differ from what the command buffer holds (all of them after raw commands, which may have
//! set any), and `set_cull_mode` & co. override them until the next graphics pipeline bind.

use std::sync::atomic::Ordering;

use ash::vk;

use super::Recorder;
use crate::error::{RecordingError, Result};
use crate::pipeline::{topology_class, DynamicState, StencilOps};

impl Recorder<'_, '_> {
    /// Records the parts of `want` (a graphics pipeline's values, being bound) that differ
    /// from the command buffer's.
    pub(super) fn bind_dynamic_state(&mut self, want: &DynamicState) {
        let known = if self.opaque.load(Ordering::Relaxed) {
            None
        } else {
            self.state.dynamic
        };
        let raw = &self.shared.raw;
        let cb = self.cb;
        let differs = |f: &dyn Fn(&DynamicState) -> bool| known.as_ref().is_none_or(|k| !f(k));
        // SAFETY (each call): `cb` is recording on a graphics queue (the bind checked it);
        // every kiln graphics pipeline declares these states dynamic (`DynamicState::declared`;
        // topology only for pipelines that have one).
        unsafe {
            if differs(&|k| k.cull_mode == want.cull_mode) {
                raw.cmd_set_cull_mode(cb, want.cull_mode);
            }
            if differs(&|k| k.front_face == want.front_face) {
                raw.cmd_set_front_face(cb, want.front_face);
            }
            if let Some(t) = want.topology {
                if differs(&|k| k.topology == Some(t)) {
                    raw.cmd_set_primitive_topology(cb, t);
                }
            }
            if differs(&|k| k.depth_test == want.depth_test) {
                raw.cmd_set_depth_test_enable(cb, want.depth_test);
            }
            if differs(&|k| k.depth_write == want.depth_write) {
                raw.cmd_set_depth_write_enable(cb, want.depth_write);
            }
            if differs(&|k| k.depth_compare == want.depth_compare) {
                raw.cmd_set_depth_compare_op(cb, want.depth_compare);
            }
            if differs(&|k| k.stencil_test == want.stencil_test) {
                raw.cmd_set_stencil_test_enable(cb, want.stencil_test);
            }
            for (face, ops, has) in [
                (
                    vk::StencilFaceFlags::FRONT,
                    want.stencil_front,
                    known.map(|k| k.stencil_front),
                ),
                (
                    vk::StencilFaceFlags::BACK,
                    want.stencil_back,
                    known.map(|k| k.stencil_back),
                ),
            ] {
                if has != Some(ops) {
                    raw.cmd_set_stencil_op(
                        cb,
                        face,
                        ops.fail,
                        ops.pass,
                        ops.depth_fail,
                        ops.compare,
                    );
                }
            }
        }
        let topology = want
            .topology
            .or(self.state.dynamic.and_then(|d| d.topology));
        self.state.dynamic = Some(DynamicState { topology, ..*want });
        self.state.pipeline_topology = want.topology;
    }

    /// The command buffer's dynamic state, for a `set_*` of `what`: a graphics pipeline must
    /// be bound (its values are what the setter overrides). Errors: `KILN-E120` a queue
    /// without graphics, `KILN-E252` no graphics pipeline bound.
    fn dynamic_for(&mut self, what: &'static str) -> Result<&mut DynamicState, RecordingError> {
        if !self.caps.queue_flags.contains(vk::QueueFlags::GRAPHICS) {
            return Err(self.unsupported(what, vk::QueueFlags::GRAPHICS));
        }
        if self.state.bound[1].is_none() {
            return Err(RecordingError::NoPipelineBound { what });
        }
        self.state
            .dynamic
            .as_mut()
            .ok_or(RecordingError::NoPipelineBound { what })
    }

    /// `vkCmdSetCullMode`: which faces the draws after it cull, until the next graphics
    /// pipeline bind (which records the pipeline's `cull_mode`).
    ///
    /// Errors: `KILN-E120` a queue without graphics, `KILN-E252` no graphics pipeline bound,
    /// `KILN-E283` a value Vulkan does not define (bits beyond `FRONT_AND_BACK`, a front face
    /// or topology that is no enum value).
    #[track_caller]
    pub fn set_cull_mode(&mut self, cull_mode: vk::CullModeFlags) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        if !vk::CullModeFlags::FRONT_AND_BACK.contains(cull_mode) {
            // VUID-vkCmdSetCullMode-cullMode-parameter.
            return Err(RecordingError::RenderingState {
                what: "set_cull_mode with bits beyond FRONT_AND_BACK; give NONE, FRONT, BACK \
                       or FRONT_AND_BACK",
            });
        }
        self.dynamic_for("set_cull_mode")?.cull_mode = cull_mode;
        self.flush_scopes();
        // SAFETY: `cb` is recording on a graphics queue; the state is dynamic in every kiln
        // graphics pipeline.
        unsafe { self.shared.raw.cmd_set_cull_mode(self.cb, cull_mode) };
        Ok(())
    }

    /// `vkCmdSetFrontFace`: which winding is front-facing, until the next graphics pipeline
    /// bind. Errors: as [`set_cull_mode`](Self::set_cull_mode).
    #[track_caller]
    pub fn set_front_face(&mut self, front_face: vk::FrontFace) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        if ![vk::FrontFace::COUNTER_CLOCKWISE, vk::FrontFace::CLOCKWISE].contains(&front_face) {
            // VUID-vkCmdSetFrontFace-frontFace-parameter.
            return Err(RecordingError::RenderingState {
                what: "set_front_face with a value that is no VkFrontFace; give \
                       COUNTER_CLOCKWISE or CLOCKWISE",
            });
        }
        self.dynamic_for("set_front_face")?.front_face = front_face;
        self.flush_scopes();
        // SAFETY: as in `set_cull_mode`.
        unsafe { self.shared.raw.cmd_set_front_face(self.cb, front_face) };
        Ok(())
    }

    /// `vkCmdSetPrimitiveTopology`: how the draws after it assemble vertices, until the next
    /// graphics pipeline bind; of the bound pipeline's topology class (point, line,
    /// triangle, patch; Vulkan spec §21.1.1).
    ///
    /// Errors: as [`set_cull_mode`](Self::set_cull_mode); `KILN-E283` a mesh-shading
    /// pipeline (it has no topology) or another topology class than the pipeline's.
    #[track_caller]
    pub fn set_primitive_topology(
        &mut self,
        topology: vk::PrimitiveTopology,
    ) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        let what = "set_primitive_topology";
        if !(0..=10).contains(&topology.as_raw()) {
            // VUID-vkCmdSetPrimitiveTopology-primitiveTopology-parameter.
            return Err(RecordingError::RenderingState {
                what: "set_primitive_topology with a value that is no VkPrimitiveTopology; \
                       give one of POINT_LIST … PATCH_LIST",
            });
        }
        self.dynamic_for(what)?;
        let Some(pipeline) = self.state.pipeline_topology else {
            return Err(RecordingError::RenderingState {
                what: "set_primitive_topology with a mesh-shading pipeline, which has no \
                       primitive topology; its mesh shader says what it outputs",
            });
        };
        if topology_class(pipeline) != topology_class(topology) {
            // VUID-vkCmdDraw-dynamicPrimitiveTopologyUnrestricted-07500.
            return Err(RecordingError::RenderingState {
                what: "set_primitive_topology of another topology class (point, line, \
                       triangle, patch) than the bound pipeline's; build the pipeline with a \
                       topology of that class",
            });
        }
        if let Some(d) = self.state.dynamic.as_mut() {
            d.topology = Some(topology);
        }
        self.flush_scopes();
        // SAFETY: as in `set_cull_mode`; the pipeline has a topology of the same class.
        unsafe {
            self.shared
                .raw
                .cmd_set_primitive_topology(self.cb, topology)
        };
        Ok(())
    }

    /// The depth test (`vkCmdSetDepthTestEnable`, `…WriteEnable`, `…CompareOp`) of the draws
    /// after it, until the next graphics pipeline bind. Without a depth attachment the test
    /// does nothing. Errors: as [`set_cull_mode`](Self::set_cull_mode).
    #[track_caller]
    pub fn set_depth_test(
        &mut self,
        test: bool,
        write: bool,
        compare: vk::CompareOp,
    ) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        let d = self.dynamic_for("set_depth_test")?;
        (d.depth_test, d.depth_write, d.depth_compare) = (test, write, compare);
        self.flush_scopes();
        let (raw, cb) = (&self.shared.raw, self.cb);
        // SAFETY: as in `set_cull_mode`.
        unsafe {
            raw.cmd_set_depth_test_enable(cb, test);
            raw.cmd_set_depth_write_enable(cb, write);
            raw.cmd_set_depth_compare_op(cb, compare);
        }
        Ok(())
    }

    /// The stencil test of the draws after it (`vkCmdSetStencilTestEnable`, and
    /// `vkCmdSetStencilOp` for `faces`), until the next graphics pipeline bind; the compare
    /// and write masks stay the pipeline's, the reference is
    /// [`set_stencil_reference`](Self::set_stencil_reference)'s.
    /// Errors: as [`set_cull_mode`](Self::set_cull_mode).
    #[track_caller]
    pub fn set_stencil_test(
        &mut self,
        test: bool,
        faces: vk::StencilFaceFlags,
        ops: StencilOps,
    ) -> Result<(), RecordingError> {
        self.at(std::panic::Location::caller());
        let d = self.dynamic_for("set_stencil_test")?;
        d.stencil_test = test;
        if faces.contains(vk::StencilFaceFlags::FRONT) {
            d.stencil_front = ops;
        }
        if faces.contains(vk::StencilFaceFlags::BACK) {
            d.stencil_back = ops;
        }
        self.flush_scopes();
        let (raw, cb) = (&self.shared.raw, self.cb);
        // SAFETY: as in `set_cull_mode`.
        unsafe {
            raw.cmd_set_stencil_test_enable(cb, test);
            raw.cmd_set_stencil_op(cb, faces, ops.fail, ops.pass, ops.depth_fail, ops.compare);
        }
        Ok(())
    }
}
