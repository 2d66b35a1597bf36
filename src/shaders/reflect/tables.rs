//! Module-wide tables built from one pass over a parsed module: types, constants,
//! decorations, names, global variables and the static call graph.
//!
//! Everything here is keyed by SPIR-V result id. Lookups of ids that are missing (a corrupt
//! module) return `None` and the caller turns that into a coded error; nothing panics.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{BuiltIn, Decoration, Dim, ImageFormat, Op, StorageClass};

/// A SPIR-V type, as much of it as reflection needs.
#[derive(Clone, Debug)]
pub(crate) enum Ty {
    Void,
    Bool,
    Int { width: u32, signed: bool },
    Float { width: u32 },
    Vector { component: u32, count: u32 },
    Matrix { column: u32, count: u32 },
    Image(ImageTy),
    Sampler,
    SampledImage { image: u32 },
    Array { element: u32, length: u32 },
    RuntimeArray { element: u32 },
    Struct { members: Vec<u32> },
    Pointer { storage: StorageClass, pointee: u32 },
    AccelerationStructure,
    Other,
}

/// Operands of OpTypeImage (SPIR-V spec §3.32.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageTy {
    pub dim: Dim,
    pub depth: u32,
    pub arrayed: bool,
    pub multisampled: bool,
    /// 0 = known at run time only, 1 = sampled, 2 = storage.
    pub sampled: u32,
    pub format: ImageFormat,
}

/// A scalar constant value (spec constants hold their default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Const {
    Bool(bool),
    Int(u64),
    /// Raw bits of a float constant.
    FloatBits(u64),
}

/// Decorations of one id (or one struct member).
#[derive(Clone, Debug, Default)]
pub(crate) struct Decos {
    pub set: Option<u32>,
    pub binding: Option<u32>,
    pub block: bool,
    pub buffer_block: bool,
    pub spec_id: Option<u32>,
    pub builtin: Option<BuiltIn>,
    pub location: Option<u32>,
    pub component: Option<u32>,
    pub input_attachment_index: Option<u32>,
    pub non_writable: bool,
    pub non_readable: bool,
    pub array_stride: Option<u32>,
    pub offset: Option<u32>,
    pub matrix_stride: Option<u32>,
    pub row_major: bool,
}

/// All per-module tables.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    pub types: HashMap<u32, Ty>,
    /// Type id of each constant.
    pub const_types: HashMap<u32, u32>,
    pub consts: HashMap<u32, Const>,
    /// Spec constants: id -> true (a scalar OpSpecConstant*).
    pub spec_consts: Vec<u32>,
    /// OpSpecConstantOp / composites: id -> (opcode, operand ids).
    pub const_ops: HashMap<u32, (Op, Vec<u32>)>,
    pub decos: HashMap<u32, Decos>,
    pub member_decos: HashMap<(u32, u32), Decos>,
    pub names: HashMap<u32, String>,
    pub member_names: HashMap<(u32, u32), String>,
    /// Global variables: id -> pointer type id.
    pub globals: HashMap<u32, u32>,
    /// Function id -> global variables it references directly.
    pub uses: HashMap<u32, HashSet<u32>>,
    /// Function id -> functions it calls.
    pub calls: HashMap<u32, HashSet<u32>>,
}

fn id(op: Option<&Operand>) -> Option<u32> {
    match op {
        Some(Operand::IdRef(v)) => Some(*v),
        _ => None,
    }
}

fn lit(op: Option<&Operand>) -> Option<u32> {
    match op {
        Some(Operand::LiteralBit32(v)) => Some(*v),
        _ => None,
    }
}

impl Tables {
    pub fn build(module: &Module) -> Tables {
        let mut t = Tables::default();
        for inst in &module.debug_names {
            t.add_name(inst);
        }
        for inst in &module.annotations {
            t.add_decoration(inst);
        }
        for inst in &module.types_global_values {
            t.add_global(inst);
        }
        for f in &module.functions {
            let Some(fid) = f.def.as_ref().and_then(|d| d.result_id) else {
                continue;
            };
            let mut uses = HashSet::new();
            let mut calls = HashSet::new();
            for inst in f.blocks.iter().flat_map(|b| b.instructions.iter()) {
                if inst.class.opcode == Op::FunctionCall {
                    if let Some(callee) = id(inst.operands.first()) {
                        calls.insert(callee);
                    }
                }
                for op in &inst.operands {
                    if let Operand::IdRef(r) = op {
                        if t.globals.contains_key(r) {
                            uses.insert(*r);
                        }
                    }
                }
            }
            t.uses.entry(fid).or_default().extend(uses);
            t.calls.entry(fid).or_default().extend(calls);
        }
        t
    }

