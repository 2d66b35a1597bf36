//! GEMM, `C (M×N) = A (M×K) · B (K×N)`, row-major, accumulated in fp32, on three paths:
//!
//! - **tiled** (`shaders/gemm_tiled.comp`): fp32 in, shared-memory tiles of 128×128×8, any
//!   M, N, K; every device (lavapipe included);
//! - **cooperative matrix, direct** (`shaders/coopmat/gemm_coopmat*.comp`,
//!   VK_KHR_cooperative_matrix): fp16 or bf16 in, fp32 accumulate, every fragment loaded
//!   straight from the buffers (the first kernel, kept for comparison). The fragment shape
//!   (lM×lN×lK) is the largest subgroup-scope configuration the device lists for those
//!   types (`ComputeProperties::cooperative_matrix_for`), passed as spec constants, with the
//!   workgroup four subgroups of the device's subgroup size (required size + full
//!   subgroups);
//! - **cooperative matrix, shared memory** (`shaders/coopmat/gemm_coopmat_smem*.comp`): the
//!   same fragments, with A and B staged through double-buffered shared memory by 16-byte
//!   loads; the workgroup tile (BM×BN×BK) and subgroup tile (WM×WN) are spec constants,
//!   one of [`SMEM_SHAPES`] that [`smem_plan`] accepts for the device (subgroup count,
//!   copy split, `maxComputeSharedMemorySize`).
//!
//! - **cooperative matrix, workgroup scope** (`shaders/coopmat/gemm_coopmat_wg*.comp`,
//!   VK_NV_cooperative_matrix2): one BM×BN workgroup-scope accumulator per workgroup, the
//!   driver spreading and staging the matrices; tile shapes from [`WG_TILES`] that are
//!   multiples of a workgroup-scope flexible-dimension configuration's granularity, in
//!   workgroups of its `workgroup_invocations` ([`wg_plan`]).
//!
//! - **cooperative matrix, workgroup scope with tensor addressing**
//!   (`shaders/coopmat/gemm_coopmat_tensor.spvasm`, VK_NV_cooperative_matrix2's
//!   `cooperativeMatrixTensorAddressing`): the same workgroup-scope accumulator, A and B
//!   loaded and C stored through tensor layouts (`OpCooperativeMatrixLoadTensorNV`), so the
//!   driver knows each matrix's extent and may use its own block copies; tiles from
//!   [`TENSOR_TILES`] as [`wg_plan`] places them, a grouped workgroup order (`group` tile
//!   rows at a time), the layouts' clamp mode and where the next step's loads stand as spec
//!   constants ([`TensorVariant`], [`coopmat_tensor`]).
//!
//! M and N must be multiples of the workgroup tile (`Gemm::tile`), K of `Gemm::k_step`.
//! Used by `examples/gemm.rs` (check and `--bench`) and the `gemm` tests. The
//! workgroup-scope kernels live in `gemm_wg.rs` (re-exported here).

use kiln::{
    vk, Buffer, ComputePipeline, ComputePipelineDesc, ComputeProperties, CooperativeMatrixConfig,
    DescriptorSet, Device, Recorder, SpecValue, COMPONENT_TYPE_BFLOAT16_KHR,
};

pub use crate::gemm_wg::{
    coopmat_tensor, coopmat_wg, coopmat_wg_with, wg_plan, TensorVariant, TENSOR_TILES, WG_TILES,
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
    pub(crate) pipeline: ComputePipeline,
    pub precision: Precision,
    /// `"tiled fp32"`, `"coopmat fp16"` / `"coopmat bf16"` (direct loads) or
    /// `"coopmat-smem fp16 128x128x32 w64x32"` (shared memory, workgroup and subgroup tile).
    pub path: String,
    /// The C tile one workgroup computes (rows, columns).
    pub tile: [u32; 2],
    /// K must be a multiple of this (1 on the tiled path).
    pub k_step: u32,
    /// The cooperative-matrix fragment (lM, lN, lK); `None` on the tiled path.
    pub fragment: Option<[u32; 3]>,
    /// The shared-memory kernel with `STREAM` off (for measuring where the time goes):
    /// every step multiplies the first K slice again, so C = (K / k_step) · A[:, :k_step] ·
    /// B[:k_step, :] ([`Gemm::expected`]).
    pub reuses_first_slice: bool,
    /// Bytes of shared memory the kernel declares (`None`: workgroup-scope kernels, whose
    /// staging the driver adds); `gemm --stats` uses it where the driver reports no
    /// shared-memory statistic.
    pub shared_bytes: Option<u32>,
}

