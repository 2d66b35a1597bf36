//! Graphics pipelines compiled in the background (`Device::graphics_pipeline_async`) on
//! the same pool as compute: a flat triangle drawn with one and its pixels checked; one
//! asked for while held (`KILN-E269`, then it waits); a failing creation reported through
//! the handle; pipelines dropped before and while compiling. Hot reload (compute and
//! graphics) creates its pipelines on that pool too: the pool's count rises with each
//! version.

use std::time::Duration;

use common::draw::{pixel, target, RGBA8};
use common::temp::TempDir;
use common::{assert_clean, code, device};
use kiln::vk;
use kiln::{
    ColorAttachment, GraphicsPipelineDesc, HotComputePipeline, HotDesc, HotGraphicsDesc,
    HotGraphicsPipeline, NotReady, ReloadEvent, RenderingDesc, VertexBufferLayout,
};

fn flat_desc<'a>(
    vs: &'a kiln::ShaderModule,
    fs: &'a kiln::ShaderModule,
) -> GraphicsPipelineDesc<'a> {
    let mut desc =
        GraphicsPipelineDesc::new(vs, fs).vertex_buffer(VertexBufferLayout::packed(&[(
            0,
            vk::Format::R32G32_SFLOAT,
        )]));
    desc.color_formats = vec![RGBA8];
    desc
}