    fn add_name(&mut self, inst: &Instruction) {
        match (inst.class.opcode, inst.operands.as_slice()) {
            (Op::Name, [Operand::IdRef(target), Operand::LiteralString(s)]) => {
                self.names.insert(*target, s.clone());
            }
            (
                Op::MemberName,
                [Operand::IdRef(target), Operand::LiteralBit32(m), Operand::LiteralString(s)],
            ) => {
                self.member_names.insert((*target, *m), s.clone());
            }
            _ => {}
        }
    }

    fn add_decoration(&mut self, inst: &Instruction) {
        let (target, rest) = match inst.class.opcode {
            Op::Decorate | Op::DecorateId | Op::DecorateString => {
                let Some(target) = id(inst.operands.first()) else {
                    return;
                };
                (self.decos.entry(target).or_default(), &inst.operands[1..])
            }
            Op::MemberDecorate | Op::MemberDecorateString => {
                let (Some(target), Some(member)) =
                    (id(inst.operands.first()), lit(inst.operands.get(1)))
                else {
                    return;
                };
                let d = self.member_decos.entry((target, member)).or_default();
                (d, inst.operands.get(2..).unwrap_or(&[]))
            }
            _ => return,
        };
        let Some(Operand::Decoration(deco)) = rest.first() else {
            return;
        };
        let arg = lit(rest.get(1));
        match deco {
            Decoration::DescriptorSet => target.set = arg,
            Decoration::Binding => target.binding = arg,
            Decoration::Block => target.block = true,
            Decoration::BufferBlock => target.buffer_block = true,
            Decoration::SpecId => target.spec_id = arg,
            Decoration::Location => target.location = arg,
            Decoration::Component => target.component = arg,
            Decoration::InputAttachmentIndex => target.input_attachment_index = arg,
            Decoration::NonWritable => target.non_writable = true,
            Decoration::NonReadable => target.non_readable = true,
            Decoration::ArrayStride => target.array_stride = arg,
            Decoration::Offset => target.offset = arg,
            Decoration::MatrixStride => target.matrix_stride = arg,
            Decoration::RowMajor => target.row_major = true,
            Decoration::BuiltIn => {
                if let Some(Operand::BuiltIn(b)) = rest.get(1) {
                    target.builtin = Some(*b);
                }
            }
            _ => {}
        }
    }

