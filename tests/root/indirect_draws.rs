//! Indirect draws on a real device under validation: a dispatch writes the draw commands
//! and the draw count, the draws of the same recording read them with no barrier of the
//! test's (the rendering scope's barrier orders the dispatch's writes before the indirect
//! reads), a second dispatch rewrites them after the draws read them (the draws' indirect
//! reads are tracked uses: synchronization validation reports the write-after-read
//! otherwise), each draw checked by which of three triangles it drew; and the coded errors
//! of bad indirect arguments.

use common::add;
use common::draw::{flat_pipeline, pixel, RGBA8};
use common::{assert_clean, device};
use kiln::{
    vk, Buffer, BufferDesc, ColorAttachment, Device, ImageDesc, MemoryLocation, RenderingDesc,
};

/// Width and height of a target: three 16-pixel columns, one triangle each.
const W: u32 = 48;
const H: u32 = 16;
/// Byte offsets in the buffer `test/draw_commands.comp` writes.
const INDEXED: u64 = 48;
const COUNT: u64 = 108;

/// Three triangles, one per column of the target, their bases along the top edge.
fn triangles(device: &Device) -> Buffer {
    let mut v = Vec::new();
    for i in 0..3 {
        let (x0, x1) = (
            -1.0 + 2.0 * i as f32 / 3.0,
            -1.0 + 2.0 * (i + 1) as f32 / 3.0,
        );
        v.extend_from_slice(&[[x0, -1.0], [x1, -1.0], [(x0 + x1) / 2.0, 1.0]]);
    }
    device
        .buffer_from_slice("triangles", vk::BufferUsageFlags::VERTEX_BUFFER, &v)
        .unwrap()
}

/// Which columns of a rendered target are drawn (the flat colour) rather than cleared.
fn drawn(data: &[u8]) -> [bool; 3] {
    [0, 1, 2].map(|i| {
        let p = pixel(data, W, 8 + 16 * i, 2);
        assert!(
            p == [0, 255, 0, 255] || p == [0, 0, 0, 255],
            "column {i}: {p:?}"
        );
        p[1] == 255
    })
}

#[test]
fn indirect_draws_read_the_commands_a_dispatch_wrote() {
    let device = device();
    let writer = device
        .compute_pipeline(
            &kiln::include_spirv!("test/draw_commands.comp").unwrap(),
            "main",
        )
        .unwrap();
    let commands = device
        .buffer(
            &BufferDesc::default()
                .label("draw commands")
                .size(28 * 4)
                .usage(vk::BufferUsageFlags::INDIRECT_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::GpuOnly),
        )
        .unwrap();
    let mut set = writer.descriptor_set(0).unwrap();
    set.write_buffer(0, &commands).unwrap();
    let draw = flat_pipeline(&device, RGBA8).unwrap();
    let vb = triangles(&device);
    let ib = device
        .buffer_from_slice(
            "indices",
            vk::BufferUsageFlags::INDEX_BUFFER,
            &[0u16, 1, 2, 3, 4, 5, 6, 7, 8],
        )
        .unwrap();
    let targets: Vec<_> = (0..5)
        .map(|i| {
            device
                .image(&ImageDesc::color_target(
                    &format!("target {i}"),
                    W,
                    H,
                    RGBA8,
                ))
                .unwrap()
        })
        .collect();
    let uncovered = device
        .execute(|r| {
            r.bind_pipeline(&writer)?;
            r.bind_set(0, &set)?;
            r.push(0, &2u32)?;
            r.dispatch(1, 1, 1)?;
            for (i, img) in targets.iter().enumerate() {
                if i == 4 {
                    // The commands rewritten after the draws read them (write-after-read),
                    // with a count of 1, for a fifth scope.
                    r.bind_pipeline(&writer)?;
                    r.push(0, &1u32)?;
                    r.dispatch(1, 1, 1)?;
                }
                r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                    img,
                    [0.0, 0.0, 0.0, 1.0],
                )]))?;
                r.bind_pipeline(&draw)?;
                r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
                r.bind_vertex_buffer(0, &vb, 0)?;
                r.bind_index_buffer(&ib, 0, vk::IndexType::UINT16)?;
                match i {
                    0 => r.draw_indirect(&commands, 0, 3, 16)?,
                    1 => r.draw_indirect_count(&commands, 0, &commands, COUNT, 3, 16)?,
                    2 => r.draw_indexed_indirect(&commands, INDEXED + 20, 2, 20)?,
                    4 => r.draw_indirect_count(&commands, 0, &commands, COUNT, 3, 16)?,
                    _ => {
                        r.draw_indexed_indirect_count(&commands, INDEXED, &commands, COUNT, 3, 20)?
                    }
                }
                r.end_rendering()?;
            }
            Ok(r.debug_uncovered())
        })
        .unwrap();
    assert_eq!(uncovered, 0);
    let want = [
        ("draw_indirect, 3 draws", [true, true, true]),
        ("draw_indirect_count, count 2 of 3", [true, true, false]),
        ("draw_indexed_indirect from the second", [false, true, true]),
        ("draw_indexed_indirect_count, 2 of 3", [true, true, false]),
        (
            "draw_indirect_count after the rewrite, 1 of 3",
            [true, false, false],
        ),
    ];
    for (img, (what, columns)) in targets.iter().zip(want) {
        assert_eq!(drawn(&img.read().unwrap()), columns, "{what}");
    }
    assert_clean(&device);
}

