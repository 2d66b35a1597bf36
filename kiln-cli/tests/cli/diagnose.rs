//! `kiln diagnose` end to end on its fixtures (`tests/fixtures/diagnose/`): the codes found
//! (exact lists), the JSON, the table, the profile against the device, pipelines given as
//! groups, and the exit status (0 nothing found, 1 findings, 2 usage or unreadable file).

use std::process::{Command, Output};

use serde_json::Value;

use super::Fixtures;

fn kiln(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("diagnose")
        .args(args)
        .output()
        .expect("run kiln")
}

/// The JSON findings as (code, where) pairs, and the exit code.
fn findings(args: &[&str]) -> (Vec<(String, String)>, Value, i32) {
    let mut a = args.to_vec();
    a.push("--json");
    let out = kiln(&a);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "kiln diagnose {args:?}: {e}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let list = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["where"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (list, v, out.status.code().unwrap())
}

fn codes(list: &[(String, String)]) -> Vec<&str> {
    list.iter().map(|(c, _)| c.as_str()).collect()
}

#[test]
fn every_trap_of_the_fixture_is_found_against_vulkan_min() {
    let fx = Fixtures::new("diagnose-traps");
    let (list, v, status) = findings(&[&fx.path("traps.comp.spv")]);
    assert_eq!(status, 1);
    // The documented shape's version (kiln-cli/README.md).
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["profile"], "vulkan-min");
    assert_eq!(
        codes(&list),
        ["D001", "D002", "D002", "D002", "D003", "D003", "D005", "D005", "D005", "D006"]
    );
    assert_eq!(list[0].1, "set 0 binding 2 `Unused`");
    let all = v["findings"].as_array().unwrap();
    let msg = |i: usize| all[i]["message"].as_str().unwrap().to_string();
    assert!(
        msg(1).starts_with("`v` (vec3) is at offset 16, 12 bytes after `x`"),
        "{}",
        msg(1)
    );
    assert!(
        msg(3).starts_with("`b` (vec3) is at offset 160, 4 bytes after `a`"),
        "{}",
        msg(3)
    );
    assert!(
        msg(4).contains("`arr` (float[4]) has ArrayStride 16"),
        "{}",
        msg(4)
    );
    assert!(
        msg(5).contains("`m` (mat3) has MatrixStride 16"),
        "{}",
        msg(5)
    );
    assert_eq!(msg(6), "200 exceeds maxPushConstantsSize 128 of vulkan-min");
    assert!(
        msg(7).contains("256 exceeds maxComputeWorkGroupInvocations 128"),
        "{}",
        msg(7)
    );
    assert!(msg(9).contains("Float64 needs shaderFloat64"), "{}", msg(9));
    assert!(all[1]["fix"]
        .as_str()
        .unwrap()
        .contains("12 bytes before `v`"));
}

#[test]
fn a_clean_shader_exits_0_and_the_table_says_so() {
    let fx = Fixtures::new("diagnose-clean");
    let (list, _, status) = findings(&[&fx.path("clean.comp.spv")]);
    assert_eq!((list.len(), status), (0, 0));
    let out = kiln(&[&fx.path("clean.comp.spv")]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "nothing found (against vulkan-min)\n"
    );
}

#[test]
fn sets_differing_only_in_stages_across_pipelines_name_with_visibility() {
    let fx = Fixtures::new("diagnose-stages");
    let (vert, comp) = (fx.path("scene.vert.spv"), fx.path("cull.comp.spv"));
    // Two pipelines: D004 on set 0.
    let (list, v, status) = findings(&[&vert, &comp]);
    assert_eq!(status, 1);
    assert_eq!(list, [("D004".to_string(), "set 0".to_string())]);
    let f = &v["findings"][0];
    assert_eq!(f["pipeline"], "scene.vert.spv / cull.comp.spv");
    assert_eq!(
        f["fix"],
        "PipelineLayoutDesc::from_stages(..)?.with_visibility(0, \
         Visibility::Stages(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::COMPUTE)) \
         for both pipelines"
    );
    // Each alone, or one pipeline of both (a group): nothing to share, nothing found.
    assert_eq!(findings(&[&vert]).2, 0);
    let group = format!("{vert}+{comp}");
    let (list, v, status) = findings(&[&group]);
    assert_eq!((list.len(), status), (0, 0), "{v}");
    assert_eq!(v["pipelines"][0]["name"], "scene.vert.spv+cull.comp.spv");
    // The table lists the finding and its fix.
    let out = kiln(&[&vert, &comp]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("CODE  PIPELINE"), "{table}");
    assert!(
        table.contains("fix: PipelineLayoutDesc::from_stages"),
        "{table}"
    );
    assert!(
        table.ends_with("1 finding(s) against vulkan-min: D004 x1\n"),
        "{table}"
    );
}

#[test]
fn against_the_device_only_its_own_limits_and_features_count() {
    let fx = Fixtures::new("diagnose-device");
    let (list, v, status) = findings(&["--device", &fx.path("traps.comp.spv")]);
    assert_eq!(status, 1);
    assert!(v["profile"].as_str().unwrap().starts_with("device "), "{v}");
    // The layout traps do not depend on the device; the limits and features are the
    // device's: no workgroup finding (every Vulkan device the tests run on allows 256
    // invocations), push constants only where the device has fewer than 200 bytes, and
    // D006 only where it lacks shaderFloat64.
    let c = codes(&list);
    assert_eq!(
        &c[..6],
        ["D001", "D002", "D002", "D002", "D003", "D003"],
        "{v}"
    );
    assert!(c[6..].iter().all(|c| *c == "D005" || *c == "D006"), "{v}");
    assert!(!list.iter().any(|(_, w)| w.starts_with("workgroup")), "{v}");
}

#[test]
fn usage_errors_and_unreadable_files_exit_2() {
    assert_eq!(kiln(&[]).status.code(), Some(2));
    assert_eq!(kiln(&["--profile", "nope", "x.spv"]).status.code(), Some(2));
    let out = kiln(&["/no/such/file.spv"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("KILN-E012"), "{err}");
}
