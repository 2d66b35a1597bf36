//! Hot reload (kiln feature `hot-reload`): a source rewritten with the same layout is
//! swapped in and the descriptor set made for the first version keeps working; a
//! rewritten layout is refused with the diff while the old pipeline keeps running; a
//! compile error is reported and changes nothing. Values read back after each step.

use std::path::PathBuf;
use std::time::Duration;

use common::{assert_clean, device};
use kiln::{HotComputePipeline, HotDesc, ReloadEvent};

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
fn save(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("comp.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

struct Dir(PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn equal_layouts_swap_changed_layouts_and_compile_errors_change_nothing() {
    let device = device();
    let dir = Dir(std::env::temp_dir().join(format!("kiln-hot-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let src = dir.0.join("fill.comp");
    std::fs::write(&src, shader(1)).unwrap();
    let mut hot = HotComputePipeline::new(
        &device,
        &HotDesc {
            poll_interval: Duration::from_millis(20),
            ..HotDesc::new(&src)
        },
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
                r.dispatch_threads(64)
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
    assert_eq!(run(&hot), vec![2u32; 64]);

    // A compile error: reported with its line, nothing changes.
    save(&src, &shader(3).replace("= 3u;", "= 3u"));
    match hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the change")
    {
        ReloadEvent::CompileFailed { message } => {
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
        ReloadEvent::LayoutChanged { diff } => {
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
    let dir = Dir(std::env::temp_dir().join(format!("kiln-hot-bad-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let src = dir.0.join("bad.comp");
    std::fs::write(&src, "#version 450\nvoid main() { nope; }\n").unwrap();
    let err = HotComputePipeline::new(&device, &HotDesc::new(&src)).unwrap_err();
    assert_eq!(err.code(), "KILN-E013");
    assert!(err.to_string().contains("bad.comp:2: error"), "{err}");
    let err = HotComputePipeline::new(&device, &HotDesc::new(dir.0.join("none.comp"))).unwrap_err();
    assert_eq!(err.code(), "KILN-E013");
}
