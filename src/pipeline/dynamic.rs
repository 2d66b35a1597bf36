//! The rasterization and depth/stencil state every kiln graphics pipeline keeps dynamic
//! (Vulkan 1.3's extended dynamic state, Vulkan spec §10.11 "Dynamic State"): cull mode,
//! front face, primitive topology (not for mesh shading, VUID-VkGraphicsPipelineCreateInfo-
//! pDynamicStates-07065), depth test, write and compare op, stencil test and stencil ops.
//!
//! A pipeline's description still gives them: they are its [`DynamicState`], which
//! `Recorder::bind_pipeline` records (only what differs from what the command buffer holds),
//! and `Recorder::set_cull_mode` & co. override until the next graphics pipeline bind. So a
//! pipeline draws as its description says unless the recording says otherwise, and
//! engines switch culling, depth or topology without a pipeline per combination.

use ash::vk;

use super::graphics::GraphicsPipelineDesc;

/// One face's stencil operations (`vkCmdSetStencilOp`: fail, pass, depth-fail, compare).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StencilOps {
    /// `failOp`: the stencil test failed.
    pub fail: vk::StencilOp,
    /// `passOp`: both tests passed.
    pub pass: vk::StencilOp,
    /// `depthFailOp`: the stencil test passed, the depth test failed.
    pub depth_fail: vk::StencilOp,
    /// `compareOp`: the stencil comparison.
    pub compare: vk::CompareOp,
}

impl From<vk::StencilOpState> for StencilOps {
    fn from(s: vk::StencilOpState) -> Self {
        StencilOps {
            fail: s.fail_op,
            pass: s.pass_op,
            depth_fail: s.depth_fail_op,
            compare: s.compare_op,
        }
    }
}

/// A graphics pipeline's values of the state kiln keeps dynamic (module docs), recorded when
/// it is bound ([`Pipeline::dynamic_state`](super::Pipeline::dynamic_state)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DynamicState {
    /// `vkCmdSetCullMode`.
    pub cull_mode: vk::CullModeFlags,
    /// `vkCmdSetFrontFace`.
    pub front_face: vk::FrontFace,
    /// `vkCmdSetPrimitiveTopology` (`None`: a mesh-shading pipeline, which has none).
    pub topology: Option<vk::PrimitiveTopology>,
    /// `vkCmdSetDepthTestEnable` (off without a depth attachment).
    pub depth_test: bool,
    /// `vkCmdSetDepthWriteEnable` (off without a depth attachment).
    pub depth_write: bool,
    /// `vkCmdSetDepthCompareOp`.
    pub depth_compare: vk::CompareOp,
    /// `vkCmdSetStencilTestEnable`.
    pub stencil_test: bool,
    /// `vkCmdSetStencilOp` of front-facing primitives.
    pub stencil_front: StencilOps,
    /// `vkCmdSetStencilOp` of back-facing primitives.
    pub stencil_back: StencilOps,
}

impl DynamicState {
    /// The values `desc` gives, with `depth` its checked depth/stencil state.
    pub(crate) fn of(
        desc: &GraphicsPipelineDesc<'_>,
        depth: &vk::PipelineDepthStencilStateCreateInfo<'_>,
    ) -> Self {
        DynamicState {
            cull_mode: desc.cull_mode,
            front_face: desc.front_face,
            topology: desc.mesh.is_none().then_some(desc.topology),
            depth_test: depth.depth_test_enable == vk::TRUE,
            depth_write: depth.depth_write_enable == vk::TRUE,
            depth_compare: depth.depth_compare_op,
            stencil_test: depth.stencil_test_enable == vk::TRUE,
            stencil_front: depth.front.into(),
            stencil_back: depth.back.into(),
        }
    }

    /// The `VkDynamicState`s a pipeline declares: viewport, scissor and stencil reference
    /// (set at each `begin_rendering`) and this module's.
    pub(crate) fn declared(mesh: bool) -> Vec<vk::DynamicState> {
        use vk::DynamicState as D;
        let mut d = vec![
            D::VIEWPORT,
            D::SCISSOR,
            D::STENCIL_REFERENCE,
            D::CULL_MODE,
            D::FRONT_FACE,
            D::DEPTH_TEST_ENABLE,
            D::DEPTH_WRITE_ENABLE,
            D::DEPTH_COMPARE_OP,
            D::STENCIL_TEST_ENABLE,
            D::STENCIL_OP,
        ];
        if !mesh {
            d.push(D::PRIMITIVE_TOPOLOGY);
        }
        d
    }
}

/// The topology class of `t` (Vulkan spec §21.1.1 "Topology Class"): a dynamic topology
/// must be of the pipeline's class unless the device allows any
/// (`dynamicPrimitiveTopologyUnrestricted`, which kiln does not enable;
/// VUID-vkCmdSetPrimitiveTopology-primitiveTopology-03347 … the draw's -07500).
pub(crate) fn topology_class(t: vk::PrimitiveTopology) -> &'static str {
    use vk::PrimitiveTopology as T;
    match t {
        T::POINT_LIST => "point",
        T::LINE_LIST
        | T::LINE_STRIP
        | T::LINE_LIST_WITH_ADJACENCY
        | T::LINE_STRIP_WITH_ADJACENCY => "line",
        T::PATCH_LIST => "patch",
        _ => "triangle",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk::PrimitiveTopology as T;

    #[test]
    fn topology_classes_follow_the_spec() {
        assert_eq!(
            topology_class(T::TRIANGLE_LIST),
            topology_class(T::TRIANGLE_FAN)
        );
        assert_eq!(topology_class(T::TRIANGLE_STRIP_WITH_ADJACENCY), "triangle");
        assert_eq!(topology_class(T::LINE_STRIP), "line");
        assert_ne!(
            topology_class(T::LINE_LIST),
            topology_class(T::TRIANGLE_LIST)
        );
        assert_eq!(topology_class(T::POINT_LIST), "point");
        assert_eq!(topology_class(T::PATCH_LIST), "patch");
    }

    #[test]
    fn mesh_pipelines_declare_no_topology() {
        assert!(DynamicState::declared(false).contains(&vk::DynamicState::PRIMITIVE_TOPOLOGY));
        assert!(!DynamicState::declared(true).contains(&vk::DynamicState::PRIMITIVE_TOPOLOGY));
        assert!(DynamicState::declared(true).contains(&vk::DynamicState::CULL_MODE));
    }
}
