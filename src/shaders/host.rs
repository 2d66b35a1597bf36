//! Checking a host (Rust) struct against a reflected shader block.
//!
//! The shader's offsets come from its SPIR-V decorations (std140, std430 or scalar,
//! whatever the compiler chose); the host's from `core::mem::offset_of!`. A mismatch —
//! classically a `vec3` followed by a scalar, or a scalar followed by a `vec3`, which
//! std140/std430 align to 16 bytes — is an error naming the member and both offsets.
//!
//! Members are compared by position, and each by
//!
//! - **name**: the host field's name against the shader member's (`OpMemberName`, when the
//!   module kept names), ignoring case and `_` (`light_dir` matches `lightDir`), so two
//!   members listed in the wrong order are caught even when their sizes agree
//!   (`KILN-E062`);
//! - **type**: a field whose type implements [`HostType`] (the scalars, and arrays of them:
//!   `f32`, `u32`, `[f32; 3]`, `[[f32; 4]; 4]`) against the shader member's scalar type and
//!   number of scalars, so a `u32` where the shader has a `float` is caught (`KILN-E063`);
//!   fields of other types (nested structs) are checked by offset and size only;
//! - **offset and size** (`KILN-E055`).
//!
//! Only top-level members are compared (a nested struct is checked by its offset and total
//! size, not member by member); the element type of a trailing runtime array is checked
//! with [`EntryPoint::check_array_element`].
//!
//! ```
//! #[repr(C)]
//! #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
//! struct Params { a: f32, n: u32 }
//! kiln::host_layout!(Params { a, n });
//! ```

use super::reflect::{BlockLayout, BlockMember, EntryPoint, ScalarType};
use crate::error::{Error, Result, ShaderError};

/// One member of a host struct: name, byte offset, byte size, and its scalars when its type
/// implements [`HostType`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostMember {
    /// The field's name.
    pub name: &'static str,
    /// `offset_of!` the field, bytes.
    pub offset: usize,
    /// `size_of` the field's type, bytes.
    pub size: usize,
    /// [`HostType::SCALARS`] of the field's type; `None` for a type that does not
    /// implement it (then only offset and size are compared).
    pub scalars: Option<(ScalarType, u32)>,
}

/// A host struct generated for a shader block by kiln-build's typed bindings (feature
/// `bindings`): `Pod`, laid out as the block (checked by [`HostLayout`]), and for a
/// push-constant block the bytes it covers, which
/// [`Recorder::push_block`](crate::Recorder::push_block) checks against the bound
/// pipeline's push-constant ranges.
pub trait ShaderBlock: bytemuck::Pod + HostLayout {
    /// First byte of the block the shader reads (a push-constant block's first member;
    /// 0 for buffer blocks). The struct holds bytes from 0, so this is also the offset of
    /// those bytes in the struct.
    const OFFSET: u32;
    /// Bytes from `OFFSET` to the end of the block's last member.
    const SIZE: u32;
}

/// A host type made of scalars of one type, which can be compared with a shader member's
/// type: the integer and float primitives, and arrays of them (`[f32; 3]` is a `vec3` or a
/// `float[3]`, `[[f32; 4]; 4]` a `mat4`).
pub trait HostType {
    /// The scalar type and how many of them: `(float, 3)` for `[f32; 3]`.
    const SCALARS: (ScalarType, u32);
}

macro_rules! host_scalars {
    ($($t:ty => $s:expr),* $(,)?) => {
        $(impl HostType for $t {
            const SCALARS: (ScalarType, u32) = ($s, 1);
        })*
    };
}

host_scalars! {
    u8 => ScalarType::Int { width: 8, signed: false },
    i8 => ScalarType::Int { width: 8, signed: true },
    u16 => ScalarType::Int { width: 16, signed: false },
    i16 => ScalarType::Int { width: 16, signed: true },
    u32 => ScalarType::Int { width: 32, signed: false },
    i32 => ScalarType::Int { width: 32, signed: true },
    u64 => ScalarType::Int { width: 64, signed: false },
    i64 => ScalarType::Int { width: 64, signed: true },
    f32 => ScalarType::Float { width: 32 },
    f64 => ScalarType::Float { width: 64 },
}