/// A workgroup tile of the shared-memory cooperative-matrix kernel: the workgroup computes
/// `bm×bn` of C per `bk` of K, each subgroup `wm×wn` of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmemShape {
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    pub wm: u32,
    pub wn: u32,
}

/// The shapes the example tries, in order of preference (the first the device accepts is
/// the default; `--bench` times them all).
pub const SMEM_SHAPES: [SmemShape; 5] = [
    SmemShape {
        bm: 128,
        bn: 128,
        bk: 32,
        wm: 64,
        wn: 32,
    },
    SmemShape {
        bm: 128,
        bn: 128,
        bk: 32,
        wm: 64,
        wn: 64,
    },
    SmemShape {
        bm: 128,
        bn: 256,
        bk: 16,
        wm: 64,
        wn: 64,
    },
    SmemShape {
        bm: 256,
        bn: 128,
        bk: 16,
        wm: 64,
        wn: 64,
    },
    SmemShape {
        bm: 128,
        bn: 64,
        bk: 32,
        wm: 64,
        wn: 32,
    },
];

/// Shapes with 32x32 subgroup tiles (four accumulators per subgroup instead of eight or
/// sixteen): fewer registers per invocation, for more warps per SM. Run F (2026-12-02,
/// `gemm --stats`) found the best streaming kernel, 128x128x32 w64x32 a2, at 170 registers
/// (150 with the loads one step ahead): one 256-invocation workgroup (8 warps) per H200 SM,
/// where two need at most 128; its no-global loop, at 114 registers, fits two. These give
/// 16 warps per SM at about 100 registers: 128x128x32 in one workgroup of 512 invocations,
/// 128x64x32 and 64x128x32 in two of 256. Run G measured them (89–110 registers, all
/// exact): slower than the 8-warp best (183.4 / 165.5 TFLOP/s at 128x128x32 against 196.5;
/// 91–119 at the half-size tiles): the global traffic per multiply-add limits, not the
/// warps per SM (docs/benchmarks/log/2026-12-01-to-02.md, "Run G").
pub const OCCUPANCY_SHAPES: [SmemShape; 3] = [
    SmemShape {
        bm: 128,
        bn: 128,
        bk: 32,
        wm: 32,
        wn: 32,
    },
    SmemShape {
        bm: 128,
        bn: 64,
        bk: 32,
        wm: 32,
        wn: 32,
    },
    SmemShape {
        bm: 64,
        bn: 128,
        bk: 32,
        wm: 32,
        wn: 32,
    },
];

/// How the shared-memory kernel runs a shape on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmemPlan {
    /// Subgroups per workgroup, `(bm/wm)·(bn/wn)`.
    pub subgroups: u32,
    /// Invocations per workgroup (`subgroups × subgroup size`).
    pub workgroup_size: u32,
    /// Bytes of shared memory: two buffers of the padded A (`bm × (bk/8+1)` uvec4) and B
    /// (`bk × (bn/8+1)` uvec4) slices.
    pub shared_bytes: u32,
}

