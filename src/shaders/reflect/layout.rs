//! Block layouts from decorations only (Offset, ArrayStride, MatrixStride, RowMajor):
//! never from a host `size_of`. Source: Vulkan spec §16.9 "Offset and Stride Assignment"
//! (explicit layout), SPIR-V spec §2.16.2 (validation rules for shader memory layouts).

use std::sync::Arc;

use rspirv::spirv::StorageClass;

use super::tables::{Decos, Tables, Ty};

/// One member of a buffer block (top level), in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockMember {
    /// OpMemberName, if the module kept names.
    pub name: Option<String>,
    /// Offset decoration, in bytes from the start of the block.
    pub offset: u32,
    /// Size in bytes: an array's is ArrayStride x length, trailing padding included (for
    /// a runtime array: 0; see [`BlockLayout::runtime_stride`]).
    pub size: u32,
    /// ArrayStride of the member's type, bytes, when the member is an array.
    pub array_stride: Option<u32>,
    /// MatrixStride decoration of the member, bytes, when it is a matrix (or array of).
    pub matrix_stride: Option<u32>,
    /// The member's type as the shader declares it (scalar, vector, matrix, array, struct),
    /// with the strides of its decorations: what `check_push_constants` / `check_block`
    /// compare a host type with, and what kiln-build's typed bindings are generated from.
    pub ty: MemberType,
}

/// The scalar component of a block member's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScalarType {
    /// `bool` (in a block: a 32-bit value, as Vulkan stores booleans there).
    Bool,
    /// An integer of `width` bits (8, 16, 32, 64).
    Int {
        /// Bits: 8, 16, 32 or 64.
        width: u32,
        /// `int` (true) or `uint` (false).
        signed: bool,
    },
    /// A float of `width` bits (16, 32, 64).
    Float {
        /// Bits: 16, 32 or 64.
        width: u32,
    },
}

impl ScalarType {
    /// Size in bytes of one component (a `bool` counts 4).
    pub fn size(self) -> u32 {
        match self {
            ScalarType::Bool => 4,
            ScalarType::Int { width, .. } | ScalarType::Float { width } => width / 8,
        }
    }

    /// The GLSL name: `float`, `double`, `int`, `uint`, `int64_t`, `float16_t`, `bool`, ...
    pub fn glsl_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::Float { width: 16 } => "float16_t",
            ScalarType::Float { width: 64 } => "double",
            ScalarType::Float { .. } => "float",
            ScalarType::Int { width: 8, signed } => {
                if signed {
                    "int8_t"
                } else {
                    "uint8_t"
                }
            }
            ScalarType::Int { width: 16, signed } => {
                if signed {
                    "int16_t"
                } else {
                    "uint16_t"
                }
            }
            ScalarType::Int { width: 64, signed } => {
                if signed {
                    "int64_t"
                } else {
                    "uint64_t"
                }
            }
            ScalarType::Int { signed, .. } => {
                if signed {
                    "int"
                } else {
                    "uint"
                }
            }
        }
    }
}

/// The type of a block member, with the layout decorations that place its parts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemberType {
    /// A scalar (`float`, `uint`, ...).
    Scalar(ScalarType),
    /// A vector of `count` (2, 3 or 4) components.
    Vector {
        /// The component type.
        component: ScalarType,
        /// Components: 2, 3 or 4.
        count: u32,
    },
    /// A matrix of `columns` column vectors of `rows` components; `stride` bytes between
    /// columns (rows when `row_major`).
    Matrix {
        /// The component type.
        component: ScalarType,
        /// Column vectors.
        columns: u32,
        /// Components per column.
        rows: u32,
        /// MatrixStride, bytes (0 when undecorated).
        stride: u32,
        /// RowMajor decoration.
        row_major: bool,
    },
    /// A sized array: `length` elements `stride` bytes apart (ArrayStride).
    Array {
        /// The element type.
        element: Box<MemberType>,
        /// Elements (a specialization-constant length: its default).
        length: u32,
        /// ArrayStride, bytes.
        stride: u32,
    },
    /// A runtime array (the last member of a storage block): elements `stride` bytes apart.
    RuntimeArray {
        /// The element type.
        element: Box<MemberType>,
        /// ArrayStride, bytes.
        stride: u32,
    },
    /// A nested struct, with its own layout.
    Struct {
        /// OpName of the struct type, if the module kept names.
        name: Option<String>,
        /// The struct's members and size.
        layout: Arc<BlockLayout>,
    },
    /// A `PhysicalStorageBuffer` pointer (GLSL `buffer_reference`,
    /// `SPV_KHR_physical_storage_buffer`): 8 bytes holding a device address, a `u64` on the
    /// host ([`Buffer::device_address`](crate::Buffer::device_address)).
    DeviceAddress,
    /// A type with no host equivalent kiln describes (other pointers, ...).
    Other,
}

