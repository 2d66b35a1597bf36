//! Forward-compatible loading (issue 30): instructions that rspirv's grammar cannot decode
//! are set aside before rspirv sees the words, and the module still loads.
//!
//! SPIR-V frames every instruction with its word count (SPIR-V spec §2.3 "Physical Layout
//! of a SPIR-V Module and Instruction"), so a reader can skip an instruction it does not
//! understand. rspirv 0.13's parser cannot: an opcode newer than its grammar is
//! `OpcodeUnknown`, and an enumerant newer than its grammar (a capability, decoration,
//! execution mode, storage class, built-in, image format, memory-access bit, …) is
//! `OperandError(…Unknown)`, both of which end the parse. A module that declares a
//! capability from an extension published after kiln's rspirv would then be `KILN-E010`
//! although it is well formed.
//!
//! # The algorithm
//!
//! One pass over the instruction stream (`check_words` has already checked the framing:
//! every word count is non-zero and in range). For each instruction:
//!
//! 1. **An opcode rspirv does not know** is set aside as it is.
//! 2. **A known opcode with an enumerant operand** (any operand kind other than ids,
//!    literals and the id/literal pairs, per rspirv's own grammar table) is parsed alone by
//!    rspirv, in a module of its own (the five header words and this instruction). When
//!    that parse fails with an unknown enumerant (`OperandError` of a `…Unknown` decode
//!    error), the instruction is set aside. Any other failure (too few or too many words, a
//!    string without its terminator) leaves the instruction for the real parse, which
//!    reports it as `KILN-E010` as before: only what a newer grammar would decode is set
//!    aside, never a malformed instruction. Instructions whose operands depend on earlier
//!    types (OpConstant, OpSwitch, OpSpecConstantOp) have no enumerant operands and are
//!    never parsed alone.
//! 3. Everything else is kept.
//!
//! An instruction set aside keeps its place: in the words given to rspirv its opcode
//! becomes one rspirv reads without interpreting any operand and with the same word
//! count: `OpNop` for a one-word instruction, otherwise `OpGroupDecorate` (a decoration
//! group id, then any number of ids). rspirv's type tracker only follows OpTypeInt and
//! OpTypeFloat, so the placeholder changes nothing for later instructions, and instruction
//! numbers and byte offsets in any rspirv error stay those of the original module. The
//! consumer (`tables::Builder`) recognises each placeholder by its instruction number and
//! files the original words instead (`Tables::add_set_aside`):
//!
//! - `OpCapability` with an unknown capability: kept as its number (or the name kiln's
//!   capability table gives it), judged at pipeline creation against the device together
//!   with the module's `OpExtension`s (`device/capabilities.rs`);
//! - `OpExecutionMode(Id)` with an unknown mode: listed in the entry point's execution
//!   modes as `ExecutionMode(N)`;
//! - `OpFunction` with an unknown function-control bit: still opens the function, so the
//!   static use of what follows is traced;
//! - inside a function, any instruction set aside: every word after the first that names a
//!   global variable counts as a use of it (conservative: a descriptor may be listed as
//!   used when only a literal equals its id, never missed);
//! - anything else outside functions (a decoration, a type or variable with an unknown
//!   storage class, an entry point of an unknown execution model): not reflected; what
//!   refers to it reflects as when the id were undeclared.
//!
//! Extended instruction sets need nothing here: rspirv reads OpExtInst's instruction
//! number and operands as plain words whatever the set.

use std::borrow::Cow;
use std::collections::BTreeMap;

use rspirv::binary::{Consumer, DecodeError, ParseAction, ParseState};
use rspirv::dr::{Instruction, ModuleHeader};
use rspirv::grammar::{OperandKind, INSTRUCTION_TABLE};
use rspirv::spirv::Op;

/// First word of the instruction stream (after the five header words).
const HEADER_WORDS: usize = 5;

/// An instruction set aside: its original words (the first one holds count and opcode).
#[derive(Clone, Debug)]
pub(super) struct SetAside {
    pub words: Vec<u32>,
}

impl SetAside {
    /// The opcode as rspirv knows it, `None` for an opcode newer than its grammar.
    pub fn op(&self) -> Option<Op> {
        let opcode = self.words.first()? & 0xffff;
        INSTRUCTION_TABLE.lookup_opcode(opcode).map(|g| g.opcode)
    }
}

/// The words to hand to rspirv, and the instructions set aside in them, keyed by
/// instruction number (1 for the first instruction, as rspirv counts).
pub(super) fn set_aside(words: &[u32]) -> (Cow<'_, [u32]>, BTreeMap<usize, SetAside>) {
    let mut out = Cow::Borrowed(words);
    let mut aside = BTreeMap::new();
    let (mut at, mut number) = (HEADER_WORDS, 0usize);
    while let Some(&first) = words.get(at) {
        let count = (first >> 16) as usize;
        let Some(inst) = words
            .get(at..at.saturating_add(count))
            .filter(|_| count > 0)
        else {
            break; // a malformed stream: rspirv reports it from here
        };
        number += 1;
        if !decodable(inst) {
            let placeholder = if count == 1 {
                Op::Nop
            } else {
                Op::GroupDecorate
            };
            out.to_mut()[at] = (first & 0xffff_0000) | placeholder as u32;
            aside.insert(
                number,
                SetAside {
                    words: inst.to_vec(),
                },
            );
        }
        at += count;
    }
    (out, aside)
}

