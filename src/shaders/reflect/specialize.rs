//! What a pipeline's specialization makes of a module (issue 30): the values that only the
//! specialization constants actually used reveal, evaluated before `vkCreate*Pipelines`.
//!
//! Vulkan requires the module to be valid "after applying the specializations provided in
//! pSpecializationInfo … and then converting all specialization constants into fixed
//! constants" (VUID-VkPipelineShaderStageCreateInfo-pSpecializationInfo-06719). Reflection
//! evaluates spec-constant expressions at their defaults (`eval.rs`); here the module is
//! read again with the pipeline's values in place of the defaults: every OpSpecConstant*
//! whose SpecId the pipeline gives takes that value as it is declared, so every
//! OpSpecConstantOp, composite, array length and workgroup size that depends on it is
//! evaluated from it by the same code that reflection uses. (Parsing again costs about
//! what reflection did, once per pipeline creation; nothing of a module's reflection
//! changes.)
//!
//! What comes out, for one entry point:
//! - its reflection as specialized ([`Specialized::entry`]): descriptor counts that come
//!   from specialization constants take the pipeline's values, so a pipeline's reflected
//!   layout holds as many descriptors as the shader indexes
//!   (VUID-VkComputePipelineCreateInfo-layout-07991, VUID-VkGraphicsPipelineCreateInfo-layout-07991);
//! - every OpTypeArray of the module whose length evaluates to 0 or, for a signed length,
//!   below 0 (SPIR-V spec, OpTypeArray: "Length must be … at least 1"), with the
//!   specialization constants the length depends on and their values;
//! - the workgroup size (LocalSize, LocalSizeId, the WorkgroupSize built-in) and the
//!   specialization constants it comes from;
//! - the bytes of the Workgroup-storage variables the entry point statically uses, as the
//!   validation layer counts them (VUID-RuntimeSpirv-Workgroup-06530: each variable's
//!   type size without padding; Block-decorated ones, which alias each other under
//!   WorkgroupMemoryExplicitLayoutKHR, count once, at the largest).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rspirv::dr::Operand;
use rspirv::spirv::StorageClass;

use super::tables::{Const, Tables, Ty};
use super::{bindings, entry, EntryPoint, SpecValue};
use crate::error::{Result, ShaderError};

/// An array whose specialized length is not at least 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BadArray {
    /// The OpTypeArray's result id.
    pub array: u32,
    /// The length as evaluated (signed lengths below 0 as such).
    pub length: i128,
    /// The specialization constants the length depends on, as `name (constant_id N) = V`.
    pub constants: Vec<String>,
}

/// One entry point of a module under a pipeline's specialization.
#[derive(Clone, Debug)]
pub(crate) struct Specialized {
    /// The entry point reflected with the pipeline's values (see the module docs).
    pub entry: EntryPoint,
    /// Arrays of the module whose length is not at least 1, by id.
    pub bad_arrays: Vec<BadArray>,
    /// The workgroup size, for compute, task and mesh entry points.
    pub workgroup_size: Option<[u32; 3]>,
    /// The specialization constants the workgroup size depends on (as in `BadArray`).
    pub workgroup_constants: Vec<String>,
    /// Bytes of Workgroup storage the entry point uses, and each variable's share as
    /// `name: bytes` (see the module docs for how they add up).
    pub shared_bytes: u64,
    /// The Workgroup variables counted, as `name (N bytes)`, with the constants their
    /// sizes depend on.
    pub shared_variables: Vec<String>,
}

/// The raw bits a specialization value is given as (SPIR-V: the constant's own width).
fn bits(v: &SpecValue) -> u64 {
    match *v {
        SpecValue::Bool(b) => b as u64,
        SpecValue::U32(x) => x as u64,
        SpecValue::I32(x) => x as u32 as u64,
        SpecValue::F32(x) => x.to_bits() as u64,
        SpecValue::U64(x) => x,
        SpecValue::I64(x) => x as u64,
        SpecValue::F64(x) => x.to_bits(),
        SpecValue::Other(x) => x,
    }
}