impl MemberType {
    /// The scalar type and number of scalars of a scalar, vector or matrix (`vec3` is
    /// `(float, 3)`, `mat4` `(float, 16)`), or of a sized array of them (`float[4]` is
    /// `(float, 4)`); `None` for structs, runtime arrays and others.
    pub fn scalars(&self) -> Option<(ScalarType, u32)> {
        match self {
            MemberType::Scalar(s) => Some((*s, 1)),
            MemberType::Vector { component, count } => Some((*component, *count)),
            MemberType::Matrix {
                component,
                columns,
                rows,
                ..
            } => Some((*component, columns * rows)),
            MemberType::Array {
                element, length, ..
            } => element.scalars().map(|(s, n)| (s, n * length)),
            // Held as a `u64` on the host.
            MemberType::DeviceAddress => Some((
                ScalarType::Int {
                    width: 64,
                    signed: false,
                },
                1,
            )),
            _ => None,
        }
    }

    /// Like [`scalars`](Self::scalars), but counting the padding a stride leaves as
    /// scalars too: a `mat3` with MatrixStride 16 is `(float, 12)` (three columns of four),
    /// a std140 `float[3]` (ArrayStride 16) `(float, 12)`. A host array such as
    /// `[[f32; 4]; 3]` holds that many.
    pub fn stored_scalars(&self) -> Option<(ScalarType, u32)> {
        match self {
            MemberType::Matrix {
                component,
                columns,
                rows,
                stride,
                row_major,
            } if *stride > 0 => {
                let vectors = if *row_major { rows } else { columns };
                Some((*component, vectors * (stride / component.size())))
            }
            MemberType::Array {
                element,
                length,
                stride,
            } if *stride > 0 => {
                let (s, _) = element.scalars()?;
                Some((s, length * (stride / s.size())))
            }
            other => other.scalars(),
        }
    }

    /// The GLSL spelling: `vec3`, `uvec2`, `mat4`, `float[4]`, `Light[]`, ...
    pub fn glsl_name(&self) -> String {
        let prefix = |s: ScalarType| match s {
            ScalarType::Bool => "b",
            ScalarType::Float { width: 64 } => "d",
            ScalarType::Float { width: 16 } => "f16",
            ScalarType::Float { .. } => "",
            ScalarType::Int { signed: true, .. } => "i",
            ScalarType::Int { signed: false, .. } => "u",
        };
        match self {
            MemberType::Scalar(s) => s.glsl_name().to_string(),
            MemberType::Vector { component, count } => format!("{}vec{count}", prefix(*component)),
            MemberType::Matrix {
                component,
                columns,
                rows,
                ..
            } if columns == rows => format!("{}mat{columns}", prefix(*component)),
            MemberType::Matrix {
                component,
                columns,
                rows,
                ..
            } => format!("{}mat{columns}x{rows}", prefix(*component)),
            MemberType::Array {
                element, length, ..
            } => format!("{}[{length}]", element.glsl_name()),
            MemberType::RuntimeArray { element, .. } => format!("{}[]", element.glsl_name()),
            MemberType::Struct { name, .. } => name.clone().unwrap_or_else(|| "struct".into()),
            MemberType::DeviceAddress => "buffer_reference".into(),
            MemberType::Other => "?".into(),
        }
    }
}

/// Layout of a Block/BufferBlock struct as the shader sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockLayout {
    /// Bytes of the fixed part: where the member placed last ends, no rounding up.
    ///
    /// kiln's rule (the one SPIRV-Cross uses): the member with the highest `Offset` (of
    /// several there, the largest) gives the size, `Offset + size of that member`, where
    /// the size of an array is `ArrayStride x length` (so an array placed last counts its
    /// last element's trailing stride padding), of a matrix `MatrixStride x` columns (rows
    /// when RowMajor), of a nested struct its size by this same rule, and of a trailing
    /// runtime array 0 (its stride is [`runtime_stride`](Self::runtime_stride)). Members
    /// placed before it do not extend the size, even when their padded size would reach
    /// past it: HLSL packing puts a member inside the trailing stride padding of the array
    /// before it (`float2 a[2]` with ArrayStride 16 ends at byte 24, a `float` at offset
    /// 24), and such a block is 28 bytes, not the 32 that `a`'s stride x length reaches
    /// (SPIR-V spec §2.16.2 and Vulkan spec "Offset and Stride Assignment" place members
    /// by their Offsets; padding after the last element is never accessed).
    pub size: u32,
    /// Stride in bytes of the trailing runtime array, if the block ends in one.
    pub runtime_stride: Option<u32>,
    /// Top-level members in declaration order.
    pub members: Vec<BlockMember>,
}