/// Whether rspirv's grammar can decode `inst` (all its words), as far as opcode and
/// enumerants go; see the module docs.
fn decodable(inst: &[u32]) -> bool {
    let Some(grammar) = inst
        .first()
        .and_then(|w| INSTRUCTION_TABLE.lookup_opcode(w & 0xffff))
    else {
        return false;
    };
    let has_enumerant = grammar.operands.iter().any(|o| is_enumerant(o.kind));
    if !has_enumerant {
        return true;
    }
    let mut module = Vec::with_capacity(HEADER_WORDS + inst.len());
    module.extend_from_slice(&[rspirv::spirv::MAGIC_NUMBER, 0x0001_0600, 0, 1, 0]);
    module.extend_from_slice(inst);
    match rspirv::binary::parse_words(&module, &mut Discard) {
        Err(ParseState::OperandError(e)) => !unknown_enumerant(&e),
        _ => true, // decoded, or malformed: the real parse decides
    }
}

/// Operand kinds that are not enumerants (ids, literals and their pairs).
fn is_enumerant(kind: OperandKind) -> bool {
    use OperandKind as K;
    !matches!(
        kind,
        K::IdResultType
            | K::IdResult
            | K::IdMemorySemantics
            | K::IdScope
            | K::IdRef
            | K::LiteralInteger
            | K::LiteralString
            | K::LiteralFloat
            | K::LiteralContextDependentNumber
            | K::LiteralExtInstInteger
            | K::LiteralSpecConstantOpInteger
            | K::PairLiteralIntegerIdRef
            | K::PairIdRefLiteralInteger
            | K::PairIdRefIdRef
    )
}

/// Every decode error except running out of words and a bad string is an enumerant value
/// the grammar does not list (`…Unknown(offset, value)`).
fn unknown_enumerant(e: &DecodeError) -> bool {
    !matches!(
        e,
        DecodeError::StreamExpected(_)
            | DecodeError::LimitReached(_)
            | DecodeError::DecodeStringFailed(..)
    )
}

/// A consumer that keeps nothing (the single-instruction parses only ask "decodable?").
struct Discard;

impl Consumer for Discard {
    fn initialize(&mut self) -> ParseAction {
        ParseAction::Continue
    }
    fn finalize(&mut self) -> ParseAction {
        ParseAction::Continue
    }
    fn consume_header(&mut self, _: ModuleHeader) -> ParseAction {
        ParseAction::Continue
    }
    fn consume_instruction(&mut self, _: Instruction) -> ParseAction {
        ParseAction::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u32> {
        vec![0x0723_0203, 0x0001_0300, 0, 100, 0]
    }

    #[test]
    fn unknown_opcodes_and_enumerants_are_set_aside_with_their_word_count() {
        let mut words = header();
        let cases: [&[u32]; 6] = [
            &[2 << 16 | 17, 1],           // OpCapability Shader: kept
            &[2 << 16 | 17, 6912],        // OpCapability 6912: set aside
            &[1 << 16 | 0x7ff0],          // unknown opcode, one word
            &[4 << 16 | 0x7ff1, 1, 2, 3], // unknown opcode, four words
            &[3 << 16 | 71, 5, 9999],     // OpDecorate %5 9999
            &[3 << 16 | 71, 5, 2],        // OpDecorate %5 Block: kept
        ];
        for c in cases {
            words.extend_from_slice(c);
        }
        let (patched, aside) = set_aside(&words);
        assert_eq!(aside.keys().copied().collect::<Vec<_>>(), vec![2, 3, 4, 5]);
        assert_eq!(aside[&2].words, vec![2 << 16 | 17, 6912]);
        assert_eq!(aside[&2].op(), Some(Op::Capability));
        assert_eq!(aside[&4].op(), None);
        assert_eq!(patched.len(), words.len());
        assert_eq!(patched[7], 2 << 16 | Op::GroupDecorate as u32);
        assert_eq!(patched[9], 1 << 16 | Op::Nop as u32);
        assert_eq!(patched[10], 4 << 16 | Op::GroupDecorate as u32);
        assert_eq!(&patched[11..14], &[1, 2, 3]);
        assert_eq!(patched[5..7], words[5..7]);
        assert_eq!(patched[17..], words[17..]);
    }

    #[test]
    fn malformed_known_instructions_are_left_for_rspirv() {
        // OpCapability without its operand, OpDecorate with one word too many after a
        // decoration without parameters.
        for inst in [vec![1 << 16 | 17], vec![4 << 16 | 71, 5, 2, 7]] {
            let mut words = header();
            words.extend_from_slice(&inst);
            let (patched, aside) = set_aside(&words);
            assert!(matches!(patched, Cow::Borrowed(_)), "{inst:?}");
            assert!(aside.is_empty(), "{inst:?}");
        }
    }
}