/// Reads `words` (a module that reflected) with `spec` in place of the defaults and
/// evaluates entry point `entry` (see the module docs).
///
/// Errors: those of reflection (none for a module that reflected), `KILN-E050` no such
/// entry point.
pub(crate) fn specialize(
    words: &[u32],
    entry: &str,
    spec: &[(u32, SpecValue)],
) -> Result<Specialized, ShaderError> {
    let overrides: BTreeMap<u32, u64> = spec.iter().map(|(id, v)| (*id, bits(v))).collect();
    let t = Tables::parse_specialized(words, overrides)?;
    let (inst, model, func) = t
        .entry_points
        .iter()
        .find_map(|ep| match ep.operands.as_slice() {
            [Operand::ExecutionModel(m), Operand::IdRef(f), Operand::LiteralString(n), ..]
                if n == entry =>
            {
                Some((ep.clone(), *m, *f))
            }
            _ => None,
        })
        .ok_or_else(|| ShaderError::EntryPointNotFound {
            name: entry.to_string(),
            available: String::new(),
        })?;
    let declared = bindings::declared_bindings(&t)?;
    let mut out = Specialized {
        entry: entry::reflect_entry(&t, &inst, &declared)?,
        bad_arrays: bad_arrays(&t),
        workgroup_size: None,
        workgroup_constants: Vec::new(),
        shared_bytes: 0,
        shared_variables: Vec::new(),
    };
    if let Some((wg, ids)) = entry::workgroup_size(&t, func, model) {
        out.workgroup_size = Some(wg.size);
        out.workgroup_constants = describe(&t, ids.iter().flat_map(|i| t.spec_leaves(*i)));
    }
    let used = t.used_globals(func);
    let (mut block_max, mut plain) = (0u64, 0u64);
    for var in t.global_order.iter().filter(|v| used.contains(v)) {
        let Some((StorageClass::Workgroup, pointee)) = t.variable_pointee(*var) else {
            continue;
        };
        let Some(size) = t.plain_size(pointee, 0, &mut HashMap::new()) else {
            continue;
        };
        let name = t
            .names
            .get(var)
            .cloned()
            .unwrap_or_else(|| format!("%{var}"));
        let mut leaves = BTreeSet::new();
        t.type_leaves(pointee, &mut BTreeSet::new(), &mut leaves);
        let consts = describe(&t, leaves);
        let from = if consts.is_empty() {
            String::new()
        } else {
            format!(", from {}", consts.join(", "))
        };
        out.shared_variables
            .push(format!("{name} ({size} bytes{from})"));
        if t.deco(pointee).is_some_and(|d| d.block) {
            block_max = block_max.max(size);
        } else {
            plain = plain.saturating_add(size);
        }
    }
    out.shared_bytes = plain.saturating_add(block_max);
    Ok(out)
}

/// Every OpTypeArray whose length is a known integer below 1, in id order.
fn bad_arrays(t: &Tables) -> Vec<BadArray> {
    let mut ids: Vec<u32> = t
        .types
        .iter()
        .filter(|(_, ty)| matches!(ty, Ty::Array { .. }))
        .map(|(id, _)| *id)
        .collect();
    ids.sort_unstable();
    ids.into_iter()
        .filter_map(|array| {
            let Some(Ty::Array { length, .. }) = t.types.get(&array) else {
                return None;
            };
            let value = t.signed_value(*length)?;
            (value < 1).then(|| BadArray {
                array,
                length: value,
                constants: describe(t, t.spec_leaves(*length)),
            })
        })
        .collect()
}

/// `name (constant_id N) = value` for each specialization constant, sorted by SpecId.
fn describe(t: &Tables, leaves: impl IntoIterator<Item = u32>) -> Vec<String> {
    let mut by_spec_id: BTreeMap<u32, String> = BTreeMap::new();
    for c in leaves {
        let Some(sid) = t.deco(c).and_then(|d| d.spec_id) else {
            continue;
        };
        let value = match t.consts.get(&c) {
            Some(Const::Bool(b)) => b.to_string(),
            Some(Const::Int(_)) => t
                .signed_value(c)
                .map_or_else(|| "?".into(), |v| v.to_string()),
            Some(Const::FloatBits(b)) => format!("bits {b:#x}"),
            None => "?".into(),
        };
        let name = t.names.get(&c).cloned().unwrap_or_else(|| format!("%{c}"));
        by_spec_id
            .entry(sid)
            .or_insert_with(|| format!("{name} (constant_id {sid}) = {value}"));
    }
    by_spec_id.into_values().collect()
}

