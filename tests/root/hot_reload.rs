//! Hot reload (kiln feature `hot-reload`): a source rewritten with the same layout is
//! swapped in and the descriptor set made for the first version keeps working; a
//! rewritten layout is refused with the diff while the old pipeline keeps running; a
//! compile error is reported and changes nothing; an edited `#include`d header (in a
//! folder with spaces, included through another header) reloads. Values read back after
//! each step. Graphics pipelines: `hot_reload/graphics.rs`.

use std::path::Path;
use std::time::Duration;

use common::temp::TempDir;
use common::{assert_clean, device};
use kiln::{HotComputePipeline, HotDesc, ReloadEvent};

mod graphics;

/// Long enough for a slow machine; the wait ends as soon as the watcher reports.
const WAIT: Duration = Duration::from_secs(60);

fn shader(value: u32) -> String {
    format!(
        "#version 450\nlayout(local_size_x = 64) in;\n\
         layout(set = 0, binding = 0) buffer Out {{ uint o[]; }};\n\
         void main() {{ o[gl_GlobalInvocationID.x] = {value}u; }}\n"
    )
}

/// Saves `text` to `path` as editors do: a new file renamed over the old one, so the
/// watcher never reads a half-written source.
fn save(path: &Path, text: &str) {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn equal_layouts_swap_changed_layouts_and_compile_errors_change_nothing() {
    let device = device();
    let dir = TempDir::new("kiln-hot");
    let src = dir.path().join("fill.comp");
    std::fs::write(&src, shader(1)).unwrap();
    let mut hot = HotComputePipeline::new(
        &device,
        &HotDesc::new(&src).poll_interval(Duration::from_millis(20)),
    )
    .unwrap();
    let out = device.storage_buffer::<u32>("out", 64).unwrap();
    let mut set = hot.pipeline().descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    let run = |hot: &HotComputePipeline| -> Vec<u32> {
        device
            .execute(|r| {
                r.bind_pipeline(hot.pipeline())?;
                r.bind_set(0, &set)?;
                Ok(r.dispatch_threads(64)?)
            })
            .unwrap();
        out.read().unwrap()
    };
    assert_eq!(run(&hot), vec![1u32; 64]);
    assert!(hot.poll().is_none());

    // Same layout: swapped, and the set made for version 1 binds to version 2.
    save(&src, &shader(2));
    let e = hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the change");
    assert!(matches!(e, ReloadEvent::Swapped), "{e:?}");
    assert_eq!(e.code(), None);
    assert_eq!(run(&hot), vec![2u32; 64]);

    // A compile error: reported with its line, nothing changes.
    save(&src, &shader(3).replace("= 3u;", "= 3u"));
    match hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the change")
    {
        e @ ReloadEvent::CompileFailed { .. } => {
            assert_eq!(e.code(), Some("KILN-W009"));
            assert!(e.to_string().starts_with("KILN-W009: "), "{e}");
            let ReloadEvent::CompileFailed { message } = e else {
                unreachable!()
            };
            assert!(message.contains("fill.comp:4: error"), "{message}");
        }
        e => panic!("unexpected {e:?}"),
    }
    assert_eq!(run(&hot), vec![2u32; 64]);

    // Another layout (a uniform block at binding 1): refused with the diff; the running
    // pipeline and the set still work.
    let changed = shader(4).replace(
        "void main() {",
        "layout(set = 0, binding = 1) uniform P { uint k; } p;\nvoid main() { uint k = p.k;",
    );
    save(&src, &changed);
    match hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the change")
    {
        e @ ReloadEvent::LayoutChanged { .. } => {
            assert_eq!(e.code(), Some("KILN-W008"));
            assert!(e.to_string().starts_with("KILN-W008: "), "{e}");
            let ReloadEvent::LayoutChanged { diff } = e else {
                unreachable!()
            };
            assert!(diff.contains("set 0: binding 1"), "{diff}");
            assert!(diff.contains("UNIFORM_BUFFER"), "{diff}");
        }
        e => panic!("unexpected {e:?}"),
    }
    assert_eq!(run(&hot), vec![2u32; 64]);

    // And back to the first layout with a new value: swapped again.
    save(&src, &shader(5));
    let e = hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the change");
    assert!(matches!(e, ReloadEvent::Swapped), "{e:?}");
    assert_eq!(run(&hot), vec![5u32; 64]);
    drop(hot);
    assert_clean(&device);
}

#[test]
fn a_first_version_that_does_not_compile_is_e013() {
    let device = device();
    let dir = TempDir::new("kiln-hot-bad");
    let src = dir.path().join("bad.comp");
    std::fs::write(&src, "#version 450\nvoid main() { nope; }\n").unwrap();
    let err = HotComputePipeline::new(&device, &HotDesc::new(&src)).unwrap_err();
    assert_eq!(err.code(), "KILN-E013");
    assert!(err.to_string().contains("bad.comp:2: error"), "{err}");
    let err =
        HotComputePipeline::new(&device, &HotDesc::new(dir.path().join("none.comp"))).unwrap_err();
    assert_eq!(err.code(), "KILN-E013");
}

#[test]
fn an_edited_include_reloads_the_shader_that_includes_it() {
    let device = device();
    // Spaces in every folder and in the header's name: glslc's depfile does not escape
    // them.
    let dir = TempDir::new("kiln hot include");
    std::fs::create_dir_all(dir.path().join("my inc")).unwrap();
    let header = dir.path().join("my inc/k value.glsl");
    let deeper = dir.path().join("my inc/deeper.glsl");
    let header_text = |k: u32| format!("#include \"deeper.glsl\"\nconst uint K = {k}u;\n");
    std::fs::write(&header, header_text(7)).unwrap();
    std::fs::write(&deeper, "const uint J = 1u;\n").unwrap();
    let src = dir.path().join("sum.comp");
    std::fs::write(
        &src,
        "#version 450\n#extension GL_GOOGLE_include_directive : require\n\
         #include \"my inc/k value.glsl\"\nlayout(local_size_x = 64) in;\n\
         layout(set = 0, binding = 0) buffer Out { uint o[]; };\n\
         void main() { o[gl_GlobalInvocationID.x] = K + J; }\n",
    )
    .unwrap();
    let mut hot = HotComputePipeline::new(
        &device,
        &HotDesc::new(&src).poll_interval(Duration::from_millis(20)),
    )
    .unwrap();
    let mut watched = hot.watched();
    assert_eq!(watched.remove(0), src);
    watched.sort();
    assert_eq!(watched, vec![deeper.clone(), header.clone()]);
    let out = device.storage_buffer::<u32>("out", 64).unwrap();
    let mut set = hot.pipeline().descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    let run = |hot: &HotComputePipeline| -> Vec<u32> {
        device
            .execute(|r| {
                r.bind_pipeline(hot.pipeline())?;
                r.bind_set(0, &set)?;
                Ok(r.dispatch_threads(64)?)
            })
            .unwrap();
        out.read().unwrap()
    };
    assert_eq!(run(&hot), vec![8u32; 64]);

    // The header the source includes.
    save(&header, &header_text(41));
    let e = hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the header");
    assert!(matches!(e, ReloadEvent::Swapped), "{e:?}");
    assert_eq!(run(&hot), vec![42u32; 64]);

    // The header that header includes.
    save(&deeper, "const uint J = 2u;\n");
    let e = hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the deeper header");
    assert!(matches!(e, ReloadEvent::Swapped), "{e:?}");
    assert_eq!(run(&hot), vec![43u32; 64]);

    // An error in the header: reported at the header's line, nothing changes; fixing the
    // header swaps again.
    save(&header, "#include \"deeper.glsl\"\nconst uint K = nine;\n");
    match hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the header")
    {
        ReloadEvent::CompileFailed { message } => {
            assert!(message.contains("k value.glsl:2: error"), "{message}");
            assert!(message.contains("nine"), "{message}");
        }
        e => panic!("unexpected {e:?}"),
    }
    assert_eq!(run(&hot), vec![43u32; 64]);
    save(&header, &header_text(100));
    let e = hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the header");
    assert!(matches!(e, ReloadEvent::Swapped), "{e:?}");
    assert_eq!(run(&hot), vec![102u32; 64]);
    drop(hot);
    assert_clean(&device);
}
