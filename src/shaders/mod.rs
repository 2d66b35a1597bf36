//! SPIR-V loading, checking and reflection.
//!
//! Shaders are compiled at build time by [`kiln-build`](https://docs.rs/kiln-build)
//! (`glslc`) and embedded with [`include_spirv!`](crate::include_spirv).

pub(crate) mod host;
mod module;
pub(crate) mod reflect;

pub use host::{HostLayout, HostMember, HostType, ShaderBlock};
/// SPIR-V enums that appear in reflection results ([`ImageTy`], [`EntryPoint`]).
pub use rspirv::spirv::{Dim, ExecutionModel, ImageFormat};

pub use module::{generator_name, version_string, ShaderModule};
pub use reflect::{
    Access, BlockLayout, BlockMember, DescriptorBinding, EntryPoint, ImageTy, InterfaceVariable,
    MemberType, ModuleReflection, PushConstantBlock, ScalarType, SpecConstant, SpecValue,
    UnsupportedBinding, WorkgroupSize,
};

/// Embeds a shader compiled by `kiln_build` in this crate's `build.rs`, as a
/// [`ShaderModule`] result.
///
/// `include_spirv!("vector_add.comp")` reads `$OUT_DIR/shaders/vector_add.comp.spv`.
/// The file name is the source's name relative to the shader folder, plus `.spv`.
///
/// Misuse is a compile error that says what to do (the lookup is the `kiln-macros` proc
/// macro): a crate without a build script is told to add `kiln-build` and a `build.rs`; a
/// name that was not compiled gets the list of the shaders that were, with the closest
/// name first (`no compiled shader `printf.com` (did you mean `printf.comp`?)`).
#[macro_export]
macro_rules! include_spirv {
    ($name:literal) => {
        $crate::ShaderModule::from_bytes($crate::__macro_support::spirv_bytes!($name))
            .map(|m| m.with_label($name))
    };
}

/// Includes the typed bindings kiln-build generated in this crate's `build.rs`
/// (`kiln_build::bindings::write`, feature `bindings` of kiln-build): one module per
/// shader with its block structs and set/binding constants. Use inside a module of your
/// own: `mod shaders { kiln::include_bindings!(); }`, then `shaders::scale_comp::Params`.
#[macro_export]
macro_rules! include_bindings {
    () => {
        include!(concat!(
            env!(
                "OUT_DIR",
                "include_bindings! needs a build.rs that calls kiln_build::bindings::write \
                 (kiln-build with feature `bindings`)"
            ),
            "/kiln_bindings.rs"
        ));
    };
}
