//! GEMM, `C (M×N) = A (M×K) · B (K×N)`, row-major, accumulated in fp32, on two paths:
//!
//! - **tiled** (`shaders/gemm_tiled.comp`): fp32 in, shared-memory tiles of 128×128×8, any
//!   M, N, K; every device (lavapipe included);
//! - **cooperative matrix** (`shaders/coopmat/gemm_coopmat*.comp`, VK_KHR_cooperative_matrix):
//!   fp16 or bf16 in, fp32 accumulate. The fragment shape (lM×lN×lK) is the largest
//!   subgroup-scope configuration the device lists for those types
//!   (`ComputeProperties::cooperative_matrix_for`), passed as spec constants, with the
//!   workgroup four subgroups of the device's subgroup size (required size + full
//!   subgroups). M and N must be multiples of the workgroup tile (`Gemm::tile`), K of lK.
//!
//! Used by `examples/gemm.rs` (check and `--bench`) and the `gemm` tests.

use kiln::{
    vk, Buffer, ComputePipeline, ComputePipelineDesc, DescriptorSet, Device, Recorder, SpecValue,
    COMPONENT_TYPE_BFLOAT16_KHR,
};

/// The input element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    F32,
    F16,
    Bf16,
}

impl Precision {
    /// Bytes per input element.
    pub fn size(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F16 | Precision::Bf16 => 2,
        }
    }

    /// Input elements as the bytes the shader reads (fp16/bf16 rounded to nearest even).
    pub fn encode(self, values: &[f32]) -> Vec<u8> {
        match self {
            Precision::F32 => kiln::bytemuck::cast_slice(values).to_vec(),
            Precision::F16 => values
                .iter()
                .flat_map(|&v| half::f16::from_f32(v).to_bits().to_le_bytes())
                .collect(),
            Precision::Bf16 => values
                .iter()
                .flat_map(|&v| half::bf16::from_f32(v).to_bits().to_le_bytes())
                .collect(),
        }
    }

    /// The inputs as the shader sees them (after rounding to the input type).
    pub fn round(self, values: &[f32]) -> Vec<f32> {
        match self {
            Precision::F32 => values.to_vec(),
            Precision::F16 => values
                .iter()
                .map(|&v| half::f16::from_f32(v).to_f32())
                .collect(),
            Precision::Bf16 => values
                .iter()
                .map(|&v| half::bf16::from_f32(v).to_f32())
                .collect(),
        }
    }
}

/// Subgroups per workgroup of the cooperative-matrix path; accumulators per subgroup
/// (TM × TN, as in the shader).
const SUBGROUPS: u32 = 4;
const TM: u32 = 4;
const TN: u32 = 4;

/// A GEMM pipeline and its shape.
pub struct Gemm {
    pipeline: ComputePipeline,
    pub precision: Precision,
    /// `"tiled fp32"` or `"coopmat fp16"` / `"coopmat bf16"`.
    pub path: &'static str,
    /// The C tile one workgroup computes (rows, columns).
    pub tile: [u32; 2],
    /// The cooperative-matrix fragment (lM, lN, lK); `None` on the tiled path.
    pub fragment: Option<[u32; 3]>,
}

/// The fp32 shared-memory tiled GEMM.
pub fn tiled(device: &Device) -> kiln::Result<Gemm> {
    let module = kiln::include_spirv!("gemm_tiled.comp")?;
    Ok(Gemm {
        pipeline: device.compute_pipeline(&module, "main")?,
        precision: Precision::F32,
        path: "tiled fp32",
        tile: [128, 128],
        fragment: None,
    })
}

