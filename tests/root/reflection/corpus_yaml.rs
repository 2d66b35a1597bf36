//! kiln's reflection against SPIRV-Reflect's expected output (`.spv.yaml`) for every module
//! of `spirv-reflect/` in the corpus: set, binding, descriptor type, descriptor count
//! (product of the array dimensions) of every descriptor binding, and offset/size of every
//! push-constant block, and the generator tool id; and (second test) the location and format of every user-defined
//! input and output of the YAML's entry point.
//!
//! SPIRV-Reflect reports per module: every descriptor declared, used or not, by any entry
//! point. kiln's answer compared with it is the union, over all entry points, of the used
//! and the declared-but-unused bindings (`EntryPoint::bindings` + `unused_bindings`).
//!
//! Where kiln's value differs from the YAML by design or the YAML is wrong, the test
//! encodes kiln's (correct) value; every such case is listed here:
//!
//! | module | field | YAML | kiln (encoded) | why |
//! | --- | --- | --- | --- | --- |
//! | `glsl/buffer_handle_6` | push-constant block size | 0 | 96 | YAML wrong: the block is `BufferPointer p[6]` with ArrayStride 16 (std140), so it ends at byte 96; SPIRV-Reflect sizes arrays of buffer-device-address pointers as 0 |
//! | `push_constants/push_constant_basic_0` | push-constant blocks | one, [0, 40) | none | by design: `main` is empty, so the block is not statically used and kiln gives the entry point no push constant range (SPIRV-Reflect lists declared blocks) |
//!
//! Descriptor bindings: no exception; every (set, binding, type, count) agrees.
use std::collections::BTreeMap;

use kiln::vk;
use yaml_rust2::{Yaml, YamlLoader};

use common::corpus;

/// (set, binding) -> (descriptor type, count)
type Bindings = BTreeMap<(u32, u32), (vk::DescriptorType, u32)>;

fn int(y: &Yaml) -> i64 {
    match y {
        Yaml::Integer(i) => *i,
        Yaml::String(s) => s.trim_end_matches(',').parse().unwrap_or(-1),
        _ => -1,
    }
}

fn yaml_expectations(doc: &Yaml) -> (Bindings, Vec<(u32, u32)>) {
    let module = &doc["module"];
    let mut bindings = Bindings::new();
    if let Yaml::Array(list) = &module["descriptor_bindings"] {
        for b in list {
            let count = match &b["array"]["dims"] {
                Yaml::Array(dims) => dims.iter().map(|d| int(d) as u32).product(),
                _ => 1,
            };
            let ty = vk::DescriptorType::from_raw(int(&b["descriptor_type"]) as i32);
            bindings.insert(
                (int(&b["set"]) as u32, int(&b["binding"]) as u32),
                (ty, count),
            );
        }
    }
    let mut push = Vec::new();
    if let Yaml::Array(list) = &module["push_constants"] {
        for p in list {
            push.push((int(&p["offset"]) as u32, int(&p["size"]) as u32));
        }
    }
    push.sort();
    (bindings, push)
}

/// Push-constant blocks (offset, end) where kiln's value differs from the YAML; see the table.
const PUSH_EXCEPTIONS: &[(&str, &[(u32, u32)])] = &[
    ("tests/glsl/buffer_handle_6.spv", &[(0, 96)]),
    ("tests/push_constants/push_constant_basic_0.spv", &[]),
];

fn kiln_answer(m: &kiln::ShaderModule) -> (Bindings, Vec<(u32, u32)>) {
    let mut bindings = Bindings::new();
    let mut push = Vec::new();
    let mut seen = Vec::new();
    for ep in &m.reflection().entry_points {
        for b in ep.bindings.iter().chain(&ep.unused_bindings) {
            bindings.insert((b.set, b.binding), (b.descriptor_type, b.count));
        }
        if let Some(pc) = &ep.push_constants {
            // SPIRV-Reflect's `size` of a push-constant block is its end (offset + size).
            let v = (pc.offset, pc.offset + pc.size);
            if !seen.contains(&(pc.name.clone(), v)) {
                seen.push((pc.name.clone(), v));
                push.push(v);
            }
        }
    }
    push.sort();
    (bindings, push)
}

/// (location, VkFormat as a number) of one stage input or output.
type Io = (u32, i64);