impl<T: HostType, const N: usize> HostType for [T; N] {
    const SCALARS: (ScalarType, u32) = (T::SCALARS.0, T::SCALARS.1 * N as u32);
}

/// The scalars of a field's type when it implements [`HostType`], else `None`, chosen at
/// the macro's expansion site by method resolution on `&probe`: `ProbeKnown` (on
/// `Probe<F>`, `&self`, needs `F: HostType`) matches the receiver as it is, `ProbeUnknown`
/// (on `&Probe<F>`) only after one more auto-ref. For
/// [`host_layout!`](crate::host_layout).
#[doc(hidden)]
pub struct Probe<F>(std::marker::PhantomData<F>);

impl<F> Probe<F> {
    /// A probe whose type the macro fixes later ([`Probe::of`]).
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Probe(std::marker::PhantomData)
    }

    /// The probe of a field's type.
    pub fn of(_: &F) -> Self {
        Probe(std::marker::PhantomData)
    }
}

/// `Some(F::SCALARS)` (for [`host_layout!`](crate::host_layout)).
#[doc(hidden)]
pub trait ProbeKnown {
    /// The scalars of the probed type.
    fn scalars(&self) -> Option<(ScalarType, u32)>;
}

impl<F: HostType> ProbeKnown for Probe<F> {
    fn scalars(&self) -> Option<(ScalarType, u32)> {
        Some(F::SCALARS)
    }
}

/// `None` (for [`host_layout!`](crate::host_layout)).
#[doc(hidden)]
pub trait ProbeUnknown {
    /// No scalars known.
    fn scalars(&self) -> Option<(ScalarType, u32)> {
        None
    }
}

impl<F> ProbeUnknown for &Probe<F> {}

/// Field names compared as the shader would write them: case and `_` ignored.
fn same_name(host: &str, shader: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect()
    };
    norm(host) == norm(shader)
}

/// The GLSL name of `n` scalars of `s`: `float`, `vec3`, `float[5]`.
fn scalars_name((s, n): (ScalarType, u32)) -> String {
    if n == 1 {
        s.glsl_name().to_string()
    } else {
        format!("{} x{n}", s.glsl_name())
    }
}

/// Host integer/float scalars against the shader's; a `bool` in a block is 32 bits, so
/// `u32`/`i32` stand for it.
fn same_scalars(host: (ScalarType, u32), shader: (ScalarType, u32)) -> bool {
    let fix = |s: ScalarType| match s {
        ScalarType::Bool => ScalarType::Int {
            width: 32,
            signed: false,
        },
        other => other,
    };
    let bool_as_int =
        matches!(shader.0, ScalarType::Bool) && matches!(host.0, ScalarType::Int { width: 32, .. });
    host.1 == shader.1 && (bool_as_int || fix(host.0) == fix(shader.0))
}

/// `KILN-E062`/`KILN-E063` for member `i`: a name or a type that differs.
fn check_name_and_type(
    block: &str,
    i: usize,
    h: &HostMember,
    s: &BlockMember,
) -> Result<(), ShaderError> {
    if let Some(shader_name) = s.name.as_deref().filter(|n| !n.is_empty()) {
        if !same_name(h.name, shader_name) {
            return Err(ShaderError::HostMemberName {
                block: block.to_string(),
                index: i,
                host: h.name.to_string(),
                shader: shader_name.to_string(),
            });
        }
    }
    if let (Some(host), Some(shader)) = (h.scalars, s.ty.scalars()) {
        // A column or element padded to its stride may be held padded on the host too.
        let stored = s.ty.stored_scalars().unwrap_or(shader);
        if !same_scalars(host, shader) && !same_scalars(host, stored) {
            return Err(ShaderError::HostMemberType {
                block: block.to_string(),
                member: h.name.to_string(),
                host: scalars_name(host),
                shader: s.ty.glsl_name(),
            });
        }
    }
    Ok(())
}

