//! The variants of [`Error`](super::Error) that recording gives (`Recorder`'s methods): codes
//! E120, E123, E250, E252–E255, E257–E260, E265, E266, E283, E286, E287 and, for new ones,
//! E300–E349.
//!
//! Written as a link of the chain `errors!` is built from (see the module docs of
//! [`error`](super)): the macro emits the area type [`RecordingError`](super::RecordingError) with these
//! variants, appends them to the ones it is given and hands them on to the next macro
//! named. Unlike the range files, this area is a list: its codes were given in the ranges
//! of the areas below before it had a type of its own, and they keep them (codes are never
//! renumbered); a new recording error takes the next code of E300–E349.

macro_rules! recording_errors {
    ($($chain:tt)*) => {
        link! { RecordingError "recording (KILN-E120, E123, E250, E252–E255, E257–E260, E265, E266, E283, E286, E287; new codes E300–E349)" [Device(DeviceError), Memory(MemoryError), Descriptor(DescriptorError), Pipeline(PipelineError)] ($($chain)*)
            /// A command the queue's family cannot run: a pipeline of a bind point the queue lacks
            /// (VUID-vkCmdBindPipeline-pipelineBindPoint-00777, -00778), rendering on a queue
            /// without graphics (VUID-vkCmdBeginRendering-commandBuffer-cmdpool).
            #[code("KILN-E120")]
            #[error("a queue with capabilities {flags:?} cannot run {what}, which needs {needed:?}; record it on a queue that has them (QueueKind::Main, or QueueKind::Compute for compute work)")]
            QueueUnsupported {
                flags: vk::QueueFlags,
                what: &'static str,
                needed: vk::QueueFlags,
            },

            /// `Recorder::end_scope` without an open scope, or a recording that ended with scopes
            /// still open.
            #[code("KILN-E123")]
            #[error("GPU timing scopes do not nest: {what}; pair every begin_scope with one end_scope (or use Recorder::scope)")]
            ScopeMismatch { what: String },

            /// Push-constant bytes outside every declared range (VUID-vkCmdPushConstants-offset-01795).
            #[code("KILN-E250")]
            #[error("push constants [{offset}, {end}) are outside the pipeline's push constant ranges {ranges}")]
            PushConstantsOutOfRange {
                offset: u32,
                end: u32,
                ranges: String,
            },

            /// Recording used a set or dispatch without a bound pipeline.
            #[code("KILN-E252")]
            #[error("{what} before a pipeline was bound; call bind_pipeline first")]
            NoPipelineBound { what: &'static str },

            /// Dispatch group count above maxComputeWorkGroupCount (VUID-vkCmdDispatch-groupCountX-00386).
            #[code("KILN-E253")]
            #[error("dispatch of {groups:?} groups exceeds maxComputeWorkGroupCount {limit:?}; fold a large 1-D count into 2-D (Recorder::dispatch_threads_2d(width, ceil(n / width)) with width a multiple of the workgroup size, and in the shader i = gl_GlobalInvocationID.y * width + gl_GlobalInvocationID.x, checked against n), or loop in the shader over i += gl_NumWorkGroups.x * gl_WorkGroupSize.x")]
            DispatchTooLarge { groups: [u32; 3], limit: [u32; 3] },

            /// A set the pipeline layout declares was not bound before a dispatch (or was
            /// disturbed by binding a pipeline with an incompatible layout, Vulkan spec §14.2.2).
            #[code("KILN-E254")]
            #[error("set {set} of the bound pipeline's layout is not bound; call bind_set({set}, ..) after bind_pipeline")]
            SetNotBound { set: u32 },

            /// The pipeline's push constants were never pushed since a layout with other ranges.
            #[code("KILN-E255")]
            #[error("the bound pipeline has push constant ranges {ranges} but nothing was pushed; call push (or push_constants) before the dispatch or draw")]
            PushConstantsNotSet { ranges: String },

            /// An indirect dispatch or draw (its commands or its count) from a buffer without
            /// INDIRECT_BUFFER usage (VUID-vkCmdDispatchIndirect-buffer-02709,
            /// VUID-vkCmdDrawIndirect-buffer-02709, VUID-vkCmdDrawIndirectCount-countBuffer-02715
            /// and their twins).
            #[code("KILN-E257")]
            #[error("buffer `{object}` is used for an indirect command but lacks usage INDIRECT_BUFFER; create it with vk::BufferUsageFlags::INDIRECT_BUFFER")]
            IndirectUsage { object: String },

            /// An indirect dispatch whose 12-byte `VkDispatchIndirectCommand` at `offset` is not
            /// 4-byte aligned or not inside the buffer (VUID-vkCmdDispatchIndirect-offset-02710,
            /// -offset-00407).
            #[code("KILN-E258")]
            #[error("indirect dispatch at offset {offset} of buffer `{object}` ({size} bytes): the 12-byte command must be 4-byte aligned and end inside the buffer; pass an offset that is a multiple of 4 and at most size - 12")]
            IndirectOutOfBounds { object: String, offset: u64, size: u64 },

            /// An indirect draw whose arguments Vulkan rejects: an offset not a multiple of 4,
            /// a stride below the command's size or not a multiple of 4, commands that do not
            /// end inside the buffer, a draw count above `maxDrawIndirectCount` or above 1
            /// without `multiDrawIndirect` (VUID-vkCmdDrawIndirect-offset-02710,
            /// -drawCount-00476, -drawCount-00488, -drawCount-02718, -drawCount-02719,
            /// VUID-vkCmdDrawIndirectCount-countBufferOffset-02716, -countBufferOffset-04129,
            /// -stride-03110, -maxDrawCount-03142 and their indexed twins).
            #[code("KILN-E259")]
            #[error("{what} from buffer `{object}`: {detail}")]
            IndirectDraw { what: &'static str, object: String, detail: String },

            /// A mesh-task draw of more workgroups than the device allows: per dimension
            /// `maxTaskWorkGroupCount` / `maxMeshWorkGroupCount` (with / without a task stage),
            /// in all `maxTaskWorkGroupTotalCount` / `maxMeshWorkGroupTotalCount`
            /// (VUID-vkCmdDrawMeshTasksEXT-TaskEXT-07322 … -07327).
            #[code("KILN-E260")]
            #[error("draw_mesh_tasks of {groups:?} workgroups exceeds {limit_name} {limit:?} (at most {total} in all); split the draw, or loop in the {stage} shader")]
            MeshTasksTooLarge {
                groups: [u32; 3],
                limit: [u32; 3],
                total: u32,
                limit_name: &'static str,
                stage: &'static str,
            },

            /// Push constants pushed for part of the bound pipeline's ranges only: the shader
            /// would read bytes nobody set (VUID-vkCmdDispatch-maintenance4-08602 and the same
            /// VUIDs of vkCmdDraw*).
            #[code("KILN-E265")]
            #[error("push constant bytes {missing} of the bound pipeline's ranges {ranges} were never pushed; push the whole block (e.g. r.push(0, &params) with a struct of the block's size)")]
            PushConstantsPartial { missing: String, ranges: String },

            /// A typed push-constant block ([`crate::Recorder::push_block`]) that is not the bound
            /// pipeline's push-constant range: generated from another shader, or from an older
            /// version of this one.
            #[code("KILN-E266")]
            #[error("push-constant block `{block}` covers bytes [{offset}, {end}) but the bound pipeline's ranges are {ranges}; push the block generated for this pipeline's shader (rebuild if the shader changed)")]
            PushBlockMismatch {
                block: String,
                offset: u32,
                end: u32,
                ranges: String,
            },

            /// A command that needs an active rendering scope (or none) was recorded at the wrong time.
            #[code("KILN-E283")]
            #[error("{what}")]
            RenderingState { what: &'static str },

            /// An image bound through a descriptor set is not in the layout its descriptor needs
            /// (storage image: GENERAL, sampled image: SHADER_READ_ONLY_OPTIMAL;
            /// VUID-vkCmdDraw-imageLayout-00344, VUID-vkCmdDispatch-imageLayout-00344) and kiln
            /// cannot move it there: the command is inside a rendering scope (no barrier allowed
            /// there), or one command binds the image with two descriptor types that need two
            /// layouts.
            #[code("KILN-E286")]
            #[error("image `{image}` (set {set}, binding {binding}) is in {found:?} but {what} needs it in {needed:?}; {hint}")]
            DescriptorImageLayout {
                image: String,
                set: u32,
                binding: u32,
                found: vk::ImageLayout,
                needed: vk::ImageLayout,
                what: &'static str,
                hint: &'static str,
            },

            /// A draw with a graphics pipeline built for other attachments than the rendering
            /// scope's: colour formats, depth format or sample count differ
            /// (VUID-vkCmdDraw-colorAttachmentCount-06180, -pDepthAttachment-06181,
            /// -multisampledRenderToSingleSampled-07285 and the same VUIDs of every draw).
            #[code("KILN-E287")]
            #[error("{what} with pipeline `{pipeline}`, built for {built}, in a rendering scope of {scope}; build the pipeline for the scope's attachments (GraphicsPipelineDesc::targets) or draw it in a scope that has its attachments")]
            RenderingFormats {
                what: &'static str,
                pipeline: String,
                built: String,
                scope: String,
            },
        }
    };
}
