//! The variants of [`Error`](super::Error) with codes E250–E299: pipeline creation (E280–E299:
//! graphics pipelines). The range's recording codes (E250, E252–E255, E257–E260, E265, E266,
//! E283, E286, E287) are [`RecordingError`](super::RecordingError)'s (`recording.rs`), E284
//! and E285 [`SubmissionError`](super::SubmissionError)'s (`submission.rs`).
//!
//! Written as a link of the chain `errors!` is built from (see the module docs of
//! [`error`](super)): the macro emits the area type [`PipelineError`](super::PipelineError) with this
//! range's variants, appends them to the ones it is given and hands them on to the next
//! macro named.

macro_rules! pipeline_errors {
    ($($chain:tt)*) => {
        link! { PipelineError "E250–E299: pipeline creation" [Device(DeviceError), Memory(MemoryError), Shader(ShaderError), Descriptor(DescriptorError)] ($($chain)*)
            // ------------------------------------------------------------ E250–E299 pipelines
            /// The stage of a module does not fit the pipeline kind.
            #[code("KILN-E251")]
            #[error("entry point `{entry}` is a {stage:?} shader; {what}")]
            WrongStage {
                entry: String,
                stage: vk::ShaderStageFlags,
                what: &'static str,
            },

            /// A required subgroup size or full subgroups the device cannot give the pipeline
            /// (VUID-VkPipelineShaderStageRequiredSubgroupSizeCreateInfo-requiredSubgroupSize-02760,
            /// -02761, VUID-VkPipelineShaderStageCreateInfo-pNext-02755, -02756, -02757, -02758).
            #[code("KILN-E256")]
            #[error("compute pipeline `{pipeline}`: {detail}")]
            SubgroupSize { pipeline: String, detail: String },

            /// Pipeline executable statistics were asked for (or a pipeline was to capture
            /// them) on a device without VK_KHR_pipeline_executable_properties'
            /// `pipelineExecutableInfo` feature (Vulkan spec "Pipeline Executable
            /// Properties"; VUID-vkGetPipelineExecutablePropertiesKHR-pipelineExecutableInfo-03270,
            /// VUID-vkGetPipelineExecutableStatisticsKHR-pipelineExecutableInfo-03272).
            #[code("KILN-E267")]
            #[error("pipeline `{pipeline}`: device `{device}` lacks VK_KHR_pipeline_executable_properties (pipelineExecutableInfo, Features::pipeline_executable_info is false), so it reports no pipeline executable statistics; leave capture_statistics false on this device, or run on a driver that has the extension (NVIDIA, Mesa's RADV and ANV; not lavapipe)")]
            ExecutableStatisticsUnsupported { pipeline: String, device: String },

            /// Statistics were asked of a pipeline that was not created with
            /// VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR
            /// (VUID-vkGetPipelineExecutableStatisticsKHR-pipeline-03274).
            #[code("KILN-E268")]
            #[error("pipeline `{pipeline}` was not created to capture statistics (VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR); create it with capture_statistics: true in its ComputePipelineDesc or GraphicsPipelineDesc")]
            ExecutableStatisticsNotCaptured { pipeline: String },

            /// A background pipeline (`Device::compute_pipeline_async`,
            /// `graphics_pipeline_async`) asked for with `NotReady::Error` while the driver
            /// still compiles it, or whose creation failed and was reported before.
            #[code("KILN-E269")]
            #[error("pipeline `{label}` cannot be bound yet: {why}; wait for it (NotReady::Wait, PendingPipeline::wait), or check PendingPipeline::is_ready first")]
            PipelineNotReady { label: String, why: String },

            /// A vertex input location whose buffer-layout format disagrees with the shader
            /// (VUID-VkGraphicsPipelineCreateInfo-Input-08733).
            #[code("KILN-E280")]
            #[error("vertex input `{name}` at location {location} is {shader:?} in `{entry}` but the vertex buffer layout gives {given:?}; {hint}")]
            VertexFormatMismatch {
                entry: String,
                name: String,
                location: u32,
                shader: vk::Format,
                given: vk::Format,
                hint: &'static str,
            },

            /// A vertex shader input with no attribute in the vertex buffer layout
            /// (VUID-VkGraphicsPipelineCreateInfo-Input-07904).
            #[code("KILN-E281")]
            #[error("vertex input `{name}` at location {location} ({shader:?}) of `{entry}` has no attribute in the vertex buffer layouts; add one with that location")]
            VertexInputMissing {
                entry: String,
                name: String,
                location: u32,
                shader: vk::Format,
            },

            /// A graphics pipeline description that cannot work (duplicate location, output
            /// without a colour attachment, bad attachment format...).
            #[code("KILN-E282")]
            #[error("graphics pipeline `{pipeline}`: {detail}")]
            InvalidGraphicsPipeline { pipeline: String, detail: String },
        }
    };
}
