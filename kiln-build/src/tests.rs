//! kiln-build's unit tests (markers, options, compilation of the test shaders).

use super::*;

#[test]
fn stages_from_names() {
    assert_eq!(stage_of(Path::new("a/b.comp")), Some(("comp", false)));
    assert_eq!(stage_of(Path::new("x.frag.hlsl")), Some(("frag", true)));
    assert_eq!(stage_of(Path::new("common.glsl")), None);
    assert_eq!(stage_of(Path::new("x.hlsl")), None);
}

#[test]
fn compile_error_names_file_and_line() {
    let dir = std::env::temp_dir().join(format!("kiln-build-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.comp");
    std::fs::write(
        &f,
        "#version 450\nvoid main() {\n  undefined_thing = 1;\n}\n",
    )
    .unwrap();
    let err = compile_file(&f, "vulkan1.0").unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("KILN-B002"), "{msg}");
    assert!(msg.contains("bad.comp:3"), "{msg}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A fresh temporary folder for one test.
fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-build-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn two_broken_shaders_are_both_reported_with_line_and_column() {
    let dir = temp("two-broken");
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    std::fs::write(
        src.join("a.comp"),
        "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n    float x = nope;\n}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("good.comp"),
        "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("sub/b.frag"),
        "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() {\n  c = vec4(1.0) * missing_fn(2);\n}\n",
    )
    .unwrap();
    let out = dir.join("out");
    let err = compile_dir_to(&src, &out).unwrap_err();
    let diags = err.diagnostics();
    let places: Vec<(String, u32, u32)> = diags
        .iter()
        .map(|d| {
            let f = d.file.strip_prefix(&src).unwrap_or(&d.file);
            (f.display().to_string(), d.line, d.column)
        })
        .collect();
    assert_eq!(
        places,
        [
            ("a.comp".to_string(), 4, 15),
            ("sub/b.frag".to_string(), 4, 19)
        ],
        "{err}"
    );
    assert_eq!(diags[0].source_line.as_deref(), Some("    float x = nope;"));
    let msg = err.to_string();
    assert!(
        msg.starts_with("KILN-B010: 2 shaders failed to compile"),
        "{msg}"
    );
    assert!(
        msg.contains("a.comp:4:15: error: 'nope' : undeclared identifier"),
        "{msg}"
    );
    assert!(
        msg.contains("\n        float x = nope;\n                  ^"),
        "{msg}"
    );
    // The good shader was still compiled.
    assert!(out.join("good.comp.spv").exists());
    // cargo:warning lines, one per line of the message.
    let mut lines = Vec::new();
    for l in diagnostics::cargo_lines(&msg) {
        assert!(l.starts_with("cargo:warning="), "{l}");
        lines.push(l);
    }
    assert!(lines.len() >= 7, "{lines:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_error_in_an_include_names_the_included_file_and_includes_are_listed() {
    let dir = temp("includes");
    let (src, lib) = (dir.join("src"), dir.join("lib"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("common.glsl"), "float scale() { return 2.0; }\n").unwrap();
    std::fs::write(src.join("local.glsl"), "#include \"../lib/common.glsl\"\n").unwrap();
    std::fs::write(
        src.join("k.comp"),
        "#version 450\n#extension GL_GOOGLE_include_directive : require\n\
         #include \"local.glsl\"\nlayout(local_size_x = 1) in;\nvoid main() { float s = scale(); }\n",
    )
    .unwrap();
    let mut deps: Vec<String> = includes(&src.join("k.comp"))
        .iter()
        .map(|d| std::fs::canonicalize(d).unwrap().display().to_string())
        .collect();
    deps.sort();
    let want = |p: PathBuf| std::fs::canonicalize(p).unwrap().display().to_string();
    assert_eq!(
        deps,
        [want(lib.join("common.glsl")), want(src.join("local.glsl"))]
    );
    compile_dir_to(&src, &dir.join("out")).unwrap();

    std::fs::write(lib.join("common.glsl"), "float scale() { return oops; }\n").unwrap();
    let err = compile_dir_to(&src, &dir.join("out")).unwrap_err();
    let d = &err.diagnostics()[0];
    assert!(d.file.ends_with("common.glsl"), "{err}");
    assert_eq!((d.line, d.column), (1, 24), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn markers_are_read_from_comment_lines() {
    let m = markers("#version 450\n// kiln: target-env=vulkan1.1\nvoid main() {}\n");
    assert_eq!(m.target_env.as_deref(), Some("vulkan1.1"));
    assert!(!m.prebuilt);
    let m = markers("  //kiln: prebuilt\n/* kiln: target-env=x */\n");
    assert_eq!(
        m,
        Markers {
            target_env: None,
            prebuilt: true,
            debug_info: false,
            nonsemantic: false,
        }
    );
    assert!(markers("// kiln: debug-info\n").debug_info);
    assert!(!markers("// kiln: debug-info\n").nonsemantic);
    let m = markers("// kiln: debug-info=nonsemantic\n");
    assert!(m.debug_info && m.nonsemantic);
}

/// Whether `spirv` holds an instruction of `opcode` (`OpLine` 8, `OpString` 7).
fn has_op(spirv: &[u8], opcode: u16) -> bool {
    let words: Vec<u32> = spirv
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut i = 5;
    while i < words.len() {
        let (count, op) = ((words[i] >> 16) as usize, (words[i] & 0xffff) as u16);
        if op == opcode {
            return true;
        }
        i += count.max(1);
    }
    false
}

#[test]
fn debug_info_keeps_the_file_name_and_lines() {
    let dir = std::env::temp_dir().join(format!("kiln-build-debug-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
    std::fs::write(dir.join("plain.comp"), body).unwrap();
    std::fs::write(
        dir.join("marked.comp"),
        format!("// kiln: debug-info\n{body}"),
    )
    .unwrap();
    std::fs::write(
        dir.join("full.comp"),
        format!("// kiln: debug-info=nonsemantic\n{body}"),
    )
    .unwrap();
    let out = dir.join("out");
    compile_dir_to(&dir, &out).unwrap();
    let read = |name: &str| std::fs::read(out.join(name)).unwrap();
    let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    assert!(!has_op(&read("plain.comp.spv"), 8));
    assert!(!contains(&read("plain.comp.spv"), b"plain.comp"));
    assert!(has_op(&read("marked.comp.spv"), 8), "OpLine");
    assert!(
        contains(&read("marked.comp.spv"), b"marked.comp"),
        "OpString"
    );
    // NonSemantic.Shader.DebugInfo.100 where glslang is installed (xtask installs
    // glslang-tools); glslc's -g alone otherwise (KILN-B012).
    let nonsemantic = contains(&read("full.comp.spv"), b"NonSemantic.Shader.DebugInfo.100");
    assert!(contains(&read("full.comp.spv"), b"full.comp"));
    assert!(has_op(&read("full.comp.spv"), 8), "OpLine");
    assert!(!contains(&read("marked.comp.spv"), b"NonSemantic"));
    let has_glslang = std::process::Command::new(debug_info::glslang())
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    println!(
        "path: {}",
        if has_glslang {
            "glslangValidator -gVS"
        } else {
            "glslc -g (no glslangValidator)"
        }
    );
    assert_eq!(nonsemantic, has_glslang);
    assert!(!contains(&read("plain.comp.spv"), b"NonSemantic"));
    // The whole call.
    compile_dir_to_with(&dir, &out, &Options::new().debug_info(true)).unwrap();
    assert!(has_op(&read("plain.comp.spv"), 8));
    assert!(contains(&read("plain.comp.spv"), b"plain.comp"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn folder_overrides_pick_the_deepest_folder() {
    let o = Options::new()
        .folder_target_env("legacy", "vulkan1.0")
        .folder_target_env("legacy/new", "vulkan1.2");
    assert_eq!(o.env_for(Path::new("a.comp")), "vulkan1.3");
    assert_eq!(o.env_for(Path::new("legacy/a.comp")), "vulkan1.0");
    assert_eq!(o.env_for(Path::new("legacy/new/a.comp")), "vulkan1.2");
    assert_eq!(o.env_for(Path::new("legacyx/a.comp")), "vulkan1.3");
}

/// The SPIR-V version word (bytes 4..8) of a compiled module.
fn version(bytes: &[u8]) -> (u8, u8) {
    (bytes[6], bytes[5])
}

#[test]
fn default_target_is_spirv_1_6_and_markers_override_it() {
    let dir = std::env::temp_dir().join(format!("kiln-build-env-{}", std::process::id()));
    let sub = dir.join("old");
    std::fs::create_dir_all(&sub).unwrap();
    let body = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
    std::fs::write(dir.join("a.comp"), body).unwrap();
    std::fs::write(sub.join("b.comp"), body).unwrap();
    std::fs::write(
        sub.join("c.comp"),
        format!("// kiln: target-env=vulkan1.1\n{body}"),
    )
    .unwrap();
    std::fs::write(dir.join("p.comp"), format!("// kiln: prebuilt\n{body}")).unwrap();
    std::fs::write(dir.join("p.comp.spv"), [3u8, 2, 35, 7, 0, 1, 2, 0]).unwrap();
    let out = dir.join("out");
    let options = Options::new().folder_target_env("old", "vulkan1.0");
    compile_dir_to_with(&dir, &out, &options).unwrap();
    let read = |name: &str| std::fs::read(out.join(name)).unwrap();
    assert_eq!(version(&read("a.comp.spv")), (1, 6));
    assert_eq!(version(&read("old/b.comp.spv")), (1, 0));
    assert_eq!(version(&read("old/c.comp.spv")), (1, 3));
    assert_eq!(read("p.comp.spv"), [3u8, 2, 35, 7, 0, 1, 2, 0]);
    std::fs::remove_file(dir.join("p.comp.spv")).unwrap();
    let err = compile_dir_to_with(&dir, &out, &options).unwrap_err();
    assert!(err.to_string().starts_with("KILN-B006"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn missing_compiler_names_package() {
    let err = BuildError::CompilerMissing {
        tried: "nope".into(),
    };
    assert!(err.to_string().contains("apt-get install glslc"));
}
