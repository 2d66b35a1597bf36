//! Streaming a large array through a kernel in chunks, with the three stages of every chunk
//! on three queues so they overlap: upload chunk i+1 (`Device::upload_queue`, the first
//! transfer queue), compute chunk i (async-compute queue), read back chunk i-1
//! (`Device::readback_queue`: where kiln's readbacks run beside its uploads). The input and
//! output live in host buffers (pinned memory), so every copy is one DMA transfer.
//!
//! The loop submits everything without waiting: kiln orders the stages of one chunk, and
//! the reuse of the device ring's buffers, by the buffers they use (an upload into a ring
//! slot waits on the GPU for the dispatch that last read it, a dispatch for the upload of
//! its input and for the readback that last read its output slot). The serial run makes
//! the same submissions on the main queue alone, where each waits for the one before.
//! Used by `examples/stream_overlap.rs` and the tests (`queues` module).

use std::time::{Duration, Instant};

use kiln::{vk, Buffer, ComputePipeline, DescriptorSet, Device, HostBuffer, QueueKind};

/// Device buffers in the ring (chunks in flight at once) by default.
pub const RING: usize = 3;

/// The kernel's push constants.
#[repr(C)]
#[derive(Clone, Copy, kiln::bytemuck::Pod, kiln::bytemuck::Zeroable)]
struct Params {
    iters: u32,
    n: u32,
}

/// The kernel's step: one 32-bit LCG step, `f(v) = v * A + C` (mod 2^32).
pub const A: u32 = 1_664_525;
/// The kernel's step's increment (see [`A`]).
pub const C: u32 = 1_013_904_223;

/// What the kernel computes for one element, iterated as the kernel does (the slow CPU
/// reference: `iters` steps per element).
pub fn reference(x: u32, iters: u32) -> u32 {
    let mut v = x;
    for _ in 0..iters {
        v = v.wrapping_mul(A).wrapping_add(C);
    }
    v
}

/// `f^iters` as one affine map `v -> a * v + c` (mod 2^32), returned as `(a, c)`: `f`
/// composed with itself by squaring (O(log iters)). `a * x + c` equals
/// `reference(x, iters)` for every `x`, so checking an element costs one multiply-add
/// whatever the iteration count (the check of 64 Mi elements x 668 iterations ran past the
/// example's 40 s cap on the H200).
pub fn closed_form(iters: u32) -> (u32, u32) {
    // The result r = f^k of the bits seen so far, the base b = f^(2^i).
    let (mut ra, mut rc) = (1u32, 0u32);
    let (mut ba, mut bc) = (A, C);
    let mut n = iters;
    while n > 0 {
        if n & 1 == 1 {
            // b ∘ r: v -> ba * (ra * v + rc) + bc (powers of f commute).
            ra = ba.wrapping_mul(ra);
            rc = ba.wrapping_mul(rc).wrapping_add(bc);
        }
        // b ∘ b.
        bc = ba.wrapping_mul(bc).wrapping_add(bc);
        ba = ba.wrapping_mul(ba);
        n >>= 1;
    }
    (ra, rc)
}

/// The input's element `i`.
pub fn input_value(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}

/// `fraction` of `chunk` elements, rounded down to a multiple of 1024.
fn host_elements(chunk: usize, fraction: f64) -> usize {
    ((chunk as f64 * fraction.clamp(0.0, 1.0)) as usize) / 1024 * 1024
}

/// A stream of `chunks` chunks of `chunk` u32 elements: host input and output, the device
/// ring, the kernel.
pub struct Stream {
    pub chunk: usize,
    pub chunks: usize,
    pub iters: u32,
    /// Elements at the start of every chunk that the overlapped run writes from the host
    /// into the ring buffer through its mapping (`Buffer::upload_at`: host threads writing
    /// device-local, host-visible memory through the PCIe BAR) instead of copying them by
    /// DMA; 0 (the default) copies the whole chunk by DMA. See [`Stream::with_host_writes`].
    host_elements: usize,
    /// Time the last overlapped run spent in the host's writes (waiting for the ring slot,
    /// then writing), summed over the chunks.
    pub host_write_time: Duration,
    pipeline: ComputePipeline,
    input: HostBuffer,
    output: HostBuffer,
    ring_in: Vec<Buffer>,
    ring_out: Vec<Buffer>,
    sets: Vec<DescriptorSet>,
}

impl Stream {
    /// Allocates the stream and fills the input.
    pub fn new(device: &Device, chunk: usize, chunks: usize, iters: u32) -> kiln::Result<Stream> {
        Self::with_host_writes(device, chunk, chunks, iters, 0.0)
    }

