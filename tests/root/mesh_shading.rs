//! Mesh shading (VK_EXT_mesh_shader) on a real device under validation. On a device with
//! the extension (lavapipe 25 in the Debian 13 tier, the H200): mesh and task+mesh
//! pipelines with layouts reflected across their stages, `draw_mesh_tasks` and its
//! indirect form drawing triangles whose corners a copy wrote in the same recording (the
//! rendering scope's barrier reaches the mesh stage), checked by which triangles were
//! drawn. On a device without it (lavapipe 22.3, Debian 12): the coded errors. Both paths
//! assert; the test says which one ran.

use common::draw::pixel;
use common::{assert_clean, device};
use kiln::{
    vk, BufferDesc, ColorAttachment, Device, GraphicsPipelineDesc, ImageDesc, RenderingDesc,
};

const W: u32 = 48;
const H: u32 = 16;
const RGBA8: vk::Format = vk::Format::R8G8B8A8_UNORM;

fn pipeline(device: &Device, task: bool) -> kiln::Result<kiln::GraphicsPipeline> {
    let fs = kiln::include_spirv!("test/flat.frag")?;
    let (mesh, task_module) = if task {
        (
            kiln::include_spirv!("test/columns_from_task.mesh")?,
            Some(kiln::include_spirv!("test/skip_first.task")?),
        )
    } else {
        (kiln::include_spirv!("test/columns.mesh")?, None)
    };
    let mut desc = GraphicsPipelineDesc::mesh_shading(&mesh, &fs);
    desc.task = task_module.as_ref();
    desc.color_formats = vec![RGBA8];
    Ok(device.graphics_pipeline(&desc)?)
}

/// Which of the three columns of a rendered target are drawn.
fn drawn(data: &[u8]) -> [bool; 3] {
    [0, 1, 2].map(|i| pixel(data, W, 8 + 16 * i, 2)[1] == 255)
}

/// The corners of the three column triangles (bases along the top edge).
fn corners() -> Vec<[f32; 2]> {
    let mut v = Vec::new();
    for i in 0..3 {
        let (x0, x1) = (
            -1.0 + 2.0 * i as f32 / 3.0,
            -1.0 + 2.0 * (i + 1) as f32 / 3.0,
        );
        v.extend_from_slice(&[[x0, -1.0], [x1, -1.0], [(x0 + x1) / 2.0, 1.0]]);
    }
    v
}

#[test]
fn mesh_and_task_pipelines_draw_what_a_copy_wrote_or_are_coded_errors() {
    let device = device();
    if !device.features().mesh_shader {
        println!("mesh_shading: the device lacks VK_EXT_mesh_shader: its error path");
        let err = pipeline(&device, false).unwrap_err();
        assert_eq!(err.code(), "KILN-E107", "{err}");
        assert!(err.to_string().contains("meshShader"), "{err}");
        let img = device
            .image(&ImageDesc::color_target("t", 4, 4, RGBA8))
            .unwrap();
        let err = device
            .execute(|r| {
                r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                    &img, [0.0; 4],
                )]))?;
                Ok(r.draw_mesh_tasks(1, 1, 1)?)
            })
            .unwrap_err();
        assert_eq!(err.code(), "KILN-E107", "{err}");
        assert_clean(&device);
        return;
    }
    println!("mesh_shading: the device has VK_EXT_mesh_shader: its real path");
    let mesh = pipeline(&device, false).unwrap();
    let task = if device.features().task_shader {
        Some(pipeline(&device, true).unwrap())
    } else {
        None
    };
    // The corners are copied into the buffer the mesh stage reads, in the recording.
    let host = device
        .buffer_from_slice(
            "host corners",
            vk::BufferUsageFlags::STORAGE_BUFFER,
            &corners(),
        )
        .unwrap();
    let buf = device
        .buffer(
            &BufferDesc::default()
                .label("corners")
                .size(host.size())
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::INDIRECT_BUFFER)
                .location(kiln::MemoryLocation::GpuOnly),
        )
        .unwrap();
    let args = device
        .buffer_from_slice(
            "mesh args",
            vk::BufferUsageFlags::INDIRECT_BUFFER,
            &[2u32, 1, 1],
        )
        .unwrap();
    let mut set = mesh.descriptor_set(0).unwrap();
    set.write_buffer(0, &buf).unwrap();
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
            r.copy_buffer(&host, 0, &buf, 0, host.size())?;
            for (i, img) in targets.iter().enumerate() {
                let p = match (i, &task) {
                    (2, Some(t)) => t,
                    _ => &mesh,
                };
                r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                    img,
                    [0.0, 0.0, 0.0, 1.0],
                )]))?;
                r.bind_pipeline(p)?;
                r.bind_set(0, &set)?;
                r.push(0, &[0.0f32, 1.0, 0.0, 1.0])?;
                match i {
                    0 => r.draw_mesh_tasks(3, 1, 1)?,
                    1 => r.draw_mesh_tasks_indirect(&args, 0, 1, 12)?,
                    _ => r.draw_mesh_tasks(1, 1, 1)?,
                }
                r.end_rendering()?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(
        drawn(&targets[0].read().unwrap()),
        [true; 3],
        "3 workgroups"
    );
    assert_eq!(
        drawn(&targets[1].read().unwrap()),
        [true, true, false],
        "indirect, 2"
    );
    let third = drawn(&targets[2].read().unwrap());
    if task.is_some() {
        assert_eq!(
            third,
            [false, true, true],
            "the task stage skips triangle 0"
        );
    } else {
        assert_eq!(third, [true, false, false], "one workgroup (no taskShader)");
    }
    // A vertex draw with a mesh pipeline, a mesh draw with too many workgroups.
    let img = &targets[0];
    let err = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                img, [0.0; 4],
            )]))?;
            r.bind_pipeline(&mesh)?;
            r.bind_set(0, &set)?;
            r.push(0, &[0.0f32; 4])?;
            Ok(r.draw(3, 1, 0, 0)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E283", "{err}");
    let max = device
        .features()
        .mesh_shader_limits
        .max_mesh_work_group_count[0];
    let err = device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                img, [0.0; 4],
            )]))?;
            r.bind_pipeline(&mesh)?;
            r.bind_set(0, &set)?;
            r.push(0, &[0.0f32; 4])?;
            Ok(r.draw_mesh_tasks(max.saturating_add(1), 1, 1)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E260", "{err}");
    assert_clean(&device);
}
