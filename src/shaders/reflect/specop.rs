//! OpSpecConstantOp, decoded by kiln instead of rspirv (issue 17).
//!
//! SPIR-V spec, "Constant-Creation Instructions", OpSpecConstantOp: the words after the
//! operation are "the operands of that opcode", laid out as in the opcode's own
//! instruction, result type and result id excepted. Some of the operations allowed there
//! take a variable number of literals: VectorShuffle (one component per result component,
//! so always two or more), CompositeExtract and CompositeInsert (one index per level).
//!
//! rspirv 0.13's parser (`binary::Parser::parse_spec_constant_op`) reads each operand of
//! the operation's grammar exactly once and ignores its quantifier (`*`, `?`), so such an
//! instruction leaves words unread and the whole module fails as "found extra operands"
//! (`KILN-E010`) although it is valid. kiln therefore decodes every OpSpecConstantOp
//! itself, from rspirv's own grammar table but honouring the quantifiers, and gives rspirv
//! a copy of the words in which each instruction it decoded has the opcode of
//! OpSpecConstantComposite instead: the same word count, result type and result id, then
//! words rspirv takes as plain ids without interpreting them (it tracks only types). The
//! consumer swaps kiln's decoded instruction back in at the same instruction number, so
//! every later instruction is seen in module order and rspirv's byte offsets and
//! instruction numbers in any error are still those of the original module.
//!
//! Nothing is hidden: an OpSpecConstantOp that kiln cannot decode exactly (unknown
//! operation, too few or too many words, an operand that is neither an id nor a literal
//! integer) is left untouched, and rspirv reports it as before.

use std::borrow::Cow;
use std::collections::BTreeMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::grammar::{OperandKind, OperandQuantifier, INSTRUCTION_TABLE};
use rspirv::spirv::Op;

/// First word of the instruction stream (after the five header words).
const HEADER_WORDS: usize = 5;

/// The words to hand to rspirv, and kiln's decoding of each OpSpecConstantOp replaced in
/// them, keyed by instruction number (1 for the first instruction, as rspirv counts).
pub(super) fn predecode(words: &[u32]) -> (Cow<'_, [u32]>, BTreeMap<usize, Instruction>) {
    let mut out = Cow::Borrowed(words);
    let mut decoded = BTreeMap::new();
    let (mut at, mut number) = (HEADER_WORDS, 0usize);
    while let Some(&first) = words.get(at) {
        let (count, opcode) = ((first >> 16) as usize, first & 0xffff);
        let Some(inst) = words
            .get(at..at.saturating_add(count))
            .filter(|_| count > 0)
        else {
            break; // a malformed stream: rspirv reports it from here
        };
        number += 1;
        if opcode == Op::SpecConstantOp as u32 {
            if let Some(d) = decode(inst) {
                out.to_mut()[at] = (first & 0xffff_0000) | Op::SpecConstantComposite as u32;
                decoded.insert(number, d);
            }
        }
        at += count;
    }
    (out, decoded)
}

/// Decodes one OpSpecConstantOp (all its words), or `None` when the words do not fit the
/// operation's grammar exactly.
fn decode(inst: &[u32]) -> Option<Instruction> {
    let (&result_type, &result_id, &operation) = (inst.get(1)?, inst.get(2)?, inst.get(3)?);
    let grammar = INSTRUCTION_TABLE.lookup_opcode(operation)?;
    let mut operands = vec![Operand::LiteralSpecConstantOpInteger(grammar.opcode)];
    let mut rest = inst.get(4..)?.iter().copied().peekable();
    for operand in grammar.operands {
        if matches!(
            operand.kind,
            OperandKind::IdResultType | OperandKind::IdResult
        ) {
            continue;
        }
        let (min, max) = match operand.quantifier {
            OperandQuantifier::One => (1, 1),
            OperandQuantifier::ZeroOrOne => (0, 1),
            OperandQuantifier::ZeroOrMore => (0, usize::MAX),
        };
        let mut n = 0;
        while n < max {
            let Some(word) = rest.next() else { break };
            operands.push(match operand.kind {
                OperandKind::IdRef => Operand::IdRef(word),
                OperandKind::LiteralInteger => Operand::LiteralBit32(word),
                _ => return None,
            });
            n += 1;
        }
        if n < min {
            return None;
        }
    }
    if rest.peek().is_some() {
        return None;
    }
    Some(Instruction::new(
        Op::SpecConstantOp,
        Some(result_type),
        Some(result_id),
        operands,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u32> {
        vec![0x0723_0203, 0x0001_0300, 0, 100, 0]
    }

    #[test]
    fn vector_shuffle_is_decoded_with_all_its_components_and_replaced() {
        let mut words = header();
        // OpSpecConstantOp %2 %10 VectorShuffle %5 %6 1 0 0xFFFFFFFF: 9 words.
        let shuffle = [
            9 << 16 | 52,
            2,
            10,
            Op::VectorShuffle as u32,
            5,
            6,
            1,
            0,
            u32::MAX,
        ];
        words.extend_from_slice(&[3 << 16 | 1, 7, 8]); // OpUndef %7 %8 (instruction 1)
        words.extend_from_slice(&shuffle); // instruction 2
        let (patched, decoded) = predecode(&words);
        assert_eq!(patched[8], 9 << 16 | Op::SpecConstantComposite as u32);
        assert_eq!(&patched[9..], &shuffle[1..]);
        let inst = &decoded[&2];
        assert_eq!((inst.result_type, inst.result_id), (Some(2), Some(10)));
        assert_eq!(
            inst.operands,
            vec![
                Operand::LiteralSpecConstantOpInteger(Op::VectorShuffle),
                Operand::IdRef(5),
                Operand::IdRef(6),
                Operand::LiteralBit32(1),
                Operand::LiteralBit32(0),
                Operand::LiteralBit32(u32::MAX),
            ]
        );
    }

    #[test]
    fn words_that_do_not_fit_the_operation_are_left_for_rspirv() {
        // IAdd with three operands, IAdd with one, an unknown operation.
        for inst in [
            vec![7 << 16 | 52, 2, 10, Op::IAdd as u32, 5, 6, 7],
            vec![5 << 16 | 52, 2, 10, Op::IAdd as u32, 5],
            vec![5 << 16 | 52, 2, 10, 0xfff0, 5],
        ] {
            let mut words = header();
            words.extend_from_slice(&inst);
            let (patched, decoded) = predecode(&words);
            assert!(matches!(patched, Cow::Borrowed(_)), "{inst:?}");
            assert!(decoded.is_empty(), "{inst:?}");
        }
    }
}
