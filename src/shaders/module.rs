//! Loading SPIR-V: header and instruction-stream checks before anything else sees the words.
//!
//! Source: SPIR-V spec §2.3 "Physical Layout of a SPIR-V Module and Instruction".

use crate::error::{Result, ShaderError};
use crate::shaders::reflect::{self, ModuleReflection};

/// The SPIR-V magic number (SPIR-V spec §3.1).
pub(crate) const SPIRV_MAGIC: u32 = 0x0723_0203;

/// A SPIR-V module whose structure has been checked and whose entry points have been
/// reflected. Cheap to clone words out of; holds no Vulkan object.
#[derive(Clone, Debug)]
pub struct ShaderModule {
    words: Vec<u32>,
    reflection: ModuleReflection,
    label: String,
}

impl ShaderModule {
    /// Checks and reflects a module given as little- or big-endian bytes (a `.spv` file).
    ///
    /// Errors: `KILN-E001`..`E011` for malformed input (each names the byte offset),
    /// `KILN-E052` for constructs reflection does not understand.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ShaderError> {
        let words = words_from_bytes(bytes)?;
        Self::from_words(words)
    }

    /// Checks and reflects a module given as host-order words.
    pub fn from_spirv(words: &[u32]) -> Result<Self, ShaderError> {
        Self::from_words(words.to_vec())
    }

    fn from_words(mut words: Vec<u32>) -> Result<Self, ShaderError> {
        if words.is_empty() {
            return Err(ShaderError::SpirvEmpty);
        }
        if words[0] == SPIRV_MAGIC.swap_bytes() {
            for w in &mut words {
                *w = w.swap_bytes();
            }
        }
        check_words(&words)?;
        let reflection = reflect::reflect_module(&words)?;
        Ok(Self {
            words,
            reflection,
            label: String::from("<spirv>"),
        })
    }

    /// Gives the module a label (usually its file name) used in errors and debug names.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Reads and checks a `.spv` file.
    ///
    /// Errors: `KILN-E012` the file cannot be read (missing, unreadable, a directory), then
    /// those of [`from_bytes`](Self::from_bytes).
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self, ShaderError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| ShaderError::ShaderFileRead {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self::from_bytes(&bytes)?.with_label(path.display().to_string()))
    }

    /// The label given with [`with_label`](Self::with_label) or the file path.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The module's words in host order.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// What reflection found in this module.
    pub fn reflection(&self) -> &ModuleReflection {
        &self.reflection
    }
}

/// Converts bytes (either endianness) to host-order words, checking length.
fn words_from_bytes(bytes: &[u8]) -> Result<Vec<u32>, ShaderError> {
    if bytes.is_empty() {
        return Err(ShaderError::SpirvEmpty);
    }
    if !bytes.len().is_multiple_of(4) {
        return Err(ShaderError::SpirvNotWordAligned { len: bytes.len() });
    }
    let le: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok(le)
}

/// Checks the header and that every instruction's word count is in range.
///
/// `words` must already be in host order (magic equal to [`SPIRV_MAGIC`] if valid).
pub(crate) fn check_words(words: &[u32]) -> Result<(), ShaderError> {
    if words.len() < 5 {
        if let Some(&magic) = words.first() {
            if magic != SPIRV_MAGIC {
                return Err(ShaderError::SpirvBadMagic { found: magic });
            }
        }
        return Err(ShaderError::SpirvHeaderTruncated { words: words.len() });
    }
    if words[0] != SPIRV_MAGIC {
        return Err(ShaderError::SpirvBadMagic { found: words[0] });
    }
    let version = words[1];
    let (major, minor) = ((version >> 16) & 0xff, (version >> 8) & 0xff);
    if major != 1 || minor > 6 || version & 0xff00_00ff != 0 {
        return Err(ShaderError::SpirvUnsupportedVersion { major, minor });
    }
    if words[3] == 0 {
        return Err(ShaderError::SpirvZeroBound);
    }
    let mut i = 5;
    while i < words.len() {
        let word_count = (words[i] >> 16) as usize;
        let opcode = (words[i] & 0xffff) as u16;
        if word_count == 0 {
            return Err(ShaderError::SpirvZeroWordCount { offset: i * 4 });
        }
        let remaining = words.len() - i;
        if word_count > remaining {
            return Err(ShaderError::SpirvTruncatedInstruction {
                offset: i * 4,
                opcode,
                word_count,
                remaining,
            });
        }
        if opcode == OP_SPEC_CONSTANT_OP {
            check_spec_constant_op(&words[i..i + word_count], i * 4)?;
        }
        i += word_count;
    }
    Ok(())
}