/// A host type whose member layout can be compared with a shader block. Implement it with
/// [`host_layout!`](crate::host_layout).
pub trait HostLayout {
    /// Members in declaration order (the order of the shader block's members).
    fn host_members() -> Vec<HostMember>;
    /// `size_of::<Self>()`.
    fn host_size() -> usize;
}

/// Size of the field a projection returns (used by [`host_layout!`](crate::host_layout)).
#[doc(hidden)]
pub fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    std::mem::size_of::<F>()
}

/// Implements [`HostLayout`] for a `#[repr(C)]` struct: `host_layout!(Type { field, … })`,
/// fields listed in the order of the shader block's members.
#[macro_export]
macro_rules! host_layout {
    ($t:ty { $($f:ident),* $(,)? }) => {
        impl $crate::HostLayout for $t {
            fn host_members() -> ::std::vec::Vec<$crate::HostMember> {
                ::std::vec![$($crate::HostMember {
                    name: stringify!($f),
                    offset: ::core::mem::offset_of!($t, $f),
                    size: $crate::__macro_support::field_size::<$t, _>(|s: &$t| &s.$f),
                    scalars: {
                        #[allow(unused_imports)]
                        use $crate::__macro_support::{ProbeKnown as _, ProbeUnknown as _};
                        // The field's type is fixed by the assignment before the method
                        // call, so method resolution sees it (never runs: `none` is None).
                        let mut probe = $crate::__macro_support::Probe::new();
                        let none: ::core::option::Option<&$t> = ::core::option::Option::None;
                        if let ::core::option::Option::Some(s) = none {
                            probe = $crate::__macro_support::Probe::of(&s.$f);
                        }
                        (&probe).scalars()
                    },
                }),*]
            }
            fn host_size() -> usize {
                ::core::mem::size_of::<$t>()
            }
        }
    };
}

impl BlockLayout {
    /// Checks that host type `T` lays out like this block: same member count (a trailing
    /// runtime array may be left out of `T`), each member with the same name (case and `_`
    /// ignored; when the module kept names) and scalar type (for fields whose type
    /// implements [`HostType`]), at the same offset with the same size, and
    /// `size_of::<T>()` at least the block's fixed size.
    ///
    /// Errors: `KILN-E062` a member name differs (members out of order), `KILN-E063` a
    /// member's type differs, `KILN-E055` naming the first member at another offset or of
    /// another size with both offsets, `KILN-E056` for a size or member-count mismatch.
    pub fn check_host<T: HostLayout>(&self, block: &str) -> Result<(), ShaderError> {
        let host = T::host_members();
        let shader = &self.members;
        let trailing_runtime = self.runtime_stride.is_some();
        let shader_fixed = if trailing_runtime && host.len() + 1 == shader.len() {
            &shader[..host.len()]
        } else {
            &shader[..]
        };
        if host.len() != shader_fixed.len() {
            return Err(ShaderError::HostLayoutSize {
                block: block.to_string(),
                detail: format!(
                    "host type {} has {} members, the shader block has {}",
                    std::any::type_name::<T>(),
                    host.len(),
                    shader.len()
                ),
            });
        }
        for (i, (h, s)) in host.iter().zip(shader_fixed).enumerate() {
            check_name_and_type(block, i, h, s)?;
            let runtime = trailing_runtime && s.size == 0;
            if h.offset as u64 != s.offset as u64 || (!runtime && h.size as u64 != s.size as u64) {
                return Err(ShaderError::HostLayoutMismatch {
                    block: block.to_string(),
                    member: format!(
                        "{} (shader: {})",
                        h.name,
                        s.name.as_deref().unwrap_or("<unnamed>")
                    ),
                    host_offset: h.offset as u32,
                    host_size: h.size as u32,
                    shader_offset: s.offset,
                    shader_size: s.size,
                });
            }
        }
        if (T::host_size() as u64) < self.size as u64 {
            return Err(ShaderError::HostLayoutSize {
                block: block.to_string(),
                detail: format!(
                    "host type {} is {} bytes, the shader block needs {}",
                    std::any::type_name::<T>(),
                    T::host_size(),
                    self.size
                ),
            });
        }
        Ok(())
    }
}

