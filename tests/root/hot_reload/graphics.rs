//! Hot reload of graphics pipelines (`HotGraphicsPipeline`): a full-screen triangle whose
//! fragment colour comes from a constant of the fragment shader, a constant of a header it
//! includes and a uniform buffer (the descriptor set made for the first version). Each
//! edit is followed by a render checked pixel by pixel: a swap while a submission that
//! bound the old pipeline is still held by a semaphore (the old pipeline draws it), the
//! header, the vertex stage alone, a layout change refused, a syntax error and a vertex
//! input kiln refuses reported, the old pipeline drawing on.

use std::time::Duration;

use common::draw::{pixel, target, RGBA8};
use common::{assert_clean, device};
use kiln::{
    vk, ColorAttachment, DescriptorSet, Device, HotGraphicsDesc, HotGraphicsPipeline, Image,
    QueueKind, ReloadEvent, RenderingDesc,
};

use super::{save, WAIT};
use common::temp::TempDir;

const VERTEX: &str = "#version 450\n\
    void main() {\n\
    vec2 p = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2)) * 2.0 - 1.0;\n\
    gl_Position = vec4(p, 0.0, 1.0);\n\
    }\n";

/// The fragment shader: red `r`, green from `colour.glsl`, blue and alpha from the
/// uniform buffer; `extra` goes before `main`.
fn fragment(r: &str, extra: &str) -> String {
    format!(
        "#version 450\n#include \"colour.glsl\"\n\
         layout(set = 0, binding = 0) uniform Tint {{ vec4 tint; }};\n\
         layout(location = 0) out vec4 o;\n{extra}\n\
         void main() {{ o = vec4({r}, G, tint.b, tint.a); }}\n"
    )
}

/// Clears an 8×8 target to zero and draws the triangle with `pipeline` and `set`.
fn record<'a>(
    r: &mut kiln::Recorder<'a, '_>,
    img: &Image,
    pipeline: &'a kiln::GraphicsPipeline,
    set: &'a DescriptorSet,
) -> kiln::Result<()> {
    r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
        img, [0.0; 4],
    )]))?;
    r.bind_pipeline(pipeline)?;
    r.bind_set(0, set)?;
    r.draw(3, 1, 0, 0)?;
    Ok(r.end_rendering()?)
}

fn draw(device: &Device, hot: &HotGraphicsPipeline, set: &DescriptorSet, img: &Image) -> Vec<u8> {
    device
        .execute(|r| record(r, img, hot.pipeline(), set))
        .unwrap();
    img.read().unwrap()
}

/// Every pixel of an 8×8 render is `want`.
#[track_caller]
fn assert_all(data: &[u8], want: [u8; 4]) {
    for y in 0..8 {
        for x in 0..8 {
            assert_eq!(pixel(data, 8, x, y), want, "pixel ({x}, {y})");
        }
    }
}

#[track_caller]
fn swapped(hot: &mut HotGraphicsPipeline) {
    let e = hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the change");
    assert!(matches!(e, ReloadEvent::Swapped), "{e:?}");
}

