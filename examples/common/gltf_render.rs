//! The glTF scene's renderer (`examples/scene_gltf.rs`, the `scene_gltf` tests), all in
//! one recording per frame:
//!
//! 1. **culling** — a compute pass (`gltf/cull.comp`) tests every object's bounding sphere
//!    against the camera frustum and the light's box and writes two lists of
//!    `VkDrawIndexedIndirectCommand`s, their draw counts and which object each command
//!    draws (no barrier of ours: kiln orders the dispatch's writes before the indirect
//!    reads of the draws);
//! 2. **shadow map** — a depth-only pass from the directional light (`gltf/shadow.vert`,
//!    no fragment stage, depth bias, front faces culled) drawing the light's list;
//! 3. **main pass** — into a 4× multisampled colour and depth target resolved into the
//!    single-sampled image (`ColorAttachment::resolve_into`), drawing the camera's list:
//!    base colour and normal maps from two texture arrays whose mips were generated on the
//!    GPU (`Recorder::generate_mips`), the shadow map through a comparison sampler
//!    (`sampler2DShadow`, 3×3 PCF).
//!
//! Both passes draw with `draw_indexed_indirect_count` where the device has
//! `drawIndirectCount`, else with `draw_indexed_indirect` over every object (culled ones
//! with no instances): [`IndirectPath`].
#![allow(dead_code)]

use kiln::vk;
use kiln::{
    Buffer, BufferDesc, ColorAttachment, ComputePipeline, DepthAttachment, DepthBias,
    DescriptorSet, Device, GraphicsPipeline, GraphicsPipelineDesc, Image, ImageDesc,
    MemoryLocation, Recorder, RenderingDesc, Sampler, SamplerDesc, VertexAttribute,
    VertexBufferLayout,
};

use super::gltf_scene::{SceneData, Vertex, LAYER_SIZE};
use super::scene::{look_at, mul, perspective, Mat4};

pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
/// Offscreen colour format: sRGB, so the bytes read back are what a PNG holds.
pub const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_SRGB;
/// Shadow map edge in texels.
pub const SHADOW_SIZE: u32 = 1024;
/// Clear colour (linear; a pale sky).
pub const SKY: [f32; 4] = [0.42, 0.56, 0.78, 1.0];
/// Towards the light (normalised in the shaders).
pub const LIGHT_DIR: [f32; 3] = [-0.55, 1.0, -0.4];
/// The light's box: centred on the origin, this half-extent across and along the light
/// (the 16 m ground and a margin).
pub const LIGHT_HALF_EXTENT: f32 = 9.5;
const COMMAND_SIZE: u32 = 20;

/// The frame uniform of `gltf/frame.glsl` (std140, 384 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FrameUniform {
    pub view_proj: Mat4,
    pub light_view_proj: Mat4,
    pub eye: [f32; 4],
    pub light_dir: [f32; 4],
    pub light_color: [f32; 4],
    pub planes: [[f32; 4]; 6],
    pub light_planes: [[f32; 4]; 6],
    pub counts: [u32; 4],
}

/// How the passes draw their lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndirectPath {
    /// `draw_indexed_indirect_count`: the lists are compacted, the GPU's count is used.
    Count,
    /// `draw_indexed_indirect` with every object's command (no `drawIndirectCount`).
    Full,
}

/// What a render shows and how.
#[derive(Clone, Copy, Debug)]
pub struct View {
    /// Orbit angle of the camera about +y, radians (0: the golden image's view).
    pub angle: f32,
    /// Width / height.
    pub aspect: f32,
    /// Sample the shadow map (false: every surface lit, for the tests' comparison).
    pub shadows: bool,
}

impl View {
    pub fn new(width: u32, height: u32) -> View {
        View {
            angle: 0.0,
            aspect: width as f32 / height as f32,
            shadows: true,
        }
    }

    pub fn eye(&self) -> [f32; 3] {
        let (s, c) = self.angle.sin_cos();
        let (x, z) = (0.6, 7.0);
        [x * c + z * s, 3.4, z * c - x * s]
    }

    pub fn view_proj(&self) -> Mat4 {
        let view = look_at(self.eye(), [0.0, 0.5, 0.0], [0.0, 1.0, 0.0]);
        mul(
            &perspective(45f32.to_radians(), self.aspect, 0.1, 40.0),
            &view,
        )
    }

