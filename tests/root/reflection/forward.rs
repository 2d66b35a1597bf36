//! Forward-compatible loading (issue 30, `src/shaders/reflect/forward.rs`): a module using
//! enumerants, instructions or extended instruction sets newer than kiln's SPIR-V grammar
//! loads and reflects; what it declares that kiln does not know is judged at pipeline
//! creation. The modules are assembled here, word by word, from one well-formed compute
//! shader (`Parts`) with one kind of novelty added each; the numbers used as "newer than
//! the grammar" (9000–9999 for enumerants, 0x7Fxx for opcodes) are unassigned in SPIR-V's
//! registry. Malformed instructions stay `KILN-E010`. The GPU tests run on lavapipe and
//! the H200 alike (no device has the invented capabilities).

use common::{assert_clean, device};
use kiln::reflect::DescriptorBinding;
use kiln::{vk, ShaderModule};

/// SPIR-V opcodes and enumerants the modules use (SPIR-V spec §3).
mod op {
    pub const NAME: u32 = 5;
    pub const EXTENSION: u32 = 10;
    pub const EXT_INST_IMPORT: u32 = 11;
    pub const EXT_INST: u32 = 12;
    pub const MEMORY_MODEL: u32 = 14;
    pub const ENTRY_POINT: u32 = 15;
    pub const EXECUTION_MODE: u32 = 16;
    pub const CAPABILITY: u32 = 17;
    pub const TYPE_VOID: u32 = 19;
    pub const TYPE_INT: u32 = 21;
    pub const TYPE_RUNTIME_ARRAY: u32 = 29;
    pub const TYPE_STRUCT: u32 = 30;
    pub const TYPE_POINTER: u32 = 32;
    pub const TYPE_FUNCTION: u32 = 33;
    pub const CONSTANT: u32 = 43;
    pub const FUNCTION: u32 = 54;
    pub const FUNCTION_END: u32 = 56;
    pub const VARIABLE: u32 = 59;
    pub const STORE: u32 = 62;
    pub const ACCESS_CHAIN: u32 = 65;
    pub const DECORATE: u32 = 71;
    pub const MEMBER_DECORATE: u32 = 72;
    pub const LABEL: u32 = 248;
    pub const RETURN: u32 = 253;
}

/// Storage classes and decorations used.
const STORAGE_BUFFER: u32 = 12;
const BLOCK: u32 = 2;
const ARRAY_STRIDE: u32 = 6;
const OFFSET: u32 = 35;
const BINDING: u32 = 33;
const DESCRIPTOR_SET: u32 = 34;
const LOCAL_SIZE: u32 = 17;

/// Ids of the base module.
mod id {
    pub const MAIN: u32 = 1;
    pub const VOID: u32 = 2;
    pub const FN: u32 = 3;
    pub const UINT: u32 = 4;
    pub const RT: u32 = 5;
    pub const BLOCK_T: u32 = 6;
    pub const PTR: u32 = 7;
    pub const BUF: u32 = 8;
    pub const ZERO: u32 = 9;
    pub const PTR_U: u32 = 10;
    pub const LABEL: u32 = 11;
    pub const CHAIN: u32 = 12;
    pub const GLSL: u32 = 13;
    pub const FUTURE_SET: u32 = 14;
    /// Free for the additions.
    pub const SPARE: u32 = 20;
}

fn inst(opcode: u32, operands: &[u32]) -> Vec<u32> {
    let mut w = vec![((operands.len() as u32 + 1) << 16) | opcode];
    w.extend_from_slice(operands);
    w
}

/// A literal string: UTF-8, NUL-terminated, padded to words (SPIR-V spec §2.2.1).
fn string(s: &str) -> Vec<u32> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    while !bytes.len().is_multiple_of(4) {
        bytes.push(0);
    }
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn with_string(head: &[u32], s: &str, tail: &[u32]) -> Vec<u32> {
    let mut v = head.to_vec();
    v.extend(string(s));
    v.extend_from_slice(tail);
    v
}

/// The sections of a compute shader that stores 0 into `data[0]` of a storage buffer at
/// set 0, binding 3; each test adds instructions to one section.
#[derive(Clone, Default)]
struct Parts {
    capabilities: Vec<Vec<u32>>,
    extensions: Vec<Vec<u32>>,
    modes: Vec<Vec<u32>>,
    decorations: Vec<Vec<u32>>,
    globals: Vec<Vec<u32>>,
    body: Vec<Vec<u32>>,
    /// Leave out the access chain and store (the buffer is then used only by `body`).
    no_store: bool,
    /// OpFunction's function-control mask of `main` (0: None).
    function_control: u32,
}

