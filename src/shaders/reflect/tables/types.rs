//! The types of a module's `OpType*` instructions, as [`Tables`] keeps them.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::Op;

use super::{id, lit, ImageTy, Tables, Ty};

impl Tables {
    /// The type an `OpType*` declares (`None`: not a type instruction).
    pub(super) fn type_of(&mut self, inst: &Instruction) -> Option<Ty> {
        let ops = &inst.operands;
        let ty = match inst.class.opcode {
            Op::TypeVoid => Ty::Void,
            Op::TypeBool => Ty::Bool,
            Op::TypeInt => Ty::Int {
                width: lit(ops.first()).unwrap_or(32),
                signed: lit(ops.get(1)).unwrap_or(0) != 0,
            },
            Op::TypeFloat => Ty::Float {
                width: lit(ops.first()).unwrap_or(32),
            },
            Op::TypeVector => match (id(ops.first()), lit(ops.get(1))) {
                (Some(component), Some(count)) => Ty::Vector { component, count },
                _ => Ty::Other,
            },
            Op::TypeMatrix => match (id(ops.first()), lit(ops.get(1))) {
                (Some(column), Some(count)) => Ty::Matrix { column, count },
                _ => Ty::Other,
            },
            Op::TypeImage => match ops.as_slice() {
                [Operand::IdRef(_), Operand::Dim(dim), Operand::LiteralBit32(depth), Operand::LiteralBit32(arrayed), Operand::LiteralBit32(ms), Operand::LiteralBit32(sampled), Operand::ImageFormat(format), ..] => {
                    Ty::Image(ImageTy {
                        dim: *dim,
                        depth: *depth,
                        arrayed: *arrayed != 0,
                        multisampled: *ms != 0,
                        sampled: *sampled,
                        format: *format,
                    })
                }
                _ => Ty::Other,
            },
            Op::TypeSampler => Ty::Sampler,
            Op::TypeSampledImage => match id(ops.first()) {
                Some(image) => Ty::SampledImage { image },
                None => Ty::Other,
            },
            Op::TypeArray => match (id(ops.first()), id(ops.get(1))) {
                (Some(element), Some(length)) => Ty::Array { element, length },
                _ => Ty::Other,
            },
            Op::TypeRuntimeArray => match id(ops.first()) {
                Some(element) => Ty::RuntimeArray { element },
                None => Ty::Other,
            },
            Op::TypeStruct => Ty::Struct {
                members: ops.iter().filter_map(|o| id(Some(o))).collect(),
            },
            Op::TypePointer => match (ops.first(), id(ops.get(1))) {
                (Some(Operand::StorageClass(storage)), Some(pointee)) => Ty::Pointer {
                    storage: *storage,
                    pointee,
                },
                _ => Ty::Other,
            },
            Op::TypeAccelerationStructureKHR => Ty::AccelerationStructure,
            Op::TypeTensorARM => Ty::TensorArm,
            Op::TypeCooperativeMatrixKHR => {
                // rspirv reads the Scope operand as an IdScope.
                match ops.get(1) {
                    Some(Operand::IdScope(scope)) | Some(Operand::IdRef(scope)) => {
                        self.cooperative_matrix_scope_ids.push(*scope)
                    }
                    _ => {}
                }
                Ty::Other
            }
            _ => return None,
        };
        Some(ty)
    }
}
