//! # kiln
//!
//! A Vulkan-first compute and rendering runtime. Shaders are compiled to SPIR-V at build
//! time; kiln reflects what each entry point uses and creates the descriptor set layouts,
//! descriptor pools and pipeline layouts from that alone. Set layouts are compared by
//! content and interned, so a descriptor set made for one pipeline binds to every pipeline
//! whose layout at that set number is equal.
//!
//! ```no_run
//! # fn main() -> kiln::Result<()> {
//! use kiln::vk;
//! let device = kiln::Device::new()?;
//! let module = kiln::ShaderModule::from_file("vector_add.comp.spv")?;
//! let pipeline = device.compute_pipeline(&module, "main")?;
//! let a = device.buffer_from_slice("a", vk::BufferUsageFlags::STORAGE_BUFFER, &[1.0f32; 1024])?;
//! let b = device.buffer_from_slice("b", vk::BufferUsageFlags::STORAGE_BUFFER, &[2.0f32; 1024])?;
//! let c = device.storage_buffer::<f32>("c", 1024)?;
//! let mut set = pipeline.descriptor_set(0)?;
//! set.write_buffer(0, &a)?;
//! set.write_buffer(1, &b)?;
//! set.write_buffer(2, &c)?;
//! device.execute(|r| {
//!     r.bind_pipeline(&pipeline)?;
//!     r.bind_set(0, &set)?;
//!     r.dispatch_threads(1024)?; // a RecordingError converts into kiln::Error
//!     Ok(())
//! })?;
//! let out: Vec<f32> = c.read()?;
//! # Ok(()) }
//! ```
//!
//! Errors are [`Error`] values with a stable `KILN-Exxx` code ([`Error::code`]).
//!
//! # The API
//!
//! Every public type is at the crate root, except these namespaces:
//!
//! - [`reflect`]: what reflection of a SPIR-V module returns ([`ShaderModule::reflection`]):
//!   entry points, bindings, block layouts, SPIR-V enums. Many small types that read best
//!   with their prefix (`reflect::EntryPoint`), and that most programs never name.
//! - `kiln::window` (feature `window`): surfaces, swapchains and the presenter; its types only
//!   exist with the feature, and it is the only part of kiln that knows about windows.
//! - [`vk`] is `ash::vk` and [`bytemuck`] is the `bytemuck` kiln was built with, so that
//!   Vulkan enums and `Pod` types in kiln's signatures need no version match.
//!
//! ## Making objects
//!
//! An object is made by the object it comes from, by a method named for the noun it
//! returns: the device makes [`Device::buffer`], [`Device::image`], [`Device::sampler`],
//! [`Device::set_layout`], [`Device::pipeline_layout`], [`Device::compute_pipeline`],
//! [`Device::graphics_pipeline`] and [`Device::descriptor_set`]; a pipeline makes the
//! descriptor sets of its layout ([`ComputePipeline::descriptor_set`]); the device also
//! makes [`Recording`]s ([`Device::record`]) and [`Submission`]s ([`Device::submit`]),
//! hands out its [`Queue`]s ([`Device::queue`]) and makes [`HostBuffer`]s
//! ([`Device::host_buffer`], [`Device::import_host_memory`]).
//!
//! ## Queues
//!
//! Work is submitted to the queue it is called on: `Device::execute`/`submit`/`record` use
//! the main queue, [`Queue`]'s methods their own (async compute, transfer). Submissions on
//! different queues are ordered by timeline waits only where they use the same buffers or
//! images; transfers ([`Queue::upload`], [`Queue::upload_from_host`], ...) return a
//! [`Transfer`] to wait on. On a device without dedicated queues every kind is the main
//! queue ([`QueueInfo::source`]).
//! The full form of a constructor takes a `*Desc` struct (most have a `Default` or a
//! `new`); where a short form exists too, the full form is the noun plus `_with`
//! ([`Device::compute_pipeline_with`]). Shortcuts that also fill what they make are named
//! for the noun and its source: [`Device::buffer_from_slice`],
//! [`Device::texture_from_bytes`], [`Device::storage_buffer`]. Objects made from outside
//! kiln — nothing, bytes, a file, a window — have `Type::new`, `Type::with_desc` or
//! `Type::from_*`: [`Device::new`], [`Device::with_desc`], [`ShaderModule::from_file`],
//! `window::Presenter::new`.
//!
//! ## Unstable hooks
//!
//! The hooks of kiln's own tests and benchmarks (the `debug_*` methods of [`Device`] and
//! others, fault injection through `DeviceDesc::faults`, the `hooks` module) exist only with
//! the off-by-default feature `unstable-hooks`, hidden from these docs; they are not part
//! of the API and may change in any release. The hidden `__macro_support` module holds what
//! kiln's macros expand to.
//!
//! ## Pipeline cache
//!
//! Every device owns one `VkPipelineCache`, loaded from disk when the device is created
//! and written back when it drops ([`Device::pipeline_cache_status`]; the file name and
//! the checks before any byte reaches the driver are in [`PipelineCacheStatus`]'s docs).