impl Parts {
    fn words(&self) -> Vec<u32> {
        use id::*;
        let mut w = vec![0x0723_0203, 0x0001_0300, 0, 100, 0];
        let mut push = |i: Vec<u32>| w.extend(i);
        push(inst(op::CAPABILITY, &[1])); // Shader
        self.capabilities.iter().cloned().for_each(&mut push);
        self.extensions.iter().cloned().for_each(&mut push);
        push(inst(
            op::EXT_INST_IMPORT,
            &with_string(&[GLSL], "GLSL.std.450", &[]),
        ));
        push(inst(op::MEMORY_MODEL, &[0, 1])); // Logical GLSL450
        push(inst(op::ENTRY_POINT, &with_string(&[5, MAIN], "main", &[])));
        push(inst(op::EXECUTION_MODE, &[MAIN, LOCAL_SIZE, 8, 1, 1]));
        self.modes.iter().cloned().for_each(&mut push);
        push(inst(op::NAME, &with_string(&[BUF], "data", &[])));
        push(inst(op::DECORATE, &[BLOCK_T, BLOCK]));
        push(inst(op::MEMBER_DECORATE, &[BLOCK_T, 0, OFFSET, 0]));
        push(inst(op::DECORATE, &[RT, ARRAY_STRIDE, 4]));
        push(inst(op::DECORATE, &[BUF, DESCRIPTOR_SET, 0]));
        push(inst(op::DECORATE, &[BUF, BINDING, 3]));
        self.decorations.iter().cloned().for_each(&mut push);
        push(inst(op::TYPE_VOID, &[VOID]));
        push(inst(op::TYPE_FUNCTION, &[FN, VOID]));
        push(inst(op::TYPE_INT, &[UINT, 32, 0]));
        push(inst(op::TYPE_RUNTIME_ARRAY, &[RT, UINT]));
        push(inst(op::TYPE_STRUCT, &[BLOCK_T, RT]));
        push(inst(op::TYPE_POINTER, &[PTR, STORAGE_BUFFER, BLOCK_T]));
        push(inst(op::VARIABLE, &[PTR, BUF, STORAGE_BUFFER]));
        push(inst(op::CONSTANT, &[UINT, ZERO, 0]));
        push(inst(op::TYPE_POINTER, &[PTR_U, STORAGE_BUFFER, UINT]));
        self.globals.iter().cloned().for_each(&mut push);
        push(inst(op::FUNCTION, &[VOID, MAIN, self.function_control, FN]));
        push(inst(op::LABEL, &[LABEL]));
        self.body.iter().cloned().for_each(&mut push);
        if !self.no_store {
            push(inst(op::ACCESS_CHAIN, &[PTR_U, CHAIN, BUF, ZERO, ZERO]));
            push(inst(op::STORE, &[CHAIN, ZERO]));
        }
        push(inst(op::RETURN, &[]));
        push(inst(op::FUNCTION_END, &[]));
        w
    }

    fn module(&self) -> Result<ShaderModule, kiln::ShaderError> {
        ShaderModule::from_spirv(&self.words())
    }
}

/// The one binding of the base module, as every variant must reflect it.
fn the_binding(m: &ShaderModule) -> &DescriptorBinding {
    let ep = &m.reflection().entry_points[0];
    assert_eq!(ep.bindings.len(), 1, "{:?}", ep.bindings);
    let b = &ep.bindings[0];
    assert_eq!(
        (
            b.set,
            b.binding,
            b.descriptor_type,
            b.count,
            b.runtime_array
        ),
        (0, 3, vk::DescriptorType::STORAGE_BUFFER, 1, false)
    );
    assert_eq!(b.name.as_deref(), Some("data"));
    assert_eq!(ep.workgroup_size.unwrap().size, [8, 1, 1]);
    b
}

#[test]
fn the_base_module_reflects() {
    let m = Parts::default().module().unwrap();
    the_binding(&m);
    assert_eq!(m.reflection().capabilities, ["Shader"]);
}

#[test]
fn an_unknown_capability_is_kept_as_its_number() {
    let parts = Parts {
        capabilities: vec![inst(op::CAPABILITY, &[9001])],
        extensions: vec![inst(op::EXTENSION, &string("SPV_KILN_future"))],
        ..Parts::default()
    };
    let m = parts.module().unwrap();
    the_binding(&m);
    assert_eq!(m.reflection().capabilities, ["Shader", "9001"]);
    assert_eq!(m.reflection().extensions, ["SPV_KILN_future"]);
}

#[test]
fn unknown_decorations_execution_modes_and_storage_classes_load() {
    use id::*;
    let spare = SPARE;
    let parts = Parts {
        // OpDecorate %data 9002 7; OpMemberDecorate %block 0 9003; a known decoration
        // (BuiltIn) with an unknown built-in.
        decorations: vec![
            inst(op::DECORATE, &[BUF, 9002, 7]),
            inst(op::MEMBER_DECORATE, &[BLOCK_T, 0, 9003]),
            inst(op::DECORATE, &[spare + 1, 11, 9004]),
        ],
        // OpExecutionMode %main 9005 1 2
        modes: vec![inst(op::EXECUTION_MODE, &[MAIN, 9005, 1, 2])],
        // A pointer type and a variable of storage class 9006.
        globals: vec![
            inst(op::TYPE_POINTER, &[spare, 9006, UINT]),
            inst(op::VARIABLE, &[spare, spare + 1, 9006]),
        ],
        ..Parts::default()
    };
    let m = parts.module().unwrap();
    the_binding(&m);
    let ep = &m.reflection().entry_points[0];
    assert_eq!(ep.execution_modes, ["LocalSize", "ExecutionMode(9005)"]);
    assert!(ep.unused_bindings.is_empty(), "{:?}", ep.unused_bindings);
}