    fn add_global(&mut self, inst: &Instruction) {
        let Some(rid) = inst.result_id else {
            return;
        };
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
            Op::Variable => {
                if let Some(ptr) = inst.result_type {
                    self.globals.insert(rid, ptr);
                }
                return;
            }
            Op::Constant | Op::SpecConstant => {
                let value = match ops.first() {
                    Some(Operand::LiteralBit32(v)) => Some(*v as u64),
                    Some(Operand::LiteralBit64(v)) => Some(*v),
                    _ => None,
                };
                if let (Some(v), Some(ty)) = (value, inst.result_type) {
                    let is_float = matches!(self.types.get(&ty), Some(Ty::Float { .. }));
                    let c = if is_float {
                        Const::FloatBits(v)
                    } else {
                        Const::Int(v)
                    };
                    self.consts.insert(rid, c);
                    self.const_types.insert(rid, ty);
                }
                if inst.class.opcode == Op::SpecConstant {
                    self.spec_consts.push(rid);
                }
                return;
            }
            Op::ConstantTrue | Op::ConstantFalse | Op::SpecConstantTrue | Op::SpecConstantFalse => {
                let v = matches!(inst.class.opcode, Op::ConstantTrue | Op::SpecConstantTrue);
                self.consts.insert(rid, Const::Bool(v));
                if let Some(ty) = inst.result_type {
                    self.const_types.insert(rid, ty);
                }
                if matches!(
                    inst.class.opcode,
                    Op::SpecConstantTrue | Op::SpecConstantFalse
                ) {
                    self.spec_consts.push(rid);
                }
                return;
            }
            Op::ConstantComposite | Op::SpecConstantComposite => {
                let parts = ops.iter().filter_map(|o| id(Some(o))).collect();
                self.const_ops.insert(rid, (inst.class.opcode, parts));
                return;
            }
            Op::SpecConstantOp => {
                if let Some(Operand::LiteralSpecConstantOpInteger(op)) = ops.first() {
                    let args = ops[1..].iter().filter_map(|o| id(Some(o))).collect();
                    self.const_ops.insert(rid, (*op, args));
                }
                return;
            }
            _ => return,
        };
        self.types.insert(rid, ty);
    }

    /// Evaluates an integer constant (plain, spec default, or a simple OpSpecConstantOp over
    /// those). `None` when it is not an integer or the expression is beyond kiln's evaluator.
    pub fn eval_int(&self, id: u32) -> Option<u64> {
        self.eval_int_depth(id, 0)
    }

    fn eval_int_depth(&self, id: u32, depth: u32) -> Option<u64> {
        if depth > 64 {
            return None; // a cycle or absurd nesting in a corrupt module
        }
        match self.consts.get(&id) {
            Some(Const::Int(v)) => return Some(*v),
            Some(Const::Bool(b)) => return Some(*b as u64),
            Some(Const::FloatBits(_)) => return None,
            None => {}
        }
        let (op, args) = self.const_ops.get(&id)?;
        let a = |i: usize| -> Option<u64> { self.eval_int_depth(*args.get(i)?, depth + 1) };
        let v = match op {
            Op::IAdd => a(0)?.wrapping_add(a(1)?),
            Op::ISub => a(0)?.wrapping_sub(a(1)?),
            Op::IMul => a(0)?.wrapping_mul(a(1)?),
            Op::UDiv | Op::SDiv => a(0)?.checked_div(a(1)?)?,
            Op::UMod | Op::SMod | Op::SRem => a(0)?.checked_rem(a(1)?)?,
            Op::ShiftLeftLogical => a(0)?.checked_shl(a(1)? as u32)?,
            Op::ShiftRightLogical | Op::ShiftRightArithmetic => a(0)?.checked_shr(a(1)? as u32)?,
            Op::BitwiseAnd => a(0)? & a(1)?,
            Op::BitwiseOr => a(0)? | a(1)?,
            Op::BitwiseXor => a(0)? ^ a(1)?,
            Op::UConvert | Op::SConvert => a(0)?,
            Op::Select => {
                if a(0)? != 0 {
                    a(1)?
                } else {
                    a(2)?
                }
            }
            _ => return None,
        };
        Some(v)
    }

    /// The functions reachable from `entry` through OpFunctionCall (cycles tolerated).
    pub fn reachable(&self, entry: u32) -> HashSet<u32> {
        let mut seen = HashSet::new();
        let mut stack = vec![entry];
        while let Some(f) = stack.pop() {
            if !seen.insert(f) {
                continue;
            }
            if let Some(callees) = self.calls.get(&f) {
                stack.extend(callees.iter().copied().filter(|c| !seen.contains(c)));
            }
        }
        seen
    }

    /// Global variables statically used by any function reachable from `entry`.
    pub fn used_globals(&self, entry: u32) -> HashSet<u32> {
        let mut used = HashSet::new();
        for f in self.reachable(entry) {
            if let Some(u) = self.uses.get(&f) {
                used.extend(u.iter().copied());
            }
        }
        used
    }

    pub fn deco(&self, id: u32) -> Option<&Decos> {
        self.decos.get(&id)
    }

    /// Storage class and pointee type of a global variable.
    pub fn variable_pointee(&self, var: u32) -> Option<(StorageClass, u32)> {
        match self.types.get(self.globals.get(&var)?)? {
            Ty::Pointer { storage, pointee } => Some((*storage, *pointee)),
            _ => None,
        }
    }
}
