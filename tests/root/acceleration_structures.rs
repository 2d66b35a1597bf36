//! Acceleration structures (VK_KHR_acceleration_structure) read by ray queries
//! (VK_KHR_ray_query) from a compute shader, on a real device under validation with
//! synchronization validation on.
//!
//! On a device with both (lavapipe 25 in the Debian 13 tier, the H200): a bottom-level
//! structure of two indexed triangles at known positions, a top-level one with two
//! instances of it (different transforms, custom indices and masks), built and traced in
//! one recording with only the automatic barriers; `test/ray_grid.comp` fires one ray per
//! cell of a grid and writes hit/miss, custom index, `t` and primitive index, each checked
//! against the scene computed on the host; a dispatch that moves the vertices, the
//! structures rebuilt and traced again in the same recording; every coded error of the
//! inputs. On a device without them (lavapipe 22.3, Debian 12): the coded errors (E107).
//! Both paths assert; each test says which one ran.

use common::{assert_clean, device};
use kiln::{
    vk, AccelerationStructure, AccelerationStructureDesc as Desc,
    AccelerationStructureInstance as Instance, AccelerationStructureTriangles as Triangles, Device,
};

/// The grid of rays: `W × H` cells, ray `(x, y)` from `(x + 0.25, y + 0.25, -1)` down +z.
const W: u32 = 16;
const H: u32 = 8;
const INPUT: vk::BufferUsageFlags =
    vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
const XYZ: vk::Format = vk::Format::R32G32B32_SFLOAT;
const MISS: [u32; 4] = [0, u32::MAX, 0, u32::MAX];

/// The two triangles of the bottom-level structure, by primitive index: triangle 0 at
/// z = 2 over x, y ≥ 0, x + y ≤ 4; triangle 1 at z = 3 over x ≥ 5, y ≥ 0,
/// (x - 5) + y ≤ 2.
const TRIANGLES: [[[f32; 3]; 3]; 2] = [
    [[0.0, 0.0, 2.0], [4.0, 0.0, 2.0], [0.0, 4.0, 2.0]],
    [[5.0, 0.0, 3.0], [7.0, 0.0, 3.0], [5.0, 2.0, 3.0]],
];

/// The vertices interleaved (triangle 1's corner k at 2k, triangle 0's at 2k + 1) and the
/// indices that pick them back: a build that ignored the indices would draw other shapes.
fn vertices_and_indices() -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut v = Vec::new();
    for (c0, c1) in TRIANGLES[0].iter().zip(&TRIANGLES[1]) {
        v.push(*c1);
        v.push(*c0);
    }
    (v, vec![1, 3, 5, 0, 2, 4])
}

/// The instances: (transform, custom index, mask). A: where it is; B: moved by (8, 2)
/// and stretched along z (z' = 2z + 1).
const INSTANCES: [([[f32; 4]; 3], u32, u8); 2] = [
    (
        [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ],
        7,
        0x01,
    ),
    (
        [
            [1.0, 0.0, 0.0, 8.0],
            [0.0, 1.0, 0.0, 2.0],
            [0.0, 0.0, 2.0, 1.0],
        ],
        42,
        0x02,
    ),
];