/// Draws the middle triangle with `pipeline` in `color` over black into a 32×32 target;
/// the centre and a corner pixel.
fn draw(device: &kiln::Device, pipeline: &kiln::GraphicsPipeline, color: [f32; 4]) -> [[u8; 4]; 2] {
    let img = target(device, 32, 32);
    let verts: [[f32; 2]; 3] = [[-0.5, 0.5], [0.5, 0.5], [0.0, -0.5]];
    let vb = device
        .buffer_from_slice("triangle", vk::BufferUsageFlags::VERTEX_BUFFER, &verts)
        .unwrap();
    device
        .execute(|r| {
            r.begin_rendering(
                &RenderingDesc::default()
                    .color(&[ColorAttachment::clear(&img, [0.0, 0.0, 0.0, 1.0])])
                    .depth(None),
            )?;
            r.bind_pipeline(pipeline)?;
            r.push(0, &color)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(3, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    let data = img.read().unwrap();
    [pixel(&data, 32, 16, 16), pixel(&data, 32, 0, 0)]
}

#[test]
fn a_graphics_pipeline_compiled_in_the_background_draws_exact_pixels() {
    let device = device();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let before = device.debug_pipelines_created_async();
    let pending: Vec<_> = (0..4)
        .map(|_| {
            device
                .graphics_pipeline_async(&flat_desc(&vs, &fs))
                .unwrap()
        })
        .collect();
    for (k, mut p) in pending.into_iter().enumerate() {
        let pipeline = p.get(NotReady::Wait).unwrap();
        // 0.2 * 255 = 51, 0.6 * 255 = 153: exact in UNORM8.
        let [centre, corner] = draw(&device, pipeline, [1.0, 0.2, 0.6, 1.0]);
        assert_eq!(centre, [255, 51, 153, 255], "pipeline {k}");
        assert_eq!(corner, [0, 0, 0, 255], "pipeline {k}");
        assert!(p.is_ready());
        let owned = p.wait().unwrap();
        assert_eq!(owned.layout().push_constant_ranges()[0].size, 16);
    }
    assert_eq!(device.debug_pipelines_created_async() - before, 4);
    assert_clean(&device);
}

#[test]
fn a_graphics_pipeline_not_ready_is_e269_or_waits_and_dropped_ones_neither_hang_nor_leak() {
    let device = device();
    let watch = device.validation_watch();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    device.debug_hold_pipeline_threads(true);
    let mut held = device
        .graphics_pipeline_async(&flat_desc(&vs, &fs))
        .unwrap();
    let dropped_before = device
        .graphics_pipeline_async(&flat_desc(&vs, &fs))
        .unwrap();
    assert!(!held.is_ready());
    let e = held.get(NotReady::Error).unwrap_err();
    assert_eq!(e.code(), "KILN-E269", "{e}");
    assert!(e.to_string().contains("still compiling"), "{e}");
    assert!(e.to_string().contains("flat"), "{e}");
    drop(dropped_before);
    let before = device.debug_pipelines_created_async();
    device.debug_hold_pipeline_threads(false);
    let [centre, _] = draw(
        &device,
        held.get(NotReady::Wait).unwrap(),
        [0.0, 1.0, 0.0, 1.0],
    );
    assert_eq!(centre, [0, 255, 0, 255]);
    assert_eq!(device.debug_pipelines_created_async() - before, 1);
    for _ in 0..8 {
        drop(
            device
                .graphics_pipeline_async(&flat_desc(&vs, &fs))
                .unwrap(),
        );
    }
    // No colour attachment for the fragment output: the creation's E282, then E269.
    let mut no_target = flat_desc(&vs, &fs);
    no_target.color_formats.clear();
    let mut bad = device.graphics_pipeline_async(&no_target).unwrap();
    assert_eq!(code(bad.get(NotReady::Wait)), "KILN-E282");
    assert_eq!(code(bad.get(NotReady::Wait)), "KILN-E269");
    drop((held, bad, device));
    let start = std::time::Instant::now();
    while !watch.torn_down() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    common::assert_watch_clean(&watch);
}

const WAIT: Duration = Duration::from_secs(60);

fn save(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn fill(value: u32) -> String {
    format!(
        "#version 450\nlayout(local_size_x = 64) in;\n\
         layout(set = 0, binding = 0) buffer Out {{ uint o[]; }};\n\
         void main() {{ o[gl_GlobalInvocationID.x] = {value}u; }}\n"
    )
}

const VERT: &str = "#version 450\nlayout(location = 0) in vec2 p;\n\
                    void main() { gl_Position = vec4(p, 0.0, 1.0); }\n";

fn frag(green: f32) -> String {
    format!(
        "#version 450\nlayout(location = 0) out vec4 c;\n\
         layout(push_constant) uniform P {{ vec4 unused; }} pc;\n\
         void main() {{ c = vec4(0.0, {green:.1}, 0.0, 1.0) + 0.0 * pc.unused; }}\n"
    )
}

#[test]
fn hot_reload_creates_its_pipelines_on_the_pipeline_threads() {
    let device = device();
    let dir = TempDir::new("kiln-hot-pool");
    let comp = dir.join("fill.comp");
    std::fs::write(&comp, fill(1)).unwrap();
    let before = device.debug_pipelines_created_async();
    let mut hot = HotComputePipeline::new(
        &device,
        &HotDesc::new(&comp).poll_interval(Duration::from_millis(20)),
    )
    .unwrap();
    assert_eq!(
        device.debug_pipelines_created_async() - before,
        1,
        "first version"
    );
    save(&comp, &fill(2));
    let e = hot
        .wait_for_reload(WAIT)
        .expect("the watcher saw the change");
    assert!(matches!(e, ReloadEvent::Swapped), "{e:?}");
    assert_eq!(device.debug_pipelines_created_async() - before, 2, "reload");
    let out = device.storage_buffer::<u32>("out", 64).unwrap();
    let mut set = hot.pipeline().descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(hot.pipeline())?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch_threads(64)?)
        })
        .unwrap();
    assert_eq!(out.read::<u32>().unwrap(), vec![2u32; 64]);

    let (vert, fragment) = (dir.join("flat.vert"), dir.join("flat.frag"));
    std::fs::write(&vert, VERT).unwrap();
    std::fs::write(&fragment, frag(0.2)).unwrap();
    let before = device.debug_pipelines_created_async();
    let mut desc = HotGraphicsDesc::new(&vert, &fragment).vertex_buffer(
        VertexBufferLayout::packed(&[(0, vk::Format::R32G32_SFLOAT)]),
    );
    desc.color_formats = vec![RGBA8];
    desc.poll_interval = Duration::from_millis(20);
    let mut g = HotGraphicsPipeline::new(&device, &desc).unwrap();
    assert_eq!(device.debug_pipelines_created_async() - before, 1);
    assert_eq!(draw(&device, g.pipeline(), [0.0; 4])[0], [0, 51, 0, 255]);
    save(&fragment, &frag(0.6));
    let e = g.wait_for_reload(WAIT).expect("the watcher saw the change");
    assert!(matches!(e, ReloadEvent::Swapped), "{e:?}");
    assert_eq!(device.debug_pipelines_created_async() - before, 2);
    assert_eq!(draw(&device, g.pipeline(), [0.0; 4])[0], [0, 153, 0, 255]);
    drop((hot, g));
    assert_clean(&device);
}

/// The last `Device` handle dropped while its pipelines are queued and compiling: every
/// handle still gives its pipeline (or the creation's error), and the device is torn down
/// clean once the last pipeline goes, not before.
#[test]
fn the_device_dropped_while_its_pipelines_compile() {
    let device = device();
    let watch = device.validation_watch();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let pending: Vec<_> = (0..6)
        .map(|_| {
            device
                .graphics_pipeline_async(&flat_desc(&vs, &fs))
                .unwrap()
        })
        .collect();
    let mut no_target = flat_desc(&vs, &fs);
    no_target.color_formats.clear();
    let bad = device.graphics_pipeline_async(&no_target).unwrap();
    drop(device);
    drop((vs, fs));
    assert_eq!(code(bad.wait()), "KILN-E282");
    let pipelines: Vec<_> = pending.into_iter().map(|p| p.wait().unwrap()).collect();
    assert!(!watch.torn_down(), "torn down while its pipelines live");
    drop(pipelines);
    let start = std::time::Instant::now();
    while !watch.torn_down() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(watch.torn_down(), "the device outlived its last pipeline");
    common::assert_watch_clean(&watch);
}

/// Handles cross threads: a pending pipeline can be made on one thread and waited for on
/// another (compile-time check).
#[test]
fn pending_pipelines_and_hot_pipelines_are_send() {
    fn send<T: Send>() {}
    send::<kiln::PendingPipeline>();
    send::<kiln::PendingPipeline<kiln::GraphicsPipeline>>();
    send::<HotComputePipeline>();
    send::<HotGraphicsPipeline>();
    let device = device();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let pending = device
        .graphics_pipeline_async(&flat_desc(&vs, &fs))
        .unwrap();
    let p = std::thread::spawn(move || pending.wait().unwrap())
        .join()
        .unwrap();
    let [centre, corner] = draw(&device, &p, [1.0, 0.0, 0.0, 1.0]);
    assert_eq!((centre, corner), ([255, 0, 0, 255], [0, 0, 0, 255]));
    assert_clean(&device);
}