/// OpSpecConstantOp (SPIR-V spec §3.56.6).
const OP_SPEC_CONSTANT_OP: u16 = 52;

/// Rejects an OpSpecConstantOp whose operation is not a plain instruction: rspirv's
/// parser reads the operation's operands with its general operand reader, which panics
/// (`unreachable`) on the operand kinds only OpConstant, OpSpecConstant, OpSpecConstantOp
/// and OpSwitch have. No valid module has those operations there (SPIR-V spec, the list
/// of opcodes allowed in OpSpecConstantOp), so they are a coded error instead. (Every
/// OpSpecConstantOp whose operation has only id and literal-integer operands is decoded
/// by kiln itself, not by rspirv: see `reflect::specop`.)
fn check_spec_constant_op(inst: &[u32], offset: usize) -> Result<(), ShaderError> {
    use rspirv::grammar::{OperandKind, INSTRUCTION_TABLE};
    // Result type, result id and the operation word are needed before any operand.
    let Some(&operation) = inst.get(3) else {
        return Ok(()); // rspirv reports the missing operand as a parse error
    };
    let Some(grammar) = INSTRUCTION_TABLE.lookup_opcode(operation) else {
        return Ok(()); // rspirv reports an unknown operation as a parse error
    };
    let unparsable = grammar.operands.iter().any(|o| {
        matches!(
            o.kind,
            OperandKind::LiteralContextDependentNumber
                | OperandKind::LiteralSpecConstantOpInteger
                | OperandKind::PairLiteralIntegerIdRef
        )
    });
    if unparsable {
        return Err(ShaderError::SpirvMalformed {
            detail: format!(
                "OpSpecConstantOp at byte offset {offset} uses Op{}, which is not allowed in a \
                 specialization-constant operation",
                grammar.opname
            ),
        });
    }
    Ok(())
}

/// Formats a SPIR-V version word as `"1.3"`.
pub fn version_string(version: u32) -> String {
    format!("{}.{}", (version >> 16) & 0xff, (version >> 8) & 0xff)
}

/// Names the tool that wrote a module from the header's generator word (SPIR-V registry
/// `spir-v.xml`, "vendor ids"). Unknown tools print as `unknown(N)`.
///
/// The tool id is the high 16 bits. Some tools (naga, some Slang versions) write their id
/// in the low 16 bits with 0 above; such a word is named after the low half with
/// `" (id in low half)"` appended.
pub fn generator_name(generator: u32) -> String {
    let (high, low) = (generator >> 16, generator & 0xffff);
    if high == 0 && low != 0 {
        return format!("{} (id in low half)", tool_name(low));
    }
    tool_name(high)
}

fn tool_name(tool: u32) -> String {
    let name = match tool {
        0 => "Khronos",
        1 => "LunarG",
        2 => "Valve",
        3 => "Codeplay",
        4 => "NVIDIA",
        5 => "ARM",
        6 => "Khronos LLVM/SPIR-V Translator",
        7 => "Khronos SPIR-V Tools Assembler",
        8 => "Khronos Glslang Reference Front End",
        9 => "Qualcomm",
        10 => "AMD",
        11 => "Intel",
        12 => "Imagination",
        13 => "Google Shaderc over Glslang",
        14 => "Google spiregg (DXC)",
        15 => "Google rspirv",
        16 => "X-LEGEND Mesa-IR/SPIR-V Translator",
        17 => "Khronos SPIR-V Tools Linker",
        18 => "Wine VKD3D Shader Compiler",
        19 => "Tellusim Clay Shader Compiler",
        20 => "W3C WebGPU Group WHLSL Shader Translator",
        21 => "Google Clspv",
        22 => "Google MLIR SPIR-V Serializer",
        23 => "Google Tint Compiler",
        24 => "Google ANGLE Shader Compiler",
        25 => "Netease Games Messiah Shader Compiler",
        26 => "Xenia Emulator Microcode Translator",
        27 => "Embark Studios Rust GPU Compiler Backend",
        28 => "gfx-rs community Naga",
        40 => "NVIDIA Slang Compiler",
        _ => return format!("unknown({tool})"),
    };
    name.to_string()
}