/// What ray `(x, y)` hits with `cull_mask` when the vertices are raised by `dz`: the
/// nearest triangle whose xy projection holds the ray (no ray passes near an edge), as
/// `(1, custom index, t bits, primitive)`, or [`MISS`].
fn expected(x: u32, y: u32, cull_mask: u8, dz: f32) -> [u32; 4] {
    let (px, py) = (x as f32 + 0.25, y as f32 + 0.25);
    let mut best: Option<(f32, u32, u32)> = None;
    for (m, custom, mask) in INSTANCES {
        if mask & cull_mask == 0 {
            continue;
        }
        for (prim, tri) in TRIANGLES.iter().enumerate() {
            let w = tri.map(|[vx, vy, vz]| {
                let vz = vz + dz;
                [
                    m[0][0] * vx + m[0][1] * vy + m[0][2] * vz + m[0][3],
                    m[1][0] * vx + m[1][1] * vy + m[1][2] * vz + m[1][3],
                    m[2][0] * vx + m[2][1] * vy + m[2][2] * vz + m[2][3],
                ]
            });
            let side = |a: [f32; 3], b: [f32; 3]| {
                (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0])
            };
            let s = [side(w[0], w[1]), side(w[1], w[2]), side(w[2], w[0])];
            let inside = s.iter().all(|&v| v > 0.0) || s.iter().all(|&v| v < 0.0);
            // The ray starts at z = -1 with a unit direction: t = z + 1 on these flat triangles.
            let t = w[0][2] + 1.0;
            if inside && best.is_none_or(|(bt, ..)| t < bt) {
                best = Some((t, custom, prim as u32));
            }
        }
    }
    best.map_or(MISS, |(t, custom, prim)| [1, custom, t.to_bits(), prim])
}

/// The grid's expected results with `cull_mask` and the vertices raised by `dz`.
fn expected_grid(cull_mask: u8, dz: f32) -> Vec<[u32; 4]> {
    (0..H)
        .flat_map(|y| (0..W).map(move |x| expected(x, y, cull_mask, dz)))
        .collect()
}

/// The scene: vertex and index buffers (`vertex_usage` added to the build-input usage),
/// the bottom-level structure and the top-level one with both instances.
struct Scene {
    vertices: kiln::Buffer,
    blas: AccelerationStructure,
    tlas: AccelerationStructure,
}

fn scene(device: &Device, vertex_usage: vk::BufferUsageFlags) -> kiln::Result<Scene> {
    let (v, i) = vertices_and_indices();
    let vertices = device.buffer_from_slice("vertices", INPUT | vertex_usage, &v)?;
    let indices = device.buffer_from_slice("indices", INPUT, &i)?;
    let triangles = [Triangles::new(&vertices, XYZ, 12, v.len() as u32).indexed(
        &indices,
        vk::IndexType::UINT32,
        2,
    )];
    let blas = device.acceleration_structure(&Desc::bottom_level("two triangles", &triangles))?;
    let instances = INSTANCES.map(|(transform, custom_index, mask)| Instance {
        transform,
        custom_index,
        mask,
        ..Instance::new(&blas)
    });
    let tlas = device.acceleration_structure(&Desc::top_level("two instances", &instances))?;
    Ok(Scene {
        vertices,
        blas,
        tlas,
    })
}

/// Records one ray per grid cell into `hits[base ..]`, with `cull_mask`.
#[track_caller]
fn trace(r: &mut kiln::Recorder, cull_mask: u32, base: u32) -> kiln::Result<()> {
    r.push(0, &[W, H, cull_mask, base])?;
    Ok(r.dispatch_threads_2d(W, H)?)
}

/// Asserts that `got` is `want`, naming the first ray that differs.
#[track_caller]
fn assert_grid(got: &[[u32; 4]], want: &[[u32; 4]], what: &str) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (x, y) = (i as u32 % W, i as u32 / W);
        assert_eq!(
            g,
            w,
            "{what}: ray ({x}, {y}) got (hit {}, custom {:#x}, t {}, primitive {:#x}), \
             expected (hit {}, custom {:#x}, t {}, primitive {:#x})",
            g[0],
            g[1],
            f32::from_bits(g[2]),
            g[3],
            w[0],
            w[1],
            f32::from_bits(w[2]),
            w[3]
        );
    }
}

