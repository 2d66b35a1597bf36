//! The `wgpu` peer column of rows 1–3 (feature `bench-wgpu`): the same work as the kiln
//! and raw-ash rows, written against `wgpu`'s Vulkan backend on the same driver (a second
//! `VkInstance`/`VkDevice` that wgpu creates itself; the adapter whose name matches kiln's
//! device is chosen). Shaders are WGSL equivalents of `kiln-bench/shaders/*.comp`: same bindings,
//! same workgroup sizes, the 16 / 12 bytes of push constants as wgpu immediates
//! (`var<immediate>`, `VkPushConstantRange` on Vulkan), kiln's specialization constant as a
//! WGSL `override`. wgpu's own checks (shader bounds checks, usage tracking and the barriers
//! it derives) stay on: they are what a wgpu user gets.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::dispatch::{BUFS, PIPES, SETS};
use super::{ns_since, BenchResult};

/// `kiln-bench/shaders/six.comp` in WGSL.
const SIX_WGSL: &str = r#"
struct Params { n: u32, pad: u32, a: f32, b: f32 }
var<immediate> pc: Params;
override VARIANT: u32 = 0u;

@group(0) @binding(0) var<uniform> u0: vec4<f32>;
@group(0) @binding(1) var<uniform> u1: vec4<f32>;
@group(0) @binding(2) var<storage, read> s2: array<f32>;
@group(0) @binding(3) var<storage, read> s3: array<f32>;
@group(0) @binding(4) var<storage, read_write> s4: array<f32>;
@group(0) @binding(5) var<storage, read_write> s5: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x == pc.n) {
        s4[0] = u0.x + u1.y + s2[0] + s3[0] + pc.a + f32(VARIANT);
        s5[0] = s5[0] + pc.b;
    }
}
"#;

/// `kiln-bench/shaders/saxpy_{scalar,vec4}.comp` in WGSL; `ELEM` is `f32` or `vec4<f32>`.
const SAXPY_WGSL: &str = r#"
struct Params { a: f32, n: u32, pitch: u32 }
var<immediate> p: Params;

@group(0) @binding(0) var<storage, read> x: array<ELEM>;
@group(0) @binding(1) var<storage, read_write> y: array<ELEM>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.pitch + gid.x;
    if (i < p.n) {
        y[i] = p.a * x[i] + y[i];
    }
}
"#;

/// One SAXPY variant: pipeline and bind group over the shared x / y.
struct SaxpyPipe {
    pipe: wgpu::ComputePipeline,
    group: wgpu::BindGroup,
}

/// Row 3 state: x, y, timestamp queries and the two pipelines.
struct Saxpy {
    y: wgpu::Buffer,
    n: u64,
    queries: Option<(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)>,
    scalar: SaxpyPipe,
    vec4: SaxpyPipe,
    dispatches: u32,
}

/// wgpu device, queue and the row 1/2 objects (4 pipelines × 8 bind groups over 12 buffers,
/// as in `dispatch.rs`).
pub struct Peer {
    device: wgpu::Device,
    queue: wgpu::Queue,
    timestamps: bool,
    errors: Arc<Mutex<Vec<String>>>,
    pipes: Vec<wgpu::ComputePipeline>,
    groups: Vec<wgpu::BindGroup>,
    bufs: Vec<wgpu::Buffer>,
    readback: wgpu::Buffer,
    saxpy: Option<Saxpy>,
    /// The draw-recording row's objects (`wgpu_draws.rs`).
    draws: Option<super::wgpu_draws::DrawPeer>,
}

fn storage(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    entry(binding, wgpu::BufferBindingType::Storage { read_only })
}