/// The kernels' pipeline: entry `main` of `module` with `spec`, every subgroup of size
/// `subgroup_size` and full (VK_EXT_subgroup_size_control; the kernels split their tiles
/// by `gl_SubgroupID` and assume that size), capturing its statistics while
/// [`gemm_stats::capture_statistics`](crate::gemm_stats::capture_statistics) is on.
/// Errors: those of [`Device::compute_pipeline_with`].
pub fn subgroup_pipeline(
    device: &Device,
    module: &kiln::ShaderModule,
    spec: &[(u32, SpecValue)],
    subgroup_size: u32,
) -> kiln::Result<ComputePipeline> {
    Ok(device.compute_pipeline_with(
        &ComputePipelineDesc::new(module, "main")
            .spec(spec)
            .required_subgroup_size(Some(subgroup_size))
            .full_subgroups(true)
            .capture_statistics(crate::gemm_stats::capturing()),
    )?)
}

/// Whether the shared-memory kernel can run `shape` with fragment `frag` (lM, lN, lK) at
/// `subgroup_size` on a device with properties `p`, and how; or why not (each rule of the
/// shader's header, with the values).
pub fn smem_plan(
    p: &ComputeProperties,
    [lm, ln, lk]: [u32; 3],
    subgroup_size: u32,
    s: SmemShape,
) -> Result<SmemPlan, String> {
    let SmemShape { bm, bn, bk, wm, wn } = s;
    if ln % 8 != 0 || lk % 8 != 0 {
        return Err(format!(
            "fragment {lm}x{ln}x{lk}: lN and lK must be multiples of 8 (16-byte rows)"
        ));
    }
    if wm % lm != 0 || wn % ln != 0 || bk % lk != 0 || bm % wm != 0 || bn % wn != 0 {
        return Err(format!(
            "tile {bm}x{bn}x{bk} / subgroup {wm}x{wn} does not split into {lm}x{ln}x{lk} \
             fragments"
        ));
    }
    let subgroups = (bm / wm) * (bn / wn);
    let workgroup_size = subgroups * subgroup_size;
    if subgroups > p.max_compute_workgroup_subgroups.max(1)
        || workgroup_size > p.max_compute_work_group_invocations
        || workgroup_size > p.max_compute_work_group_size[0]
    {
        return Err(format!(
            "{subgroups} subgroups of {subgroup_size} ({workgroup_size} invocations) exceed the \
             device's maxComputeWorkgroupSubgroups {} / maxComputeWorkGroupInvocations {}",
            p.max_compute_workgroup_subgroups, p.max_compute_work_group_invocations
        ));
    }
    let (a_vec, b_vec) = (bm * bk / 8, bk * bn / 8);
    if a_vec % workgroup_size != 0 || b_vec % workgroup_size != 0 {
        return Err(format!(
            "the {a_vec} + {b_vec} uvec4 copies per step do not split over {workgroup_size} \
             invocations"
        ));
    }
    let shared_bytes = 16 * 2 * (bm * (bk / 8 + 1) + bk * (bn / 8 + 1));
    if shared_bytes > p.max_compute_shared_memory_size {
        return Err(format!(
            "tile {bm}x{bn}x{bk} needs {shared_bytes} bytes of shared memory, over the \
             device's maxComputeSharedMemorySize {}",
            p.max_compute_shared_memory_size
        ));
    }
    Ok(SmemPlan {
        subgroups,
        workgroup_size,
        shared_bytes,
    })
}

/// The fp32 shared-memory tiled GEMM.
pub fn tiled(device: &Device) -> kiln::Result<Gemm> {
    let module = kiln::include_spirv!("gemm_tiled.comp")?;
    Ok(Gemm {
        pipeline: device.compute_pipeline_with(
            &ComputePipelineDesc::new(&module, "main")
                .capture_statistics(crate::gemm_stats::capturing()),
        )?,
        precision: Precision::F32,
        path: "tiled fp32".into(),
        tile: [128, 128],
        k_step: 1,
        fragment: None,
        reuses_first_slice: false,
        // `shared float As[8][128], Bs[8][128]`.
        shared_bytes: Some(2 * 8 * 128 * 4),
    })
}

