//! Block layouts from decorations only (Offset, ArrayStride, MatrixStride, RowMajor):
//! never from a host `size_of`. Source: Vulkan spec §16.9 "Offset and Stride Assignment"
//! (explicit layout), SPIR-V spec §2.16.2 (validation rules for shader memory layouts).

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

/// Layout of the struct `ty` (a Block / BufferBlock / push-constant block).
pub(crate) fn block_layout(t: &Tables, ty: u32) -> Option<BlockLayout> {
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
        });
    }
    Some(BlockLayout {
        size: last.end()?,
        runtime_stride,
        members: out,
    })
}
