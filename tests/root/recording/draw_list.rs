//! `Recorder::draw_list`: many draws, each binding a set and pushing constants, in one
//! call. A 4×4 grid of cells (4×4 pixels each), cell i drawn with set i % 4 (a uniform
//! colour each) at the rectangle its push constants give: the pixels are each cell's
//! colour, the same as the calls one by one record, in automatic and manual mode; the
//! errors come before anything is recorded.

use common::draw::{pixel, target, RGBA8};
use common::{assert_clean, device};
use kiln::{
    vk, ColorAttachment, DescriptorSet, Device, GraphicsPipeline, GraphicsPipelineDesc, Image,
    ListDraw, RenderingDesc,
};

const COLOURS: [[u8; 4]; 4] = [
    [255, 0, 0, 255],
    [0, 255, 0, 255],
    [0, 0, 255, 255],
    [255, 255, 255, 255],
];

fn pipeline(device: &Device) -> GraphicsPipeline {
    let vs = kiln::include_spirv!("test/list_cell.vert").unwrap();
    let fs = kiln::include_spirv!("test/list_cell.frag").unwrap();
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs);
    desc.color_formats = vec![RGBA8];
    device.graphics_pipeline(&desc).unwrap()
}

/// One set per colour (and the uniform buffers behind them).
fn sets(device: &Device, p: &GraphicsPipeline) -> (Vec<DescriptorSet>, Vec<kiln::Buffer>) {
    let mut sets = Vec::new();
    let mut bufs = Vec::new();
    for c in COLOURS {
        let rgba = c.map(|v| f32::from(v) / 255.0);
        let b = device
            .buffer_from_slice("colour", vk::BufferUsageFlags::UNIFORM_BUFFER, &rgba)
            .unwrap();
        let mut set = p.descriptor_set(0).unwrap();
        set.write_buffer(0, &b).unwrap();
        sets.push(set);
        bufs.push(b);
    }
    (sets, bufs)
}

/// Cell i of the 4×4 grid in clip space.
fn rect(i: usize) -> [f32; 4] {
    let (x, y) = ((i % 4) as f32, (i / 4) as f32);
    [-1.0 + x * 0.5, -1.0 + y * 0.5, 0.5, 0.5]
}

fn draws(sets: &[DescriptorSet]) -> Vec<ListDraw<'_, [f32; 4]>> {
    (0..16)
        .map(|i| ListDraw::new(&sets[i % 4], rect(i), 6))
        .collect()
}

/// Renders the grid into `img`, as a list or call by call.
fn render(
    device: &Device,
    p: &GraphicsPipeline,
    sets: &[DescriptorSet],
    img: &Image,
    list: bool,
    manual: bool,
) {
    device
        .execute(|r| {
            if manual {
                r.manual_barriers();
            }
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                img, [0.0; 4],
            )]))?;
            r.bind_pipeline(p)?;
            if list {
                r.draw_list(0, 0, &draws(sets))?;
            } else {
                for (i, d) in draws(sets).iter().enumerate() {
                    r.bind_set(0, d.set)?;
                    r.push(0, &rect(i))?;
                    r.draw(6, 1, 0, 0)?;
                }
            }
            Ok(r.end_rendering()?)
        })
        .unwrap();
}

fn assert_grid(data: &[u8]) {
    for y in 0..16 {
        for x in 0..16 {
            let cell = (y / 4 * 4 + x / 4) as usize;
            assert_eq!(pixel(data, 16, x, y), COLOURS[cell % 4], "pixel ({x}, {y})");
        }
    }
}

#[test]
fn a_draw_list_renders_what_the_calls_one_by_one_render() {
    let device = device();
    let p = pipeline(&device);
    let (sets, _bufs) = sets(&device, &p);
    for manual in [false, true] {
        let (listed, called) = (target(&device, 16, 16), target(&device, 16, 16));
        render(&device, &p, &sets, &listed, true, manual);
        render(&device, &p, &sets, &called, false, manual);
        let data = listed.read().unwrap();
        assert_grid(&data);
        assert_eq!(data, called.read().unwrap(), "manual: {manual}");
    }
    assert_clean(&device);
}

#[test]
fn a_draw_list_refuses_bad_input_before_recording_anything() {
    let device = device();
    let p = pipeline(&device);
    let (sets, _bufs) = sets(&device, &p);
    let img = target(&device, 16, 16);
    let code = |e: kiln::RecordingError| e.code().to_string();
    let unwritten = p.descriptor_set(0).unwrap();
    // Another layout at set 0: a storage buffer for the fragment stage.
    let vs = kiln::include_spirv!("test/fuzz_fullscreen.vert").unwrap();
    let fs = kiln::include_spirv!("test/split_read.frag").unwrap();
    let mut other_desc = GraphicsPipelineDesc::new(&vs, &fs);
    other_desc.color_formats = vec![RGBA8];
    let other = device.graphics_pipeline(&other_desc).unwrap();
    let foreign = other.descriptor_set(0).unwrap();
    let got = device
        .execute(|r| {
            let list = draws(&sets);
            let outside = r.draw_list(0, 0, &list).map_err(code);
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img, [0.0; 4],
            )]))?;
            let unbound = r.draw_list(0, 0, &list).map_err(code);
            r.bind_pipeline(&p)?;
            let no_set = r.draw_list(1, 0, &list).map_err(code);
            let mut bad = draws(&sets);
            bad[7] = ListDraw::new(&foreign, rect(7), 6);
            let incompatible = r.draw_list(0, 0, &bad).map_err(code);
            bad[7] = ListDraw::new(&unwritten, rect(7), 6);
            let not_written = r.draw_list(0, 0, &bad).map_err(code);
            let out_of_range = r.draw_list(0, 16, &list).map_err(code);
            r.end_rendering()?;
            Ok([
                outside,
                unbound,
                no_set,
                incompatible,
                not_written,
                out_of_range,
            ])
        })
        .unwrap();
    let want = [
        "KILN-E283",
        "KILN-E252",
        "KILN-E205",
        "KILN-E204",
        "KILN-E207",
        "KILN-E250",
    ];
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.as_ref().err().map(String::as_str), Some(w), "{got:?}");
    }
    // Nothing was drawn: the clear only.
    assert!(img.read().unwrap().iter().all(|&b| b == 0));
    assert_clean(&device);
}

/// An empty list records nothing, so it pushes nothing either: a draw after it without
/// push constants is refused (`KILN-E255`) as it is without the list, instead of drawing
/// with push constants that were never pushed (VUID-vkCmdDraw-maintenance4-08602).
#[test]
fn an_empty_draw_list_pushes_nothing() {
    let device = device();
    let p = pipeline(&device);
    let (sets, _bufs) = sets(&device, &p);
    let img = target(&device, 16, 16);
    let got = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img, [0.0; 4],
            )]))?;
            r.bind_pipeline(&p)?;
            r.bind_set(0, &sets[0])?;
            r.draw_list::<[f32; 4]>(0, 0, &[])?;
            let drawn = r.draw(6, 1, 0, 0).map_err(|e| e.code().to_string());
            r.end_rendering()?;
            Ok(drawn)
        })
        .unwrap();
    assert_eq!(got.err().as_deref(), Some("KILN-E255"));
    assert!(img.read().unwrap().iter().all(|&b| b == 0));
    assert_clean(&device);
}