fn entry(binding: u32, ty: wgpu::BufferBindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// The wgpu device and queue on the Vulkan adapter named `name` (else the first), with
/// push constants (immediates) and, where the adapter has them, timestamp queries; the
/// uncaptured errors go to the returned sink.
#[allow(clippy::type_complexity)]
fn open(name: &str) -> BenchResult<(wgpu::Device, wgpu::Queue, bool, Arc<Mutex<Vec<String>>>)> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::VULKAN;
    desc.flags = wgpu::InstanceFlags::from_build_config().with_env();
    let instance = wgpu::Instance::new(desc);
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
    let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
    let adapter = match adapters.iter().position(|a| a.get_info().name == name) {
        Some(i) => adapters.into_iter().nth(i),
        None => {
            super::note(format!(
                "wgpu: no Vulkan adapter named `{name}` among {names:?}; using the first"
            ));
            adapters.into_iter().next()
        }
    }
    .ok_or("wgpu: no Vulkan adapter")?;
    let info = adapter.get_info();
    let features = adapter.features();
    if !features.contains(wgpu::Features::IMMEDIATES) {
        return Err("wgpu: the adapter lacks Features::IMMEDIATES (push constants)".into());
    }
    let timestamps = features.contains(wgpu::Features::TIMESTAMP_QUERY);
    let mut required = wgpu::Features::IMMEDIATES;
    if timestamps {
        required |= wgpu::Features::TIMESTAMP_QUERY;
    }
    let limits = adapter.limits();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("kiln bench peer"),
        required_features: required,
        required_limits: limits,
        ..Default::default()
    }))?;
    let errors = Arc::new(Mutex::new(Vec::new()));
    let sink = errors.clone();
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        if let Ok(mut v) = sink.lock() {
            v.push(e.to_string());
        }
    }));
    super::note(format!(
        "wgpu {}: adapter `{}` ({:?}), driver `{} {}`; push constants as immediates; \
         SAXPY timed with {}",
        env!("KILN_WGPU_VERSION"),
        info.name,
        info.device_type,
        info.driver,
        info.driver_info,
        if timestamps {
            "compute-pass timestamp writes (TIMESTAMP_QUERY)"
        } else {
            "wall clock around submit + poll(wait) (no TIMESTAMP_QUERY)"
        }
    ));

    Ok((device, queue, timestamps, errors))
}

/// The row 1/2 objects: `PIPES` pipelines of six.wgsl (one per VARIANT), `BUFS` buffers of
/// 256 bytes and `SETS` bind groups of six consecutive buffers.
fn six_objects(
    device: &wgpu::Device,
) -> (
    Vec<wgpu::ComputePipeline>,
    Vec<wgpu::BindGroup>,
    Vec<wgpu::Buffer>,
) {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("six"),
        source: wgpu::ShaderSource::Wgsl(SIX_WGSL.into()),
    });
    use wgpu::BufferBindingType::Uniform;
    let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("six"),
        entries: &[
            entry(0, Uniform),
            entry(1, Uniform),
            storage(2, true),
            storage(3, true),
            storage(4, false),
            storage(5, false),
        ],
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("six"),
        bind_group_layouts: &[Some(&bgl)],
        immediate_size: 16,
    });
    let pipes = (0..PIPES)
        .map(|v| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("six"),
                layout: Some(&layout),
                module: &module,
                entry_point: Some("main"),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &[("VARIANT", v as f64)],
                    ..Default::default()
                },
                cache: None,
            })
        })
        .collect();
    let bufs: Vec<wgpu::Buffer> = (0..BUFS)
        .map(|_| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bench six"),
                size: 256,
                usage: wgpu::BufferUsages::UNIFORM
                    | wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        })
        .collect();
    let groups = (0..SETS)
        .map(|s| {
            let entries: Vec<_> = (0..6)
                .map(|j| wgpu::BindGroupEntry {
                    binding: j as u32,
                    resource: bufs[(s + j) % BUFS].as_entire_binding(),
                })
                .collect();
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("six"),
                layout: &bgl,
                entries: &entries,
            })
        })
        .collect();
    (pipes, groups, bufs)
}

impl Peer {
    /// Vulkan backend only; the adapter named `name` (kiln's device) when there is one.
    pub fn new(name: &str) -> BenchResult<Peer> {
        let (device, queue, timestamps, errors) = open(name)?;
        let (pipes, groups, bufs) = six_objects(&device);
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: 256,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let peer = Peer {
            device,
            queue,
            timestamps,
            errors,
            pipes,
            groups,
            bufs,
            readback,
            saxpy: None,
            draws: None,
        };
        peer.check("setup")?;
        Ok(peer)
    }

    /// Fails with every wgpu validation error collected since the last check.
    pub fn check(&self, what: &str) -> BenchResult<()> {
        let mut e = self.errors.lock().map_err(|_| "wgpu error sink poisoned")?;
        if e.is_empty() {
            return Ok(());
        }
        let all = std::mem::take(&mut *e).join("\n");
        Err(format!("wgpu {what}: {all}").into())
    }

