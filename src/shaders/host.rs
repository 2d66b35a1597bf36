//! Checking a host (Rust) struct against a reflected shader block.
//!
//! The shader's offsets come from its SPIR-V decorations (std140, std430 or scalar,
//! whatever the compiler chose); the host's from `core::mem::offset_of!`. A mismatch —
//! classically a `vec3` followed by a scalar, or a scalar followed by a `vec3`, which
//! std140/std430 align to 16 bytes — is an error naming the member and both offsets.
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

use super::reflect::{BlockLayout, EntryPoint};
use crate::error::{Error, Result};

/// One member of a host struct: name, byte offset, byte size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostMember {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
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
                    size: $crate::__private::field_size::<$t, _>(|s: &$t| &s.$f),
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
    /// runtime array may be left out of `T`), each member at the same offset with the same
    /// size, and `size_of::<T>()` at least the block's fixed size.
    ///
    /// Errors: `KILN-E055` naming the first differing member and both offsets,
    /// `KILN-E056` for a size or member-count mismatch.
    pub fn check_host<T: HostLayout>(&self, block: &str) -> Result<()> {
        let host = T::host_members();
        let shader = &self.members;
        let trailing_runtime = self.runtime_stride.is_some();
        let shader_fixed = if trailing_runtime && host.len() + 1 == shader.len() {
            &shader[..host.len()]
        } else {
            &shader[..]
        };
        if host.len() != shader_fixed.len() {
            return Err(Error::HostLayoutSize {
                block: block.to_string(),
                detail: format!(
                    "host type {} has {} members, the shader block has {}",
                    std::any::type_name::<T>(),
                    host.len(),
                    shader.len()
                ),
            });
        }
        for (h, s) in host.iter().zip(shader_fixed) {
            let runtime = trailing_runtime && s.size == 0;
            if h.offset as u64 != s.offset as u64 || (!runtime && h.size as u64 != s.size as u64) {
                return Err(Error::HostLayoutMismatch {
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
            return Err(Error::HostLayoutSize {
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
            Some(block) => block.check_host::<T>(&name),
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

    /// Checks `T` against this entry point's push-constant block.
    pub fn check_push_constants<T: HostLayout>(&self) -> Result<()> {
        match self
            .push_constants
            .as_ref()
            .and_then(|p| p.block.as_ref().map(|b| (p, b)))
        {
            Some((p, block)) => {
                block.check_host::<T>(p.name.as_deref().unwrap_or("push constants"))
            }
            None => Err(Error::HostLayoutSize {
                block: "push constants".into(),
                detail: format!("entry point `{}` uses no push constants", self.name),
            }),
        }
    }
}