#[test]
fn unknown_instructions_load_outside_and_inside_functions() {
    use id::*;
    let parts = Parts {
        // A one-word and a four-word instruction of opcodes no grammar has, among the
        // types; then one of each in the function.
        globals: vec![inst(0x7f01, &[]), inst(0x7f02, &[UINT, SPARE, 0xdead_beef])],
        body: vec![inst(0x7f03, &[]), inst(0x7f04, &[UINT, SPARE + 1, ZERO])],
        ..Parts::default()
    };
    the_binding(&parts.module().unwrap());
}

/// An OpFunction with a function-control bit newer than the grammar still opens its
/// function: the store in it makes the buffer used.
#[test]
fn a_function_with_an_unknown_control_bit_is_traced() {
    let parts = Parts {
        function_control: 1 << 30,
        ..Parts::default()
    };
    the_binding(&parts.module().unwrap());
}

#[test]
fn a_buffer_used_only_by_an_unknown_instruction_is_used() {
    use id::*;
    let parts = Parts {
        body: vec![inst(0x7f05, &[UINT, SPARE, BUF, 123])],
        no_store: true,
        ..Parts::default()
    };
    let m = parts.module().unwrap();
    the_binding(&m);
    // Without it the buffer is declared but not used.
    let unused = Parts {
        no_store: true,
        ..Parts::default()
    };
    let m = unused.module().unwrap();
    let ep = &m.reflection().entry_points[0];
    assert!(ep.bindings.is_empty(), "{:?}", ep.bindings);
    assert_eq!(ep.unused_bindings.len(), 1);
}

#[test]
fn an_unknown_extended_instruction_set_loads() {
    use id::*;
    let parts = Parts {
        extensions: vec![inst(
            op::EXT_INST_IMPORT,
            &with_string(&[FUTURE_SET], "NonSemantic.Kiln.Future.1", &[]),
        )],
        // %20 = OpExtInst %void %future 77 %data 5
        body: vec![inst(op::EXT_INST, &[VOID, SPARE, FUTURE_SET, 77, BUF, 5])],
        ..Parts::default()
    };
    the_binding(&parts.module().unwrap());
}

#[test]
fn an_entry_point_of_an_unknown_execution_model_is_not_listed() {
    let mut parts = Parts::default();
    parts.modes.push(inst(
        op::ENTRY_POINT,
        &with_string(&[9007, id::MAIN], "future", &[]),
    ));
    let m = parts.module().unwrap();
    let names: Vec<&str> = m
        .reflection()
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["main"]);
}

/// What rspirv could decode but finds malformed stays `KILN-E010`: only enumerants and
/// opcodes newer than the grammar are set aside.
#[test]
fn malformed_instructions_are_still_e010() {
    let cases: [(&str, Vec<u32>); 4] = [
        ("OpCapability without operand", inst(op::CAPABILITY, &[])),
        (
            "OpDecorate Block with an extra word",
            inst(op::DECORATE, &[id::BUF, BLOCK, 7]),
        ),
        (
            "OpDecorate without decoration",
            inst(op::DECORATE, &[id::BUF]),
        ),
        (
            "OpExecutionMode LocalSize with two sizes",
            inst(op::EXECUTION_MODE, &[id::MAIN, LOCAL_SIZE, 8, 1]),
        ),
    ];
    for (what, i) in cases {
        let parts = Parts {
            decorations: vec![i],
            ..Parts::default()
        };
        let e = parts.module().unwrap_err();
        assert_eq!(e.code(), "KILN-E010", "{what}: {e}");
    }
}

/// An unknown capability is judged against the device at pipeline creation: with an
/// `OpExtension` it is `KILN-E107` naming the number and the extension, without one
/// `KILN-E110` naming the number; never a validation message.
#[test]
fn an_unknown_capability_is_refused_at_pipeline_creation() {
    let device = device();
    let with_extension = Parts {
        capabilities: vec![inst(op::CAPABILITY, &[9001])],
        extensions: vec![inst(op::EXTENSION, &string("SPV_KILN_future"))],
        ..Parts::default()
    };
    let m = with_extension.module().unwrap().with_label("future.spv");
    let e = device.compute_pipeline(&m, "main").unwrap_err();
    assert_eq!(e.code(), "KILN-E107", "{e}");
    let msg = e.to_string();
    for part in ["9001", "SPV_KILN_future", "future.spv"] {
        assert!(msg.contains(part), "{part}: {msg}");
    }
    let bare = Parts {
        capabilities: vec![inst(op::CAPABILITY, &[9001])],
        ..Parts::default()
    };
    let e = device
        .compute_pipeline(&bare.module().unwrap(), "main")
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E110", "{e}");
    assert!(e.to_string().contains("9001"), "{e}");
    // The same module without the capability creates its pipeline.
    device
        .compute_pipeline(&Parts::default().module().unwrap(), "main")
        .unwrap();
    assert_clean(&device);
}