/// Commands the host wrote are read by a draw, then rewritten by a dispatch, then read by
/// another draw, in one recording: the first draw's indirect read is a tracked use, so
/// the dispatch waits for it (write-after-read; nothing before the first scope touched
/// the buffer, so only that use orders it; synchronization validation reports the hazard
/// otherwise).
#[test]
fn a_dispatch_rewriting_commands_a_draw_read_waits_for_the_draw() {
    let device = device();
    let writer = device
        .compute_pipeline(
            &kiln::include_spirv!("test/draw_commands.comp").unwrap(),
            "main",
        )
        .unwrap();
    // Before the dispatch: one draw of triangle 1 at word 0, a count of 1 at word 27.
    let mut words = [0u32; 28];
    words[..4].copy_from_slice(&[3, 1, 3, 0]);
    words[27] = 1;
    let commands = device
        .buffer_from_slice(
            "draw commands",
            vk::BufferUsageFlags::INDIRECT_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER,
            &words,
        )
        .unwrap();
    let mut set = writer.descriptor_set(0).unwrap();
    set.write_buffer(0, &commands).unwrap();
    let draw = flat_pipeline(&device, RGBA8).unwrap();
    let vb = triangles(&device);
    let targets: Vec<_> = (0..2)
        .map(|i| {
            device
                .image(&ImageDesc::color_target(
                    &format!("target {i}"),
                    W,
                    H,
                    RGBA8,
                ))
                .unwrap()
        })
        .collect();
    device
        .execute(|r| {
            for (i, img) in targets.iter().enumerate() {
                if i == 1 {
                    r.bind_pipeline(&writer)?;
                    r.bind_set(0, &set)?;
                    r.push(0, &3u32)?;
                    r.dispatch(1, 1, 1)?;
                }
                r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                    img,
                    [0.0, 0.0, 0.0, 1.0],
                )]))?;
                r.bind_pipeline(&draw)?;
                r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
                r.bind_vertex_buffer(0, &vb, 0)?;
                r.draw_indirect_count(&commands, 0, &commands, COUNT, 3, 16)?;
                r.end_rendering()?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(
        drawn(&targets[0].read().unwrap()),
        [false, true, false],
        "the host's"
    );
    assert_eq!(
        drawn(&targets[1].read().unwrap()),
        [true, true, true],
        "the dispatch's"
    );
    assert_clean(&device);
}

/// A draw recorded inside a rendering scope with the flat pipeline bound.
type Draw<'a> = dyn Fn(&mut kiln::Recorder) -> kiln::Result<()> + 'a;