    /// The light's orthographic projection (depth 0..1 along the light, x and y ±extent).
    pub fn light_view_proj() -> Mat4 {
        let l = normalize(LIGHT_DIR);
        let e = LIGHT_HALF_EXTENT;
        let eye = l.map(|c| c * 2.0 * e);
        let view = look_at(eye, [0.0; 3], [0.0, 1.0, 0.0]);
        let (near, far) = (e * 0.5, e * 3.5);
        let ortho = [
            [1.0 / e, 0.0, 0.0, 0.0],
            [0.0, 1.0 / e, 0.0, 0.0],
            [0.0, 0.0, -1.0 / (far - near), 0.0],
            [0.0, 0.0, -near / (far - near), 1.0],
        ];
        mul(&ortho, &view)
    }

    /// The frame uniform for `objects` objects.
    pub fn uniform(&self, objects: u32, encode_srgb: bool, path: IndirectPath) -> FrameUniform {
        let vp = self.view_proj();
        let lvp = Self::light_view_proj();
        let e = self.eye();
        let l = normalize(LIGHT_DIR);
        FrameUniform {
            view_proj: vp,
            light_view_proj: lvp,
            eye: [e[0], e[1], e[2], 1.0],
            light_dir: [l[0], l[1], l[2], if self.shadows { 1.0 } else { 0.0 }],
            light_color: [1.0, 0.96, 0.88, 0.16],
            planes: frustum_planes(&vp),
            light_planes: frustum_planes(&lvp),
            counts: [
                objects,
                u32::from(encode_srgb),
                u32::from(path == IndirectPath::Count),
                0,
            ],
        }
    }
}

fn normalize(v: [f32; 3]) -> [f32; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    v.map(|c| c / l)
}

/// The six planes (xyz inwards, normalised; w the distance) of the clip volume of `m`
/// (Vulkan: depth 0..1): left, right, top, bottom, near, far.
pub fn frustum_planes(m: &Mat4) -> [[f32; 4]; 6] {
    let row = |r: usize| [m[0][r], m[1][r], m[2][r], m[3][r]];
    let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
    let add = |a: [f32; 4], b: [f32; 4], s: f32| std::array::from_fn(|i| a[i] + s * b[i]);
    let planes: [[f32; 4]; 6] = [
        add(r3, r0, 1.0),
        add(r3, r0, -1.0),
        add(r3, r1, 1.0),
        add(r3, r1, -1.0),
        r2,
        add(r3, r2, -1.0),
    ];
    planes.map(|p| {
        let l = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
        p.map(|c| c / l)
    })
}

/// Whether `sphere` is at least partly inside every plane (what `cull.comp` computes).
pub fn sphere_visible(planes: &[[f32; 4]; 6], s: [f32; 4]) -> bool {
    planes
        .iter()
        .all(|p| p[0] * s[0] + p[1] * s[1] + p[2] * s[2] + p[3] >= -s[3])
}

/// The per-frame (per frame-in-flight) buffers, targets and sets.
pub struct FrameTargets {
    pub uniform: Buffer,
    /// 2 × objects commands: the camera's list, then the light's.
    pub commands: Buffer,
    /// Two `u32` draw counts: camera, light.
    pub counts: Buffer,
    pub draw_objects: Buffer,
    pub shadow_map: Image,
    /// The multisampled colour target (None with one sample: the target is drawn into).
    pub msaa: Option<Image>,
    pub depth: Image,
    pub extent: vk::Extent2D,
    cull_set: DescriptorSet,
    shadow_set: DescriptorSet,
    main_set: DescriptorSet,
    textures_set: DescriptorSet,
}

/// The scene on the GPU and its three pipelines.
pub struct Renderer {
    cull: ComputePipeline,
    shadow: GraphicsPipeline,
    main: GraphicsPipeline,
    vertices: Buffer,
    indices: Buffer,
    objects: Buffer,
    materials: Buffer,
    pub base_color: Image,
    pub normals: Image,
    sampler: Sampler,
    shadow_sampler: Sampler,
    pub object_count: u32,
    pub color_format: vk::Format,
    pub samples: vk::SampleCountFlags,
    pub path: IndirectPath,
}

/// 4× where the device's colour and depth framebuffers have it, else 1×.
pub fn choose_samples(device: &Device, wanted: vk::SampleCountFlags) -> vk::SampleCountFlags {
    let l = device.limits();
    let ok = l.framebuffer_color_sample_counts & l.framebuffer_depth_sample_counts;
    if ok.contains(wanted) {
        wanted
    } else {
        vk::SampleCountFlags::TYPE_1
    }
}

