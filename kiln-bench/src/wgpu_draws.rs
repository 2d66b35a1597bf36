//! The wgpu column of the draw-recording row (feature `bench-wgpu`): a render pass of the
//! same draws (`set_bind_group` + 32 bytes of immediates + `draw(0..3, 0..1)` each) into
//! an RGBA8 texture, with WGSL equivalents of `draw.vert` / `draw.frag`.

use std::time::Instant;

use super::draws::DrawPush;
use super::{ns_since, BenchResult};

/// `kiln-bench/shaders/draw.{vert,frag}` in WGSL.
const DRAW_WGSL: &str = r#"
struct Draw { rect: vec4<f32>, color: vec4<f32> }
var<immediate> draw: Draw;
@group(0) @binding(0) var<uniform> tint: vec4<f32>;

struct Out { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> }

@vertex
fn vs(@builtin(vertex_index) v: u32) -> Out {
    let corner = vec2<f32>(f32(v & 1u), f32(v >> 1u));
    var o: Out;
    o.pos = vec4<f32>(draw.rect.xy + corner * draw.rect.zw, 0.0, 1.0);
    o.color = draw.color * tint;
    return o;
}

@fragment
fn fs(i: Out) -> @location(0) vec4<f32> {
    return i.color;
}
"#;

const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// The render pipeline of `DRAW_WGSL` into RGBA8 and its bind group layout (one uniform
/// buffer, vertex stage; 32 bytes of immediates).
fn pipeline(device: &wgpu::Device) -> (wgpu::RenderPipeline, wgpu::BindGroupLayout) {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("draw"),
        source: wgpu::ShaderSource::Wgsl(DRAW_WGSL.into()),
    });
    let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("draw"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("draw"),
        bind_group_layouts: &[Some(&bgl)],
        immediate_size: 32,
    });
    let format = FORMAT;
    let pipe = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("draw"),
        layout: Some(&layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: wgpu::PrimitiveState::default(),
        depth_stencil: None,
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    (pipe, bgl)
}

/// The render pipeline, one bind group per tint, the target and its readback buffer.
pub struct DrawPeer {
    pipe: wgpu::RenderPipeline,
    groups: Vec<wgpu::BindGroup>,
    _tints: Vec<wgpu::Buffer>,
    target: wgpu::Texture,
    view: wgpu::TextureView,
    readback: wgpu::Buffer,
    size: u32,
}

impl DrawPeer {
    pub fn new(device: &wgpu::Device, size: u32, tints: &[[f32; 4]]) -> BenchResult<DrawPeer> {
        let (pipe, bgl) = pipeline(device);
        let mut bufs = Vec::new();
        for t in tints {
            let b = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("tint"),
                size: 16,
                usage: wgpu::BufferUsages::UNIFORM,
                mapped_at_creation: true,
            });
            b.slice(..)
                .get_mapped_range_mut()
                .map_err(|e| format!("wgpu tint buffer: {e}"))?
                .copy_from_slice(bytemuck::cast_slice(t));
            b.unmap();
            bufs.push(b);
        }
        let tints = bufs;
        let groups = tints
            .iter()
            .map(|b| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("draw"),
                    layout: &bgl,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: b.as_entire_binding(),
                    }],
                })
            })
            .collect();
        let target = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("draws"),
            size: wgpu::Extent3d {
                width: size,
                height: size,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let view = target.create_view(&Default::default());
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("draws readback"),
            size: u64::from(size) * u64::from(size) * 4,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Ok(DrawPeer {
            pipe,
            groups,
            _tints: tints,
            target,
            view,
            readback,
            size,
        })
    }

    /// Records the draws in one render pass (cleared to opaque black); returns the CPU time
    /// from encoder creation to `finish()` in ns and the command buffer.
    pub fn record(&self, device: &wgpu::Device, stream: &[DrawPush]) -> (f64, wgpu::CommandBuffer) {
        let t0 = Instant::now();
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("draws"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &self.view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                ..Default::default()
            });
            pass.set_pipeline(&self.pipe);
            for (i, p) in stream.iter().enumerate() {
                pass.set_bind_group(0, &self.groups[i % self.groups.len()], &[]);
                pass.set_immediates(0, bytemuck::bytes_of(p));
                pass.draw(0..3, 0..1);
            }
        }
        let cb = enc.finish();
        (ns_since(t0), cb)
    }

    /// A command buffer copying the target into the readback buffer (rows of `size` × 4
    /// bytes: 256-byte aligned for the sizes the bench uses), and the byte count.
    pub fn copy_out(&self, device: &wgpu::Device) -> BenchResult<(wgpu::CommandBuffer, u64)> {
        let row = self.size * 4;
        if !row.is_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) {
            return Err(format!("wgpu draws: a {row}-byte row is not 256-byte aligned").into());
        }
        let mut enc = device.create_command_encoder(&Default::default());
        enc.copy_texture_to_buffer(
            self.target.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(row),
                    rows_per_image: None,
                },
            },
            self.target.size(),
        );
        Ok((enc.finish(), u64::from(row) * u64::from(self.size)))
    }

    pub fn readback(&self) -> &wgpu::Buffer {
        &self.readback
    }
}
