//! The cooperative-matrix ceiling (`shaders/coopmat/coopmat_peak*.comp`): how many TFLOP/s
//! `coopMatMulAdd` alone reaches on a device, with every fragment in registers (loaded
//! once) and no memory traffic in the loop. It bounds what any VK_KHR_cooperative_matrix
//! GEMM can reach on that device and driver: a GEMM kernel adds the loads of its fragments
//! (from shared or global memory) to this loop.
//!
//! Each subgroup runs `iters` rounds of TM·TN independent products of lM×lK by lK×lN
//! fragments into fp32 accumulators, then stores their sum; with A = B = 1 every stored
//! element is TM·TN·iters·lK, which [`Peak::run`] checks. FLOPs: workgroups · subgroups ·
//! iters · TM·TN · 2·lM·lN·lK. Used by `examples/gemm.rs --peak`.

use std::time::Instant;

use kiln::{
    vk, ComputePipeline, CooperativeMatrixConfig, DescriptorSet, Device, Recorder, SpecValue,
};

use crate::gemm::Precision;

/// Subgroups per workgroup of the ceiling kernel.
pub const PEAK_SUBGROUPS: u32 = 4;

/// The accumulator blocks (TM, TN) `--peak` tries for each configuration.
pub const PEAK_BLOCKS: [(u32, u32); 4] = [(2, 2), (4, 2), (4, 4), (8, 2)];

/// One ceiling kernel: a fragment configuration and an accumulator block.
pub struct Peak {
    pipeline: ComputePipeline,
    precision: Precision,
    /// e.g. `"peak fp16 16x16x16 acc 4x4"`.
    pub name: String,
    /// The fragment (lM, lN, lK).
    pub fragment: [u32; 3],
    /// The accumulator block per subgroup (TM, TN).
    pub block: [u32; 2],
}

/// What one ceiling run measured.
#[derive(Clone, Copy, Debug)]
pub struct PeakRun {
    /// Best of the timed dispatches, milliseconds (wall: submit to completion).
    pub ms: f64,
    /// FLOPs of one dispatch / `ms`.
    pub tflops: f64,
    /// Elements of the stored sums that differ from TM·TN·iters·lK.
    pub wrong: usize,
    /// The first stored element and the value it should have.
    pub first: (f32, f32),
}

/// The configurations the device lists for `precision` × `precision` + fp32 at subgroup
/// scope (largest first), or why there are none.
pub fn peak_configs(
    device: &Device,
    precision: Precision,
) -> Result<Vec<CooperativeMatrixConfig>, String> {
    let name = &device.info().name;
    if !device.features().cooperative_matrix {
        return Err(format!("{name} has no VK_KHR_cooperative_matrix enabled"));
    }
    let ab = match precision {
        Precision::F16 => vk::ComponentTypeKHR::FLOAT16,
        Precision::Bf16 if device.features().shader_bfloat16 => kiln::COMPONENT_TYPE_BFLOAT16_KHR,
        Precision::Bf16 => return Err(format!("{name} has no VK_KHR_shader_bfloat16 enabled")),
        Precision::F32 => return Err("the ceiling takes fp16 or bf16".into()),
    };
    let p = device.compute_properties();
    if !(p.subgroup_size_control && p.compute_full_subgroups) {
        return Err(format!("{name} has no subgroup size control"));
    }
    let v = p.cooperative_matrix_for(ab, vk::ComponentTypeKHR::FLOAT32);
    if v.is_empty() {
        return Err(format!(
            "{name} lists no configuration for {ab:?} + FLOAT32"
        ));
    }
    Ok(v)
}