#[test]
fn indirect_draw_errors_are_coded() {
    let device = device();
    let draw = flat_pipeline(&device, RGBA8).unwrap();
    let vb = triangles(&device);
    let img = device
        .image(&ImageDesc::color_target("target", W, H, RGBA8))
        .unwrap();
    let commands = device
        .buffer_from_slice(
            "commands",
            vk::BufferUsageFlags::INDIRECT_BUFFER,
            &[3u32, 1, 0, 0, 0, 1],
        )
        .unwrap();
    let plain = add::storage(&device, "not indirect", &[0u32; 8]);
    let in_scope = |f: &Draw<'_>| {
        device
            .execute(|r| {
                r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                    &img, [0.0; 4],
                )]))?;
                r.bind_pipeline(&draw)?;
                r.push(0, &[0.0f32; 4])?;
                r.bind_vertex_buffer(0, &vb, 0)?;
                f(r)?;
                Ok(r.end_rendering()?)
            })
            .unwrap_err()
    };
    let cases: [(&str, &str, &str, &Draw<'_>); 10] = [
        (
            "a counted draw's stride, whatever its count",
            "KILN-E259",
            "stride 0",
            &|r| Ok(r.draw_indirect_count(&commands, 0, &commands, 20, 1, 0)?),
        ),
        ("no INDIRECT usage", "KILN-E257", "not indirect", &|r| {
            Ok(r.draw_indirect(&plain, 0, 1, 16)?)
        }),
        (
            "count buffer without INDIRECT usage",
            "KILN-E257",
            "not indirect",
            &|r| Ok(r.draw_indirect_count(&commands, 0, &plain, 0, 1, 16)?),
        ),
        (
            "unaligned offset",
            "KILN-E259",
            "offset 2 is not a multiple of 4",
            &|r| Ok(r.draw_indirect(&commands, 2, 1, 16)?),
        ),
        ("stride below the command", "KILN-E259", "stride 8", &|r| {
            Ok(r.draw_indirect(&commands, 0, 2, 8)?)
        }),
        ("unaligned stride", "KILN-E259", "stride 18", &|r| {
            Ok(r.draw_indirect(&commands, 0, 2, 18)?)
        }),
        (
            "past the end",
            "KILN-E259",
            "end past the buffer's 24 bytes",
            &|r| Ok(r.draw_indexed_indirect(&commands, 8, 1, 20)?),
        ),
        (
            "max draws past the end",
            "KILN-E259",
            "2 commands of 16 bytes",
            &|r| Ok(r.draw_indirect_count(&commands, 0, &commands, 20, 2, 16)?),
        ),
        (
            "count past the end",
            "KILN-E259",
            "the draw count's offset 24",
            &|r| Ok(r.draw_indirect_count(&commands, 0, &commands, 24, 1, 16)?),
        ),
        (
            "indexed without an index buffer",
            "KILN-E283",
            "bind_index_buffer",
            &|r| Ok(r.draw_indexed_indirect(&commands, 0, 1, 20)?),
        ),
    ];
    for (what, code, text, f) in cases {
        let err = in_scope(f);
        assert_eq!(err.code(), code, "{what}: {err}");
        assert!(err.to_string().contains(text), "{what}: {err}");
    }
    let err = device
        .execute(|r| {
            r.bind_pipeline(&draw)?;
            Ok(r.draw_indirect(&commands, 0, 1, 16)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E283", "outside a rendering scope: {err}");
    // One draw ignores the stride (VUID-vkCmdDrawIndirect-drawCount-00476 is for > 1), and
    // zero draws draw nothing; both are recorded.
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img,
                [0.0, 0.0, 0.0, 1.0],
            )]))?;
            r.bind_pipeline(&draw)?;
            r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw_indirect(&commands, 0, 1, 0)?;
            r.draw_indirect(&commands, 0, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    assert_eq!(drawn(&img.read().unwrap()), [true, false, false]);
    assert_clean(&device);
}
