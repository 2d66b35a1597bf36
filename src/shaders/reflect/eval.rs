//! Evaluation of integer/boolean specialization-constant expressions (OpSpecConstantOp)
//! at their defaults, as the module declares them.
//!
//! Source: SPIR-V spec §3.56.x "OpSpecConstantOp" (the list of opcodes valid in it).
//! Each expression is evaluated once, when it is declared; its operands must already be
//! known (SPIR-V forbids forward references among constants), so cycles in a corrupt
//! module simply evaluate to "unknown" and nothing recurses.
//! Float expressions (`FAdd`, `QuantizeToF16`, …) are not evaluated: they make the value
//! unknown, never an error.

use rspirv::spirv::Op;

use super::tables::{Const, Tables, Ty};

/// An integer operand: its bits (zero-extended) and the width and signedness of its type.
#[derive(Clone, Copy)]
struct IntVal {
    bits: u64,
    width: u32,
}

impl IntVal {
    fn signed(self) -> i64 {
        if self.width >= 64 || self.width == 0 {
            self.bits as i64
        } else {
            let shift = 64 - self.width;
            ((self.bits << shift) as i64) >> shift
        }
    }
}

fn mask(bits: u64, width: u32) -> u64 {
    if width >= 64 {
        bits
    } else {
        bits & ((1u64 << width) - 1)
    }
}

impl Tables {
    fn int_operand(&self, id: u32) -> Option<IntVal> {
        let width = match self.types.get(self.const_types.get(&id)?)? {
            Ty::Int { width, .. } => *width,
            Ty::Bool => 1,
            _ => return None,
        };
        let bits = match self.consts.get(&id)? {
            Const::Int(v) => *v,
            Const::Bool(b) => *b as u64,
            Const::FloatBits(_) => return None,
        };
        Some(IntVal { bits, width })
    }

    fn bool_operand(&self, id: u32) -> Option<bool> {
        match self.consts.get(&id)? {
            Const::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Evaluates `OpSpecConstantOp op args` with result type `result_ty`; `None` when the
    /// value cannot be known here (float ops, composites, unknown operands, division by 0).
    pub(crate) fn eval_spec_op(&self, op: Op, args: &[u32], result_ty: u32) -> Option<Const> {
        let rty = self.types.get(&result_ty)?;
        let a = |i: usize| self.int_operand(*args.get(i)?);
        let bo = |i: usize| self.bool_operand(*args.get(i)?);
        if let Ty::Bool = rty {
            let v = match op {
                Op::LogicalOr => bo(0)? || bo(1)?,
                Op::LogicalAnd => bo(0)? && bo(1)?,
                Op::LogicalNot => !bo(0)?,
                Op::LogicalEqual => bo(0)? == bo(1)?,
                Op::LogicalNotEqual => bo(0)? != bo(1)?,
                Op::Select => {
                    if bo(0)? {
                        bo(1)?
                    } else {
                        bo(2)?
                    }
                }
                Op::IEqual => a(0)?.bits == a(1)?.bits,
                Op::INotEqual => a(0)?.bits != a(1)?.bits,
                Op::ULessThan => a(0)?.bits < a(1)?.bits,
                Op::UGreaterThan => a(0)?.bits > a(1)?.bits,
                Op::ULessThanEqual => a(0)?.bits <= a(1)?.bits,
                Op::UGreaterThanEqual => a(0)?.bits >= a(1)?.bits,
                Op::SLessThan => a(0)?.signed() < a(1)?.signed(),
                Op::SGreaterThan => a(0)?.signed() > a(1)?.signed(),
                Op::SLessThanEqual => a(0)?.signed() <= a(1)?.signed(),
                Op::SGreaterThanEqual => a(0)?.signed() >= a(1)?.signed(),
                _ => return None,
            };
            return Some(Const::Bool(v));
        }
        let Ty::Int { width, .. } = rty else {
            return None;
        };
        let width = *width;
        let v: u64 = match op {
            Op::IAdd => a(0)?.bits.wrapping_add(a(1)?.bits),
            Op::ISub => a(0)?.bits.wrapping_sub(a(1)?.bits),
            Op::IMul => a(0)?.bits.wrapping_mul(a(1)?.bits),
            Op::UDiv => a(0)?.bits.checked_div(a(1)?.bits)?,
            Op::UMod => a(0)?.bits.checked_rem(a(1)?.bits)?,
            Op::SDiv => a(0)?.signed().checked_div(a(1)?.signed())? as u64,
            Op::SRem => a(0)?.signed().checked_rem(a(1)?.signed())? as u64,
            Op::SMod => {
                let (x, y) = (a(0)?.signed(), a(1)?.signed());
                let r = x.checked_rem(y)?;
                (if r != 0 && (r < 0) != (y < 0) {
                    r + y
                } else {
                    r
                }) as u64
            }
            Op::SNegate => a(0)?.signed().wrapping_neg() as u64,
            Op::Not => !a(0)?.bits,
            Op::ShiftLeftLogical => a(0)?.bits.checked_shl(u32::try_from(a(1)?.bits).ok()?)?,
            Op::ShiftRightLogical => a(0)?.bits.checked_shr(u32::try_from(a(1)?.bits).ok()?)?,
            Op::ShiftRightArithmetic => a(0)?
                .signed()
                .checked_shr(u32::try_from(a(1)?.bits).ok()?)?
                as u64,
            Op::BitwiseAnd => a(0)?.bits & a(1)?.bits,
            Op::BitwiseOr => a(0)?.bits | a(1)?.bits,
            Op::BitwiseXor => a(0)?.bits ^ a(1)?.bits,
            Op::UConvert => a(0)?.bits,
            Op::SConvert => a(0)?.signed() as u64,
            Op::Select => {
                if bo(0)? {
                    a(1)?.bits
                } else {
                    a(2)?.bits
                }
            }
            _ => return None,
        };
        Some(Const::Int(mask(v, width)))
    }
}