impl Tables {
    /// The value of an integer constant as its type reads it (signed types sign-extended).
    pub(super) fn signed_value(&self, id: u32) -> Option<i128> {
        let Some(Const::Int(v)) = self.consts.get(&id) else {
            return None;
        };
        let signed = match self.types.get(self.const_types.get(&id)?)? {
            Ty::Int { width, signed } => (*signed).then_some(*width),
            _ => return None,
        };
        Some(match signed {
            Some(w @ 1..=63) => {
                let shift = 64 - w;
                (((*v << shift) as i64) >> shift) as i128
            }
            Some(_) => *v as i64 as i128,
            None => *v as i128,
        })
    }

    /// The specialization constants (with a SpecId) that constant `id` is computed from,
    /// through OpSpecConstantOp operands and composite parts.
    pub(super) fn spec_leaves(&self, id: u32) -> BTreeSet<u32> {
        let mut seen = BTreeSet::new();
        let mut leaves = BTreeSet::new();
        let mut stack = vec![id];
        while let Some(c) = stack.pop() {
            if !seen.insert(c) {
                continue;
            }
            if self.deco(c).is_some_and(|d| d.spec_id.is_some()) {
                leaves.insert(c);
            }
            if let Some(args) = self.spec_op_args.get(&c) {
                stack.extend(args.iter().copied());
            }
            if let Some(parts) = self.composites.get(&c) {
                stack.extend(parts.iter().copied());
            }
        }
        leaves
    }

    /// The specialization constants the array lengths inside type `ty` come from (each
    /// type visited once: `seen`).
    fn type_leaves(&self, ty: u32, seen: &mut BTreeSet<u32>, out: &mut BTreeSet<u32>) {
        if !seen.insert(ty) {
            return;
        }
        match self.types.get(&ty) {
            Some(Ty::Array { element, length }) => {
                out.extend(self.spec_leaves(*length));
                self.type_leaves(*element, seen, out);
            }
            Some(Ty::Struct { members }) => {
                for m in members {
                    self.type_leaves(*m, seen, out);
                }
            }
            _ => {}
        }
    }

    /// Bytes of a type without padding, as the validation layer sizes Workgroup variables:
    /// scalars their width (booleans 4), vectors and matrices their parts, arrays length ×
    /// element, structs the sum of their members, pointers 8. `None` when a part is
    /// unknown (an opaque type, a length kiln could not evaluate).
    /// Each type is sized once (`memo`), and nesting deeper than `MAX_DEPTH` is `None`.
    fn plain_size(&self, ty: u32, depth: u32, memo: &mut HashMap<u32, Option<u64>>) -> Option<u64> {
        if let Some(known) = memo.get(&ty) {
            return *known;
        }
        if depth > MAX_DEPTH {
            return None;
        }
        let size = self.plain_size_of(ty, depth + 1, memo);
        memo.insert(ty, size);
        size
    }

    fn plain_size_of(&self, ty: u32, d: u32, memo: &mut HashMap<u32, Option<u64>>) -> Option<u64> {
        Some(match self.types.get(&ty)? {
            Ty::Bool => 4,
            Ty::Int { width, .. } | Ty::Float { width } => u64::from(*width).div_ceil(8),
            Ty::Vector { component, count } => self
                .plain_size(*component, d, memo)?
                .checked_mul(u64::from(*count))?,
            Ty::Matrix { column, count } => self
                .plain_size(*column, d, memo)?
                .checked_mul(u64::from(*count))?,
            Ty::Array { element, length } => {
                let n = u64::try_from(self.signed_value(*length)?).ok()?;
                self.plain_size(*element, d, memo)?.checked_mul(n)?
            }
            Ty::Struct { members } => members.iter().try_fold(0u64, |sum, m| {
                sum.checked_add(self.plain_size(*m, d, memo)?)
            })?,
            Ty::Pointer { .. } => 8,
            _ => return None,
        })
    }
}

/// Types nest at most this deep here (a corrupt module's cycles end, nothing recurses
/// without bound).
const MAX_DEPTH: u32 = 64;

#[cfg(test)]
mod tests {
    use super::*;

    /// `tests/fixtures/spec_arrays.frag`: set 1 is `sampler2D layers[LAYERS]`, LAYERS is
    /// SpecId 3 (6 by default).
    fn spec_arrays() -> Vec<u32> {
        include_bytes!("../../../tests/fixtures/spec_arrays.frag.spv")
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }

