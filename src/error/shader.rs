//! The variants of [`Error`](super::Error) with codes E001–E099: SPIR-V input (files, header, instruction stream, parse) and reflection / layout derivation.
//!
//! Written as a link of the chain `errors!` is built from (see the module docs of
//! [`error`](super)): the macro emits the area type [`ShaderError`](super::ShaderError) with this
//! range's variants, appends them to the ones it is given and hands them on to the next
//! macro named.

macro_rules! shader_errors {
    ($($chain:tt)*) => {
        link! { ShaderError "E001–E099: SPIR-V input and reflection" [] ($($chain)*)
            // ------------------------------------------------------------ E001–E049 SPIR-V input
            /// The SPIR-V input has no bytes at all.
            #[code("KILN-E001")]
            #[error("SPIR-V module is empty; pass the bytes of a compiled .spv file")]
            SpirvEmpty,

            /// The byte length is not a multiple of 4 (SPIR-V spec §2.2: a module is a stream of words).
            #[code("KILN-E002")]
            #[error("SPIR-V byte length {len} is not a multiple of 4; the file is truncated or not SPIR-V")]
            SpirvNotWordAligned { len: usize },

            /// Fewer than the 5 header words (SPIR-V spec §2.3).
            #[code("KILN-E003")]
            #[error("SPIR-V module has {words} words, fewer than the 5-word header; the file is truncated")]
            SpirvHeaderTruncated { words: usize },

            /// First word is not 0x07230203 in either byte order.
            #[code("KILN-E004")]
            #[error("bad SPIR-V magic number {found:#010x} at byte 0 (expected 0x07230203); this is not a SPIR-V module")]
            SpirvBadMagic { found: u32 },

            /// Version word names no SPIR-V version kiln reads (1.0–1.6).
            #[code("KILN-E005")]
            #[error("unsupported SPIR-V version {major}.{minor} (byte offset 4); kiln reads 1.0 to 1.6")]
            SpirvUnsupportedVersion { major: u32, minor: u32 },

            /// Id bound of 0: no id could be valid (SPIR-V spec §2.3, "Bound").
            #[code("KILN-E006")]
            #[error("SPIR-V id bound is 0 (byte offset 12); the header is corrupt")]
            SpirvZeroBound,

            /// An instruction's word count is 0 (SPIR-V spec §2.3: the count includes the opcode word).
            #[code("KILN-E007")]
            #[error("SPIR-V instruction at byte offset {offset} has word count 0; the module is corrupt")]
            SpirvZeroWordCount { offset: usize },

            /// An instruction's word count runs past the end of the module.
            #[code("KILN-E008")]
            #[error("SPIR-V instruction at byte offset {offset} (opcode {opcode}) claims {word_count} words but only {remaining} remain; the module is truncated")]
            SpirvTruncatedInstruction {
                offset: usize,
                opcode: u16,
                word_count: usize,
                remaining: usize,
            },

            /// An id used by an instruction is not below the header's bound.
            #[code("KILN-E009")]
            #[error("SPIR-V id {id} is not below the module's id bound {bound}; the module is corrupt")]
            SpirvIdOutOfBound { id: u32, bound: u32 },

            /// rspirv rejected the instruction stream.
            #[code("KILN-E010")]
            #[error("SPIR-V parse error: {detail}; validate the module with `spirv-val`")]
            SpirvParse { detail: String },

            /// A structural rule of SPIR-V is broken in a way reflection cannot work around.
            #[code("KILN-E011")]
            #[error("malformed SPIR-V: {detail}")]
            SpirvMalformed { detail: String },

            /// A SPIR-V file could not be read ([`crate::ShaderModule::from_file`]): it does not
            /// exist, is not readable or is a directory.
            #[code("KILN-E012")]
            #[error("cannot read SPIR-V file `{}`: {source}; {}", path.display(), read_hint(source))]
            ShaderFileRead {
                path: PathBuf,
                #[source]
                source: std::io::Error,
            },

            /// The first version of a hot-reloaded shader (`HotComputePipeline`,
            /// `HotGraphicsPipeline`, feature `hot-reload`) cannot be read or compiled.
            #[code("KILN-E013")]
            #[error("hot-reload source `{}` does not compile: {detail}; fix the shader (later failures are reported by poll and change nothing)", source_file.display())]
            HotReloadCompile { source_file: PathBuf, detail: String },

            // ------------------------------------------------------------ E050–E099 reflection / layouts
            /// No entry point of that name (and stage, when given) in the module.
            #[code("KILN-E050")]
            #[error("entry point `{name}` not found; the module has: {available}")]
            EntryPointNotFound { name: String, available: String },

            /// Two stages declare one (set, binding) with a different descriptor type or count.
            #[code("KILN-E051")]
            #[error("set {set} binding {binding} conflicts: `{first}` declares {first_desc} but `{second}` declares {second_desc}; declare the binding identically in both shaders")]
            BindingConflict {
                set: u32,
                binding: u32,
                first: String,
                first_desc: String,
                second: String,
                second_desc: String,
            },

            /// A module declares something kiln's reflection does not understand.
            #[code("KILN-E052")]
            #[error("cannot reflect `{object}`: {detail}")]
            ReflectUnsupported { object: String, detail: String },

            /// Push constant ranges exceed the device limit (VUID-VkPushConstantRange-size-00298).
            #[code("KILN-E053")]
            #[error("push constants need {size} bytes but the device allows {limit} (maxPushConstantsSize)")]
            PushConstantsTooLarge { size: u32, limit: u32 },

            /// Workgroup size exceeds the device limits (VUID-RuntimeSpirv-x-06429), or is 0 in a
            /// dimension; as specialized (`from`: the specialization constants that give it, with
            /// their values, or empty).
            #[code("KILN-E054")]
            #[error("workgroup size {size:?} of `{entry}`{from} exceeds the device limits (maxComputeWorkGroupSize {max_size:?}, maxComputeWorkGroupInvocations {max_invocations}); use a smaller local_size (or give its specialization constants smaller values)")]
            WorkgroupTooLarge {
                entry: String,
                size: [u32; 3],
                max_size: [u32; 3],
                max_invocations: u32,
                from: String,
            },

            /// A host struct's member differs from the shader block's (offset or size).
            #[code("KILN-E055")]
            #[error("block `{block}`: member {member} is at host offset {host_offset} (size {host_size}) but shader offset {shader_offset} (size {shader_size}); add explicit padding or reorder (std140/std430 align vec3/vec4 to 16 bytes)")]
            HostLayoutMismatch {
                block: String,
                member: String,
                host_offset: u32,
                host_size: u32,
                shader_offset: u32,
                shader_size: u32,
            },

            /// A host struct's size or member count differs from the shader block's.
            #[code("KILN-E056")]
            #[error("block `{block}`: {detail}")]
            HostLayoutSize { block: String, detail: String },

            /// A device limit would be exceeded (Vulkan spec §33.1 "Limits").
            #[code("KILN-E057")]
            #[error("{what}: {count} exceeds the device limit {limit} ({limit_name})")]
            LimitExceeded {
                what: String,
                count: u64,
                limit: u64,
                limit_name: &'static str,
            },

            /// A pipeline layout given by the user does not cover what the entry point uses
            /// (VUID-VkComputePipelineCreateInfo-layout-07988, -07990, -07991, -00703).
            #[code("KILN-E058")]
            #[error("the layout given for `{entry}` does not cover the shader: {detail}; use the reflected layout or add what is missing")]
            LayoutNotSuperset { entry: String, detail: String },

            /// Push constant ranges that Vulkan rejects (VUID-VkPushConstantRange-offset-00295,
            /// -size-00296, -size-00297, -stageFlags-requiredbitmask,
            /// VUID-VkPipelineLayoutCreateInfo-pPushConstantRanges-00292).
            #[code("KILN-E059")]
            #[error("invalid push constant ranges: {detail}")]
            InvalidPushConstantRanges { detail: String },

            /// Specialization constants that do not fit the module
            /// (VUID-VkSpecializationInfo-constantID-04911, VUID-VkSpecializationMapEntry-constantID-00776).
            #[code("KILN-E060")]
            #[error("specialization constant {id} of `{entry}`: {detail}")]
            SpecConstantMismatch {
                entry: String,
                id: u32,
                detail: String,
            },

            /// An entry point statically uses a resource whose type has no Vulkan descriptor type
            /// kiln can create: `OpTypeTensorARM` (VK_ARM_tensors; ash 0.38, kiln's Vulkan bindings,
            /// predates VK_DESCRIPTOR_TYPE_TENSOR_ARM). The module still reflects, and entry points
            /// that do not use the resource still build.
            #[code("KILN-E061")]
            #[error("entry point `{entry}` uses `{object}`, a resource of type {ty}, which kiln does not support ({detail}); build pipelines only from entry points that do not use it")]
            DescriptorTypeUnsupported {
                entry: String,
                object: String,
                ty: String,
                detail: String,
            },

            /// A host struct's member has another name than the shader block's member at that
            /// position (case and `_` ignored): members listed in another order than the shader's.
            #[code("KILN-E062")]
            #[error("block `{block}`: member {index} is `{host}` on the host but `{shader}` in the shader; declare the host fields in the shader's order (and list them so in host_layout!)")]
            HostMemberName {
                block: String,
                index: usize,
                host: String,
                shader: String,
            },

            /// A host struct's member has another scalar type or count than the shader block's.
            #[code("KILN-E063")]
            #[error("block `{block}`: member `{member}` is {host} on the host but {shader} in the shader; give the host field the shader's type (float: f32, int: i32, uint: u32, vecN: [f32; N])")]
            HostMemberType {
                block: String,
                member: String,
                host: String,
                shader: String,
            },

            /// With the pipeline's specialization (the values given, defaults for the rest) an
            /// array length of the module is below 1: SPIR-V needs every OpTypeArray length
            /// at least 1 after specialization (VUID-VkPipelineShaderStageCreateInfo-pSpecializationInfo-06719).
            #[code("KILN-E064")]
            #[error("`{entry}`: with its specialization, array type %{array} has length {length} (computed from {constants}); every array length must be at least 1 after specialization (VUID-VkPipelineShaderStageCreateInfo-pSpecializationInfo-06719): give those specialization constants values that make it at least 1")]
            SpecializedArrayLength {
                entry: String,
                array: u32,
                length: String,
                constants: String,
            },

            /// With the pipeline's specialization, the Workgroup-storage (shared) variables the
            /// compute entry point uses need more bytes than the device has
            /// (maxComputeSharedMemorySize, VUID-RuntimeSpirv-Workgroup-06530).
            #[code("KILN-E065")]
            #[error("`{entry}` needs {bytes} bytes of shared memory (Workgroup storage: {variables}) but device `{device}` has {limit} (maxComputeSharedMemorySize); make the shared arrays smaller (or give the specialization constants that size them smaller values)")]
            SharedMemoryTooLarge {
                entry: String,
                device: String,
                bytes: u64,
                limit: u32,
                variables: String,
            },
        }
    };
}