/// The cooperative-matrix GEMM for `precision` (F16 or Bf16), or why the device cannot
/// run it (no VK_KHR_cooperative_matrix, no configuration for the types, no subgroup size
/// control): a clean "not here", never a validation message.
pub fn coopmat(device: &Device, precision: Precision) -> kiln::Result<Result<Gemm, String>> {
    let p = device.compute_properties();
    let name = &device.info().name;
    if !device.features().cooperative_matrix {
        return Ok(Err(format!(
            "{name} has no VK_KHR_cooperative_matrix enabled (absent, or the validation \
             layer predates it: run with KILN_VALIDATION=0)"
        )));
    }
    let (ab, module, path) = match precision {
        Precision::F16 => (
            vk::ComponentTypeKHR::FLOAT16,
            kiln::include_spirv!("coopmat/gemm_coopmat.comp")?,
            "coopmat fp16",
        ),
        Precision::Bf16 => {
            if !device.features().shader_bfloat16 {
                return Ok(Err(format!("{name} has no VK_KHR_shader_bfloat16 enabled")));
            }
            (
                COMPONENT_TYPE_BFLOAT16_KHR,
                kiln::include_spirv!("coopmat/gemm_coopmat_bf16.comp")?,
                "coopmat bf16",
            )
        }
        Precision::F32 => return Ok(Err("the cooperative-matrix path takes fp16 or bf16".into())),
    };
    let configs = p.cooperative_matrix_for(ab, vk::ComponentTypeKHR::FLOAT32);
    let Some(c) = configs.first() else {
        return Ok(Err(format!(
            "{name} lists no subgroup cooperative-matrix configuration for {ab:?} × {ab:?} \
             + FLOAT32 (it lists {:?})",
            p.cooperative_matrix
        )));
    };
    if !(p.subgroup_size_control && p.compute_full_subgroups) {
        return Ok(Err(format!("{name} has no subgroup size control")));
    }
    let sg = p.subgroup_size;
    let spec = [
        (0, SpecValue::U32(c.m)),
        (1, SpecValue::U32(c.n)),
        (2, SpecValue::U32(c.k)),
        (3, SpecValue::U32(SUBGROUPS * sg)),
    ];
    let pipeline = device.compute_pipeline_with(&ComputePipelineDesc {
        spec: &spec,
        required_subgroup_size: Some(sg),
        full_subgroups: true,
        ..ComputePipelineDesc::new(&module, "main")
    })?;
    Ok(Ok(Gemm {
        pipeline,
        precision,
        path,
        tile: [2 * TM * c.m, 2 * TN * c.n],
        fragment: Some([c.m, c.n, c.k]),
    }))
}

impl Gemm {
    /// Whether this path computes an M×N×K product (the cooperative-matrix path needs
    /// whole tiles), and if not why.
    pub fn check(&self, m: u32, n: u32, k: u32) -> Result<(), String> {
        let Some([_, _, lk]) = self.fragment else {
            return Ok(());
        };
        let [tm, tn] = self.tile;
        if !m.is_multiple_of(tm) || !n.is_multiple_of(tn) || !k.is_multiple_of(lk) {
            return Err(format!(
                "{}: M {m} and N {n} must be multiples of the tile {tm}×{tn}, K {k} of {lk}",
                self.path
            ));
        }
        Ok(())
    }

    /// A set with A, B and C (A and B hold `precision` elements, C fp32).
    pub fn set(&self, a: &Buffer, b: &Buffer, c: &Buffer) -> kiln::Result<DescriptorSet> {
        let mut set = self.pipeline.descriptor_set(0)?;
        set.write_buffers(&[(0, a), (1, b), (2, c)])?;
        Ok(set)
    }

    /// Records C = A·B for M×N×K into `r`.
    pub fn record<'a>(
        &'a self,
        r: &mut Recorder<'a, '_>,
        set: &'a DescriptorSet,
        [m, n, k]: [u32; 3],
    ) -> kiln::Result<()> {
        r.bind_pipeline(&self.pipeline)?;
        r.bind_set(0, set)?;
        r.push(0, &[m, n, k])?;
        let [tm, tn] = self.tile;
        match self.fragment {
            None => r.dispatch(n.div_ceil(tn), m.div_ceil(tm), 1),
            Some(_) => r.dispatch((m / tm) * (n / tn), 1, 1),
        }
    }

    /// Uploads A and B (as `precision`), computes C = A·B and reads C back.
    pub fn run(
        &self,
        device: &Device,
        a: &[f32],
        b: &[f32],
        [m, n, k]: [u32; 3],
    ) -> kiln::Result<Vec<f32>> {
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let ab = device.buffer_from_slice("gemm A", usage, &self.precision.encode(a))?;
        let bb = device.buffer_from_slice("gemm B", usage, &self.precision.encode(b))?;
        let cb = device.storage_buffer::<f32>("gemm C", (m as usize * n as usize).max(1))?;
        let set = self.set(&ab, &bb, &cb)?;
        device.execute(|r| self.record(r, &set, [m, n, k]))?;
        cb.read()
    }
}

/// The CPU reference, in f64 then rounded: C = A·B.
pub fn reference(a: &[f32], b: &[f32], [m, n, k]: [u32; 3]) -> Vec<f32> {
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s = 0f64;
            for l in 0..k {
                s += a[i * k + l] as f64 * b[l * n + j] as f64;
            }
            c[i * n + j] = s as f32;
        }
    }
    c
}

/// One element of the reference (for spot checks of large products).
pub fn reference_at(a: &[f32], b: &[f32], [_, n, k]: [u32; 3], i: usize, j: usize) -> f32 {
    let (n, k) = (n as usize, k as usize);
    (0..k)
        .map(|l| a[i * k + l] as f64 * b[l * n + j] as f64)
        .sum::<f64>() as f32
}

/// Deterministic inputs: small integers (-4..=4) times `scale`, so that fp32 sums of
/// products are exact when `scale` is a power of two and K is small.
pub fn inputs(len: usize, seed: u32, scale: f32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            ((x % 9) as f32 - 4.0) * scale
        })
        .collect()
}