    /// The module with each `OpDecorate %c SpecId N` given through a decoration group
    /// instead (`OpDecorate %g SpecId N`, `OpDecorationGroup %g`, `OpGroupDecorate %g %c`).
    fn spec_ids_through_groups(words: &[u32]) -> Vec<u32> {
        const DECORATE: u32 = 71;
        const DECORATION_GROUP: u32 = 73;
        const GROUP_DECORATE: u32 = 74;
        const SPEC_ID: u32 = 1;
        let mut out = words[..5].to_vec();
        let mut at = 5;
        while at < words.len() {
            let count = (words[at] >> 16) as usize;
            let inst = &words[at..at + count];
            if inst[0] == (4 << 16 | DECORATE) && inst[2] == SPEC_ID {
                let group = out[3];
                out[3] += 1;
                out.extend_from_slice(&[4 << 16 | DECORATE, group, SPEC_ID, inst[3]]);
                out.extend_from_slice(&[2 << 16 | DECORATION_GROUP, group]);
                out.extend_from_slice(&[3 << 16 | GROUP_DECORATE, group, inst[1]]);
            } else {
                out.extend_from_slice(inst);
            }
            at += count;
        }
        assert!(out[3] > words[3], "a SpecId decoration replaced");
        out
    }

    /// A specialization constant whose SpecId comes from a decoration group takes the
    /// pipeline's value as one decorated directly does (Vulkan specializes it): the
    /// descriptor count, and an array length of 0 found.
    #[test]
    fn a_spec_id_given_through_a_decoration_group_takes_the_given_value() {
        let plain = spec_arrays();
        for words in [plain.clone(), spec_ids_through_groups(&plain)] {
            let count = |spec: &[(u32, SpecValue)]| {
                let s = specialize(&words, "main", spec).unwrap();
                let layers = s.entry.bindings.iter().find(|b| b.set == 1).unwrap();
                (layers.count, s.bad_arrays.len())
            };
            assert_eq!(count(&[]), (6, 0));
            assert_eq!(count(&[(3, SpecValue::U32(9))]), (9, 0));
            assert_eq!(count(&[(3, SpecValue::U32(0))]), (0, 1));
        }
    }

    /// Every fixture module that reflects, mutated at random too, specialized at every
    /// entry point with values at the edges (0, 1, the largest, negative, 64-bit) for
    /// SpecIds 0..8: a value or a coded error, never a panic.
    #[test]
    fn edge_values_and_mutated_modules_never_panic() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
        let mut files = Vec::new();
        for d in [dir.to_string(), format!("{dir}/repros")] {
            for e in std::fs::read_dir(d).unwrap().flatten() {
                if e.path().extension().is_some_and(|x| x == "spv") {
                    files.push(e.path());
                }
            }
        }
        assert!(files.len() > 10);
        let values = [
            SpecValue::U32(0),
            SpecValue::U32(1),
            SpecValue::U32(u32::MAX),
            SpecValue::I32(-1),
            SpecValue::I32(i32::MIN),
            SpecValue::U64(u64::MAX),
            SpecValue::I64(i64::MIN),
            SpecValue::Bool(false),
            SpecValue::F32(f32::NAN),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut runs = 0;
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let words: Vec<u32> = bytes
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            for round in 0..40 {
                let mut w = words.clone();
                if round > 0 {
                    for _ in 0..1 + next() % 3 {
                        let at = 5 + (next() as usize) % (w.len() - 5);
                        // A small number, an id-sized one, or any bits.
                        w[at] = match next() % 3 {
                            0 => (next() % 8) as u32,
                            1 => (w[at] & 0xffff_0000) | (next() % 400) as u32,
                            _ => next() as u32,
                        };
                    }
                }
                let Ok(m) = crate::ShaderModule::from_spirv(&w) else {
                    continue;
                };
                for ep in &m.reflection().entry_points {
                    for v in &values {
                        let spec: Vec<(u32, SpecValue)> = (0..8).map(|i| (i, *v)).collect();
                        let _ = specialize(&w, &ep.name, &spec);
                        runs += 1;
                    }
                }
            }
        }
        assert!(runs > 100, "{runs}");
    }
}
