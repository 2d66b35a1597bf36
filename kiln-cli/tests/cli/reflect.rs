//! `kiln reflect` end to end: runs the built binary on the fixtures (`tests/fixtures/`) and
//! checks the JSON (parsed, exact values), the table, `--entry`, `--all-bindings` and the
//! exit status.

use std::process::{Command, Output};

use serde_json::{json, Value};

use super::{fixtures, Fixtures};

fn kiln(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("reflect")
        .args(args)
        .output()
        .expect("run kiln")
}

fn json_of(args: &[&str]) -> Value {
    let out = kiln(args);
    assert!(
        out.status.success(),
        "kiln reflect {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn json_shape_and_merged_pipeline_layout() {
    let fx = Fixtures::new("json-shape");
    let vs = fx.path("push_offset.vert.spv");
    let fs = fx.path("push_offset.frag.spv");
    let v = json_of(&[&vs, &fs, "--json"]);
    // The documented shape's version (kiln-cli/README.md).
    assert_eq!(v["schema_version"], 1);
    let modules = v["modules"].as_array().unwrap();
    assert_eq!(modules.len(), 2);
    let m = &modules[0];
    assert_eq!(m["path"], json!(vs));
    assert_eq!(m["spirv_version"], "1.0");
    assert_eq!(m["generator"], "Google Shaderc over Glslang");
    assert_eq!(m["capabilities"], json!(["Shader"]));
    let ep = &m["entry_points"][0];
    assert_eq!(ep["name"], "main");
    assert_eq!(ep["stage"], "VERTEX");
    assert_eq!(ep["workgroup_size"], Value::Null);
    assert_eq!(ep["push_constants"][0]["offset"], 0);
    assert_eq!(ep["push_constants"][0]["size"], 16);
    assert_eq!(ep["spec_constants"], json!([]));
    let b = &ep["bindings"][0];
    assert_eq!(b["set"], 0);
    assert_eq!(b["binding"], 0);
    assert_eq!(b["descriptor_type"], "UNIFORM_BUFFER");
    assert_eq!(b["count"], 1);
    assert_eq!(b["runtime_array"], false);
    assert_eq!(b["count_spec_id"], Value::Null);
    assert_eq!(b["name"], "camera");
    assert_eq!(b["block"]["size"], 64);
    assert_eq!(b["block"]["runtime_stride"], Value::Null);
    assert_eq!(
        b["block"]["members"][0]["name"], "view_proj",
        "{}",
        b["block"]
    );
    assert_eq!(b["block"]["members"][0]["offset"], 0);
    assert_eq!(b["block"]["members"][0]["size"], 64);
    let fep = &modules[1]["entry_points"][0];
    assert_eq!(fep["stage"], "FRAGMENT");
    assert_eq!(fep["push_constants"][0]["offset"], 16);
    assert_eq!(fep["push_constants"][0]["size"], 20);

    let pl = &v["pipeline_layout"];
    assert_eq!(
        pl["sets"],
        json!([{"set": 0, "bindings": [{"binding": 0, "descriptor_type": "UNIFORM_BUFFER",
            "count": 1, "runtime_array": false, "stages": ["VERTEX", "FRAGMENT"]}]}])
    );
    assert_eq!(
        pl["push_constant_ranges"],
        json!([{"stages": ["VERTEX"], "offset": 0, "size": 16},
               {"stages": ["FRAGMENT"], "offset": 16, "size": 20}])
    );
    assert_eq!(
        pl["pool_sizes"],
        json!([{"set": 0, "descriptor_type": "UNIFORM_BUFFER", "count": 1}])
    );
}

#[test]
fn json_spec_constants_arrays_and_entry_filter() {
    let fx = Fixtures::new("json-spec");
    let v = json_of(&[&fx.path("spec_arrays.frag.spv"), "--json"]);
    let ep = &v["modules"][0]["entry_points"][0];
    let layers = &ep["bindings"][1];
    assert_eq!(layers["name"], "layers");
    assert_eq!(layers["descriptor_type"], "COMBINED_IMAGE_SAMPLER");
    assert_eq!(layers["count"], 6);
    assert_eq!(layers["count_spec_id"], 3);
    assert_eq!(ep["bindings"][2]["runtime_array"], true);
    assert_eq!(
        ep["spec_constants"],
        json!([{"id": 3, "name": "LAYERS", "type": "u32", "default": 6},
               {"id": 4, "name": "GAIN", "type": "f32", "default": 1.5},
               {"id": 5, "name": "FLAG", "type": "bool", "default": true}])
    );
    assert_eq!(
        v["pipeline_layout"]["pool_sizes"],
        json!([{"set": 0, "descriptor_type": "COMBINED_IMAGE_SAMPLER", "count": 6},
               {"set": 1, "descriptor_type": "COMBINED_IMAGE_SAMPLER", "count": 6},
               {"set": 2, "descriptor_type": "COMBINED_IMAGE_SAMPLER", "count": 0}])
    );

    // --entry picks one entry point of a multi-entry module; the layout is its alone.
    let v = json_of(&[
        &fx.path("multi_entry.wgsl.spv"),
        "--json",
        "--entry",
        "cs_main",
    ]);
    let eps = v["modules"][0]["entry_points"].as_array().unwrap();
    assert_eq!(eps.len(), 1);
    assert_eq!(eps[0]["stage"], "COMPUTE");
    assert_eq!(eps[0]["workgroup_size"], json!([64, 1, 1]));
    assert!(eps[0].get("unused_bindings").is_none());
    let stages: Vec<_> = v["pipeline_layout"]["sets"][0]["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["stages"].clone())
        .collect();
    assert_eq!(stages, vec![json!(["COMPUTE"]); 3]);

    // --all-bindings lists the declared-but-unused bindings per entry point.
    let v = json_of(&[&fx.path("fn_params.comp.spv"), "--json", "--all-bindings"]);
    let unused = &v["modules"][0]["entry_points"][0]["unused_bindings"];
    assert_eq!(unused.as_array().unwrap().len(), 1);
    assert_eq!(unused[0]["name"], "unused_tex");
    assert_eq!(unused[0]["binding"], 2);
}

#[test]
fn table_output_and_errors() {
    let fx = Fixtures::new("table");
    let out = kiln(&[&fx.path("fn_params.comp.spv"), "--all-bindings"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("entry point `main` (COMPUTE)"), "{text}");
    assert!(text.contains("STORAGE_IMAGE"), "{text}");
    assert!(text.contains("unused_tex"), "{text}");
    assert!(text.contains("(unused)"), "{text}");

    // A malformed file: its coded error on stderr, exit status 1.
    let dir = std::env::temp_dir().join(format!("kiln-reflect-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.spv");
    std::fs::write(&bad, [0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0]).unwrap();
    let out = kiln(&[bad.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("KILN-E004"), "{err}");
    assert!(out.stdout.is_empty());
    let truncated = dir.join("truncated.spv");
    let mut words = std::fs::read(fx.path("fn_params.comp.spv")).unwrap();
    words.truncate(words.len() - 8);
    std::fs::write(&truncated, &words).unwrap();
    let out = kiln(&[truncated.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("KILN-E008"));
    std::fs::remove_dir_all(&dir).unwrap();

    // No such entry point; no file; unknown option.
    let out = kiln(&[&fx.path("fn_params.comp.spv"), "--entry", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("KILN-E050"));
    assert_eq!(kiln(&[]).status.code(), Some(2));
    assert_eq!(kiln(&["--frobnicate"]).status.code(), Some(2));

    // Two stages declaring one binding differently: the merge error names both.
    let out = kiln(&[
        &fx.path("fn_params.comp.spv"),
        &fx.path("texel_buffers.comp.spv"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("KILN-E051"), "{err}");
    assert!(
        err.contains("fn_params.comp.spv") && err.contains("texel_buffers.comp.spv"),
        "{err}"
    );
}

/// `kiln reflect --json --all-bindings` on each reflection fixture and regression module
/// (`tests/fixtures/`, `tests/fixtures/repros/`; kiln-tests' `reflection::repros` reflects
/// them in process), 6 times one after another and 6 times from 3 threads at once:
/// byte-identical stdout, stderr and exit status.
#[test]
fn kiln_reflect_json_is_byte_identical_on_every_run() {
    let dir = std::env::temp_dir().join(format!("kiln-reflect-repros-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths: Vec<String> = fixtures::SPV
        .iter()
        .chain(fixtures::REPROS)
        .map(|(name, bytes)| {
            let path = dir.join(name.replace('/', "_"));
            std::fs::write(&path, bytes).unwrap();
            path.display().to_string()
        })
        .collect();
    let run = |path: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kiln"))
            .args(["reflect", "--json", "--all-bindings", path])
            .output()
            .expect("run kiln");
        (out.status.code(), out.stdout, out.stderr)
    };
    let reference: Vec<_> = paths.iter().map(|p| run(p)).collect();
    let failed = reference
        .iter()
        .filter(|(code, _, _)| *code != Some(0))
        .count();
    // alias_used_conflict (E051) and unknown_array_lengths (E052) fail; the rest print JSON.
    assert_eq!(failed, 2);
    let check = || {
        for (path, want) in paths.iter().zip(&reference) {
            assert!(
                run(path) == *want,
                "{path}: output differs from the first run"
            );
        }
    };
    (0..6).for_each(|_| check());
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| (0..2).for_each(|_| check()));
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// An entry point that statically uses a resource kiln has no descriptor type for (an
/// `OpTypeTensorARM`) is refused with KILN-E061 when named with `--entry`, as
/// `Reflection::entry_point` refuses it; without `--entry` it is flagged on stderr and left
/// out of the pipeline layout, and the other entry point's layout is printed.
#[test]
fn entry_points_with_unsupported_bindings_are_refused_or_flagged() {
    let dir = std::env::temp_dir().join(format!("kiln-reflect-e061-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tensor_arm.spv");
    std::fs::write(&path, fixtures::bytes("repros/tensor_arm.spvasm.spv")).unwrap();
    let path = path.display().to_string();
    let out = kiln(&[&path, "--entry", "main"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains("KILN-E061") && err.contains("input_tensor"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let ok = json_of(&[&path, "--json", "--entry", "count_only"]);
    assert!(ok.get("pipeline_layout").is_some(), "{ok}");
    let out = kiln(&[&path, "--json"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains("KILN-E061") && err.contains("left out of the pipeline layout"),
        "{err}"
    );
    assert_eq!(err.matches("KILN-E061").count(), 1, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 30: a module declaring a capability newer than kiln's SPIR-V grammar reflects;
/// the table shows the capability as its number, marked, and the extension declaring it;
/// the JSON lists it as the number.
#[test]
fn a_capability_newer_than_the_grammar_is_shown_as_its_number() {
    let dir = std::env::temp_dir().join(format!("kiln-reflect-newer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("unknown_capability.comp.spv");
    let bytes = fixtures::REPROS
        .iter()
        .find(|(n, _)| *n == "repros/unknown_capability.comp.spv")
        .unwrap()
        .1;
    std::fs::write(&path, bytes).unwrap();
    let path = path.display().to_string();
    let out = kiln(&[&path]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("capabilities: Shader, Float16, StorageBuffer16BitAccess, 6912 (newer than kiln's SPIR-V grammar)"),
        "{text}"
    );
    assert!(
        text.contains("extensions: SPV_VALVE_mixed_float_dot_product"),
        "{text}"
    );
    let json = json_of(&[&path, "--json"]);
    let caps = &json["modules"][0]["capabilities"];
    assert_eq!(
        caps,
        &json!(["Shader", "Float16", "StorageBuffer16BitAccess", "6912"]),
        "{json}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