    /// [`new`](Self::new), with the overlapped run's uploads split: the first `fraction` of
    /// every chunk (rounded down to 1024 elements) written by host threads through the ring
    /// buffer's mapping, the rest copied by DMA on `Device::upload_queue` at the same time.
    /// The ring's input buffers then live in `MemoryLocation::CpuToGpu` memory (on a GPU
    /// with a resizable BAR, device-local and host-visible: the kernel reads it at device
    /// speed). Why: on the H200 the DMA copies up and down at once share ~58 GB/s, and the
    /// host's writes through the BAR are a second path into the device. It did not pay
    /// there: beside the stream's DMA copies the host's writes crawled at 5–10 GB/s and the
    /// overlapped run got slower from 30 % up (docs/benchmarks/log/2026-12-01-to-02.md, runs F2–F4). The serial run
    /// copies whole chunks by DMA, the faster serial path.
    pub fn with_host_writes(
        device: &Device,
        chunk: usize,
        chunks: usize,
        iters: u32,
        fraction: f64,
    ) -> kiln::Result<Stream> {
        Self::with_ring(device, chunk, chunks, iters, fraction, RING)
    }

    /// [`with_host_writes`](Self::with_host_writes) with `ring` device buffer pairs (at
    /// least 1; [`RING`] by default): how many chunks can be in flight at once.
    pub fn with_ring(
        device: &Device,
        chunk: usize,
        chunks: usize,
        iters: u32,
        fraction: f64,
        ring: usize,
    ) -> kiln::Result<Stream> {
        let host_elements = host_elements(chunk, fraction);
        let input_location = if host_elements > 0 {
            kiln::MemoryLocation::CpuToGpu
        } else {
            kiln::MemoryLocation::GpuOnly
        };
        let module = kiln::include_spirv!("stream.comp")?;
        let pipeline = device.compute_pipeline(&module, "main")?;
        let bytes = (chunk * chunks * 4) as u64;
        let mut input = device.host_buffer("stream input", bytes)?;
        {
            let words: &mut [u32] = kiln::bytemuck::cast_slice_mut(input.as_mut_slice()?);
            for (i, w) in words.iter_mut().enumerate() {
                *w = input_value(i);
            }
        }
        let output = device.host_buffer("stream output", bytes)?;
        let mut ring_in = Vec::new();
        let mut ring_out = Vec::new();
        let mut sets = Vec::new();
        for _ in 0..ring.max(1) {
            let make = |label, location| {
                device.buffer(
                    &kiln::BufferDesc::default()
                        .label(label)
                        .size((chunk * 4) as u64)
                        .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                        .location(location),
                )
            };
            let x = make("stream ring in", input_location)?;
            let y = make("stream ring out", kiln::MemoryLocation::GpuOnly)?;
            let mut set = pipeline.descriptor_set(0)?;
            set.write_buffer(0, &x)?;
            set.write_buffer(1, &y)?;
            ring_in.push(x);
            ring_out.push(y);
            sets.push(set);
        }
        Ok(Stream {
            chunk,
            chunks,
            iters,
            host_elements,
            host_write_time: Duration::ZERO,
            pipeline,
            input,
            output,
            ring_in,
            ring_out,
            sets,
        })
    }

    /// Elements of every chunk the overlapped run writes through the mapping (0: none).
    pub fn host_elements(&self) -> usize {
        self.host_elements
    }

    /// Changes the host-written fraction of every chunk (see
    /// [`with_host_writes`](Self::with_host_writes)); a stream made with none keeps none
    /// (its ring is in `GpuOnly` memory): returns whether the fraction took effect.
    pub fn set_host_writes(&mut self, fraction: f64) -> bool {
        if self.ring_in[0].location() != kiln::MemoryLocation::CpuToGpu {
            return fraction <= 0.0;
        }
        self.host_elements = host_elements(self.chunk, fraction);
        true
    }

    /// The memory properties of the ring's input buffers (`DEVICE_LOCAL | HOST_VISIBLE`
    /// where the host writes device memory through the BAR).
    pub fn ring_in_memory(&self) -> vk::MemoryPropertyFlags {
        self.ring_in[0].memory_properties()
    }

