//! Streaming a large array through a kernel in chunks, with the three stages of every chunk
//! on three queues so they overlap: upload chunk i+1 (transfer queue), compute chunk i
//! (async-compute queue), read back chunk i-1 (the second transfer queue). The input and
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

/// Device buffers in the ring (chunks in flight at once).
pub const RING: usize = 3;

/// The kernel's push constants.
#[repr(C)]
#[derive(Clone, Copy, kiln::bytemuck::Pod, kiln::bytemuck::Zeroable)]
struct Params {
    iters: u32,
    n: u32,
}

/// What the kernel computes for one element (the CPU reference).
pub fn reference(x: u32, iters: u32) -> u32 {
    let mut v = x;
    for _ in 0..iters {
        v = v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    }
    v
}

/// The input's element `i`.
pub fn input_value(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}

/// A stream of `chunks` chunks of `chunk` u32 elements: host input and output, the device
/// ring, the kernel.
pub struct Stream {
    pub chunk: usize,
    pub chunks: usize,
    pub iters: u32,
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
        for _ in 0..RING {
            let make = |label| {
                device.buffer(&kiln::BufferDesc {
                    label,
                    size: (chunk * 4) as u64,
                    usage: vk::BufferUsageFlags::STORAGE_BUFFER,
                    location: kiln::MemoryLocation::GpuOnly,
                })
            };
            let (x, y) = (make("stream ring in")?, make("stream ring out")?);
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
            pipeline,
            input,
            output,
            ring_in,
            ring_out,
            sets,
        })
    }

    /// Streams every chunk through the kernel and waits for the last readback; returns the
    /// wall time. `overlapped`: on the transfer and compute queues; else all on the main
    /// queue (serial).
    pub fn run(&mut self, device: &Device, overlapped: bool) -> kiln::Result<Duration> {
        let (up, compute, down) = if overlapped {
            let transfer = device.queues(QueueKind::Transfer);
            let first = transfer[0].clone();
            let last = transfer[transfer.len() - 1].clone();
            (first, device.queue(QueueKind::Compute), last)
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
        let mut pending = Vec::with_capacity(2 * self.chunks);
        let mut dispatches = Vec::with_capacity(self.chunks);
        for i in 0..self.chunks {
            let slot = i % RING;
            let at = i as u64 * bytes;
            pending.push(up.upload_from_host(&self.input, at, &self.ring_in[slot], 0, bytes)?);
            let (pipeline, set) = (&self.pipeline, &self.sets[slot]);
            dispatches.push(compute.submit(|r| {
                r.bind_pipeline(pipeline)?;
                r.bind_set(0, set)?;
                r.push(0, &params)?;
                r.dispatch_threads(params.n)
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
        Ok(start.elapsed())
    }

    /// The index of the first output element that differs from the CPU reference, if any;
    /// then clears the output for the next run.
    pub fn check(&mut self) -> kiln::Result<Option<usize>> {
        let iters = self.iters;
        let bad = {
            let out: &[u32] = kiln::bytemuck::cast_slice(self.output.as_slice()?);
            out.iter()
                .enumerate()
                .position(|(i, &v)| v != reference(input_value(i), iters))
        };
        self.output.as_mut_slice()?.fill(0);
        Ok(bad)
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
                r.dispatch_threads(params.n)
            })?;
            best.1 = best.1.min(t.elapsed());
        }
        Ok(best)
    }
}
