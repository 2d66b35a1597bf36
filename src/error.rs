//! kiln's one error type.
//!
//! Every variant has a stable code (`KILN-Exxx`, see [`Error::code`]), names the object
//! involved and says what to do. Codes never change meaning once released; new variants get
//! new codes.
//!
//! | range | area |
//! | --- | --- |
//! | E001–E049 | SPIR-V input (header, instruction stream, parse) |
//! | E050–E099 | reflection and layout derivation |
//! | E100–E149 | Vulkan instance/device/driver |
//! | E150–E199 | memory, buffers, transfers |
//! | E200–E249 | descriptors, sets, pools, writes, binding |
//! | E250–E299 | pipelines and recording |

use ash::vk;

/// Result alias used throughout kiln.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in kiln.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---------------------------------------------------------------- SPIR-V input
    /// The SPIR-V input has no bytes at all.
    #[error("KILN-E001: SPIR-V module is empty; pass the bytes of a compiled .spv file")]
    SpirvEmpty,
    /// The byte length is not a multiple of 4 (SPIR-V spec §2.2: a module is a stream of words).
    #[error("KILN-E002: SPIR-V byte length {len} is not a multiple of 4; the file is truncated or not SPIR-V")]
    SpirvNotWordAligned { len: usize },
    /// Fewer than the 5 header words (SPIR-V spec §2.3).
    #[error("KILN-E003: SPIR-V module has {words} words, fewer than the 5-word header; the file is truncated")]
    SpirvHeaderTruncated { words: usize },
    /// First word is not 0x07230203 in either byte order.
    #[error("KILN-E004: bad SPIR-V magic number {found:#010x} at byte 0 (expected 0x07230203); this is not a SPIR-V module")]
    SpirvBadMagic { found: u32 },
    /// Version word names no SPIR-V version kiln reads (1.0–1.6).
    #[error("KILN-E005: unsupported SPIR-V version {major}.{minor} (byte offset 4); kiln reads 1.0 to 1.6")]
    SpirvUnsupportedVersion { major: u32, minor: u32 },
    /// Id bound of 0: no id could be valid (SPIR-V spec §2.3, "Bound").
    #[error("KILN-E006: SPIR-V id bound is 0 (byte offset 12); the header is corrupt")]
    SpirvZeroBound,
    /// An instruction's word count is 0 (SPIR-V spec §2.3: the count includes the opcode word).
    #[error("KILN-E007: SPIR-V instruction at byte offset {offset} has word count 0; the module is corrupt")]
    SpirvZeroWordCount { offset: usize },
    /// An instruction's word count runs past the end of the module.
    #[error("KILN-E008: SPIR-V instruction at byte offset {offset} (opcode {opcode}) claims {word_count} words but only {remaining} remain; the module is truncated")]
    SpirvTruncatedInstruction {
        offset: usize,
        opcode: u16,
        word_count: usize,
        remaining: usize,
    },
    /// An id used by an instruction is not below the header's bound.
    #[error("KILN-E009: SPIR-V id {id} is not below the module's id bound {bound}; the module is corrupt")]
    SpirvIdOutOfBound { id: u32, bound: u32 },
    /// rspirv rejected the instruction stream.
    #[error("KILN-E010: SPIR-V parse error: {detail}; validate the module with `spirv-val`")]
    SpirvParse { detail: String },
    /// A structural rule of SPIR-V is broken in a way reflection cannot work around.
    #[error("KILN-E011: malformed SPIR-V: {detail}")]
    SpirvMalformed { detail: String },

    // ---------------------------------------------------------------- reflection / layouts
    /// No entry point of that name (and stage, when given) in the module.
    #[error("KILN-E050: entry point `{name}` not found; the module has: {available}")]
    EntryPointNotFound { name: String, available: String },
    /// Two stages declare one (set, binding) with a different descriptor type or count.
    #[error("KILN-E051: set {set} binding {binding} conflicts: `{first}` declares {first_desc} but `{second}` declares {second_desc}; declare the binding identically in both shaders")]
    BindingConflict {
        set: u32,
        binding: u32,
        first: String,
        first_desc: String,
        second: String,
        second_desc: String,
    },
    /// A module declares something kiln's reflection does not understand.
    #[error("KILN-E052: cannot reflect `{object}`: {detail}")]
    ReflectUnsupported { object: String, detail: String },
    /// Push constant ranges exceed the device limit (VUID-VkPushConstantRange-size-00298).
    #[error("KILN-E053: push constants need {size} bytes but the device allows {limit} (maxPushConstantsSize)")]
    PushConstantsTooLarge { size: u32, limit: u32 },
    /// Workgroup size exceeds the device limits (VUID-RuntimeSpirv-x-06429).
    #[error("KILN-E054: workgroup size {size:?} of `{entry}` exceeds the device limits (maxComputeWorkGroupSize {max_size:?}, maxComputeWorkGroupInvocations {max_invocations})")]
    WorkgroupTooLarge {
        entry: String,
        size: [u32; 3],
        max_size: [u32; 3],
        max_invocations: u32,
    },

    /// A host struct's member differs from the shader block's (offset or size).
    #[error("KILN-E055: block `{block}`: member {member} is at host offset {host_offset} (size {host_size}) but shader offset {shader_offset} (size {shader_size}); add explicit padding or reorder (std140/std430 align vec3/vec4 to 16 bytes)")]
    HostLayoutMismatch {
        block: String,
        member: String,
        host_offset: u32,
        host_size: u32,
        shader_offset: u32,
        shader_size: u32,
    },
    /// A host struct's size or member count differs from the shader block's.
    #[error("KILN-E056: block `{block}`: {detail}")]
    HostLayoutSize { block: String, detail: String },

    /// A device limit would be exceeded (Vulkan spec §33.1 "Limits").
    #[error("KILN-E057: {what}: {count} exceeds the device limit {limit} ({limit_name})")]
    LimitExceeded {
        what: String,
        count: u64,
        limit: u64,
        limit_name: &'static str,
    },

    /// A pipeline layout given by the user does not cover what the entry point uses
    /// (VUID-VkComputePipelineCreateInfo-layout-07988, -07990, -07991, -00703).
    #[error("KILN-E058: the layout given for `{entry}` does not cover the shader: {detail}; use the reflected layout or add what is missing")]
    LayoutNotSuperset { entry: String, detail: String },
    /// Push constant ranges that Vulkan rejects (VUID-VkPushConstantRange-offset-00295,
    /// -size-00296, -size-00297, -stageFlags-requiredbitmask,
    /// VUID-VkPipelineLayoutCreateInfo-pPushConstantRanges-00292).
    #[error("KILN-E059: invalid push constant ranges: {detail}")]
    InvalidPushConstantRanges { detail: String },
    /// Specialization constants that do not fit the module (VUID-VkSpecializationInfo-constantID-04911,
    /// VUID-VkSpecializationMapEntry-constantID-00776).
    #[error("KILN-E060: specialization constant {id} of `{entry}`: {detail}")]
    SpecConstantMismatch {
        entry: String,
        id: u32,
        detail: String,
    },

    // ---------------------------------------------------------------- Vulkan / device
    /// The Vulkan loader (libvulkan.so.1) could not be loaded.
    #[error("KILN-E100: cannot load the Vulkan loader: {detail}; install it (Debian/Ubuntu: `apt-get install libvulkan1`)")]
    LoaderMissing { detail: String },
    /// No physical device (driver) is present.
    #[error("KILN-E101: no Vulkan device found; install a driver (no GPU: `apt-get install mesa-vulkan-drivers` for lavapipe)")]
    NoDevice,
    /// `KILN_DEVICE` matched no device.
    #[error("KILN-E102: KILN_DEVICE={wanted:?} matches no device; available: {available}")]
    DeviceNotMatched { wanted: String, available: String },
    /// No queue family supports compute.
    #[error("KILN-E103: device `{device}` has no queue family with compute support")]
    NoComputeQueue { device: String },
    /// A Vulkan call failed with a result kiln has no specific variant for.
    #[error("KILN-E104: {call} failed: {result:?}")]
    Vulkan {
        call: &'static str,
        result: vk::Result,
    },
    /// VK_ERROR_DEVICE_LOST (Vulkan spec §5.2.3 "Lost Device").
    #[error("KILN-E105: device lost during {call} (last submission: `{label}`); the device must be recreated")]
    DeviceLost { call: &'static str, label: String },
    /// VK_ERROR_OUT_OF_DEVICE_MEMORY / VK_ERROR_OUT_OF_HOST_MEMORY.
    #[error("KILN-E106: out of {kind} memory during {call}; free resources and retry")]
    OutOfMemory {
        call: &'static str,
        kind: &'static str,
    },
    /// A required device extension or feature is missing.
    #[error("KILN-E107: device `{device}` lacks {what}")]
    MissingFeature { device: String, what: String },
    /// The GPU did not finish within the wait timeout.
    #[error("KILN-E108: timed out after {ms} ms waiting for the GPU during {call}")]
    Timeout { call: &'static str, ms: u64 },
    /// Creating a window surface or swapchain failed, or the window cannot be presented to.
    #[error("KILN-E140: window/surface: {detail}")]
    Surface { detail: String },

    /// An object of one device was used with another device (VUID-*-commonparent).
    #[error("KILN-E109: {object} belongs to another kiln device; objects cannot be shared between devices")]
    ForeignObject { object: String },

    // ---------------------------------------------------------------- memory / buffers
    /// gpu-allocator failed.
    #[error("KILN-E150: memory allocation for `{object}` failed: {source}")]
    Allocation {
        object: String,
        #[source]
        source: gpu_allocator::AllocationError,
    },
    /// Host data does not fit the buffer.
    #[error("KILN-E151: buffer `{object}` holds {capacity} bytes; {requested} bytes were requested at offset {offset}")]
    BufferOverflow {
        object: String,
        capacity: u64,
        offset: u64,
        requested: u64,
    },
    /// A buffer of size 0 (VUID-VkBufferCreateInfo-size-00912).
    #[error("KILN-E152: buffer `{object}` would have size 0; Vulkan needs at least 1 byte")]
    ZeroSizedBuffer { object: String },
    /// Readback as `T` where the byte size is not a multiple of `size_of::<T>()`.
    #[error(
        "KILN-E153: buffer `{object}` has {size} bytes, not a multiple of the element size {elem}"
    )]
    BufferElementMismatch {
        object: String,
        size: u64,
        elem: usize,
    },
    /// An image description Vulkan would reject (zero extent, too many mips, unsupported
    /// format/usage; VUID-VkImageCreateInfo-extent-00944, -mipLevels-00947, -usage-00964).
    #[error("KILN-E180: image `{object}`: {detail}")]
    InvalidImage { object: String, detail: String },
    /// Host data for an image level has the wrong size.
    #[error("KILN-E181: image `{object}` mip {level} is {width}x{height} of {format:?} = {expected} bytes, but {found} bytes were given")]
    ImageDataSize {
        object: String,
        level: u32,
        width: u32,
        height: u32,
        format: vk::Format,
        expected: u64,
        found: u64,
    },
    /// An image used in a way its usage flags do not allow (VUID-VkWriteDescriptorSet-descriptorType-00337 ff.).
    #[error("KILN-E182: image `{object}` lacks usage {needed:?} needed for {what}; create it with that usage")]
    ImageUsage {
        object: String,
        needed: vk::ImageUsageFlags,
        what: &'static str,
    },
    /// A sampler description Vulkan would reject (VUID-VkSamplerCreateInfo-*).
    #[error("KILN-E190: sampler: {detail}")]
    InvalidSampler { detail: String },

    /// The allocation would exceed the memory heap it comes from (kiln never over-commits
    /// a heap: VUID-vkAllocateMemory-pAllocateInfo-01713 and the heap budget).
    #[error("KILN-E154: buffer `{object}` needs {requested} bytes but heap {heap} has {available} of {heap_size} bytes left; free resources or use a smaller buffer")]
    HeapExhausted {
        object: String,
        requested: u64,
        available: u64,
        heap_size: u64,
        heap: usize,
    },

    /// A buffer copy Vulkan rejects: zero size or overlapping source and destination
    /// (VUID-VkBufferCopy-size-01988, VUID-vkCmdCopyBuffer-pRegions-00117).
    #[error("KILN-E155: copy of {size} bytes from `{src}` at {src_offset} to `{dst}` at {dst_offset}: {detail}")]
    InvalidCopy {
        src: String,
        dst: String,
        src_offset: u64,
        dst_offset: u64,
        size: u64,
        detail: &'static str,
    },
    /// A byte size that does not fit in 64 bits (`len * size_of::<T>()`).
    #[error("KILN-E156: buffer `{object}`: {len} elements of {elem} bytes overflow a 64-bit size")]
    SizeOverflow {
        object: String,
        len: u64,
        elem: usize,
    },

    // ---------------------------------------------------------------- descriptors
    /// The set layout has no such binding.
    #[error(
        "KILN-E200: set {set} has no binding {binding}; the layout has bindings {available:?}"
    )]
    NoSuchBinding {
        set: u32,
        binding: u32,
        available: Vec<u32>,
    },
    /// No binding of that reflected name.
    #[error("KILN-E201: set {set} has no binding named `{name}`")]
    NoSuchBindingName { set: u32, name: String },
    /// Writing a descriptor of the wrong type (VUID-VkWriteDescriptorSet-descriptorType-00330 ff.).
    #[error("KILN-E202: set {set} binding {binding} is {expected:?} but a {found:?} was written; {hint}")]
    DescriptorTypeMismatch {
        set: u32,
        binding: u32,
        expected: vk::DescriptorType,
        found: vk::DescriptorType,
        hint: &'static str,
    },
    /// Array element beyond the binding's descriptor count.
    #[error("KILN-E203: set {set} binding {binding} has {count} descriptors; element {element} is out of range")]
    ArrayElementOutOfRange {
        set: u32,
        binding: u32,
        count: u32,
        element: u32,
    },
    /// A set bound to a pipeline whose layout differs at that set number.
    #[error("KILN-E204: set {set} is not compatible with the pipeline layout: {diff}")]
    IncompatibleSet { set: u32, diff: String },
    /// The pipeline's layout has no set at that number.
    #[error("KILN-E205: the pipeline layout has {set_count} set(s); set {set} does not exist")]
    NoSuchSet { set: u32, set_count: u32 },
    /// A buffer range exceeds maxUniformBufferRange / maxStorageBufferRange.
    #[error("KILN-E206: set {set} binding {binding}: range of {range} bytes exceeds the device limit {limit} ({limit_name}); bind a sub-range")]
    BufferRangeTooLarge {
        set: u32,
        binding: u32,
        range: u64,
        limit: u64,
        limit_name: &'static str,
    },
    /// A binding that the pipeline reads was never written (VUID-vkCmdDispatch-None-08114).
    #[error("KILN-E207: set {set} binding {binding} was never written; write it before dispatch")]
    BindingNotWritten { set: u32, binding: u32 },
    /// Offset not aligned to min{Uniform,Storage}BufferOffsetAlignment.
    #[error("KILN-E208: set {set} binding {binding}: offset {offset} is not a multiple of {alignment} ({limit_name})")]
    MisalignedOffset {
        set: u32,
        binding: u32,
        offset: u64,
        alignment: u64,
        limit_name: &'static str,
    },

    /// A set layout description Vulkan rejects (VUID-VkDescriptorSetLayoutCreateInfo-binding-00279,
    /// VUID-VkDescriptorSetLayoutBindingFlagsCreateInfo-*, -flags-03000).
    #[error("KILN-E209: invalid set layout: {detail}")]
    InvalidSetLayout { detail: String },

    // ---------------------------------------------------------------- pipelines / recording
    /// Push-constant bytes outside every declared range (VUID-vkCmdPushConstants-offset-01795).
    #[error("KILN-E250: push constants [{offset}, {end}) are outside the pipeline's push constant ranges {ranges}")]
    PushConstantsOutOfRange {
        offset: u32,
        end: u32,
        ranges: String,
    },
    /// The stage of a module does not fit the pipeline kind.
    #[error("KILN-E251: entry point `{entry}` is a {stage:?} shader; {what}")]
    WrongStage {
        entry: String,
        stage: vk::ShaderStageFlags,
        what: &'static str,
    },
    /// Recording used a set or dispatch without a bound pipeline.
    #[error("KILN-E252: {what} before a pipeline was bound; call bind_pipeline first")]
    NoPipelineBound { what: &'static str },
    /// Dispatch group count above maxComputeWorkGroupCount (VUID-vkCmdDispatch-groupCountX-00386).
    #[error("KILN-E253: dispatch of {groups:?} groups exceeds maxComputeWorkGroupCount {limit:?}")]
    DispatchTooLarge { groups: [u32; 3], limit: [u32; 3] },
    /// A vertex input location whose buffer-layout format disagrees with the shader
    /// (VUID-VkGraphicsPipelineCreateInfo-Input-08733).
    #[error("KILN-E280: vertex input `{name}` at location {location} is {shader:?} in `{entry}` but the vertex buffer layout gives {given:?}; {hint}")]
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
    #[error("KILN-E281: vertex input `{name}` at location {location} ({shader:?}) of `{entry}` has no attribute in the vertex buffer layouts; add one with that location")]
    VertexInputMissing {
        entry: String,
        name: String,
        location: u32,
        shader: vk::Format,
    },
    /// A graphics pipeline description that cannot work (duplicate location, output
    /// without a colour attachment, bad attachment format...).
    #[error("KILN-E282: graphics pipeline `{pipeline}`: {detail}")]
    InvalidGraphicsPipeline { pipeline: String, detail: String },
    /// A command that needs an active rendering scope (or none) was recorded at the wrong time.
    #[error("KILN-E283: {what}")]
    RenderingState { what: &'static str },
    /// A reusable recording ([`crate::Device::record`]) leaves an image in another layout
    /// than it found it in, so a second submission would start from the wrong layout
    /// (VUID-VkImageMemoryBarrier2-oldLayout-01197).
    #[error("KILN-E284: the recording leaves image `{image}` in {end:?} but found it in {start:?}; a reusable recording must transition it back to {start:?} at the end (or use execute for one-off work)")]
    RecordingChangesLayout {
        image: String,
        start: vk::ImageLayout,
        end: vk::ImageLayout,
    },
    /// A reusable recording was submitted while an image it transitions is in another
    /// layout than the one it was recorded for (VUID-VkImageMemoryBarrier2-oldLayout-01197).
    #[error("KILN-E285: image `{image}` is in {now:?} but the recording expects {recorded:?}; transition it back to {recorded:?} before submitting the recording")]
    RecordingLayoutMoved {
        image: String,
        recorded: vk::ImageLayout,
        now: vk::ImageLayout,
    },
    /// A set the pipeline layout declares was not bound before a dispatch (or was
    /// disturbed by binding a pipeline with an incompatible layout, Vulkan spec §14.2.2).
    #[error("KILN-E254: set {set} of the bound pipeline's layout is not bound; call bind_set({set}, ..) after bind_pipeline")]
    SetNotBound { set: u32 },
    /// The pipeline's push constants were never pushed since a layout with other ranges.
    #[error("KILN-E255: the bound pipeline has push constant ranges {ranges} but nothing was pushed; call push_constants before dispatch")]
    PushConstantsNotSet { ranges: String },
}

impl Error {
    /// The stable code, e.g. `"KILN-E004"`.
    pub fn code(&self) -> &'static str {
        use Error::*;
        match self {
            SpirvEmpty => "KILN-E001",
            SpirvNotWordAligned { .. } => "KILN-E002",
            SpirvHeaderTruncated { .. } => "KILN-E003",
            SpirvBadMagic { .. } => "KILN-E004",
            SpirvUnsupportedVersion { .. } => "KILN-E005",
            SpirvZeroBound => "KILN-E006",
            SpirvZeroWordCount { .. } => "KILN-E007",
            SpirvTruncatedInstruction { .. } => "KILN-E008",
            SpirvIdOutOfBound { .. } => "KILN-E009",
            SpirvParse { .. } => "KILN-E010",
            SpirvMalformed { .. } => "KILN-E011",
            EntryPointNotFound { .. } => "KILN-E050",
            BindingConflict { .. } => "KILN-E051",
            ReflectUnsupported { .. } => "KILN-E052",
            PushConstantsTooLarge { .. } => "KILN-E053",
            WorkgroupTooLarge { .. } => "KILN-E054",
            HostLayoutMismatch { .. } => "KILN-E055",
            HostLayoutSize { .. } => "KILN-E056",
            LimitExceeded { .. } => "KILN-E057",
            LayoutNotSuperset { .. } => "KILN-E058",
            InvalidPushConstantRanges { .. } => "KILN-E059",
            SpecConstantMismatch { .. } => "KILN-E060",
            LoaderMissing { .. } => "KILN-E100",
            NoDevice => "KILN-E101",
            DeviceNotMatched { .. } => "KILN-E102",
            NoComputeQueue { .. } => "KILN-E103",
            Vulkan { .. } => "KILN-E104",
            DeviceLost { .. } => "KILN-E105",
            OutOfMemory { .. } => "KILN-E106",
            MissingFeature { .. } => "KILN-E107",
            Timeout { .. } => "KILN-E108",
            Surface { .. } => "KILN-E140",
            ForeignObject { .. } => "KILN-E109",
            Allocation { .. } => "KILN-E150",
            BufferOverflow { .. } => "KILN-E151",
            ZeroSizedBuffer { .. } => "KILN-E152",
            BufferElementMismatch { .. } => "KILN-E153",
            HeapExhausted { .. } => "KILN-E154",
            InvalidImage { .. } => "KILN-E180",
            ImageDataSize { .. } => "KILN-E181",
            ImageUsage { .. } => "KILN-E182",
            InvalidSampler { .. } => "KILN-E190",
            InvalidCopy { .. } => "KILN-E155",
            SizeOverflow { .. } => "KILN-E156",
            NoSuchBinding { .. } => "KILN-E200",
            NoSuchBindingName { .. } => "KILN-E201",
            DescriptorTypeMismatch { .. } => "KILN-E202",
            ArrayElementOutOfRange { .. } => "KILN-E203",
            IncompatibleSet { .. } => "KILN-E204",
            NoSuchSet { .. } => "KILN-E205",
            BufferRangeTooLarge { .. } => "KILN-E206",
            BindingNotWritten { .. } => "KILN-E207",
            MisalignedOffset { .. } => "KILN-E208",
            InvalidSetLayout { .. } => "KILN-E209",
            PushConstantsOutOfRange { .. } => "KILN-E250",
            WrongStage { .. } => "KILN-E251",
            NoPipelineBound { .. } => "KILN-E252",
            DispatchTooLarge { .. } => "KILN-E253",
            VertexFormatMismatch { .. } => "KILN-E280",
            VertexInputMissing { .. } => "KILN-E281",
            InvalidGraphicsPipeline { .. } => "KILN-E282",
            RenderingState { .. } => "KILN-E283",
            RecordingChangesLayout { .. } => "KILN-E284",
            RecordingLayoutMoved { .. } => "KILN-E285",
            SetNotBound { .. } => "KILN-E254",
            PushConstantsNotSet { .. } => "KILN-E255",
        }
    }
}

/// Maps a failed `VkResult` of `call` to an [`Error`] (per call, like wgpu-hal's `map_err`).
pub(crate) fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> Error {
    move |result| match result {
        vk::Result::ERROR_DEVICE_LOST => Error::DeviceLost {
            call,
            label: String::new(),
        },
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => Error::OutOfMemory {
            call,
            kind: "device",
        },
        vk::Result::ERROR_OUT_OF_HOST_MEMORY => Error::OutOfMemory { call, kind: "host" },
        vk::Result::TIMEOUT => Error::Timeout { call, ms: 0 },
        result => Error::Vulkan { call, result },
    }
}