/// A texture array of `layers` (RGBA8, `LAYER_SIZE`²) with a full mip chain, level 0
/// uploaded (the mips are generated by [`Renderer::new`]).
fn texture_array(
    device: &Device,
    label: &str,
    format: vk::Format,
    layers: &[Vec<u8>],
) -> kiln::Result<Image> {
    let image = device.image(
        &ImageDesc::array(label, LAYER_SIZE, LAYER_SIZE, layers.len() as u32, format)
            .full_mip_chain(),
    )?;
    image.upload(&layers.concat())?;
    Ok(image)
}

/// The culling, shadow and main pipelines (the main one for `color_format` × `samples`).
fn pipelines(
    device: &Device,
    color_format: vk::Format,
    samples: vk::SampleCountFlags,
) -> kiln::Result<(ComputePipeline, GraphicsPipeline, GraphicsPipeline)> {
    let cull = device.compute_pipeline(&kiln::include_spirv!("gltf/cull.comp")?, "main")?;
    let vs = kiln::include_spirv!("gltf/scene.vert")?;
    let fs = kiln::include_spirv!("gltf/scene.frag")?;
    let layout = VertexBufferLayout::packed(&[
        (0, vk::Format::R32G32B32_SFLOAT),
        (1, vk::Format::R32G32B32_SFLOAT),
        (2, vk::Format::R32G32B32A32_SFLOAT),
        (3, vk::Format::R32G32_SFLOAT),
    ]);
    let mut desc = GraphicsPipelineDesc::new(&vs, &fs).vertex_buffer(layout);
    desc.color_formats = vec![color_format];
    desc.depth_format = Some(DEPTH_FORMAT);
    desc.samples = samples;
    desc.cull_mode = vk::CullModeFlags::BACK;
    let main = device.graphics_pipeline(&desc)?;

    let svs = kiln::include_spirv!("gltf/shadow.vert")?;
    let mut sdesc = GraphicsPipelineDesc::new(&svs, &fs).vertex_buffer(VertexBufferLayout {
        stride: std::mem::size_of::<Vertex>() as u32,
        input_rate: vk::VertexInputRate::VERTEX,
        attributes: vec![VertexAttribute {
            location: 0,
            format: vk::Format::R32G32B32_SFLOAT,
            offset: 0,
        }],
    });
    sdesc.label = "gltf shadow".into();
    sdesc.fragment = None;
    sdesc.depth_format = Some(DEPTH_FORMAT);
    // Back faces into the map (closed meshes): lit front faces never shadow themselves.
    sdesc.cull_mode = vk::CullModeFlags::FRONT;
    sdesc.depth_bias = Some(
        DepthBias::default()
            .constant_factor(1.0)
            .clamp(0.0)
            .slope_factor(1.5),
    );
    let shadow = device.graphics_pipeline(&sdesc)?;

    Ok((cull, shadow, main))
}