/// The host model against a few cells worked out by hand, so the model itself is tested.
#[test]
fn the_expected_scene_is_the_one_described() {
    let t = |v: f32| v.to_bits();
    assert_eq!(expected(0, 0, 0xff, 0.0), [1, 7, t(3.0), 0]);
    assert_eq!(expected(3, 0, 0xff, 0.0), [1, 7, t(3.0), 0]);
    assert_eq!(expected(4, 0, 0xff, 0.0), MISS);
    assert_eq!(expected(5, 1, 0xff, 0.0), [1, 7, t(4.0), 1]);
    assert_eq!(expected(8, 2, 0xff, 0.0), [1, 42, t(6.0), 0]);
    assert_eq!(expected(8, 2, 0x01, 0.0), MISS);
    assert_eq!(expected(14, 2, 0xff, 0.0), [1, 42, t(8.0), 1]);
    assert_eq!(expected(15, 7, 0xff, 0.0), MISS);
    assert_eq!(expected(0, 0, 0xff, 1.0), [1, 7, t(4.0), 0]);
    assert_eq!(expected(8, 2, 0xff, 1.0), [1, 42, t(8.0), 0]);
    let hits = |g: &[[u32; 4]], custom: u32| g.iter().filter(|h| h[1] == custom).count();
    let all = expected_grid(0xff, 0.0);
    // Triangle 0: 10 cells per instance (x + y ≤ 3); triangle 1: 3 (x - 5 + y ≤ 1, x ≤ 6).
    assert_eq!((hits(&all, 7), hits(&all, 42)), (13, 13));
    assert_eq!(hits(&expected_grid(0x01, 0.0), 42), 0);
}

/// The error path on a device without the extensions: every entry point is `KILN-E107`
/// before Vulkan sees anything. kiln enables acceleration structures only with ray queries
/// (a device with the first alone, as the H200's driver 580.159.04, gets neither: the
/// module docs of `device/acceleration_structure/features.rs` say why).
fn coded_errors_without_the_feature(device: &Device) {
    assert!(!device.features().ray_query);
    assert!(!device.features().acceleration_structure);
    let module = kiln::include_spirv!("test/ray_grid.comp").unwrap();
    let err = device.compute_pipeline(&module, "main").unwrap_err();
    assert_eq!(err.code(), "KILN-E107", "{err}");
    assert!(err.to_string().contains("rayQuery"), "{err}");
    let err = device
        .buffer_from_slice("vertices", INPUT, &[0.0f32; 9])
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E107", "{err}");
    assert!(err.to_string().contains("accelerationStructure"), "{err}");
    let plain = device
        .buffer_from_slice("plain", vk::BufferUsageFlags::STORAGE_BUFFER, &[0.0f32; 9])
        .unwrap();
    let triangles = [Triangles::new(&plain, XYZ, 12, 3)];
    let err = device
        .acceleration_structure(&Desc::bottom_level("blas", &triangles))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E107", "{err}");
    assert!(err.to_string().contains("`blas`"), "{err}");
}