/// The ceiling kernel for `precision` (F16 or Bf16), fragment `c` and block `tm × tn`.
pub fn peak(
    device: &Device,
    precision: Precision,
    c: &CooperativeMatrixConfig,
    (tm, tn): (u32, u32),
) -> kiln::Result<Peak> {
    let module = match precision {
        Precision::Bf16 => kiln::include_spirv!("coopmat/coopmat_peak_bf16.comp")?,
        _ => kiln::include_spirv!("coopmat/coopmat_peak.comp")?,
    };
    let sg = device.compute_properties().subgroup_size;
    let spec = [
        (0, SpecValue::U32(c.m)),
        (1, SpecValue::U32(c.n)),
        (2, SpecValue::U32(c.k)),
        (3, SpecValue::U32(PEAK_SUBGROUPS * sg)),
        (4, SpecValue::U32(tm)),
        (5, SpecValue::U32(tn)),
    ];
    let pipeline = crate::gemm::subgroup_pipeline(device, &module, &spec, sg)?;
    let p = match precision {
        Precision::Bf16 => "bf16",
        _ => "fp16",
    };
    Ok(Peak {
        pipeline,
        precision,
        name: format!("peak {p} {}x{}x{} acc {tm}x{tn}", c.m, c.n, c.k),
        fragment: [c.m, c.n, c.k],
        block: [tm, tn],
    })
}

impl Peak {
    /// The kernel's pipeline (for its executable statistics, `gemm --peak --stats`).
    pub fn pipeline(&self) -> &ComputePipeline {
        &self.pipeline
    }

    /// FLOPs of one dispatch of `workgroups` workgroups and `iters` rounds.
    pub fn flops(&self, workgroups: u32, iters: u32) -> f64 {
        let [m, n, k] = self.fragment;
        let [tm, tn] = self.block;
        workgroups as f64
            * PEAK_SUBGROUPS as f64
            * iters as f64
            * (tm * tn) as f64
            * 2.0
            * (m * n * k) as f64
    }

    /// Records one dispatch of `workgroups` workgroups and `iters` rounds.
    pub fn record<'a>(
        &'a self,
        r: &mut Recorder<'a, '_>,
        set: &'a DescriptorSet,
        workgroups: u32,
        iters: u32,
    ) -> kiln::Result<()> {
        r.bind_pipeline(&self.pipeline)?;
        r.bind_set(0, set)?;
        r.push(0, &[iters])?;
        Ok(r.dispatch(workgroups, 1, 1)?)
    }

    /// Runs one warm-up and `reps` timed dispatches (one per submission) and checks the
    /// stored sums. `iters · TM·TN · lK` must stay below 2^24 (exact in fp32).
    pub fn run(
        &self,
        device: &Device,
        workgroups: u32,
        iters: u32,
        reps: u32,
    ) -> kiln::Result<PeakRun> {
        let [m, n, k] = self.fragment;
        let [tm, tn] = self.block;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let ones_a = vec![1.0f32; (tm * m * k) as usize];
        let ones_b = vec![1.0f32; (tn * k * n) as usize];
        let a = device.buffer_from_slice("peak A", usage, &self.precision.encode(&ones_a))?;
        let b = device.buffer_from_slice("peak B", usage, &self.precision.encode(&ones_b))?;
        let slots = (workgroups * PEAK_SUBGROUPS) as usize;
        let c = device.storage_buffer::<f32>("peak C", slots * (m * n) as usize)?;
        let mut set = self.pipeline.descriptor_set(0)?;
        set.write_buffers(&[(0, &a), (1, &b), (2, &c)])?;
        device.execute(|r| self.record(r, &set, workgroups, iters))?;
        let mut best = f64::MAX;
        for _ in 0..reps {
            let t0 = Instant::now();
            device.execute(|r| self.record(r, &set, workgroups, iters))?;
            best = best.min(t0.elapsed().as_secs_f64());
        }
        let got: Vec<f32> = c.read()?;
        let want = (tm * tn * iters * k) as f32;
        Ok(PeakRun {
            ms: best * 1e3,
            tflops: self.flops(workgroups, iters) / best / 1e12,
            wrong: got.iter().filter(|&&x| x != want).count(),
            first: (got.first().copied().unwrap_or(f32::NAN), want),
        })
    }
}