/// (location, format) of the user-defined inputs and outputs of the YAML's entry point
/// (`module.entry_point_name`); compared with kiln's `EntryPoint::inputs`/`outputs`.
fn yaml_interface(doc: &Yaml) -> (String, Vec<Io>, Vec<Io>) {
    let module = &doc["module"];
    let list = |key: &str| -> Vec<(u32, i64)> {
        let mut out: Vec<(u32, i64)> = match &module[key] {
            Yaml::Array(vars) => vars
                .iter()
                // Built-ins have no Location: SPIRV-Reflect writes 0xffffffff there. (Its
                // `built_in` field is not usable: Block variables get `0 # [Position]`.)
                .filter(|v| int(&v["location"]) != u32::MAX as i64)
                .map(|v| (int(&v["location"]) as u32, int(&v["format"])))
                .collect(),
            _ => Vec::new(),
        };
        out.sort();
        out
    };
    let name = module["entry_point_name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    (name, list("input_variables"), list("output_variables"))
}

#[test]
fn spirv_reflect_corpus_stage_interface_agrees() {
    let Some(corpus) = corpus::root() else {
        return;
    };
    let root = corpus.join("spirv-reflect");
    let (mut agree, mut compared) = (0, 0);
    let mut failures = Vec::new();
    for path in corpus::files(&root, ".spv") {
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(format!("{}.yaml", path.display())).unwrap();
        let docs = YamlLoader::load_from_str(&text).unwrap();
        let (entry, want_in, want_out) = yaml_interface(&docs[0]);
        let m = kiln::ShaderModule::from_file(&path).unwrap();
        let Ok(ep) = m.reflection().entry_point(&entry) else {
            failures.push(format!("{rel}: no entry point {entry}"));
            continue;
        };
        let io = |v: &[kiln::reflect::InterfaceVariable]| -> Vec<(u32, i64)> {
            let mut out: Vec<(u32, i64)> = v
                .iter()
                .map(|v| (v.location, v.format.as_raw() as i64))
                .collect();
            out.sort();
            out
        };
        compared += 1;
        if (io(&ep.inputs), io(&ep.outputs)) == (want_in.clone(), want_out.clone()) {
            agree += 1;
        } else {
            failures.push(format!(
                "{rel}: inputs yaml {want_in:?} kiln {:?}; outputs yaml {want_out:?} kiln {:?}",
                io(&ep.inputs),
                io(&ep.outputs)
            ));
        }
    }
    println!("spirv-reflect stage interface: {agree}/{compared} entry points agree");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn spirv_reflect_corpus_agrees() {
    let Some(corpus) = corpus::root() else {
        return;
    };
    let root = corpus.join("spirv-reflect");
    let files = corpus::files(&root, ".spv");
    assert_eq!(
        files.len(),
        124,
        "expected the 124 modules of SPIRV-Reflect's tests"
    );
    let mut failures = Vec::new();
    let (mut modules_ok, mut descriptors, mut descriptors_ok, mut pcs) = (0, 0, 0, 0);
    let mut exceptions = 0;
    for path in &files {
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(format!("{}.yaml", path.display())).unwrap();
        let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let (want_b, mut want_p) = yaml_expectations(&docs[0]);
        if let Some((_, kiln_value)) = PUSH_EXCEPTIONS.iter().find(|(f, _)| *f == rel) {
            assert_ne!(
                want_p, *kiln_value,
                "{rel}: listed exception no longer differs"
            );
            want_p = kiln_value.to_vec();
            exceptions += 1;
        }
        let m = match kiln::ShaderModule::from_file(path) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{rel}: {e}"));
                continue;
            }
        };
        let (got_b, got_p) = kiln_answer(&m);
        let mut ok = true;
        // Generator tool id: the header's high 16 bits (SPIRV-Reflect prints 0 for the
        // Slang modules that write their id, 0x28, in the low half).
        let tool = m.reflection().generator >> 16;
        if tool as i64 != int(&docs[0]["module"]["generator"]) {
            ok = false;
            failures.push(format!(
                "{rel}: generator yaml {:?}, kiln {tool}",
                docs[0]["module"]["generator"]
            ));
        }
        for (k, v) in &want_b {
            descriptors += 1;
            if got_b.get(k) == Some(v) {
                descriptors_ok += 1;
            } else {
                ok = false;
                failures.push(format!(
                    "{rel}: set {} binding {}: yaml {v:?}, kiln {:?}",
                    k.0,
                    k.1,
                    got_b.get(k)
                ));
            }
        }
        for (k, v) in &got_b {
            if !want_b.contains_key(k) {
                ok = false;
                failures.push(format!(
                    "{rel}: set {} binding {}: kiln {v:?}, not in yaml",
                    k.0, k.1
                ));
            }
        }
        pcs += want_p.len();
        if want_p != got_p {
            ok = false;
            failures.push(format!(
                "{rel}: push constants yaml {want_p:?}, kiln {got_p:?}"
            ));
        }
        if ok {
            modules_ok += 1;
        }
    }
    println!(
        "spirv-reflect corpus: {modules_ok}/{} modules agree, {descriptors_ok}/{descriptors} \
         descriptors agree, {pcs} push-constant blocks, {exceptions} listed exceptions",
        files.len()
    );
    assert_eq!(exceptions, PUSH_EXCEPTIONS.len());
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