    fn submit_wait(&self, cb: wgpu::CommandBuffer) -> BenchResult<()> {
        let index = self.queue.submit([cb]);
        self.device.poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        })?;
        Ok(())
    }

    /// Row 1: records `seq` (set_pipeline, set_bind_group, 16 bytes of immediates,
    /// dispatch_workgroups(1, 1, 1) each) in one compute pass; returns the CPU time from
    /// encoder creation to `finish()` in ns (wgpu-core encodes the Vulkan commands in
    /// `finish()`). Submits and waits afterwards, untimed.
    pub fn record(&mut self, seq: &[(usize, usize)], params: &[u8]) -> BenchResult<f64> {
        let t0 = Instant::now();
        let mut enc = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            for &(pi, si) in seq {
                pass.set_pipeline(&self.pipes[pi]);
                pass.set_bind_group(0, &self.groups[si], &[]);
                pass.set_immediates(0, params);
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        let cb = enc.finish();
        let t = ns_since(t0);
        self.submit_wait(cb)?;
        self.check("dispatch recording")?;
        Ok(t)
    }

    /// Row 2: one dispatch of pipeline 0 with bind group 0, submitted and waited for.
    pub fn round_trip(&mut self, params: &[u8]) -> BenchResult<()> {
        let mut enc = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.pipes[0]);
            pass.set_bind_group(0, &self.groups[0], &[]);
            pass.set_immediates(0, params);
            pass.dispatch_workgroups(1, 1, 1);
        }
        self.submit_wait(enc.finish())
    }

    /// Copies `src[offset..offset + 16]` into the readback buffer and returns it as 4 floats.
    fn read16(&self, src: &wgpu::Buffer, offset: u64) -> BenchResult<[f32; 4]> {
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(src, offset, &self.readback, 0, 16);
        self.submit_wait(enc.finish())?;
        self.map_read(&self.readback, 16, |b| {
            let mut out = [0f32; 4];
            bytemuck::cast_slice_mut::<f32, u8>(&mut out).copy_from_slice(b);
            out
        })
    }

    /// Maps `buf[..len]` for reading, hands the bytes to `f`, unmaps.
    fn map_read<T>(
        &self,
        buf: &wgpu::Buffer,
        len: u64,
        f: impl FnOnce(&[u8]) -> T,
    ) -> BenchResult<T> {
        let done = Arc::new(Mutex::new(None));
        let d = done.clone();
        buf.map_async(wgpu::MapMode::Read, ..len, move |r| {
            if let Ok(mut g) = d.lock() {
                *g = Some(r);
            }
        });
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        let status = done.lock().map_err(|_| "map flag poisoned")?.take();
        match status {
            Some(Ok(())) => {}
            Some(Err(e)) => return Err(format!("wgpu map_async: {e}").into()),
            None => return Err("wgpu map_async: callback did not run after poll(wait)".into()),
        }
        let out = {
            let view = buf.get_mapped_range(..len)?;
            f(&view)
        };
        buf.unmap();
        self.check("readback")?;
        Ok(out)
    }

    /// `s5[0]` of bind group 0 (binding 5 = buffer 5): +b per row-2 dispatch.
    pub fn s5(&self) -> BenchResult<f32> {
        Ok(self.read16(&self.bufs[5], 0)?[0])
    }

    /// Writes `v` into the `n` floats of `buf`, 64 MiB at a time (each write submitted and
    /// waited for: wgpu holds the staging memory of pending writes).
    fn fill(&self, buf: &wgpu::Buffer, n: u64, v: f32) -> BenchResult<()> {
        let chunk = (n * 4).min(64 << 20);
        let data = vec![v; (chunk / 4) as usize];
        let mut off = 0;
        while off < n * 4 {
            let len = chunk.min(n * 4 - off) as usize;
            self.queue
                .write_buffer(buf, off, &bytemuck::cast_slice(&data)[..len]);
            off += len as u64;
            // Bound the staging memory wgpu holds for pending writes.
            self.submit_wait(
                self.device
                    .create_command_encoder(&Default::default())
                    .finish(),
            )?;
        }
        Ok(())
    }

    /// The SAXPY pipeline over `ELEM` = `elem` with its bind group of `x` (read) and `y`.
    fn saxpy_pipe(&self, elem: &str, x: &wgpu::Buffer, y: &wgpu::Buffer) -> SaxpyPipe {
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("saxpy"),
                source: wgpu::ShaderSource::Wgsl(SAXPY_WGSL.replace("ELEM", elem).into()),
            });
        let bgl = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("saxpy"),
                entries: &[storage(0, true), storage(1, false)],
            });
        let layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("saxpy"),
                bind_group_layouts: &[Some(&bgl)],
                immediate_size: 12,
            });
        let pipe = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("saxpy"),
                layout: Some(&layout),
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
        let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("saxpy"),
            layout: &bgl,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: x.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: y.as_entire_binding(),
                },
            ],
        });
        SaxpyPipe { pipe, group }
    }

    /// Row 3 setup: x = 1.0, y = 2.0 over `n` floats, both pipelines, timestamp queries.
    pub fn saxpy_setup(&mut self, n: u64) -> BenchResult<()> {
        let limits = self.device.limits();
        if n * 4 > limits.max_storage_buffer_binding_size || n * 4 > limits.max_buffer_size {
            return Err(format!(
                "wgpu: SAXPY buffers of {} bytes exceed maxStorageBufferBindingSize {} / maxBufferSize {}",
                n * 4,
                limits.max_storage_buffer_binding_size,
                limits.max_buffer_size
            )
            .into());
        }
        let make = |label| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: n * 4,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let (x, y) = (make("saxpy x"), make("saxpy y"));
        for (buf, v) in [(&x, 1.0f32), (&y, 2.0f32)] {
            self.fill(buf, n, v)?;
        }
        let (scalar, vec4) = (
            self.saxpy_pipe("f32", &x, &y),
            self.saxpy_pipe("vec4<f32>", &x, &y),
        );
        let queries = self.timestamps.then(|| {
            let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("saxpy"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("saxpy resolve"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let read = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("saxpy ticks"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            (set, resolve, read)
        });
        self.saxpy = Some(Saxpy {
            y,
            n,
            queries,
            scalar,
            vec4,
            dispatches: 0,
        });
        self.check("saxpy setup")
    }

    /// One SAXPY dispatch (`vec4` or scalar) of `groups` workgroups with 12 bytes of
    /// immediates; ns of GPU time from the pass's timestamp writes, or wall time around
    /// submit + wait without TIMESTAMP_QUERY.
    pub fn saxpy(&mut self, vec4: bool, groups: (u32, u32), params: &[u8]) -> BenchResult<f64> {
        self.saxpy
            .as_mut()
            .ok_or("wgpu: saxpy_setup first")?
            .dispatches += 1;
        let s = self.saxpy.as_ref().ok_or("wgpu: saxpy_setup first")?;
        let sp = if vec4 { &s.vec4 } else { &s.scalar };
        let mut enc = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("saxpy"),
                timestamp_writes: s.queries.as_ref().map(|(q, _, _)| {
                    wgpu::ComputePassTimestampWrites {
                        query_set: q,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    }
                }),
            });
            pass.set_pipeline(&sp.pipe);
            pass.set_bind_group(0, &sp.group, &[]);
            pass.set_immediates(0, params);
            pass.dispatch_workgroups(groups.0, groups.1, 1);
        }
        if let Some((q, resolve, read)) = &s.queries {
            enc.resolve_query_set(q, 0..2, resolve, 0);
            enc.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
        }
        let cb = enc.finish();
        let t0 = Instant::now();
        let index = self.queue.submit([cb]);
        self.device.poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        })?;
        let wall = ns_since(t0);
        let Some((_, _, read)) = &s.queries else {
            self.check("saxpy")?;
            return Ok(wall);
        };
        let t = self.map_read(read, 16, |b| {
            let mut t = [0u64; 2];
            bytemuck::cast_slice_mut::<u64, u8>(&mut t).copy_from_slice(b);
            t
        })?;
        let ticks = t[1].saturating_sub(t[0]) as f64;
        Ok(ticks * self.queue.get_timestamp_period() as f64)
    }

    /// Checks the last 4 elements of y (2 + 0.5 per dispatch) and frees the SAXPY buffers.
    pub fn saxpy_finish(&mut self) -> BenchResult<()> {
        let s = self.saxpy.take().ok_or("wgpu: saxpy_setup first")?;
        let got = self.read16(&s.y, s.n * 4 - 16)?;
        let want = 2.0 + 0.5 * s.dispatches as f32;
        if got.iter().any(|v| *v != want) {
            return Err(format!("wgpu saxpy: last elements {got:?}, expected {want}").into());
        }
        Ok(())
    }
}

