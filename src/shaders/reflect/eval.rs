//! Evaluation of integer/boolean specialization-constant expressions (OpSpecConstantOp)
//! at their defaults, as the module declares them.
//!
//! Source: SPIR-V spec §3.56.x "OpSpecConstantOp" (the list of opcodes valid in it).
//! Each expression is evaluated once, when it is declared; its operands must already be
//! known (SPIR-V forbids forward references among constants), so cycles in a corrupt
//! module simply evaluate to "unknown" and nothing recurses.
//! Float expressions (`FAdd`, `QuantizeToF16`, …) are not evaluated: they make the value
//! unknown, never an error.
//!
//! The composite operations (VectorShuffle, CompositeExtract, CompositeInsert) are
//! followed through the constant composites, so that e.g. a component extracted from a
//! shuffled spec-constant vector can size a descriptor array.

use rspirv::dr::Operand;
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

/// The "undefined component" literal of OpVectorShuffle (SPIR-V spec, OpVectorShuffle).
const UNDEFINED_COMPONENT: u32 = 0xFFFF_FFFF;

/// Stands for a part whose value is unknown: no id is 0 (SPIR-V spec §2.3 "Physical
/// Layout": every id is above 0 and below the bound).
const UNKNOWN_PART: u32 = 0;

impl Tables {
    /// Records the value of `OpSpecConstantOp op operands` for a composite operation:
    /// VectorShuffle and a one-index CompositeInsert give a new composite, CompositeExtract
    /// the part's value (a scalar constant or a composite). Anything kiln cannot follow
    /// (an operand that is not a known composite, an index out of range, a CompositeInsert
    /// several levels deep) leaves the value unknown.
    pub(crate) fn eval_composite_op(&mut self, rid: u32, op: Op, operands: &[Operand]) {
        let ids: Vec<u32> = operands
            .iter()
            .filter_map(|o| match o {
                Operand::IdRef(v) => Some(*v),
                _ => None,
            })
            .collect();
        let literals: Vec<u32> = operands
            .iter()
            .filter_map(|o| match o {
                Operand::LiteralBit32(v) => Some(*v),
                _ => None,
            })
            .collect();
        match (op, ids.as_slice()) {
            (Op::VectorShuffle, [a, b]) => {
                let (Some(a), Some(b)) = (self.composites.get(a), self.composites.get(b)) else {
                    return;
                };
                let parts = literals
                    .iter()
                    .map(|&c| {
                        if c == UNDEFINED_COMPONENT {
                            return UNKNOWN_PART;
                        }
                        let c = c as usize;
                        let part = a.get(c).or_else(|| b.get(c.checked_sub(a.len())?));
                        part.copied().unwrap_or(UNKNOWN_PART)
                    })
                    .collect();
                self.composites.insert(rid, parts);
            }
            (Op::CompositeExtract, [composite]) => {
                let mut part = *composite;
                for &i in &literals {
                    match self.composites.get(&part).and_then(|p| p.get(i as usize)) {
                        Some(&p) => part = p,
                        None => return,
                    }
                }
                if let Some(c) = self.consts.get(&part).copied() {
                    self.consts.insert(rid, c);
                } else if let Some(parts) = self.composites.get(&part).cloned() {
                    self.composites.insert(rid, parts);
                }
            }
            (Op::CompositeInsert, [object, composite]) => {
                let ([i], Some(parts)) = (literals.as_slice(), self.composites.get(composite))
                else {
                    return;
                };
                let mut parts = parts.clone();
                if let Some(p) = parts.get_mut(*i as usize) {
                    *p = *object;
                    self.composites.insert(rid, parts);
                }
            }
            _ => {}
        }
    }

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