impl BlockLayout {
    /// Bytes needed for `n` elements of the runtime array (or just the fixed part).
    pub fn size_for(&self, n: u64) -> u64 {
        self.size as u64 + self.runtime_stride.unwrap_or(0) as u64 * n
    }
}

/// Size of `ty` when laid out with the given member/array decorations.
/// `member` carries MatrixStride/RowMajor of the enclosing member (matrices only).
///
/// Sizes are memoized per (type, matrix stride, row major), so a module whose types share
/// sub-types (or a corrupt one built to blow up) costs time linear in its type count.
pub(crate) fn type_size(t: &Tables, ty: u32, member: Option<&Decos>, depth: u32) -> Option<u32> {
    if depth > 32 {
        return None;
    }
    let key = (
        ty,
        member.and_then(|m| m.matrix_stride),
        member.is_some_and(|m| m.row_major),
    );
    if let Some(v) = t.size_memo.borrow().get(&key) {
        return *v;
    }
    let v = type_size_uncached(t, ty, member, depth);
    t.size_memo.borrow_mut().insert(key, v);
    v
}

fn type_size_uncached(t: &Tables, ty: u32, member: Option<&Decos>, depth: u32) -> Option<u32> {
    Some(match t.types.get(&ty)? {
        Ty::Bool => 4,
        Ty::Int { width, .. } | Ty::Float { width } => width / 8,
        Ty::Vector { component, count } => {
            type_size(t, *component, None, depth + 1)?.checked_mul(*count)?
        }
        Ty::Matrix { column, count } => {
            let rows = match t.types.get(column)? {
                Ty::Vector { count, .. } => *count,
                _ => return None,
            };
            match member.and_then(|m| m.matrix_stride) {
                Some(stride) => {
                    let row_major = member.is_some_and(|m| m.row_major);
                    stride.checked_mul(if row_major { rows } else { *count })?
                }
                None => type_size(t, *column, None, depth + 1)?.checked_mul(*count)?,
            }
        }
        Ty::Array { element, length } => {
            let n = u32::try_from(t.eval_int(*length)?).ok()?;
            let stride = match t.deco(ty).and_then(|d| d.array_stride) {
                Some(s) => s,
                None => type_size(t, *element, member, depth + 1)?,
            };
            stride.checked_mul(n)?
        }
        Ty::RuntimeArray { .. } => 0,
        Ty::Struct { members } => {
            let mut last = LastMember::default();
            for (i, m) in members.iter().enumerate() {
                let d = t.member_decos.get(&(ty, i as u32));
                let off = d.and_then(|d| d.offset).unwrap_or(last.end()?);
                last.add(off, type_size(t, *m, d, depth + 1)?);
            }
            last.end()?
        }
        Ty::Pointer { .. } => 8,
        _ => return None,
    })
}

/// The member with the highest Offset so far (of several there, the largest): a struct's
/// size is where it ends ([`BlockLayout::size`] states the rule).
#[derive(Default)]
struct LastMember {
    offset: u32,
    size: u32,
}

impl LastMember {
    fn add(&mut self, offset: u32, size: u32) {
        if (offset, size) > (self.offset, self.size) {
            (self.offset, self.size) = (offset, size);
        }
    }

    fn end(&self) -> Option<u32> {
        self.offset.checked_add(self.size)
    }
}

fn scalar_of(t: &Tables, ty: u32) -> Option<ScalarType> {
    Some(match t.types.get(&ty)? {
        Ty::Bool => ScalarType::Bool,
        Ty::Int { width, signed } => ScalarType::Int {
            width: *width,
            signed: *signed,
        },
        Ty::Float { width } => ScalarType::Float { width: *width },
        _ => return None,
    })
}