#[test]
fn ray_queries_hit_two_instances_of_two_triangles_or_are_coded_errors() {
    let device = device();
    let f = device.features();
    if !(f.acceleration_structure && f.ray_query) {
        println!(
            "acceleration_structures: the device lacks VK_KHR_acceleration_structure ({}) or \
             VK_KHR_ray_query ({}): its error path",
            f.acceleration_structure, f.ray_query
        );
        coded_errors_without_the_feature(&device);
        assert_clean(&device);
        return;
    }
    println!(
        "acceleration_structures: the device has VK_KHR_acceleration_structure and \
         VK_KHR_ray_query: its real path ({:?})",
        f.acceleration_structure_limits
    );
    let Scene {
        vertices,
        blas,
        tlas,
    } = scene(&device, vk::BufferUsageFlags::empty()).unwrap();
    assert_eq!(blas.ty(), vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL);
    assert_eq!(tlas.ty(), vk::AccelerationStructureTypeKHR::TOP_LEVEL);
    assert!(blas.size() > 0 && tlas.size() > 0 && blas.build_scratch_size() > 0);
    let pipeline = device
        .compute_pipeline(&kiln::include_spirv!("test/ray_grid.comp").unwrap(), "main")
        .unwrap();
    let n = (W * H) as usize;
    let hits = device.storage_buffer::<[u32; 4]>("hits", 2 * n).unwrap();
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_acceleration_structure(0, &tlas).unwrap();
    set.write_buffer(1, &hits).unwrap();
    // Built and traced in one recording: the barriers are kiln's (bottom-level build →
    // top-level build, top-level build → the dispatch's ray queries).
    let barriers = device
        .execute(|r| {
            r.build_acceleration_structures(&[&tlas, &blas])?;
            // A layer message about the build would name this file and line.
            let at = line!() - 2;
            assert_eq!(r.debug_caller(), Some((file!(), at)));
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &set)?;
            trace(r, 0xff, 0)?;
            Ok(r.barrier_count())
        })
        .unwrap();
    assert_eq!(barriers, 2, "build → build → dispatch");
    // The top-level structure keeps the bottom-level one (and the set the top-level one).
    drop((blas, vertices, tlas));
    device
        .execute(|r| {
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &set)?;
            trace(r, 0x01, W * H)
        })
        .unwrap();
    let got = hits.read::<[u32; 4]>().unwrap();
    assert_grid(&got[..n], &expected_grid(0xff, 0.0), "cull mask 0xff");
    assert_grid(&got[n..], &expected_grid(0x01, 0.0), "cull mask 0x01");
    drop((set, pipeline, hits));
    assert_clean(&device);
}

#[test]
fn a_dispatch_moves_the_vertices_and_the_rebuilt_structures_follow_in_one_recording() {
    let device = device();
    let f = device.features();
    if !(f.acceleration_structure && f.ray_query) {
        println!(
            "acceleration_structures: the device lacks acceleration structures or ray \
             queries: its error path"
        );
        coded_errors_without_the_feature(&device);
        assert_clean(&device);
        return;
    }
    println!("acceleration_structures: the device has them: its real path (rebuilds)");
    let scene = scene(&device, vk::BufferUsageFlags::STORAGE_BUFFER).unwrap();
    let rays = device
        .compute_pipeline(&kiln::include_spirv!("test/ray_grid.comp").unwrap(), "main")
        .unwrap();
    let lift = device
        .compute_pipeline(
            &kiln::include_spirv!("test/lift_vertices.comp").unwrap(),
            "main",
        )
        .unwrap();
    let n = (W * H) as usize;
    let hits = device.storage_buffer::<[u32; 4]>("hits", 2 * n).unwrap();
    let mut ray_set = rays.descriptor_set(0).unwrap();
    ray_set
        .write_acceleration_structure(0, &scene.tlas)
        .unwrap();
    ray_set.write_buffer(1, &hits).unwrap();
    let mut lift_set = lift.descriptor_set(0).unwrap();
    lift_set.write_buffer(0, &scene.vertices).unwrap();
    let both = [&scene.blas, &scene.tlas];
    device
        .execute(|r| {
            r.build_acceleration_structures(&both)?;
            r.bind_pipeline(&rays)?;
            r.bind_set(0, &ray_set)?;
            trace(r, 0xff, 0)?;
            // Raise every vertex by 1 (a storage write the next build reads), rebuild both
            // (the bottom-level build also overwrites what the rays just read), trace again.
            r.bind_pipeline(&lift)?;
            r.bind_set(0, &lift_set)?;
            r.push(0, &[6u32, 1.0f32.to_bits()])?;
            r.dispatch_threads(6)?;
            r.build_acceleration_structures(&both)?;
            r.bind_pipeline(&rays)?;
            r.bind_set(0, &ray_set)?;
            trace(r, 0xff, W * H)
        })
        .unwrap();
    let got = hits.read::<[u32; 4]>().unwrap();
    assert_grid(&got[..n], &expected_grid(0xff, 0.0), "before the lift");
    assert_grid(
        &got[n..],
        &expected_grid(0xff, 1.0),
        "after the lift and the rebuilds",
    );
    drop((ray_set, lift_set, scene));
    assert_clean(&device);
}

