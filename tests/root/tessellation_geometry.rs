//! Tessellation and geometry stages (`GraphicsPipelineDesc::tessellation`, `geometry`) on a
//! real device under validation: a vertex stage draws triangle 0 of three columns; a
//! tessellation evaluation stage moves it by a shift read from a storage buffer that a copy
//! wrote earlier in the same recording (the rendering scope's barrier reaches the
//! tessellation stage), a geometry stage draws it twice, both together do both; each is
//! checked by which columns were drawn. Then the coded errors: patch lists without
//! tessellation and the reverse, patch sizes beyond `maxTessellationPatchSize`, a module of
//! the wrong stage, a mesh-shading pipeline with a geometry stage. lavapipe (22.3 and 25)
//! and the H200 have both features, so the real path runs everywhere.

use common::draw::pixel;
use common::{assert_clean, device};
use kiln::{
    vk, BufferDesc, ColorAttachment, GraphicsPipelineDesc, ImageDesc, RenderingDesc, ShaderModule,
    Tessellation,
};

const W: u32 = 48;
const H: u32 = 16;
const RGBA8: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// Which of the three columns of a rendered target are drawn.
fn drawn(data: &[u8]) -> [bool; 3] {
    [0, 1, 2].map(|i| pixel(data, W, 8 + 16 * i, 2)[1] == 255)
}

struct Modules {
    vs: ShaderModule,
    fs: ShaderModule,
    tesc: ShaderModule,
    tese: ShaderModule,
    geom: ShaderModule,
}

fn modules() -> Modules {
    Modules {
        vs: kiln::include_spirv!("test/column.vert").unwrap(),
        fs: kiln::include_spirv!("test/flat.frag").unwrap(),
        tesc: kiln::include_spirv!("test/pass.tesc").unwrap(),
        tese: kiln::include_spirv!("test/shift.tese").unwrap(),
        geom: kiln::include_spirv!("test/twice.geom").unwrap(),
    }
}

/// Triangle 0, with tessellation and/or a geometry stage.
fn desc(m: &Modules, tess: bool, geom: bool) -> GraphicsPipelineDesc<'_> {
    let mut d = GraphicsPipelineDesc::new(&m.vs, &m.fs);
    d.color_formats = vec![RGBA8];
    if tess {
        d = d.tessellation(Tessellation::new(&m.tesc, &m.tese, 3));
    }
    if geom {
        d.geometry = Some(&m.geom);
    }
    d
}

#[test]
fn tessellation_and_geometry_stages_draw_what_a_copy_wrote() {
    let device = device();
    let f = device.features();
    assert!(
        f.tessellation_shader && f.geometry_shader,
        "{} lacks tessellationShader or geometryShader, which this test needs",
        device.info().name
    );
    let m = modules();
    let tess = device.graphics_pipeline(&desc(&m, true, false)).unwrap();
    let geom = device.graphics_pipeline(&desc(&m, false, true)).unwrap();
    let both = device.graphics_pipeline(&desc(&m, true, true)).unwrap();
    // One set layout (binding 0, visible to the stages that read it) for all three.
    let shifts: [[f32; 2]; 3] = [[2.0 / 3.0, 0.0], [4.0 / 3.0, 0.0], [2.0 / 3.0, 0.0]];
    let host = device
        .buffer_from_slice("host shifts", vk::BufferUsageFlags::STORAGE_BUFFER, &shifts)
        .unwrap();
    let bufs: Vec<_> = (0..3)
        .map(|i| {
            device
                .buffer(
                    &BufferDesc::default()
                        .label(&format!("shift {i}"))
                        .size(8)
                        .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                        .location(kiln::MemoryLocation::GpuOnly),
                )
                .unwrap()
        })
        .collect();
    let pipelines = [&tess, &geom, &both];
    let sets: Vec<_> = pipelines
        .iter()
        .zip(&bufs)
        .map(|(p, b)| {
            let mut s = p.descriptor_set(0).unwrap();
            s.write_buffer(0, b).unwrap();
            s
        })
        .collect();
    let targets: Vec<_> = (0..3)
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
            for (i, b) in bufs.iter().enumerate() {
                r.copy_buffer(&host, 8 * i as u64, b, 0, 8)?;
            }
            for i in 0..3 {
                r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                    &targets[i],
                    [0.0, 0.0, 0.0, 1.0],
                )]))?;
                r.bind_pipeline(pipelines[i])?;
                r.bind_set(0, &sets[i])?;
                r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
                r.draw(3, 1, 0, 0)?;
                r.end_rendering()?;
            }
            Ok(())
        })
        .unwrap();
    let got: Vec<[bool; 3]> = targets.iter().map(|t| drawn(&t.read().unwrap())).collect();
    assert_eq!(
        got[0],
        [false, true, false],
        "tessellation moved it one column"
    );
    assert_eq!(got[1], [true, false, true], "geometry drew it twice");
    assert_eq!(got[2], [false, true, true], "moved, then twice");
    assert_clean(&device);
}

#[test]
fn stages_that_do_not_fit_are_coded_errors() {
    let device = device();
    let m = modules();
    let code = |d: &GraphicsPipelineDesc<'_>| {
        let e = device.graphics_pipeline(d).unwrap_err();
        (e.code(), e.to_string())
    };
    let (c, text) = code(&desc(&m, false, false).topology(vk::PrimitiveTopology::PATCH_LIST));
    assert_eq!(c, "KILN-E282", "{text}");
    assert!(text.contains("PATCH_LIST needs tessellation"), "{text}");
    let (c, text) = code(&desc(&m, true, false).topology(vk::PrimitiveTopology::TRIANGLE_LIST));
    assert_eq!(c, "KILN-E282", "{text}");
    assert!(text.contains("set topology to PATCH_LIST"), "{text}");
    let max = device.limits().max_tessellation_patch_size;
    for points in [0, max + 1] {
        let mut d = desc(&m, false, false);
        d = d.tessellation(Tessellation::new(&m.tesc, &m.tese, points));
        let (c, text) = code(&d);
        assert_eq!(c, "KILN-E282", "{text}");
        assert!(text.contains("maxTessellationPatchSize"), "{text}");
    }
    let (c, text) =
        code(&desc(&m, false, false).tessellation(Tessellation::new(&m.tese, &m.tese, 3)));
    assert_eq!(c, "KILN-E251", "{text}");
    assert!(text.contains("TessellationControl"), "{text}");
    let (c, text) = code(&desc(&m, false, false).geometry(Some(&m.tesc)));
    assert_eq!(c, "KILN-E251", "{text}");
    let mut mesh = GraphicsPipelineDesc::mesh_shading(&m.vs, &m.fs);
    mesh.geometry = Some(&m.geom);
    let (c, text) = code(&mesh);
    assert_eq!(c, "KILN-E282", "{text}");
    assert!(text.contains("no tessellation or geometry"), "{text}");
    assert_clean(&device);
}