    /// Streams every chunk through the kernel and waits for the last readback; returns the
    /// wall time. `overlapped`: uploads on `Device::upload_queue` (with
    /// [`with_host_writes`](Self::with_host_writes), the chunk's first part written by the
    /// host first, then the rest by DMA), dispatches on the async-compute queue, readbacks on
    /// `Device::readback_queue` (kiln's policy, `ReadbackQueue`); else all on the main queue
    /// (serial).
    pub fn run(&mut self, device: &Device, overlapped: bool) -> kiln::Result<Duration> {
        let (up, compute, down) = if overlapped {
            (
                device.upload_queue(),
                device.queue(QueueKind::Compute),
                device.readback_queue(),
            )
        } else {
            let main = device.queue(QueueKind::Main);
            (main.clone(), main.clone(), main)
        };
        let bytes = (self.chunk * 4) as u64;
        let params = Params {
            iters: self.iters,
            n: self.chunk as u32,
        };
        let start = Instant::now();
        let mut host_time = Duration::ZERO;
        let mut pending = Vec::with_capacity(2 * self.chunks);
        let mut dispatches = Vec::with_capacity(self.chunks);
        for i in 0..self.chunks {
            let slot = i % self.ring_in.len();
            let at = i as u64 * bytes;
            // The host's part: written once every submission that used the slot has
            // finished (kiln waits for the dispatch and the copy of chunk i - ring).
            let host = if overlapped {
                self.host_elements as u64 * 4
            } else {
                0
            };
            if host > 0 {
                let t = Instant::now();
                let src = &self.input.as_slice()?[at as usize..(at + host) as usize];
                self.ring_in[slot].upload_at(0, src)?;
                host_time += t.elapsed();
            }
            if host < bytes {
                pending.push(up.upload_from_host(
                    &self.input,
                    at + host,
                    &self.ring_in[slot],
                    host,
                    bytes - host,
                )?);
            }
            let (pipeline, set) = (&self.pipeline, &self.sets[slot]);
            dispatches.push(compute.submit(|r| {
                r.bind_pipeline(pipeline)?;
                r.bind_set(0, set)?;
                r.push(0, &params)?;
                Ok(r.dispatch_threads(params.n)?)
            })?);
            pending.push(down.read_to_host(
                &self.ring_out[slot],
                0,
                &mut self.output,
                at,
                bytes,
            )?);
        }
        for t in pending {
            t.wait()?;
        }
        for d in dispatches {
            d.wait()?;
        }
        if overlapped {
            self.host_write_time = host_time;
        }
        Ok(start.elapsed())
    }

    /// The index of the first output element that differs from the CPU reference, if any;
    /// then clears the output for the next run. Every element is checked, at one
    /// multiply-add each ([`closed_form`]).
    pub fn check(&mut self) -> kiln::Result<Option<usize>> {
        let (a, c) = closed_form(self.iters);
        let bad = {
            let out: &[u32] = kiln::bytemuck::cast_slice(self.output.as_slice()?);
            out.iter()
                .enumerate()
                .position(|(i, &v)| v != a.wrapping_mul(input_value(i)).wrapping_add(c))
        };
        self.output.as_mut_slice()?.fill(0);
        Ok(bad)
    }

    /// Copies chunks up and down for `time` (uploads on `Device::upload_queue`, readbacks on
    /// `Device::readback_queue`, one at a time): on the H200 the copy rate ramps up over the
    /// first few hundred ms of traffic after the GPU was idle (docs/benchmarks/log/2026-12-01-to-02.md, run D2), so a
    /// calibration made cold measures a slow upload and picks too few iterations.
    pub fn warm_up(&mut self, device: &Device, time: Duration) -> kiln::Result<()> {
        let bytes = (self.chunk * 4) as u64;
        let start = Instant::now();
        while start.elapsed() < time {
            device
                .upload_queue()
                .upload_from_host(&self.input, 0, &self.ring_in[0], 0, bytes)?
                .wait()?;
            device
                .readback_queue()
                .read_to_host(&self.ring_out[0], 0, &mut self.output, 0, bytes)?
                .wait()?;
        }
        Ok(())
    }

    /// Times one chunk's upload alone and one dispatch of `iters` iterations alone (for
    /// choosing `iters` so that compute and transfer times are similar).
    pub fn calibrate(&mut self, device: &Device, iters: u32) -> kiln::Result<(Duration, Duration)> {
        let transfer = device.queue(QueueKind::Transfer);
        let compute = device.queue(QueueKind::Compute);
        let bytes = (self.chunk * 4) as u64;
        let params = Params {
            iters,
            n: self.chunk as u32,
        };
        let mut best = (Duration::MAX, Duration::MAX);
        for _ in 0..3 {
            let t = Instant::now();
            transfer
                .upload_from_host(&self.input, 0, &self.ring_in[0], 0, bytes)?
                .wait()?;
            best.0 = best.0.min(t.elapsed());
            let (pipeline, set) = (&self.pipeline, &self.sets[0]);
            let t = Instant::now();
            compute.execute(|r| {
                r.bind_pipeline(pipeline)?;
                r.bind_set(0, set)?;
                r.push(0, &params)?;
                Ok(r.dispatch_threads(params.n)?)
            })?;
            best.1 = best.1.min(t.elapsed());
        }
        Ok(best)
    }
}