/// The fragment configuration (the largest the device lists) of the cooperative-matrix kernels for
/// `precision`, or why the device cannot run them (no VK_KHR_cooperative_matrix, no
/// configuration for the types, no subgroup size control).
pub fn coopmat_config(
    device: &Device,
    precision: Precision,
) -> Result<CooperativeMatrixConfig, String> {
    let p = device.compute_properties();
    let name = &device.info().name;
    if !device.features().cooperative_matrix {
        return Err(format!(
            "{name} has no VK_KHR_cooperative_matrix enabled (absent, or the validation \
             layer predates it: run with KILN_VALIDATION=0)"
        ));
    }
    let ab = match precision {
        Precision::F16 => vk::ComponentTypeKHR::FLOAT16,
        Precision::Bf16 => {
            if !device.features().shader_bfloat16 {
                return Err(format!("{name} has no VK_KHR_shader_bfloat16 enabled"));
            }
            COMPONENT_TYPE_BFLOAT16_KHR
        }
        Precision::F32 => return Err("the cooperative-matrix path takes fp16 or bf16".into()),
    };
    let configs = p.cooperative_matrix_for(ab, vk::ComponentTypeKHR::FLOAT32);
    let Some(c) = configs.first() else {
        return Err(format!(
            "{name} lists no subgroup cooperative-matrix configuration for {ab:?} × {ab:?} \
             + FLOAT32 (it lists {:?})",
            p.cooperative_matrix
        ));
    };
    if !(p.subgroup_size_control && p.compute_full_subgroups) {
        return Err(format!("{name} has no subgroup size control"));
    }
    Ok(*c)
}

pub(crate) fn precision_name(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "fp32",
        Precision::F16 => "fp16",
        Precision::Bf16 => "bf16",
    }
}

/// The cooperative-matrix GEMM with direct loads for `precision` (F16 or Bf16), or why
/// the device cannot run it: a clean "not here", never a validation message.
pub fn coopmat(device: &Device, precision: Precision) -> kiln::Result<Result<Gemm, String>> {
    let c = match coopmat_config(device, precision) {
        Ok(c) => c,
        Err(why) => return Ok(Err(why)),
    };
    let module = match precision {
        Precision::Bf16 => kiln::include_spirv!("coopmat/gemm_coopmat_bf16.comp")?,
        _ => kiln::include_spirv!("coopmat/gemm_coopmat.comp")?,
    };
    let sg = device.compute_properties().subgroup_size;
    let spec = [
        (0, SpecValue::U32(c.m)),
        (1, SpecValue::U32(c.n)),
        (2, SpecValue::U32(c.k)),
        (3, SpecValue::U32(SUBGROUPS * sg)),
    ];
    let pipeline = subgroup_pipeline(device, &module, &spec, sg)?;
    Ok(Ok(Gemm {
        pipeline,
        precision,
        path: format!("coopmat {}", precision_name(precision)),
        tile: [2 * TM * c.m, 2 * TN * c.n],
        k_step: c.k,
        fragment: Some([c.m, c.n, c.k]),
        reuses_first_slice: false,
        shared_bytes: Some(0),
    }))
}

/// The shared-memory cooperative-matrix GEMM for `precision` (F16 or Bf16) and `shape`, or
/// why the device cannot run it (see [`smem_plan`]).
pub fn coopmat_smem(
    device: &Device,
    precision: Precision,
    shape: SmemShape,
) -> kiln::Result<Result<Gemm, String>> {
    coopmat_smem_with(device, precision, shape, true)
}

/// [`coopmat_smem`], or with `stream` false the same kernel with no global-memory traffic
/// in its loop (it multiplies the first K slice again every step: what the
/// shared-memory-fed loop alone costs).
pub fn coopmat_smem_with(
    device: &Device,
    precision: Precision,
    shape: SmemShape,
    stream: bool,
) -> kiln::Result<Result<Gemm, String>> {
    coopmat_smem_grouped(device, precision, shape, stream, 1, 1)
}