/// Asserts that `r` failed with `code` and that its message contains `says`.
#[track_caller]
fn fails<T: std::fmt::Debug, E: Into<kiln::Error>>(r: Result<T, E>, code: &str, says: &str) {
    let err = r.map_err(Into::into).unwrap_err();
    assert_eq!(err.code(), code, "{err}");
    assert!(err.to_string().contains(says), "`{says}` not in: {err}");
}

#[test]
fn acceleration_structure_inputs_are_coded_errors_before_vulkan() {
    let device = device();
    if !device.features().acceleration_structure {
        println!("acceleration_structures: the device lacks VK_KHR_acceleration_structure: E107");
        coded_errors_without_the_feature(&device);
        assert_clean(&device);
        return;
    }
    println!("acceleration_structures: the device has VK_KHR_acceleration_structure: input errors");
    let v = device.buffer_from_slice("v", INPUT, &[0.0f32; 18]).unwrap();
    let idx = device.buffer_from_slice("i", INPUT, &[0u32; 6]).unwrap();
    let plain = device
        .buffer_from_slice("plain", vk::BufferUsageFlags::STORAGE_BUFFER, &[0.0f32; 18])
        .unwrap();
    let blas_of = |t: &Triangles<'_>| {
        device.acceleration_structure(&Desc::bottom_level("b", std::slice::from_ref(t)))
    };
    let ok = Triangles::new(&v, XYZ, 12, 6);
    fails(
        blas_of(&Triangles {
            vertex_format: vk::Format::R8_UINT,
            ..ok
        }),
        "KILN-E170",
        "ACCELERATION_STRUCTURE_VERTEX_BUFFER",
    );
    fails(
        blas_of(&Triangles::new(&v, XYZ, 10, 6)),
        "KILN-E170",
        "stride 10",
    );
    fails(
        blas_of(&Triangles::new(&v, XYZ, 12, 7)),
        "KILN-E170",
        "do not fit",
    );
    fails(
        blas_of(&Triangles {
            vertex_offset: 2,
            ..ok
        }),
        "KILN-E170",
        "vertex offset 2",
    );
    fails(
        blas_of(&Triangles {
            triangle_count: 3,
            ..ok
        }),
        "KILN-E170",
        "need 9 vertices",
    );
    fails(
        blas_of(&ok.indexed(&idx, vk::IndexType::NONE_KHR, 2)),
        "KILN-E170",
        "index type",
    );
    fails(
        blas_of(&ok.indexed(&idx, vk::IndexType::UINT8_EXT, 2)),
        "KILN-E170",
        "index type",
    );
    fails(
        blas_of(&ok.indexed(&idx, vk::IndexType::UINT32, 3)),
        "KILN-E170",
        "9 indices",
    );
    fails(
        blas_of(&Triangles::new(&plain, XYZ, 12, 6)),
        "KILN-E157",
        "ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY",
    );
    let both = vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE
        | vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_BUILD;
    fails(
        device.acceleration_structure(&Desc::bottom_level("b", &[ok]).flags(both)),
        "KILN-E170",
        "PREFER_FAST_BUILD",
    );
    // More triangles than maxPrimitiveCount, where two geometries can hold that many.
    let limits = device.features().acceleration_structure_limits;
    let huge = Triangles {
        triangle_count: u32::MAX,
        ..ok
    };
    if limits.max_primitive_count < 2 * u64::from(u32::MAX) {
        fails(
            device.acceleration_structure(&Desc::bottom_level("b", &[huge, huge])),
            "KILN-E171",
            "maxPrimitiveCount",
        );
    } else {
        println!(
            "acceleration_structures: maxPrimitiveCount {} is beyond two u32 counts: \
             KILN-E171 untested",
            limits.max_primitive_count
        );
    }
    // Instances: of a top-level structure, fields beyond 24 bits.
    let blas = blas_of(&ok).unwrap();
    let tlas = device
        .acceleration_structure(&Desc::top_level("t", &[Instance::new(&blas)]))
        .unwrap();
    fails(
        device.acceleration_structure(&Desc::top_level("t2", &[Instance::new(&tlas)])),
        "KILN-E170",
        "top-level",
    );
    fails(
        device.acceleration_structure(&Desc::top_level(
            "t2",
            &[Instance {
                custom_index: 1 << 24,
                ..Instance::new(&blas)
            }],
        )),
        "KILN-E170",
        "24 bits",
    );
    // Builds: a bottom-level structure never built, one given twice, inside a scope.
    fails(
        device.execute(|r| Ok(r.build_acceleration_structure(&tlas)?)),
        "KILN-E170",
        "no recording built",
    );
    fails(
        device.execute(|r| Ok(r.build_acceleration_structures(&[&blas, &blas])?)),
        "KILN-E170",
        "twice",
    );
    let img = device
        .image(&kiln::ImageDesc::color_target(
            "t",
            4,
            4,
            vk::Format::R8G8B8A8_UNORM,
        ))
        .unwrap();
    fails(
        device.execute(|r| {
            r.begin_rendering(&kiln::RenderingDesc::new(&[kiln::ColorAttachment::clear(
                &img, [0.0; 4],
            )]))?;
            Ok(r.build_acceleration_structure(&blas)?)
        }),
        "KILN-E283",
        "rendering scope",
    );
    // Descriptors: a bottom-level structure, the wrong binding types, another device.
    if device.features().ray_query {
        let pipeline = device
            .compute_pipeline(&kiln::include_spirv!("test/ray_grid.comp").unwrap(), "main")
            .unwrap();
        let mut set = pipeline.descriptor_set(0).unwrap();
        fails(
            set.write_acceleration_structure(0, &blas),
            "KILN-E230",
            "bottom-level",
        );
        fails(
            set.write_acceleration_structure(1, &tlas),
            "KILN-E202",
            "acceleration",
        );
        fails(
            set.write_buffer(0, &plain),
            "KILN-E202",
            "acceleration structure",
        );
        fails(
            set.write_acceleration_structure_at(0, 1, &tlas),
            "KILN-E203",
            "",
        );
        let other = common::device();
        let other_pipeline = other
            .compute_pipeline(&kiln::include_spirv!("test/ray_grid.comp").unwrap(), "main")
            .unwrap();
        let mut other_set = other_pipeline.descriptor_set(0).unwrap();
        fails(
            other_set.write_acceleration_structure(0, &tlas),
            "KILN-E109",
            "`t`",
        );
        fails(
            other.execute(|r| Ok(r.build_acceleration_structure(&blas)?)),
            "KILN-E109",
            "`b`",
        );
        drop((other_set, other_pipeline));
        assert_clean(&other);
    }
    drop((blas, tlas));
    assert_clean(&device);
}

