//! SPIR-V loading, checking and reflection.
//!
//! Shaders are compiled at build time by [`kiln-build`](https://docs.rs/kiln-build)
//! (`glslc`) and embedded with [`include_spirv!`](crate::include_spirv).

pub(crate) mod host;
mod module;
pub(crate) mod reflect;

pub use host::{HostLayout, HostMember};
/// SPIR-V enums that appear in reflection results ([`ImageTy`], [`EntryPoint`]).
pub use rspirv::spirv::{Dim, ExecutionModel, ImageFormat};

pub use module::{generator_name, version_string, ShaderModule};
pub use reflect::{
    Access, BlockLayout, BlockMember, DescriptorBinding, EntryPoint, ImageTy, InterfaceVariable,
    ModuleReflection, PushConstantBlock, SpecConstant, SpecValue, UnsupportedBinding,
    WorkgroupSize,
};

/// Embeds a shader compiled by `kiln_build` in this crate's `build.rs`, as a
/// [`ShaderModule`] result.
///
/// `include_spirv!("vector_add.comp")` reads `$OUT_DIR/shaders/vector_add.comp.spv`.
/// The file name is the source's name relative to the shader folder, plus `.spv`.
#[macro_export]
macro_rules! include_spirv {
    ($name:literal) => {
        $crate::ShaderModule::from_bytes(include_bytes!(concat!(
            env!("OUT_DIR"),
            "/shaders/",
            $name,
            ".spv"
        )))
        .map(|m| m.with_label($name))
    };
}