/// Which half of the shared-memory kernel's staging its no-global form keeps (spec
/// constant 12): what each costs on its own (docs/benchmarks/log/2026-12-01-to-02.md, "GEMM: where the time goes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmemPart {
    /// Neither (`coopmat-smem-noglobal`).
    None = 0,
    /// The global loads of every step, into registers only (`-noglobal+loads`).
    GlobalLoads = 1,
    /// The shared-memory stores of every step, step 0's registers into the buffer the
    /// next step reads (`-noglobal+stores`).
    SharedStores = 2,
    /// The GEMM's loads and stores, the loads from the first two K slices alternately, which
    /// stay in cache (`-noglobal+cached`; checked with `k_step` 2·BK).
    CachedLoads = 3,
}

/// The no-global shared-memory kernel keeping `part` of the staging (checked like
/// `coopmat-smem-noglobal`: every step multiplies the first K slice).
pub fn coopmat_smem_part(
    device: &Device,
    precision: Precision,
    shape: SmemShape,
    part: SmemPart,
) -> kiln::Result<Result<Gemm, String>> {
    let r = smem_kernel(device, precision, shape, false, 1, 1, part as u32)?;
    let Ok(mut g) = r else {
        return Ok(r);
    };
    if part == SmemPart::CachedLoads {
        g.k_step = 2 * shape.bk;
    }
    g.path = smem_part_name(precision, shape, part);
    Ok(Ok(g))
}

/// `coopmat-smem-noglobal+loads bf16 128x256x16 w64x64` (`+stores`; no suffix for
/// [`SmemPart::None`]).
pub fn smem_part_name(precision: Precision, s: SmemShape, part: SmemPart) -> String {
    let plain = smem_name(precision, s, false, 1, 1);
    let suffix = match part {
        SmemPart::None => "",
        SmemPart::GlobalLoads => "+loads",
        SmemPart::SharedStores => "+stores",
        SmemPart::CachedLoads => "+cached",
    };
    plain.replacen("-noglobal", &format!("-noglobal{suffix}"), 1)
}

/// [`coopmat_smem_with`] with the workgroups ordered `group` tile rows at a time, column
/// by column inside a group (1: row-major; more shares B's columns and A's rows in L2
/// between the workgroups running together), and the global loads issued `ahead` steps
/// before their multiply-adds (1: one step, one register set; 2: two register sets);
/// `group` 0 or `ahead` other than 1 and 2 is refused.
pub fn coopmat_smem_grouped(
    device: &Device,
    precision: Precision,
    shape: SmemShape,
    stream: bool,
    group: u32,
    ahead: u32,
) -> kiln::Result<Result<Gemm, String>> {
    smem_kernel(device, precision, shape, stream, group, ahead, 0)
}

/// The shared-memory kernel with every spec constant (`part`: spec constant 12).
#[allow(clippy::too_many_arguments)]
fn smem_kernel(
    device: &Device,
    precision: Precision,
    shape: SmemShape,
    stream: bool,
    group: u32,
    ahead: u32,
    part: u32,
) -> kiln::Result<Result<Gemm, String>> {
    if group == 0 {
        return Ok(Err("group must be at least 1 tile row".into()));
    }
    if !(1..=2).contains(&ahead) {
        return Ok(Err(format!(
            "ahead {ahead}: the kernel loads 1 or 2 steps ahead"
        )));
    }
    let c = match coopmat_config(device, precision) {
        Ok(c) => c,
        Err(why) => return Ok(Err(why)),
    };
    let p = device.compute_properties();
    let sg = p.subgroup_size;
    let plan = match smem_plan(p, [c.m, c.n, c.k], sg, shape) {
        Ok(plan) => plan,
        Err(why) => return Ok(Err(why)),
    };
    let module = match precision {
        Precision::Bf16 => kiln::include_spirv!("coopmat/gemm_coopmat_smem_bf16.comp")?,
        _ => kiln::include_spirv!("coopmat/gemm_coopmat_smem.comp")?,
    };
    let SmemShape { bm, bn, bk, wm, wn } = shape;
    let spec = [
        (0, SpecValue::U32(c.m)),
        (1, SpecValue::U32(c.n)),
        (2, SpecValue::U32(c.k)),
        (3, SpecValue::U32(plan.workgroup_size)),
        (4, SpecValue::U32(bm)),
        (5, SpecValue::U32(bn)),
        (6, SpecValue::U32(bk)),
        (7, SpecValue::U32(wm)),
        (8, SpecValue::U32(wn)),
        (9, SpecValue::Bool(stream)),
        (10, SpecValue::U32(group)),
        (11, SpecValue::U32(ahead)),
        (12, SpecValue::U32(part)),
    ];
    let pipeline = subgroup_pipeline(device, &module, &spec, sg)?;
    Ok(Ok(Gemm {
        pipeline,
        precision,
        path: smem_name(precision, shape, stream, group, ahead),
        tile: [bm, bn],
        k_step: bk,
        fragment: Some([c.m, c.n, c.k]),
        reuses_first_slice: !stream,
        shared_bytes: Some(plan.shared_bytes),
    }))
}