impl EntryPoint {
    /// Checks `T` against the block of the buffer at (set, binding).
    ///
    /// Errors: `KILN-E200` no such binding (or not a buffer), `KILN-E055`/`KILN-E056`.
    pub fn check_block<T: HostLayout>(&self, set: u32, binding: u32) -> Result<()> {
        let b = self
            .bindings
            .iter()
            .chain(&self.unused_bindings)
            .find(|b| b.set == set && b.binding == binding)
            .filter(|b| b.block.is_some())
            .ok_or_else(|| Error::NoSuchBinding {
                set,
                binding,
                available: self
                    .bindings
                    .iter()
                    .filter(|b| b.set == set && b.block.is_some())
                    .map(|b| b.binding)
                    .collect(),
            })?;
        let name = b
            .name
            .clone()
            .unwrap_or_else(|| format!("set {set} binding {binding}"));
        match &b.block {
            Some(block) => Ok(block.check_host::<T>(&name)?),
            None => Ok(()),
        }
    }

    /// Checks that `E`, the host type of one element of the runtime array that ends the
    /// buffer at (set, binding), has the array's stride as its size (`ArrayStride`
    /// decoration; e.g. a std430 `vec3` array has stride 16, so `[f32; 3]` is refused).
    ///
    /// Errors: `KILN-E200` no such buffer binding, `KILN-E056` no runtime array or a size
    /// that is not the stride.
    pub fn check_array_element<E>(&self, set: u32, binding: u32) -> Result<()> {
        let b = self
            .bindings
            .iter()
            .chain(&self.unused_bindings)
            .find(|b| b.set == set && b.binding == binding && b.block.is_some())
            .ok_or_else(|| Error::NoSuchBinding {
                set,
                binding,
                available: Vec::new(),
            })?;
        let name = b
            .name
            .clone()
            .unwrap_or_else(|| format!("set {set} binding {binding}"));
        let stride = b.block.as_ref().and_then(|l| l.runtime_stride);
        let size = std::mem::size_of::<E>();
        match stride {
            Some(s) if s as usize == size => Ok(()),
            Some(s) => Err(Error::HostLayoutSize {
                block: name,
                detail: format!(
                    "runtime array stride is {s} bytes but host element type {} is {size}",
                    std::any::type_name::<E>()
                ),
            }),
            None => Err(Error::HostLayoutSize {
                block: name,
                detail: "the block does not end in a runtime array".into(),
            }),
        }
    }

    /// Checks `T` against this entry point's push-constant block (names, types, offsets
    /// and sizes, as [`BlockLayout::check_host`]).
    ///
    /// Errors: `KILN-E062`, `KILN-E063`, `KILN-E055`, `KILN-E056` (also when the entry
    /// point uses no push constants).
    pub fn check_push_constants<T: HostLayout>(&self) -> Result<(), ShaderError> {
        match self
            .push_constants
            .as_ref()
            .and_then(|p| p.block.as_ref().map(|b| (p, b)))
        {
            Some((p, block)) => {
                block.check_host::<T>(p.name.as_deref().unwrap_or("push constants"))
            }
            None => Err(ShaderError::HostLayoutSize {
                block: "push constants".into(),
                detail: format!("entry point `{}` uses no push constants", self.name),
            }),
        }
    }
}
