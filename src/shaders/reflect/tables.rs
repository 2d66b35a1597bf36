//! Module-wide tables built from one pass over a parsed module: types, constants,
//! decorations, names, global variables and the static call graph.
//!
//! Everything here is keyed by SPIR-V result id. Lookups of ids that are missing (a corrupt
//! module) return `None` and the caller turns that into a coded error; nothing panics.
//!
//! Determinism (issue 17): reflection output and error messages are the same on every run.
//! A `HashMap` here is only ever looked up by key, never iterated, because its iteration
//! order changes from run to run (and from map to map); whatever is iterated is a `Vec` in
//! module order or a `BTreeMap`/`BTreeSet` in id order.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use rspirv::binary::{Consumer, ParseAction as Action};
use rspirv::dr::{Instruction, ModuleHeader, Operand};
use rspirv::spirv::{BuiltIn, Decoration, Dim, ImageFormat, Op, StorageClass};

use super::forward::SetAside;
use crate::error::{Result, ShaderError};

mod types;

/// A SPIR-V type, as much of it as reflection needs.
#[derive(Clone, Debug)]
pub(crate) enum Ty {
    Void,
    Bool,
    Int {
        width: u32,
        signed: bool,
    },
    Float {
        width: u32,
    },
    Vector {
        component: u32,
        count: u32,
    },
    Matrix {
        column: u32,
        count: u32,
    },
    Image(ImageTy),
    Sampler,
    SampledImage {
        image: u32,
    },
    Array {
        element: u32,
        length: u32,
    },
    RuntimeArray {
        element: u32,
    },
    Struct {
        members: Vec<u32>,
    },
    Pointer {
        storage: StorageClass,
        pointee: u32,
    },
    AccelerationStructure,
    /// OpTypeTensorARM (SPV_ARM_tensors): a resource with no descriptor type in ash 0.38.
    TensorArm,
    Other,
}

/// Operands of OpTypeImage (SPIR-V spec §3.32.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageTy {
    /// Dimensionality (1D, 2D, 3D, Cube, Buffer, SubpassData).
    pub dim: Dim,
    /// 0 = not a depth image, 1 = depth, 2 = unknown.
    pub depth: u32,
    /// An array image.
    pub arrayed: bool,
    /// A multisampled image.
    pub multisampled: bool,
    /// 0 = known at run time only, 1 = sampled, 2 = storage.
    pub sampled: u32,
    /// The image format declared for storage images (`Unknown` when none).
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

impl Decos {
    /// Adds the decorations of a decoration group (SPIR-V spec, "Annotation
    /// Instructions": OpGroupDecorate / OpGroupMemberDecorate apply every decoration of
    /// the OpDecorationGroup to each target). A decoration the target already has stays
    /// (a valid module never has both). Every field of [`Decos`] is listed here.
    fn add_group(&mut self, g: &Decos) {
        self.set = self.set.or(g.set);
        self.binding = self.binding.or(g.binding);
        self.block |= g.block;
        self.buffer_block |= g.buffer_block;
        self.spec_id = self.spec_id.or(g.spec_id);
        self.builtin = self.builtin.or(g.builtin);
        self.location = self.location.or(g.location);
        self.component = self.component.or(g.component);
        self.input_attachment_index = self.input_attachment_index.or(g.input_attachment_index);
        self.non_writable |= g.non_writable;
        self.non_readable |= g.non_readable;
        self.array_stride = self.array_stride.or(g.array_stride);
        self.offset = self.offset.or(g.offset);
        self.matrix_stride = self.matrix_stride.or(g.matrix_stride);
        self.row_major |= g.row_major;
    }
}

/// What an OpGroupDecorate / OpGroupMemberDecorate applies a decoration group to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum GroupTarget {
    Id(u32),
    /// (struct type, member index)
    Member(u32, u32),
}

/// A global variable: storage class and the type it points to (`None` for an untyped
/// variable without a data type, SPV_KHR_untyped_pointers).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Global {
    pub storage: StorageClass,
    pub pointee: Option<u32>,
}

/// Key of the block-size memo: (type id, MatrixStride, RowMajor) of the enclosing member.
pub(crate) type SizeKey = (u32, Option<u32>, bool);