/// The draw-recording row (group `draws`).
impl Peer {
    /// Creates the render pipeline, one bind group per tint and a `size`² RGBA8 target.
    pub fn draws_setup(&mut self, size: u32, tints: &[[f32; 4]]) -> BenchResult<()> {
        self.draws = Some(super::wgpu_draws::DrawPeer::new(&self.device, size, tints)?);
        self.check("draws setup")
    }

    /// Records `stream` in one render pass; CPU ns from encoder creation to `finish()`.
    /// Submits and waits afterwards, untimed.
    pub fn draws_record(&mut self, stream: &[super::draws::DrawPush]) -> BenchResult<f64> {
        let d = self.draws.as_ref().ok_or("wgpu: draws_setup first")?;
        let (t, cb) = d.record(&self.device, stream);
        self.submit_wait(cb)?;
        self.check("draw recording")?;
        Ok(t)
    }

    /// The target's pixels after the last `draws_record` (tightly packed RGBA8).
    pub fn draws_image(&mut self) -> BenchResult<Vec<u8>> {
        let d = self.draws.as_ref().ok_or("wgpu: draws_setup first")?;
        let (cb, len) = d.copy_out(&self.device)?;
        self.submit_wait(cb)?;
        self.map_read(d.readback(), len, |b| b.to_vec())
    }
}