/// The [`MemberType`] of `ty`; `member` carries MatrixStride/RowMajor of the enclosing
/// member.
fn member_type(t: &Tables, ty: u32, member: Option<&Decos>, depth: u32) -> MemberType {
    if depth > 32 {
        return MemberType::Other;
    }
    let stride_of = |ty: u32, element: u32| {
        t.deco(ty)
            .and_then(|d| d.array_stride)
            .or_else(|| type_size(t, element, member, depth + 1))
            .unwrap_or(0)
    };
    match t.types.get(&ty) {
        Some(Ty::Bool | Ty::Int { .. } | Ty::Float { .. }) => {
            scalar_of(t, ty).map_or(MemberType::Other, MemberType::Scalar)
        }
        Some(Ty::Vector { component, count }) => match scalar_of(t, *component) {
            Some(c) => MemberType::Vector {
                component: c,
                count: *count,
            },
            None => MemberType::Other,
        },
        Some(Ty::Matrix { column, count }) => match t.types.get(column) {
            Some(Ty::Vector {
                component,
                count: rows,
            }) => match scalar_of(t, *component) {
                Some(c) => MemberType::Matrix {
                    component: c,
                    columns: *count,
                    rows: *rows,
                    stride: member.and_then(|m| m.matrix_stride).unwrap_or(0),
                    row_major: member.is_some_and(|m| m.row_major),
                },
                None => MemberType::Other,
            },
            _ => MemberType::Other,
        },
        Some(Ty::Array { element, length }) => MemberType::Array {
            element: Box::new(member_type(t, *element, member, depth + 1)),
            length: t
                .eval_int(*length)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0),
            stride: stride_of(ty, *element),
        },
        Some(Ty::RuntimeArray { element }) => MemberType::RuntimeArray {
            element: Box::new(member_type(t, *element, member, depth + 1)),
            stride: stride_of(ty, *element),
        },
        Some(Ty::Pointer {
            storage: StorageClass::PhysicalStorageBuffer,
            ..
        }) => MemberType::DeviceAddress,
        Some(Ty::Struct { .. }) => {
            let memo = t.struct_memo.borrow().get(&ty).cloned();
            let layout = match memo {
                Some(l) => l,
                None => {
                    let l = block_layout_at(t, ty, depth + 1).map(Arc::new);
                    t.struct_memo.borrow_mut().insert(ty, l.clone());
                    l
                }
            };
            match layout {
                Some(layout) => MemberType::Struct {
                    name: t.names.get(&ty).filter(|n| !n.is_empty()).cloned(),
                    layout,
                },
                None => MemberType::Other,
            }
        }
        _ => MemberType::Other,
    }
}

/// Layout of the struct `ty` (a Block / BufferBlock / push-constant block).
pub(crate) fn block_layout(t: &Tables, ty: u32) -> Option<BlockLayout> {
    block_layout_at(t, ty, 0)
}

fn block_layout_at(t: &Tables, ty: u32, depth: u32) -> Option<BlockLayout> {
    if depth > 32 {
        return None;
    }
    let Ty::Struct { members } = t.types.get(&ty)? else {
        return None;
    };
    let mut out = Vec::with_capacity(members.len());
    let mut runtime_stride = None;
    let mut last = LastMember::default();
    for (i, m) in members.iter().enumerate() {
        let d = t.member_decos.get(&(ty, i as u32));
        let offset = d.and_then(|d| d.offset).unwrap_or(last.end()?);
        let size = type_size(t, *m, d, 0)?;
        if let Some(Ty::RuntimeArray { element }) = t.types.get(m) {
            runtime_stride = Some(match t.deco(*m).and_then(|d| d.array_stride) {
                Some(s) => s,
                None => type_size(t, *element, None, 1)?,
            });
        }
        // A runtime array's size is 0: the fixed part ends where it starts.
        last.add(offset, size);
        let array_stride = match t.types.get(m) {
            Some(Ty::Array { .. } | Ty::RuntimeArray { .. }) => {
                t.deco(*m).and_then(|d| d.array_stride)
            }
            _ => None,
        };
        out.push(BlockMember {
            name: t.member_names.get(&(ty, i as u32)).cloned(),
            offset,
            size,
            array_stride,
            matrix_stride: d.and_then(|d| d.matrix_stride),
            ty: member_type(t, *m, d, depth),
        });
    }
    Some(BlockLayout {
        size: last.end()?,
        runtime_stride,
        members: out,
    })
}