impl Renderer {
    /// Uploads `scene` and builds the pipelines for `color_format` with `samples` per
    /// pixel (check them with [`choose_samples`]); the textures' mips are generated here.
    pub fn new(
        device: &Device,
        scene: &SceneData,
        color_format: vk::Format,
        samples: vk::SampleCountFlags,
    ) -> kiln::Result<Renderer> {
        let (cull, shadow, main) = pipelines(device, color_format, samples)?;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let base_color = texture_array(
            device,
            "gltf base colour",
            vk::Format::R8G8B8A8_SRGB,
            &scene.base_layers,
        )?;
        let normals = texture_array(
            device,
            "gltf normals",
            vk::Format::R8G8B8A8_UNORM,
            &scene.normal_layers,
        )?;
        device.execute(|r| {
            r.generate_mips(&base_color)?;
            Ok(r.generate_mips(&normals)?)
        })?;
        let features = device.features();
        Ok(Renderer {
            vertices: device.buffer_from_slice(
                "gltf vertices",
                vk::BufferUsageFlags::VERTEX_BUFFER,
                &scene.vertices,
            )?,
            indices: device.buffer_from_slice(
                "gltf indices",
                vk::BufferUsageFlags::INDEX_BUFFER,
                &scene.indices,
            )?,
            objects: device.buffer_from_slice("gltf objects", usage, &scene.objects)?,
            materials: device.buffer_from_slice("gltf materials", usage, &scene.materials)?,
            base_color,
            normals,
            sampler: device.sampler(&SamplerDesc::default())?,
            shadow_sampler: device.sampler(
                &SamplerDesc::default()
                    .compare_op(Some(vk::CompareOp::LESS_OR_EQUAL))
                    .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
                    .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_BORDER)
                    .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_BORDER)
                    .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_BORDER)
                    .border_color(vk::BorderColor::FLOAT_OPAQUE_WHITE)
                    .max_lod(0.0),
            )?,
            object_count: scene.objects.len() as u32,
            color_format,
            samples,
            path: if features.draw_indirect_count {
                IndirectPath::Count
            } else {
                IndirectPath::Full
            },
            cull,
            shadow,
            main,
        })
    }

    /// Whether the shader must encode sRGB itself (a UNORM target).
    pub fn encode_srgb(&self) -> bool {
        !matches!(
            self.color_format,
            vk::Format::R8G8B8A8_SRGB | vk::Format::B8G8R8A8_SRGB
        )
    }

    /// The per-frame resources for a target of `extent`.
    pub fn targets(&self, device: &Device, extent: vk::Extent2D) -> kiln::Result<FrameTargets> {
        let n = self.object_count as usize;
        let indirect = vk::BufferUsageFlags::INDIRECT_BUFFER;
        let uniform = device.buffer(
            &BufferDesc::default()
                .label("gltf frame")
                .size(std::mem::size_of::<FrameUniform>() as u64)
                .usage(vk::BufferUsageFlags::UNIFORM_BUFFER)
                .location(MemoryLocation::CpuToGpu),
        )?;
        let commands =
            device.storage_buffer_with::<[u32; 5]>("gltf draw commands", 2 * n, indirect)?;
        let counts = device.storage_buffer_with::<u32>("gltf draw counts", 2, indirect)?;
        let draw_objects = device.storage_buffer::<u32>("gltf draw objects", 2 * n)?;
        let shadow_map = device.image(
            &ImageDesc::depth_target("gltf shadow map", SHADOW_SIZE, SHADOW_SIZE, DEPTH_FORMAT)
                .usage(
                    vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::SAMPLED,
                ),
        )?;
        let (w, h) = (extent.width, extent.height);
        let msaa = if self.samples == vk::SampleCountFlags::TYPE_1 {
            None
        } else {
            Some(
                device.image(
                    &ImageDesc::color_target("gltf msaa colour", w, h, self.color_format)
                        .samples(self.samples)
                        .usage(vk::ImageUsageFlags::COLOR_ATTACHMENT),
                )?,
            )
        };
        let depth = device.image(
            &ImageDesc::depth_target("gltf depth", w, h, DEPTH_FORMAT).samples(self.samples),
        )?;
        let mut cull_set = self.cull.descriptor_set(0)?;
        cull_set.write_buffers(&[
            (0, &uniform),
            (1, &self.objects),
            (2, &commands),
            (3, &counts),
            (4, &draw_objects),
        ])?;
        let mut shadow_set = self.shadow.descriptor_set(0)?;
        shadow_set.write_buffers(&[(0, &uniform), (1, &self.objects), (4, &draw_objects)])?;
        let mut main_set = self.main.descriptor_set(0)?;
        main_set.write_buffers(&[
            (0, &uniform),
            (1, &self.objects),
            (3, &self.materials),
            (4, &draw_objects),
        ])?;
        let mut textures_set = self.main.descriptor_set(1)?;
        textures_set.write_combined(0, &self.base_color, &self.sampler)?;
        textures_set.write_combined(1, &self.normals, &self.sampler)?;
        textures_set.write_combined(2, &shadow_map, &self.shadow_sampler)?;
        Ok(FrameTargets {
            uniform,
            commands,
            counts,
            draw_objects,
            shadow_map,
            msaa,
            depth,
            extent,
            cull_set,
            shadow_set,
            main_set,
            textures_set,
        })
    }

    /// Draws list `list` (0 camera, 1 light) of `t` with the bound pipeline.
    fn draw_list<'a>(
        &'a self,
        r: &mut Recorder<'a, '_>,
        t: &'a FrameTargets,
        list: u32,
    ) -> kiln::Result<()> {
        let n = self.object_count;
        r.push(0, &(list * n))?;
        r.bind_vertex_buffer(0, &self.vertices, 0)?;
        r.bind_index_buffer(&self.indices, 0, vk::IndexType::UINT32)?;
        let offset = u64::from(list * n * COMMAND_SIZE);
        match self.path {
            IndirectPath::Count => Ok(r.draw_indexed_indirect_count(
                &t.commands,
                offset,
                &t.counts,
                u64::from(list) * 4,
                n,
                COMMAND_SIZE,
            )?),
            IndirectPath::Full => {
                Ok(r.draw_indexed_indirect(&t.commands, offset, n, COMMAND_SIZE)?)
            }
        }
    }

    /// Records a frame into `target` (single-sampled, `t.extent`, this renderer's colour
    /// format): culling, the shadow map, the main pass. Upload `t.uniform` first
    /// ([`View::uniform`]).
    pub fn record<'a>(
        &'a self,
        r: &mut Recorder<'a, '_>,
        t: &'a FrameTargets,
        target: &Image,
    ) -> kiln::Result<()> {
        r.fill_buffer(&t.counts, 0)?;
        r.bind_pipeline(&self.cull)?;
        r.bind_set(0, &t.cull_set)?;
        r.scope("cull", |r| Ok(r.dispatch_threads(self.object_count)?))?;

        r.begin_rendering(
            &RenderingDesc::new(&[])
                .depth(Some(DepthAttachment::clear(&t.shadow_map, 1.0).store(true))),
        )?;
        r.bind_pipeline(&self.shadow)?;
        r.bind_set(0, &t.shadow_set)?;
        self.draw_list(r, t, 1)?;
        r.end_rendering()?;

        // The sets before the scope: the shadow map moves to SHADER_READ_ONLY_OPTIMAL here.
        r.bind_pipeline(&self.main)?;
        r.bind_set(0, &t.main_set)?;
        r.bind_set(1, &t.textures_set)?;
        let color = match &t.msaa {
            Some(m) => ColorAttachment::clear(m, SKY).resolve_into(target),
            None => ColorAttachment::clear(target, SKY),
        };
        r.begin_rendering(
            &RenderingDesc::new(&[color])
                .depth(Some(DepthAttachment::clear(&t.depth, 1.0).store(false))),
        )?;
        self.draw_list(r, t, 0)?;
        Ok(r.end_rendering()?)
    }
}