/// The name of a shared-memory variant: `coopmat-smem fp16 128x256x16 w64x64`, with
/// `-noglobal` for `stream` false, ` g8` for a grouped order and ` a2` for loads two steps
/// ahead.
pub fn smem_name(
    precision: Precision,
    s: SmemShape,
    stream: bool,
    group: u32,
    ahead: u32,
) -> String {
    let mut name = format!(
        "coopmat-smem{} {} {}x{}x{} w{}x{}",
        if stream { "" } else { "-noglobal" },
        precision_name(precision),
        s.bm,
        s.bn,
        s.bk,
        s.wm,
        s.wn
    );
    if group > 1 {
        name += &format!(" g{group}");
    }
    if ahead > 1 {
        name += &format!(" a{ahead}");
    }
    name
}

impl Gemm {
    /// The kernel's pipeline (for its executable statistics, `gemm --stats`).
    pub fn pipeline(&self) -> &ComputePipeline {
        &self.pipeline
    }

    /// Whether this path computes an M×N×K product (the cooperative-matrix path needs
    /// whole tiles), and if not why.
    pub fn check(&self, m: u32, n: u32, k: u32) -> Result<(), String> {
        if self.fragment.is_none() {
            return Ok(());
        }
        let [tm, tn] = self.tile;
        let lk = self.k_step;
        if !m.is_multiple_of(tm) || !n.is_multiple_of(tn) || !k.is_multiple_of(lk) {
            return Err(format!(
                "{}: M {m} and N {n} must be multiples of the tile {tm}×{tn}, K {k} of {lk}",
                self.path
            ));
        }
        Ok(())
    }

    /// What this kernel computes for `a`, `b` (the CPU reference of [`reference`], or for
    /// [`reuses_first_slice`](Self::reuses_first_slice) `(K / k_step)` times the product
    /// of the first K slice).
    pub fn expected(&self, a: &[f32], b: &[f32], [m, n, k]: [u32; 3]) -> Vec<f32> {
        if !self.reuses_first_slice {
            return reference(a, b, [m, n, k]);
        }
        let (mu, ku, s) = (m as usize, k as usize, self.k_step as usize);
        let a0: Vec<f32> = (0..mu * s).map(|e| a[(e / s) * ku + e % s]).collect();
        let times = (k / self.k_step) as f32;
        reference(&a0, &b[..s * n as usize], [m, n, self.k_step])
            .into_iter()
            .map(|x| x * times)
            .collect()
    }

    /// One element of [`expected`](Self::expected).
    pub fn expected_at(&self, a: &[f32], b: &[f32], dims: [u32; 3], i: usize, j: usize) -> f32 {
        if !self.reuses_first_slice {
            return reference_at(a, b, dims, i, j);
        }
        let [_, n, k] = dims.map(|x| x as usize);
        let s = self.k_step as usize;
        let one: f64 = (0..s)
            .map(|l| a[i * k + l] as f64 * b[l * n + j] as f64)
            .sum();
        (one * (k / s) as f64) as f32
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
            None => Ok(r.dispatch(n.div_ceil(tn), m.div_ceil(tm), 1)?),
            Some(_) => Ok(r.dispatch((m / tm) * (n / tn), 1, 1)?),
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