/// All per-module tables.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    /// Header version word.
    pub version: u32,
    /// Header generator word.
    pub generator: u32,
    pub capabilities: Vec<String>,
    pub extensions: Vec<String>,
    /// OpEntryPoint instructions in module order.
    pub entry_points: Vec<Instruction>,
    /// The Scope operand (an id) of each OpTypeCooperativeMatrixKHR, in module order.
    pub cooperative_matrix_scope_ids: Vec<u32>,
    /// OpExecutionMode / OpExecutionModeId instructions in module order.
    pub execution_modes: Vec<Instruction>,
    /// (entry point function, mode number) of each execution mode newer than rspirv's
    /// grammar, in module order (see `forward`).
    pub unknown_execution_modes: Vec<(u32, u32)>,
    pub types: HashMap<u32, Ty>,
    /// Type id of each constant.
    pub const_types: HashMap<u32, u32>,
    /// Scalar constants, spec constants at their default, and OpSpecConstantOp results
    /// kiln could evaluate (see `eval.rs`).
    pub consts: HashMap<u32, Const>,
    /// The id operands of each OpSpecConstantOp (what its value is computed from).
    pub spec_op_args: HashMap<u32, Vec<u32>>,
    /// Specialization values that replace the defaults, by SpecId (empty for reflection;
    /// see `specialize`).
    pub overrides: BTreeMap<u32, u64>,
    /// Scalar spec constants (OpSpecConstant*), in declaration order.
    pub spec_consts: Vec<u32>,
    /// Constant composites: id -> parts (iterated, in id order, for the WorkgroupSize
    /// built-in).
    pub composites: BTreeMap<u32, Vec<u32>>,
    pub decos: HashMap<u32, Decos>,
    pub member_decos: HashMap<(u32, u32), Decos>,
    /// (decoration group, target) of each OpGroupDecorate / OpGroupMemberDecorate target,
    /// in module order; applied to `decos` / `member_decos` once the module is read.
    pub group_targets: Vec<(u32, GroupTarget)>,
    pub names: HashMap<u32, String>,
    pub member_names: HashMap<(u32, u32), String>,
    /// Global variables by id (looked up only: iterate [`global_order`](Self::global_order)).
    pub globals: HashMap<u32, Global>,
    /// Global variable ids in declaration order.
    pub global_order: Vec<u32>,
    /// Function id -> global variables it references directly (in any operand, which
    /// covers access chains, loads/stores, OpArrayLength and passing as a call argument).
    pub uses: HashMap<u32, BTreeSet<u32>>,
    /// Function id -> functions it calls.
    pub calls: HashMap<u32, BTreeSet<u32>>,
    /// Memo of block-layout type sizes: (type, matrix stride, row major) -> size.
    pub(crate) size_memo: RefCell<HashMap<SizeKey, Option<u32>>>,
    /// Memo of nested struct layouts by struct type id (shared, so a module whose structs
    /// nest each other many times over stays linear in size).
    pub(crate) struct_memo: RefCell<HashMap<u32, Option<std::sync::Arc<super::BlockLayout>>>>,
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

/// Receives rspirv's parsed instructions one by one and files them into [`Tables`].
/// Instructions are routed by opcode, not by module section, so constructs newer than
/// rspirv's module loader (OpExecutionModeId, OpUntypedVariableKHR) are still seen.
struct Builder {
    t: Tables,
    function: Option<u32>,
    /// The header's id bound, and the first id found at or above it.
    bound: u32,
    bad_id: Option<u32>,
    /// Instructions received so far (rspirv numbers them from 1).
    received: usize,
    /// kiln's decoding of each OpSpecConstantOp, by instruction number: it replaces the
    /// placeholder rspirv parsed there (see `specop`).
    spec_ops: BTreeMap<usize, Instruction>,
    /// Instructions rspirv's grammar cannot decode, by instruction number: filed from
    /// their words instead of the placeholder rspirv parsed there (see `forward`).
    set_aside: BTreeMap<usize, SetAside>,
}

impl Consumer for Builder {
    fn initialize(&mut self) -> Action {
        Action::Continue
    }
    fn finalize(&mut self) -> Action {
        Action::Continue
    }
    fn consume_header(&mut self, _: ModuleHeader) -> Action {
        // rspirv's header carries its own generator id, not the module's: the header
        // words are read directly in `Tables::parse`.
        Action::Continue
    }
    fn consume_instruction(&mut self, inst: Instruction) -> Action {
        self.received += 1;
        if let Some(aside) = self.set_aside.remove(&self.received) {
            self.t.add_set_aside(&aside, &mut self.function);
            return Action::Continue;
        }
        let inst = self.spec_ops.remove(&self.received).unwrap_or(inst);
        // Every id must be below the bound (SPIR-V spec §2.3 "Physical Layout"); drivers
        // index tables by id, so an id past it must never reach them.
        let ids = inst
            .result_id
            .iter()
            .chain(inst.result_type.iter())
            .copied()
            .chain(inst.operands.iter().filter_map(|o| match o {
                Operand::IdRef(i) | Operand::IdScope(i) | Operand::IdMemorySemantics(i) => Some(*i),
                _ => None,
            }));
        if let Some(bad) = ids.into_iter().find(|&i| i >= self.bound) {
            self.bad_id = Some(bad);
            return Action::Stop;
        }
        self.t.add(inst, &mut self.function);
        Action::Continue
    }
}