/// Built and ray-queried from a draw's fragment shader in one recording: the rendering
/// scope's flush orders the builds before the query (ACCELERATION_STRUCTURE_READ in its
/// destination with `rayQuery`), so the draw needs no barrier of its own: no split of the
/// scope, no KILN-W005. `test/ray_color.frag` colours pixel (x, y) with ray (x, y)'s hit.
#[test]
fn a_draw_ray_queries_structures_built_earlier_in_its_recording_without_a_split() {
    let device = device();
    let f = device.features();
    let vs = kiln::include_spirv!("test/fuzz_fullscreen.vert").unwrap();
    let fs = kiln::include_spirv!("test/ray_color.frag").unwrap();
    let img = device
        .image(&kiln::ImageDesc::color_target(
            "target",
            W,
            H,
            vk::Format::R8G8B8A8_UNORM,
        ))
        .unwrap();
    let pipeline =
        device.graphics_pipeline(&kiln::GraphicsPipelineDesc::new(&vs, &fs).targets(&[&img], None));
    if !(f.acceleration_structure && f.ray_query) {
        println!(
            "acceleration_structures: no acceleration structures ({}) or ray queries ({}): \
             the ray-query draw is E107",
            f.acceleration_structure, f.ray_query
        );
        let err = pipeline.unwrap_err();
        assert_eq!(err.code(), "KILN-E107", "{err}");
        assert!(err.to_string().contains("rayQuery"), "{err}");
        assert_clean(&device);
        return;
    }
    println!("acceleration_structures: ray queries from a fragment shader: the real path");
    let pipeline = pipeline.unwrap();
    let scene = scene(&device, vk::BufferUsageFlags::empty()).unwrap();
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_acceleration_structure(0, &scene.tlas).unwrap();
    let color = [kiln::ColorAttachment::clear(&img, [0.5; 4])];
    let (splits, uncovered) = device
        .execute(|r| {
            r.build_acceleration_structures(&[&scene.tlas, &scene.blas])?;
            r.begin_rendering(&kiln::RenderingDesc::new(&color))?;
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &set)?;
            r.draw(3, 1, 0, 0)?;
            r.end_rendering()?;
            Ok((r.debug_scope_splits(), r.debug_uncovered()))
        })
        .unwrap();
    assert_eq!(
        (splits, uncovered),
        (0, 0),
        "the scope's flush orders the builds"
    );
    let data = img.read().unwrap();
    for y in 0..H {
        for x in 0..W {
            let e = expected(x, y, 0xff, 0.0);
            let want = if e[0] == 1 {
                [255, e[1] as u8, e[3] as u8, 255]
            } else {
                [0, 0, 0, 255]
            };
            assert_eq!(
                common::draw::pixel(&data, W, x, y),
                want,
                "pixel ({x}, {y})"
            );
        }
    }
    drop((set, pipeline, scene));
    assert_clean(&device);
}