/// What an offscreen render produced.
pub struct Offscreen {
    /// RGBA8 (sRGB-encoded), row by row.
    pub pixels: Vec<u8>,
    /// The two lists' draw counts the culling pass wrote: camera, light.
    pub counts: [u32; 2],
    pub samples: vk::SampleCountFlags,
    pub path: IndirectPath,
}

/// Renders `scene` at `width`×`height` with `samples` per pixel (checked with
/// [`choose_samples`]), on the device's [`IndirectPath`].
pub fn render_offscreen(
    device: &Device,
    scene: &SceneData,
    width: u32,
    height: u32,
    samples: vk::SampleCountFlags,
    view: View,
) -> kiln::Result<Offscreen> {
    render_offscreen_on(device, scene, [width, height], samples, view, None)
}

/// [`render_offscreen`] on `path` where given (`IndirectPath::Full` runs the fallback on a
/// device that has `drawIndirectCount`; `Count` on one without it is kiln's `KILN-E107`).
pub fn render_offscreen_on(
    device: &Device,
    scene: &SceneData,
    [width, height]: [u32; 2],
    samples: vk::SampleCountFlags,
    view: View,
    path: Option<IndirectPath>,
) -> kiln::Result<Offscreen> {
    let samples = choose_samples(device, samples);
    let mut renderer = Renderer::new(device, scene, COLOR_FORMAT, samples)?;
    if let Some(p) = path {
        renderer.path = p;
    }
    let target = device.image(&ImageDesc::color_target(
        "gltf colour",
        width,
        height,
        COLOR_FORMAT,
    ))?;
    let t = renderer.targets(device, target.extent())?;
    t.uniform
        .upload(&[view.uniform(renderer.object_count, false, renderer.path)])?;
    device.execute(|r| renderer.record(r, &t, &target))?;
    let c: Vec<u32> = t.counts.read()?;
    Ok(Offscreen {
        pixels: target.read()?,
        counts: [c[0], c[1]],
        samples,
        path: renderer.path,
    })
}
