//! The seed scene shared by `examples/material_scene.rs`, `examples/window.rs` and the
//! golden-image test: a chair and a desk (and a wooden floor) drawn by two graphics
//! pipelines with different fragment shaders that share ONE material set layout (set 1:
//! texture, sampler, uniform `gloss`) and ONE material descriptor set. The camera uniform
//! is set 0 (vertex stage); per-object transform and tint are vertex push constants.
#![allow(dead_code)]

use kiln::vk;
use kiln::{
    Buffer, ColorAttachment, DepthAttachment, DescriptorSet, Device, GraphicsPipeline,
    GraphicsPipelineDesc, Image, ImageDesc, MemoryLocation, Recorder, RenderingDesc, Sampler,
    SamplerDesc, VertexBufferLayout,
};

/// Colour format of offscreen renders (bytes go straight into a PNG).
pub const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
/// Background (clear) colour, linear values written as-is to a UNORM target.
pub const BACKGROUND: [f32; 4] = [0.18, 0.22, 0.30, 1.0];

pub type Mat4 = [[f32; 4]; 4]; // column-major: m[column][row], as GLSL

pub fn mul(a: &Mat4, b: &Mat4) -> Mat4 {
    let mut m = [[0.0; 4]; 4];
    for (c, col) in m.iter_mut().enumerate() {
        for (r, v) in col.iter_mut().enumerate() {
            *v = (0..4).map(|k| a[k][r] * b[c][k]).sum();
        }
    }
    m
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
fn normalize(a: [f32; 3]) -> [f32; 3] {
    let l = dot(a, a).sqrt();
    [a[0] / l, a[1] / l, a[2] / l]
}

/// Right-handed view matrix looking from `eye` at `target`.
pub fn look_at(eye: [f32; 3], target: [f32; 3], up: [f32; 3]) -> Mat4 {
    let f = normalize(sub(target, eye));
    let s = normalize(cross(f, up));
    let u = cross(s, f);
    [
        [s[0], u[0], -f[0], 0.0],
        [s[1], u[1], -f[1], 0.0],
        [s[2], u[2], -f[2], 0.0],
        [-dot(s, eye), -dot(u, eye), dot(f, eye), 1.0],
    ]
}

/// Perspective projection for Vulkan clip space (y down, depth 0..1).
pub fn perspective(fovy: f32, aspect: f32, near: f32, far: f32) -> Mat4 {
    let f = 1.0 / (fovy / 2.0).tan();
    [
        [f / aspect, 0.0, 0.0, 0.0],
        [0.0, -f, 0.0, 0.0],
        [0.0, 0.0, far / (near - far), -1.0],
        [0.0, 0.0, near * far / (near - far), 0.0],
    ]
}

/// Rotation about +Y by `angle` radians, then translation.
pub fn transform(angle: f32, t: [f32; 3]) -> Mat4 {
    let (s, c) = angle.sin_cos();
    [
        [c, 0.0, -s, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [s, 0.0, c, 0.0],
        [t[0], t[1], t[2], 1.0],
    ]
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Vertex {
    pub position: [f32; 3],
    pub normal: [f32; 3],
    pub uv: [f32; 2],
}

/// Set 0, binding 0 of `scene.vert` (std140: mat4 + vec4 = 80 bytes).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CameraUniform {
    pub view_proj: Mat4,
    pub eye: [f32; 4],
}

/// The vertex push constants of `scene.vert` (80 bytes).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Object {
    pub model: Mat4,
    pub tint: [f32; 4],
}

/// Appends an axis-aligned box (4 vertices per face, outward normals, uv 0..1 per face).
fn add_box(v: &mut Vec<Vertex>, idx: &mut Vec<u32>, min: [f32; 3], max: [f32; 3]) {
    let faces: [([f32; 3], [f32; 3], [f32; 3]); 6] = [
        ([1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]),
        ([-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
        ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]),
        ([0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
    ];
    let c = [
        (min[0] + max[0]) / 2.0,
        (min[1] + max[1]) / 2.0,
        (min[2] + max[2]) / 2.0,
    ];
    let h = [
        (max[0] - min[0]) / 2.0,
        (max[1] - min[1]) / 2.0,
        (max[2] - min[2]) / 2.0,
    ];
    for (n, u, w) in faces {
        let base = v.len() as u32;
        for (su, sw) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            let p: [f32; 3] = std::array::from_fn(|i| c[i] + (n[i] + u[i] * su + w[i] * sw) * h[i]);
            v.push(Vertex {
                position: p,
                normal: n,
                uv: [(su + 1.0) / 2.0, (1.0 - sw) / 2.0],
            });
        }
        idx.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }
}

pub struct Mesh {
    pub vertices: Buffer,
    pub indices: Buffer,
    pub index_count: u32,
}

fn mesh(device: &Device, label: &str, boxes: &[([f32; 3], [f32; 3])]) -> kiln::Result<Mesh> {
    let (mut v, mut i) = (Vec::new(), Vec::new());
    for (min, max) in boxes {
        add_box(&mut v, &mut i, *min, *max);
    }
    Ok(Mesh {
        vertices: device.buffer_from_slice(label, vk::BufferUsageFlags::VERTEX_BUFFER, &v)?,
        indices: device.buffer_from_slice(label, vk::BufferUsageFlags::INDEX_BUFFER, &i)?,
        index_count: i.len() as u32,
    })
}

/// A 64×64 RGBA8 woven-fabric texture, made in code.
pub fn texture_texels() -> Vec<u8> {
    let mut t = Vec::with_capacity(64 * 64 * 4);
    for y in 0..64u32 {
        for x in 0..64u32 {
            let check = ((x / 8) + (y / 8)) % 2 == 0;
            let thread = if (x + y) % 4 < 2 { 12 } else { 0 };
            let (r, g, b) = if check {
                (235, 225, 205)
            } else {
                (190, 180, 160)
            };
            t.extend_from_slice(&[r - thread, g - thread, b - thread, 255]);
        }
    }
    t
}

pub struct Scene {
    pub chair: GraphicsPipeline,
    pub desk: GraphicsPipeline,
    pub material: DescriptorSet,
    pub chair_mesh: Mesh,
    pub desk_mesh: Mesh,
    pub floor_mesh: Mesh,
    pub texture: Image,
    pub sampler: Sampler,
    pub gloss: Buffer,
}

impl Scene {
    /// Builds both pipelines for `color_format` (+ `DEPTH_FORMAT`), the meshes, the texture
    /// and the shared material set.
    pub fn new(device: &Device, color_format: vk::Format) -> kiln::Result<Scene> {
        let vs = kiln::include_spirv!("scene/scene.vert")?;
        let chair_fs = kiln::include_spirv!("scene/chair.frag")?;
        let desk_fs = kiln::include_spirv!("scene/desk.frag")?;
        let vertex_layout = VertexBufferLayout::packed(&[
            (0, vk::Format::R32G32B32_SFLOAT),
            (1, vk::Format::R32G32B32_SFLOAT),
            (2, vk::Format::R32G32_SFLOAT),
        ]);
        let desc = |fs| {
            let mut d = GraphicsPipelineDesc::new(&vs, fs).vertex_buffer(vertex_layout.clone());
            d.color_formats = vec![color_format];
            d.depth_format = Some(DEPTH_FORMAT);
            d.cull_mode = vk::CullModeFlags::BACK;
            d
        };
        let chair = device.graphics_pipeline(&desc(&chair_fs))?;
        let desk = device.graphics_pipeline(&desc(&desk_fs))?;

        let texture = device.texture_from_bytes(
            "fabric",
            64,
            64,
            vk::Format::R8G8B8A8_UNORM,
            &texture_texels(),
        )?;
        let sampler = device.sampler(&SamplerDesc::default())?;
        let gloss = device.buffer_from_slice(
            "gloss",
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            &[0.6f32, 0.0, 0.0, 0.0],
        )?;
        // One material set, allocated from the chair's layout, bound to both pipelines.
        let mut material = chair.descriptor_set(1)?;
        material.write_image(material.binding_of("albedo")?, &texture)?;
        material.write_sampler(material.binding_of("albedo_sampler")?, &sampler)?;
        material.write_buffer(material.binding_of("material")?, &gloss)?;

        let leg = 0.05;
        let mut chair_boxes = vec![
            ([-0.25, 0.45, -0.25], [0.25, 0.52, 0.25]), // seat
            ([-0.25, 0.52, 0.19], [0.25, 1.05, 0.25]),  // back
        ];
        let mut desk_boxes = vec![([-0.8, 0.72, -0.4], [0.8, 0.78, 0.4])]; // top
        for (sx, sz) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            let (cx, cz) = (sx * 0.21, sz * 0.21);
            chair_boxes.push((
                [cx - leg / 2.0, 0.0, cz - leg / 2.0],
                [cx + leg / 2.0, 0.45, cz + leg / 2.0],
            ));
            let (dx, dz) = (sx * 0.74, sz * 0.34);
            desk_boxes.push((
                [dx - leg / 2.0, 0.0, dz - leg / 2.0],
                [dx + leg / 2.0, 0.72, dz + leg / 2.0],
            ));
        }
        Ok(Scene {
            chair_mesh: mesh(device, "chair", &chair_boxes)?,
            desk_mesh: mesh(device, "desk", &desk_boxes)?,
            floor_mesh: mesh(device, "floor", &[([-2.0, -0.02, -1.6], [2.0, 0.0, 1.6])])?,
            chair,
            desk,
            material,
            texture,
            sampler,
            gloss,
        })
    }

    /// A camera uniform buffer (host-visible) and its set-0 descriptor set.
    pub fn camera_set(&self, device: &Device) -> kiln::Result<(Buffer, DescriptorSet)> {
        let buffer = device.buffer(
            &kiln::BufferDesc::default()
                .label("camera")
                .size(std::mem::size_of::<CameraUniform>() as u64)
                .usage(vk::BufferUsageFlags::UNIFORM_BUFFER)
                .location(MemoryLocation::CpuToGpu),
        )?;
        let mut set = self.chair.descriptor_set(0)?;
        set.write_buffer(0, &buffer)?;
        Ok((buffer, set))
    }

    /// The camera for an `aspect` (width / height) view, orbiting by `angle` radians.
    pub fn camera(aspect: f32, angle: f32) -> CameraUniform {
        let (s, c) = angle.sin_cos();
        let eye = [2.2 * c + 2.4 * s, 1.9, 3.0 * c - 1.6 * s];
        let view = look_at(eye, [0.0, 0.45, 0.0], [0.0, 1.0, 0.0]);
        let proj = perspective(45f32.to_radians(), aspect, 0.1, 20.0);
        CameraUniform {
            view_proj: mul(&proj, &view),
            eye: [eye[0], eye[1], eye[2], 1.0],
        }
    }

    /// Draws floor, desk and chair inside an open rendering scope.
    pub fn draw<'a>(
        &'a self,
        r: &mut Recorder<'a, '_>,
        camera: &'a DescriptorSet,
    ) -> kiln::Result<()> {
        let objects: [(&GraphicsPipeline, &Mesh, Mat4, [f32; 4]); 3] = [
            (
                &self.desk,
                &self.floor_mesh,
                transform(0.0, [0.0, 0.0, 0.0]),
                [0.85, 0.75, 0.6, 1.0],
            ),
            (
                &self.desk,
                &self.desk_mesh,
                transform(0.1, [0.25, 0.0, -0.35]),
                [0.62, 0.38, 0.2, 1.0],
            ),
            (
                &self.chair,
                &self.chair_mesh,
                transform(-0.5, [-0.35, 0.0, 0.45]),
                [0.75, 0.2, 0.18, 1.0],
            ),
        ];
        for (pipeline, mesh, model, tint) in objects {
            r.bind_pipeline(pipeline)?;
            r.bind_set(0, camera)?;
            r.bind_set(1, &self.material)?;
            r.push(0, &Object { model, tint })?;
            r.bind_vertex_buffer(0, &mesh.vertices, 0)?;
            r.bind_index_buffer(&mesh.indices, 0, vk::IndexType::UINT32)?;
            r.draw_indexed(mesh.index_count, 1, 0, 0, 0)?;
        }
        Ok(())
    }
}

/// Renders the scene offscreen at `width`×`height` and returns RGBA8 pixels, row by row.
pub fn render_offscreen(device: &Device, width: u32, height: u32) -> kiln::Result<Vec<u8>> {
    let scene = Scene::new(device, COLOR_FORMAT)?;
    let color = device.image(&ImageDesc::color_target(
        "scene color",
        width,
        height,
        COLOR_FORMAT,
    ))?;
    let depth = device.image(&ImageDesc::depth_target(
        "scene depth",
        width,
        height,
        DEPTH_FORMAT,
    ))?;
    let (camera, camera_set) = scene.camera_set(device)?;
    camera.upload(&[Scene::camera(width as f32 / height as f32, 0.0)])?;
    device.execute(|r| {
        r.begin_rendering(
            &RenderingDesc::new(&[ColorAttachment::clear(&color, BACKGROUND)]).depth(Some(
                DepthAttachment::clear(&depth, 1.0)
                    .store(false)
                    .stencil_clear(None),
            )),
        )?;
        scene.draw(r, &camera_set)?;
        Ok(r.end_rendering()?)
    })?;
    color.read()
}