impl Tables {
    /// Parses checked words (see `check_words`) with rspirv's binary parser
    /// (OpSpecConstantOp with kiln's own decoder, see `specop`; what rspirv's grammar
    /// cannot decode set aside, see `forward`) and builds the tables.
    /// Errors: `KILN-E010` when rspirv rejects the stream, `KILN-E009` an id not below the
    /// header's bound.
    pub(super) fn parse(words: &[u32]) -> Result<Tables, ShaderError> {
        Self::parse_specialized(words, BTreeMap::new())
    }

    /// [`parse`](Self::parse) with the specialization constants of the SpecIds in
    /// `overrides` at the given bits instead of their defaults (see `specialize`).
    pub(super) fn parse_specialized(
        words: &[u32],
        overrides: BTreeMap<u32, u64>,
    ) -> Result<Tables, ShaderError> {
        let bound = words.get(3).copied().unwrap_or(0);
        let (words, set_aside) = super::forward::set_aside(words);
        let (words, spec_ops) = super::specop::predecode(&words);
        let words: &[u32] = &words;
        let mut b = Builder {
            t: Tables {
                overrides,
                ..Tables::default()
            },
            function: None,
            bound,
            bad_id: None,
            received: 0,
            spec_ops,
            set_aside,
        };
        b.t.version = words.get(1).copied().unwrap_or(0);
        b.t.generator = words.get(2).copied().unwrap_or(0);
        // `check_words` already rejected every input known to make rspirv's parser panic
        // (see `check_spec_constant_op`); the fuzz test `reflect_fuzz` holds that. The
        // catch_unwind stays as a last line of defence for untrusted files: it turns an
        // unknown parser panic into a coded error (the default panic hook still prints it,
        // so it is noticed and can be pre-validated too). Nothing shared is mutated inside.
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rspirv::binary::parse_words(words, &mut b)
        }));
        if let Some(id) = b.bad_id {
            return Err(ShaderError::SpirvIdOutOfBound { id, bound });
        }
        match parsed {
            Ok(Ok(())) => {
                b.t.apply_decoration_groups();
                Ok(b.t)
            }
            Ok(Err(e)) => Err(ShaderError::SpirvParse {
                detail: e.to_string(),
            }),
            Err(_) => Err(ShaderError::SpirvParse {
                detail: "the SPIR-V parser rejected the module (internal assertion)".into(),
            }),
        }
    }

    fn add(&mut self, inst: Instruction, function: &mut Option<u32>) {
        let op = inst.class.opcode;
        if let Some(f) = *function {
            match op {
                Op::FunctionEnd => *function = None,
                Op::FunctionCall => {
                    if let Some(callee) = id(inst.operands.first()) {
                        self.calls.entry(f).or_default().insert(callee);
                    }
                }
                _ => {}
            }
            for o in &inst.operands {
                if let Operand::IdRef(r) = o {
                    if self.globals.contains_key(r) {
                        self.uses.entry(f).or_default().insert(*r);
                    }
                }
            }
            return;
        }
        match op {
            Op::Function => {
                if let Some(rid) = inst.result_id {
                    *function = Some(rid);
                    self.uses.entry(rid).or_default();
                    self.calls.entry(rid).or_default();
                }
            }
            Op::Capability => {
                if let Some(Operand::Capability(c)) = inst.operands.first() {
                    self.capabilities.push(format!("{c:?}"));
                }
            }
            Op::Extension => {
                if let Some(Operand::LiteralString(s)) = inst.operands.first() {
                    self.extensions.push(s.clone());
                }
            }
            Op::EntryPoint => self.entry_points.push(inst),
            Op::ExecutionMode | Op::ExecutionModeId => self.execution_modes.push(inst),
            Op::Name | Op::MemberName => self.add_name(&inst),
            Op::Decorate
            | Op::DecorateId
            | Op::DecorateString
            | Op::MemberDecorate
            | Op::MemberDecorateString => self.add_decoration(&inst),
            Op::GroupDecorate | Op::GroupMemberDecorate => self.add_group_targets(&inst),
            _ => self.add_global(&inst),
        }
    }

    /// Files an instruction rspirv's grammar cannot decode (see `forward` for what each
    /// kind gives).
    fn add_set_aside(&mut self, aside: &SetAside, function: &mut Option<u32>) {
        let w = &aside.words;
        if let Some(f) = *function {
            for word in w.iter().skip(1) {
                if self.globals.contains_key(word) {
                    self.uses.entry(f).or_default().insert(*word);
                }
            }
            return;
        }
        match aside.op() {
            Some(Op::Function) => {
                if let Some(&rid) = w.get(2) {
                    *function = Some(rid);
                    self.uses.entry(rid).or_default();
                    self.calls.entry(rid).or_default();
                }
            }
            Some(Op::Capability) => {
                if let Some(&c) = w.get(1) {
                    self.capabilities.push(crate::device::capability_name(c));
                }
            }
            Some(Op::ExecutionMode | Op::ExecutionModeId) => {
                if let (Some(&target), Some(&mode)) = (w.get(1), w.get(2)) {
                    self.unknown_execution_modes.push((target, mode));
                }
            }
            _ => {}
        }
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

    /// Records the targets of OpGroupDecorate (`group, target...`) and
    /// OpGroupMemberDecorate (`group, (struct, member)...`).
    fn add_group_targets(&mut self, inst: &Instruction) {
        let Some((Operand::IdRef(group), rest)) = inst.operands.split_first() else {
            return;
        };
        if inst.class.opcode == Op::GroupDecorate {
            for target in rest.iter().filter_map(|o| id(Some(o))) {
                self.group_targets.push((*group, GroupTarget::Id(target)));
            }
        } else {
            for pair in rest.chunks_exact(2) {
                if let [Operand::IdRef(ty), Operand::LiteralBit32(member)] = pair {
                    let target = GroupTarget::Member(*ty, *member);
                    self.group_targets.push((*group, target));
                }
            }
        }
    }

    /// Gives each group target the decorations of its group. Groups are applied after the
    /// whole module is read, so where the group's own OpDecorate sits does not matter.
    fn apply_decoration_groups(&mut self) {
        for (group, target) in std::mem::take(&mut self.group_targets) {
            let Some(g) = self.decos.get(&group).cloned() else {
                continue;
            };
            match target {
                GroupTarget::Id(t) => self.decos.entry(t).or_default().add_group(&g),
                GroupTarget::Member(ty, m) => {
                    self.member_decos.entry((ty, m)).or_default().add_group(&g)
                }
            }
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

    /// Reads one global instruction (module docs): a type, a variable, a constant.
    fn add_global(&mut self, inst: &Instruction) {
        let Some(rid) = inst.result_id else {
            return;
        };
        match inst.class.opcode {
            Op::Variable => self.add_variable(inst, rid),
            Op::UntypedVariableKHR => self.add_untyped_variable(inst, rid),
            Op::Constant | Op::SpecConstant => self.add_constant(inst, rid),
            Op::ConstantTrue | Op::ConstantFalse | Op::SpecConstantTrue | Op::SpecConstantFalse => {
                self.add_bool_constant(inst, rid)
            }
            Op::ConstantComposite | Op::SpecConstantComposite => {
                let parts = inst.operands.iter().filter_map(|o| id(Some(o))).collect();
                self.composites.insert(rid, parts);
            }
            Op::SpecConstantOp => self.add_spec_constant_op(inst, rid),
            _ => {
                if let Some(ty) = self.type_of(inst) {
                    self.types.insert(rid, ty);
                }
            }
        }
    }

    /// `OpVariable`: a global of the storage class and pointee of its pointer type.
    fn add_variable(&mut self, inst: &Instruction, rid: u32) {
        let pointer = inst.result_type.and_then(|p| match self.types.get(&p) {
            Some(Ty::Pointer { storage, pointee }) => Some((*storage, *pointee)),
            _ => None,
        });
        if let Some((storage, pointee)) = pointer {
            self.globals.insert(
                rid,
                Global {
                    storage,
                    pointee: Some(pointee),
                },
            );
            self.global_order.push(rid);
        }
    }

    /// `OpUntypedVariableKHR`: a global of its storage class and data type operand.
    fn add_untyped_variable(&mut self, inst: &Instruction, rid: u32) {
        let ops = &inst.operands;
        if let Some(Operand::StorageClass(storage)) = ops.first() {
            self.globals.insert(
                rid,
                Global {
                    storage: *storage,
                    pointee: id(ops.get(1)),
                },
            );
            self.global_order.push(rid);
        }
    }

    /// `OpConstant`, `OpSpecConstant` (with its given specialization value, masked to the
    /// constant's width).
    fn add_constant(&mut self, inst: &Instruction, rid: u32) {
        let ops = &inst.operands;
        let value = match ops.first() {
            Some(Operand::LiteralBit32(v)) => Some(*v as u64),
            Some(Operand::LiteralBit64(v)) => Some(*v),
            _ => None,
        };
        let given = match (inst.class.opcode, inst.result_type) {
            (Op::SpecConstant, Some(ty)) => self.override_of(rid).map(|v| {
                // The value as the constant's width holds it (SPIR-V spec §2.2.1).
                match self.types.get(&ty) {
                    Some(Ty::Int { width, .. } | Ty::Float { width }) if *width < 64 => {
                        v & ((1u64 << width) - 1)
                    }
                    _ => v,
                }
            }),
            _ => None,
        };
        if let (Some(v), Some(ty)) = (given.or(value), inst.result_type) {
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
    }

    /// `OpConstantTrue/False`, `OpSpecConstantTrue/False` (with its given value).
    fn add_bool_constant(&mut self, inst: &Instruction, rid: u32) {
        let v = matches!(inst.class.opcode, Op::ConstantTrue | Op::SpecConstantTrue);
        let v = match inst.class.opcode {
            Op::SpecConstantTrue | Op::SpecConstantFalse => {
                self.override_of(rid).map_or(v, |bits| bits != 0)
            }
            _ => v,
        };
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
    }

    /// `OpSpecConstantOp`: its type and arguments, and its value where it folds.
    fn add_spec_constant_op(&mut self, inst: &Instruction, rid: u32) {
        let ops = &inst.operands;
        if let (Some(Operand::LiteralSpecConstantOpInteger(op)), Some(ty)) =
            (ops.first(), inst.result_type)
        {
            self.const_types.insert(rid, ty);
            let args = ops[1..].iter().filter_map(|o| id(Some(o))).collect();
            self.spec_op_args.insert(rid, args);
            if matches!(
                op,
                Op::VectorShuffle | Op::CompositeExtract | Op::CompositeInsert
            ) {
                self.eval_composite_op(rid, *op, &ops[1..]);
            } else {
                let args: Vec<u32> = ops[1..].iter().filter_map(|o| id(Some(o))).collect();
                if let Some(c) = self.eval_spec_op(*op, &args, ty) {
                    self.consts.insert(rid, c);
                }
            }
        }
    }

    /// The specialization value given for constant `rid` (by its SpecId), if any.
    /// Its SpecId may come from a decoration group (`OpGroupDecorate`), whose decorations
    /// are applied to `decos` only once the module is read: looked up there too.
    fn override_of(&self, rid: u32) -> Option<u64> {
        if self.overrides.is_empty() {
            return None;
        }
        let direct = self.decos.get(&rid).and_then(|d| d.spec_id);
        let sid = direct.or_else(|| {
            self.group_targets
                .iter()
                .find_map(|(group, target)| match target {
                    GroupTarget::Id(t) if *t == rid => self.decos.get(group)?.spec_id,
                    _ => None,
                })
        })?;
        self.overrides.get(&sid).copied()
    }

    /// The value of an integer or boolean constant (plain, a spec constant's default, or
    /// an OpSpecConstantOp kiln evaluated). `None` for floats and unknown expressions.
    pub(super) fn eval_int(&self, id: u32) -> Option<u64> {
        match self.consts.get(&id)? {
            Const::Int(v) => Some(*v),
            Const::Bool(b) => Some(*b as u64),
            Const::FloatBits(_) => None,
        }
    }

    /// The functions reachable from `entry` through OpFunctionCall (cycles tolerated).
    pub(super) fn reachable(&self, entry: u32) -> BTreeSet<u32> {
        let mut seen = BTreeSet::new();
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
    pub(super) fn used_globals(&self, entry: u32) -> BTreeSet<u32> {
        let mut used = BTreeSet::new();
        for f in self.reachable(entry) {
            if let Some(u) = self.uses.get(&f) {
                used.extend(u.iter().copied());
            }
        }
        used
    }

    pub(super) fn deco(&self, id: u32) -> Option<&Decos> {
        self.decos.get(&id)
    }

    /// Storage class and pointee type of a global variable.
    pub(super) fn variable_pointee(&self, var: u32) -> Option<(StorageClass, u32)> {
        let g = self.globals.get(&var)?;
        Some((g.storage, g.pointee?))
    }
}
