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
//! let mut set = pipeline.new_set(0)?;
//! set.write_buffer(0, &a)?;
//! set.write_buffer(1, &b)?;
//! set.write_buffer(2, &c)?;
//! device.execute(|r| {
//!     r.bind_pipeline(&pipeline);
//!     r.bind_set(0, &set)?;
//!     r.dispatch_threads(1024)
//! })?;
//! let out: Vec<f32> = c.read(&device)?;
//! # Ok(()) }
//! ```
//!
//! Errors are [`Error`] values with a stable `KILN-Exxx` code ([`Error::code`]).

pub mod commands;
pub mod descriptors;
pub mod device;
mod error;
pub mod pipeline;
pub mod shaders;
#[cfg(feature = "window")]
pub mod window;

pub use ash::vk;
/// `bytemuck`, re-exported: push constants and buffer contents are `bytemuck::Pod` values,
/// so `kiln::bytemuck` is the version kiln's signatures use.
pub use bytemuck;
pub use commands::{ColorAttachment, DepthAttachment, LoadOp, Recorder, RenderingDesc};
pub use descriptors::{DescriptorSet, DescriptorSetLayoutDesc, SetLayout, SetLayoutBinding};
pub use device::{
    Buffer, BufferDesc, Device, DeviceDesc, DeviceInfo, Features, Image, ImageDesc, MemoryLocation,
    Recording, Sampler, SamplerDesc, Submission, ValidationReport, ValidationWatch,
};
pub use error::{Error, Result};
pub use pipeline::{
    BlendMode, ComputePipeline, ComputePipelineDesc, DepthState, GraphicsPipeline,
    GraphicsPipelineDesc, Pipeline, PipelineLayout, PipelineLayoutDesc, VertexAttribute,
    VertexBufferLayout,
};
pub use shaders::{ShaderModule, SpecValue};

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
    ok::<device::Submission>();
}