/// A structure counts as built once a recording that builds it is submitted: a build in a
/// recording dropped unsubmitted, or in one whose closure failed, leaves it unbuilt, and a
/// top-level build placing it is `KILN-E170` (its instances would point at garbage).
#[test]
fn a_build_in_a_recording_never_submitted_builds_nothing() {
    let device = device();
    if !device.features().acceleration_structure {
        println!("acceleration_structures: the device lacks VK_KHR_acceleration_structure: E107");
        coded_errors_without_the_feature(&device);
        assert_clean(&device);
        return;
    }
    println!("acceleration_structures: builds count once submitted: the real path");
    let scene = scene(&device, vk::BufferUsageFlags::empty()).unwrap();
    let recording = device
        .record(|r| Ok(r.build_acceleration_structure(&scene.blas)?))
        .unwrap();
    drop(recording);
    fails(
        device.execute(|r| Ok(r.build_acceleration_structure(&scene.tlas)?)),
        "KILN-E170",
        "no recording built",
    );
    // A closure that fails after the build: the recording is not submitted.
    fails(
        device.execute(|r| {
            r.build_acceleration_structure(&scene.blas)?;
            Ok(r.build_acceleration_structures(&[&scene.blas, &scene.blas])?)
        }),
        "KILN-E170",
        "twice",
    );
    fails(
        device.execute(|r| Ok(r.build_acceleration_structure(&scene.tlas)?)),
        "KILN-E170",
        "no recording built",
    );
    // Earlier in the same recording counts; then submitted, later recordings may place it.
    device
        .execute(|r| {
            r.build_acceleration_structure(&scene.blas)?;
            Ok(r.build_acceleration_structure(&scene.tlas)?)
        })
        .unwrap();
    device
        .execute(|r| Ok(r.build_acceleration_structure(&scene.tlas)?))
        .unwrap();
    drop(scene);
    assert_clean(&device);
}