#[test]
fn graphics_equal_layouts_swap_and_the_rest_is_refused_or_reported() {
    let device = device();
    let dir = TempDir::new("kiln-hot-graphics");
    let (vert, frag, header) = (
        dir.path().join("full.vert"),
        dir.path().join("tint.frag"),
        dir.path().join("colour.glsl"),
    );
    std::fs::write(&vert, VERTEX).unwrap();
    std::fs::write(&frag, fragment("1.0", "")).unwrap();
    std::fs::write(&header, "const float G = 0.2;\n").unwrap();
    let mut desc = HotGraphicsDesc::new(&vert, &frag);
    desc.color_formats = vec![RGBA8];
    desc.poll_interval = Duration::from_millis(20);
    let mut hot = HotGraphicsPipeline::new(&device, &desc).unwrap();
    assert_eq!(
        hot.watched(),
        vec![vert.clone(), frag.clone(), header.clone()]
    );
    // Blue 0.6 and alpha 1.0 through the set made for the first version.
    let tint = device
        .buffer_from_slice(
            "tint",
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            &[0.0f32, 0.0, 0.6, 1.0],
        )
        .unwrap();
    let mut set = hot.pipeline().descriptor_set(0).unwrap();
    set.write_buffer(0, &tint).unwrap();
    let img = target(&device, 8, 8);
    // 0.2 * 255 = 51, 0.4 → 102, 0.6 → 153, 0.8 → 204: exact in UNORM8.
    assert_all(&draw(&device, &hot, &set, &img), [255, 51, 153, 255]);
    assert!(hot.poll().is_none());

    // A draw of the first version submitted, held on the GPU by a semaphore, while the
    // fragment shader's constant changes and the new pipeline is swapped in: the old one
    // is retired, not destroyed, and draws the held submission.
    let go = device.timeline_semaphore("go", 0).unwrap();
    let held_img = target(&device, 8, 8);
    let main = device.queue(QueueKind::Main);
    let held = main
        .submit_after(&[(&go, 1)], |r| record(r, &held_img, hot.pipeline(), &set))
        .unwrap();
    save(&frag, &fragment("0.4", ""));
    swapped(&mut hot);
    assert!(!held.is_done(), "the held draw waits for the semaphore");
    go.signal(1).unwrap();
    held.wait().unwrap();
    assert_all(&held_img.read().unwrap(), [255, 51, 153, 255]);
    assert_all(&draw(&device, &hot, &set, &img), [102, 51, 153, 255]);

    // The header the fragment shader includes.
    save(&header, "const float G = 0.8;\n");
    swapped(&mut hot);
    assert_all(&draw(&device, &hot, &set, &img), [102, 204, 153, 255]);

    // The vertex stage alone: the triangle now covers the top-left corner only.
    save(
        &vert,
        &VERTEX.replace("vec4(p,", "vec4(p.x * 0.5 - 0.5, p.y,"),
    );
    swapped(&mut hot);
    let now = draw(&device, &hot, &set, &img);
    assert_eq!(pixel(&now, 8, 0, 0), [102, 204, 153, 255]);
    assert_eq!(pixel(&now, 8, 7, 7), [0, 0, 0, 0]);

    // A second uniform block: the layout changed, refused with the diff.
    let extra = "layout(set = 0, binding = 1) uniform Extra { vec4 e; };";
    save(&frag, &fragment("0.4 + e.x", extra));
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
    assert_eq!(draw(&device, &hot, &set, &img), now);

    // A syntax error: reported with its line, nothing changes.
    save(&frag, &fragment("0.4", "float broken = 1.0"));
    match hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the change")
    {
        ReloadEvent::CompileFailed { message } => {
            assert!(message.contains("tint.frag:6: error"), "{message}");
        }
        e => panic!("unexpected {e:?}"),
    }
    assert_eq!(draw(&device, &hot, &set, &img), now);

    // Fixed, with another red: swapped.
    save(&frag, &fragment("0.2", ""));
    swapped(&mut hot);
    assert_eq!(
        pixel(&draw(&device, &hot, &set, &img), 8, 0, 0),
        [51, 204, 153, 255]
    );

    // A vertex input no vertex buffer feeds: kiln's coded error, nothing changes.
    save(
        &vert,
        &VERTEX
            .replace(
                "void main() {",
                "layout(location = 0) in vec2 pos;\nvoid main() {",
            )
            .replace("vec4(p,", "vec4(p + pos,"),
    );
    match hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the change")
    {
        ReloadEvent::CompileFailed { message } => {
            assert!(message.contains("KILN-E281"), "{message}");
        }
        e => panic!("unexpected {e:?}"),
    }
    let after = draw(&device, &hot, &set, &img);
    assert_eq!(pixel(&after, 8, 0, 0), [51, 204, 153, 255]);
    assert_eq!(pixel(&after, 8, 7, 7), [0, 0, 0, 0]);
    drop(hot);
    assert_clean(&device);
}

#[test]
fn a_graphics_stage_that_does_not_compile_first_is_e013() {
    let device = device();
    let dir = TempDir::new("kiln-hot-graphics-bad");
    let (vert, frag) = (dir.path().join("v.vert"), dir.path().join("f.frag"));
    std::fs::write(&vert, VERTEX).unwrap();
    std::fs::write(&frag, "#version 450\nvoid main() { nope; }\n").unwrap();
    let err = HotGraphicsPipeline::new(&device, &HotGraphicsDesc::new(&vert, &frag)).unwrap_err();
    assert_eq!(err.code(), "KILN-E013");
    assert!(err.to_string().contains("f.frag:2: error"), "{err}");
    let none = dir.path().join("none.frag");
    let err = HotGraphicsPipeline::new(&device, &HotGraphicsDesc::new(&vert, &none)).unwrap_err();
    assert_eq!(err.code(), "KILN-E013");
    assert!(err.to_string().contains("none.frag"), "{err}");
}