#![warn(missing_docs)]

/// Builder methods for a `#[non_exhaustive]` description or option struct: one per listed
/// field, named as the field and taking its type, which sets it and returns the struct
/// (`BufferDesc::default().label("x").size(1024)`). An attribute before a field (`#[doc(hidden)]`,
/// `#[cfg(...)]`) goes on its method.
macro_rules! setters {
    ($ty:ident $(<$lt:lifetime>)? { $($(#[$attr:meta])* $field:ident: $fty:ty),* $(,)? }) => {
        impl$(<$lt>)? $ty$(<$lt>)? {
            $(
                #[doc = concat!("Sets [`", stringify!($field), "`](#structfield.", stringify!($field), ").")]
                $(#[$attr])*
                pub fn $field(mut self, $field: $fty) -> Self {
                    self.$field = $field;
                    self
                }
            )*
        }
    };
}

mod commands;
mod compose;
mod descriptors;
mod device;
mod error;
mod pipeline;
mod queue;
mod shaders;
mod transfer;
#[cfg(feature = "window")]
pub mod window;

pub use ash::vk;
/// `bytemuck`, re-exported: push constants and buffer contents are `bytemuck::Pod` values,
/// so `kiln::bytemuck` is the version kiln's signatures use.
pub use bytemuck;

pub use commands::{
    ColorAttachment, DepthAttachment, ListDraw, LoadOp, PushResource, PushWrite, Recorder,
    RenderingDesc, DISPATCH_INDIRECT_SIZE, DRAW_INDEXED_INDIRECT_SIZE, DRAW_INDIRECT_SIZE,
    DRAW_MESH_TASKS_INDIRECT_SIZE,
};
pub use descriptors::{DescriptorSet, DescriptorSetLayoutDesc, SetLayout, SetLayoutBinding};
pub use device::{
    capability_name, capability_requirement, known_capabilities, AccelerationStructure,
    AccelerationStructureDesc, AccelerationStructureGeometry, AccelerationStructureInstance,
    AccelerationStructureLimits, AccelerationStructureTriangles, Breadcrumb, Buffer, BufferDesc,
    BufferView, CaptureReport, ComputeProperties, CooperativeMatrix2Features,
    CooperativeMatrix2Properties, CooperativeMatrixConfig, Device, DeviceDesc, DeviceFault,
    DeviceInfo, ExternalHandle, ExternalMemory, FaultAddress, Features, FlexibleDimensionsConfig,
    HeapUsage, Image, ImageDesc, ImageView, ImageViewDesc, InlineUniformBlockLimits, LayerFeatures,
    MemoryLocation, MemoryReport, MeshShaderLimits, PostMortem, QueueInfo, QueueKind, QueueSource,
    Sampler, SamplerDesc, Subresources, UpdateAfterBindLimits, ValidationReport, ValidationWatch,
    VendorFault, COMPONENT_TYPE_BFLOAT16_KHR, DEFAULT_SPIN, EXECUTE_TIMEOUT, MAX_COMPUTE_QUEUES,
    MAX_QUEUES, MAX_TRANSFER_QUEUES,
};
pub use error::{
    DescriptorError, DeviceError, Error, MemoryError, PipelineError, RecordingError, Result,
    ShaderError, SubmissionError,
};
pub use pipeline::{
    BindingAccess, BlendMode, ColorBlendAttachment, ComputePipeline, ComputePipelineDesc,
    DepthBias, DepthState, DynamicState, GraphicsPipeline, GraphicsPipelineDesc, NotReady,
    PendingPipeline, Pipeline, PipelineAccess, PipelineCacheStatus, PipelineExecutable,
    PipelineExecutableStatistic, PipelineLayout, PipelineLayoutDesc, PushConstantRange,
    RenderingFormats, StatisticValue, StencilOps, StencilState, Tessellation, VertexAttribute,
    VertexBufferLayout, Visibility, DEFAULT_BINDLESS_MAX,
};
#[cfg(feature = "hot-reload")]
pub use pipeline::{
    HotComputePipeline, HotDesc, HotGraphicsDesc, HotGraphicsPipeline, HotTessellation, ReloadEvent,
};
pub use queue::{
    begin_end_order, zones_of, After, GpuTimings, GpuZone, Queue, Recording, ScopeTiming,
    Submission, TimelineSemaphore, ZoneSink, MAX_TIMELINE_WAITS,
};
pub use shaders::{HostLayout, HostMember, HostType, ShaderBlock, ShaderModule, SpecValue};
pub use transfer::{
    copy_between_devices, copy_between_devices_in_chunks, HostBuffer, HostBufferMemory,
    ReadbackQueue, StagingUsage, Transfer, TransferDesc, TransferPart, TransferSplit, UploadQueue,
    BETWEEN_DEVICES_CHUNK, SPLIT_ALIGN,
};

/// What reflection of a SPIR-V module returns ([`ShaderModule::reflection`]): per entry
/// point, the descriptor bindings, push constants, interface variables, workgroup size and
/// specialization constants it statically uses.
pub mod reflect {
    pub use crate::shaders::{
        generator_name, version_string, Access, BlockLayout, BlockMember, DescriptorBinding, Dim,
        EntryPoint, ExecutionModel, ImageFormat, ImageTy, InterfaceVariable, MemberType,
        ModuleReflection, PushConstantBlock, ScalarType, SpecConstant, UnsupportedBinding,
        WorkgroupSize,
    };
}

/// What the expansions of kiln's own macros (`include_spirv!`, the host-layout macro of
/// `shaders/host.rs`) name: not API, for those macros only; anything here may change in any
/// release.
#[doc(hidden)]
pub mod __macro_support {
    pub use crate::shaders::host::{field_size, Probe, ProbeKnown, ProbeUnknown};
    pub use kiln_macros::spirv_bytes;
}

/// Test and benchmark hooks (feature `unstable-hooks`, off by default): fault injection
/// (`DeviceDesc::faults`), the pipeline cache's file helpers, the staging chunk size, the
/// `Device::debug_*` and other `debug_*` methods. For kiln's own tests and benchmarks; not
/// covered by semver.
#[cfg(feature = "unstable-hooks")]
#[doc(hidden)]
pub mod hooks {
    pub use crate::device::{FaultInjector, FaultSite};
    pub use crate::pipeline::cache::{cache_dir, check_header, file_name};
    pub use crate::pipeline::statistics::check as check_executable_statistics;
    pub use crate::transfer::STAGING_CHUNK;
}

/// Compile-time proof that kiln's handles can cross threads (issue: threads).
#[allow(dead_code)]
fn _assert_send_sync() {
    fn ok<T: Send + Sync>() {}
    ok::<Device>();
    ok::<Buffer>();
    ok::<ComputePipeline>();
    ok::<DescriptorSet>();
    ok::<SetLayout>();
    ok::<PipelineLayout>();
    ok::<ShaderModule>();
    ok::<Submission>();
    ok::<Queue>();
    ok::<HostBuffer>();
    ok::<Transfer<'static>>();
}