const TESC: &str = "#version 450\nlayout(vertices = 3) out;\nvoid main() {\n\
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;\n\
    gl_TessLevelOuter[0] = 1.0; gl_TessLevelOuter[1] = 1.0; gl_TessLevelOuter[2] = 1.0;\n\
    gl_TessLevelInner[0] = 1.0;\n}\n";

const TESE: &str = "#version 450\n#include \"shift.glsl\"\n\
    layout(triangles, equal_spacing, ccw) in;\nvoid main() {\n\
    gl_Position = gl_TessCoord.x * gl_in[0].gl_Position + gl_TessCoord.y * gl_in[1].gl_Position\n\
    + gl_TessCoord.z * gl_in[2].gl_Position + vec4(SHIFT, 0.0, 0.0, 0.0);\n}\n";

/// A pass-through geometry stage that gives the fragment stage its colour.
fn geometry(colour: &str) -> String {
    format!(
        "#version 450\nlayout(triangles) in;\nlayout(triangle_strip, max_vertices = 3) out;\n\
         layout(location = 0) flat out vec4 c;\nvoid main() {{\n\
         for (int i = 0; i < 3; i++) {{ gl_Position = gl_in[i].gl_Position; c = {colour}; EmitVertex(); }}\n\
         EndPrimitive();\n}}\n"
    )
}

#[test]
fn tessellation_and_geometry_stages_reload_too() {
    let device = device();
    let dir = TempDir::new("kiln-hot-graphics-stages");
    let p = |name: &str| dir.path().join(name);
    std::fs::write(p("full.vert"), VERTEX).unwrap();
    std::fs::write(p("pass.tesc"), TESC).unwrap();
    std::fs::write(p("shift.tese"), TESE).unwrap();
    std::fs::write(p("shift.glsl"), "const float SHIFT = 0.0;\n").unwrap();
    // Not named *.geom: compiled as the geometry stage because of its field.
    std::fs::write(p("colour.glsl"), geometry("vec4(0.2, 0.4, 0.6, 1.0)")).unwrap();
    std::fs::write(
        p("colour.frag"),
        "#version 450\nlayout(location = 0) flat in vec4 c;\n\
         layout(location = 0) out vec4 o;\nvoid main() { o = c; }\n",
    )
    .unwrap();
    let mut desc = HotGraphicsDesc::new(p("full.vert"), p("colour.frag")).tessellation(
        kiln::HotTessellation {
            control: p("pass.tesc"),
            evaluation: p("shift.tese"),
            patch_control_points: 3,
        },
    );
    desc.geometry = Some(p("colour.glsl"));
    desc.color_formats = vec![RGBA8];
    desc.poll_interval = Duration::from_millis(20);
    let mut hot = HotGraphicsPipeline::new(&device, &desc).unwrap();
    assert_eq!(
        hot.watched(),
        [
            "full.vert",
            "pass.tesc",
            "shift.tese",
            "shift.glsl",
            "colour.glsl",
            "colour.frag"
        ]
        .map(p)
    );
    let img = target(&device, 8, 8);
    let draw = |hot: &HotGraphicsPipeline| {
        device
            .execute(|r| {
                r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                    &img, [0.0; 4],
                )]))?;
                r.bind_pipeline(hot.pipeline())?;
                r.draw(3, 1, 0, 0)?;
                Ok(r.end_rendering()?)
            })
            .unwrap();
        img.read().unwrap()
    };
    assert_all(&draw(&hot), [51, 102, 153, 255]);

    // The geometry stage's colour.
    save(&p("colour.glsl"), &geometry("vec4(0.8, 0.4, 0.2, 1.0)"));
    swapped(&mut hot);
    assert_all(&draw(&hot), [204, 102, 51, 255]);

    // The header of the tessellation evaluation stage: the triangle moves right by half
    // the target, so the left half is no longer drawn.
    save(&p("shift.glsl"), "const float SHIFT = 1.0;\n");
    swapped(&mut hot);
    let now = draw(&hot);
    for y in 0..8 {
        for x in 0..8 {
            let want = if x < 4 { [0; 4] } else { [204, 102, 51, 255] };
            assert_eq!(pixel(&now, 8, x, y), want, "pixel ({x}, {y})");
        }
    }
    drop(hot);
    assert_clean(&device);
}
