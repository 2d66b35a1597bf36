//! The workgroup-scope GEMM kernels (VK_NV_cooperative_matrix2), re-exported by
//! [`gemm`](crate::gemm): one BM×BN workgroup-scope accumulator per workgroup, the driver
//! spreading and staging the matrices, with A and B loaded by the KHR instructions
//! (`shaders/coopmat/gemm_coopmat_wg*.comp`, [`coopmat_wg`]) or through tensor layouts
//! (`shaders/coopmat/gemm_coopmat_tensor.spvasm`, [`coopmat_tensor`]); tile shapes that are
//! multiples of a workgroup-scope flexible-dimension configuration's granularity, in
//! workgroups of its `workgroup_invocations` ([`wg_plan`]).

use kiln::{vk, Device, SpecValue, COMPONENT_TYPE_BFLOAT16_KHR};

use crate::gemm::{coopmat_config, precision_name, Gemm, Precision};

/// The workgroup tiles (BM, BN, BK) the workgroup-scope kernel tries.
pub const WG_TILES: [[u32; 3]; 4] = [
    [128, 128, 32],
    [128, 256, 32],
    [128, 128, 64],
    [256, 128, 32],
];

/// The workgroup tiles (BM, BN, BK) the tensor-addressing kernel tries, most promising
/// first: 128x256x64 and 128x128x64 at 256 invocations are the large and medium tiles
/// llama.cpp's VK_NV_cooperative_matrix2 matmul uses; then BK 32, the tall tiles, and
/// 256x256 (whose fp32 accumulator is 256 values per invocation).
pub const TENSOR_TILES: [[u32; 3]; 7] = [
    [128, 256, 64],
    [128, 128, 64],
    [128, 256, 32],
    [256, 128, 64],
    [256, 128, 32],
    [128, 128, 32],
    [256, 256, 32],
];

/// [`wg_plan`] for A and B of `precision` (bf16 or fp16) on a device with `p`.
fn wg_plan_for(
    p: &kiln::ComputeProperties,
    precision: Precision,
    tile: [u32; 3],
) -> Result<u32, String> {
    let ab = match precision {
        Precision::Bf16 => COMPONENT_TYPE_BFLOAT16_KHR,
        _ => vk::ComponentTypeKHR::FLOAT16,
    };
    wg_plan(&p.cooperative_matrix2, ab, tile)
}

/// The workgroup size for the workgroup-scope kernel at `tile` with input type `ab`
/// (fp32 accumulate), from the device's VK_NV_cooperative_matrix2 properties `p`: the
/// largest `workgroup_invocations` among the workgroup-scope flexible-dimension
/// configurations of those types whose granularities divide the tile (within
/// `flexible_dimensions_max_dimension` and `workgroup_scope_max_workgroup_size`), or why
/// there is none. (The H200 lists 32, 64, 128 and 256 invocations, granularity 16x16x16
/// up to 32x32x16; the first one, 32 invocations, made a 256x128 tile fail to compile.)
pub fn wg_plan(
    p: &kiln::CooperativeMatrix2Properties,
    ab: vk::ComponentTypeKHR,
    [bm, bn, bk]: [u32; 3],
) -> Result<u32, String> {
    let f32t = vk::ComponentTypeKHR::FLOAT32;
    let mut seen = Vec::new();
    let mut best: Option<u32> = None;
    for c in &p.flexible_dimensions {
        if c.scope != vk::ScopeKHR::WORKGROUP
            || c.a_type != ab
            || c.b_type != ab
            || c.c_type != f32t
            || c.result_type != f32t
        {
            continue;
        }
        seen.push(format!(
            "{}x{}x{} granularity, {} invocations",
            c.m_granularity, c.n_granularity, c.k_granularity, c.workgroup_invocations
        ));
        let max = p.flexible_dimensions_max_dimension;
        let fits = |x: u32, g: u32| g > 0 && x.is_multiple_of(g) && x <= max;
        if fits(bm, c.m_granularity)
            && fits(bn, c.n_granularity)
            && fits(bk, c.k_granularity)
            && c.workgroup_invocations <= p.workgroup_scope_max_workgroup_size
        {
            best = best.max(Some(c.workgroup_invocations));
        }
    }
    best.ok_or_else(|| {
        format!(
            "no workgroup-scope flexible-dimension configuration for {ab:?} x {ab:?} + FLOAT32 \
         fits tile {bm}x{bn}x{bk} (max dimension {}, max workgroup {}; listed: {seen:?})",
            p.flexible_dimensions_max_dimension, p.workgroup_scope_max_workgroup_size
        )
    })
}

/// The workgroup-scope cooperative-matrix GEMM (VK_NV_cooperative_matrix2) for
/// `precision` (F16 or Bf16) and `tile` (BM, BN, BK), or why the device cannot run it (no
/// workgroup scope or flexible dimensions enabled, no fitting configuration: [`wg_plan`]).
pub fn coopmat_wg(
    device: &Device,
    precision: Precision,
    tile: [u32; 3],
) -> kiln::Result<Result<Gemm, String>> {
    coopmat_wg_with(device, precision, tile, false)
}

/// [`coopmat_wg`], with `align` the strides and offsets computed from `K & !7` and `N & !7`
/// (the compiler can then prove every row 16-byte aligned; the path name ends in ` align`).
pub fn coopmat_wg_with(
    device: &Device,
    precision: Precision,
    tile: [u32; 3],
    align: bool,
) -> kiln::Result<Result<Gemm, String>> {
    if let Err(why) = coopmat_config(device, precision) {
        return Ok(Err(why));
    }
    let f = device.features().cooperative_matrix2;
    if !(f.workgroup_scope && f.flexible_dimensions) {
        return Ok(Err(format!(
            "{} has no VK_NV_cooperative_matrix2 cooperativeMatrixWorkgroupScope + \
             cooperativeMatrixFlexibleDimensions enabled ({f:?}; absent, or the validation \
             layer predates it: run with KILN_VALIDATION=0)",
            device.info().name
        )));
    }
    let p = device.compute_properties();
    let wg = match wg_plan_for(p, precision, tile) {
        Ok(wg) => wg,
        Err(why) => return Ok(Err(why)),
    };
    let module = match precision {
        Precision::Bf16 => kiln::include_spirv!("coopmat/gemm_coopmat_wg_bf16.comp")?,
        _ => kiln::include_spirv!("coopmat/gemm_coopmat_wg.comp")?,
    };
    let [bm, bn, bk] = tile;
    let spec = [
        (3, SpecValue::U32(wg)),
        (4, SpecValue::U32(bm)),
        (5, SpecValue::U32(bn)),
        (6, SpecValue::U32(bk)),
        (7, SpecValue::Bool(align)),
    ];
    let pipeline = crate::gemm::subgroup_pipeline(device, &module, &spec, p.subgroup_size)?;
    Ok(Ok(Gemm {
        pipeline,
        precision,
        path: format!(
            "coopmat-wg {} {bm}x{bn}x{bk} wg{wg}{}",
            precision_name(precision),
            if align { " align" } else { "" }
        ),
        tile: [bm, bn],
        k_step: bk,
        fragment: Some([bm, bn, bk]),
        reuses_first_slice: false,
        shared_bytes: None,
    }))
}

/// One variant of the tensor-addressing kernel (its spec constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorVariant {
    /// BM, BN, BK.
    pub tile: [u32; 3],
    /// Workgroup order: `group` tile rows at a time, column by column inside a group (1:
    /// row-major; more shares B's columns in L2 between the workgroups running together).
    pub group: u32,
    /// The tensor layouts' clamp mode `Constant` (else `Undefined`: every element is in
    /// bounds for whole tiles).
    pub clamp: bool,
    /// The next step's loads before this step's multiply-add (else after it).
    pub pipe: bool,
    /// The GEMM; false: step j loads K slice j & 1, the first two alternately (what the
    /// workgroup-scope multiply-adds cost without the global traffic; checked against
    /// [`Gemm::expected`] with `reuses_first_slice` and `k_step` 2·BK).
    pub stream: bool,
    /// Row strides given as `K & !7` / `N & !7`, which tells the compiler that every row
    /// starts 16-byte aligned (else K and N, which it cannot prove aligned).
    pub align: bool,
    /// K steps per trip of the outer loop (an inner loop of constant trip count the driver
    /// can unroll); K must be a multiple of `BK · unroll` ([`Gemm::k_step`]). At least 1.
    pub unroll: u32,
}

impl TensorVariant {
    /// `tile` in row-major order, unclamped, loads after the multiply-add.
    pub const fn plain(tile: [u32; 3]) -> Self {
        TensorVariant {
            tile,
            group: 1,
            clamp: false,
            pipe: false,
            stream: true,
            align: false,
            unroll: 1,
        }
    }

    /// The name of this variant for `precision` (before its workgroup size is known):
    /// `coopmat-tensor bf16 128x256x64 g8 clamp pipe align u8` (`coopmat-tensor-noglobal …`
    /// without `stream`).
    pub fn name(&self, precision: Precision) -> String {
        let [bm, bn, bk] = self.tile;
        let mut name = format!(
            "coopmat-tensor{} {} {bm}x{bn}x{bk} g{}",
            if self.stream { "" } else { "-noglobal" },
            precision_name(precision),
            self.group,
        );
        for (on, word) in [
            (self.clamp, " clamp"),
            (self.pipe, " pipe"),
            (self.align, " align"),
        ] {
            if on {
                name += word;
            }
        }
        if self.unroll > 1 {
            name += &format!(" u{}", self.unroll);
        }
        name
    }
}

/// The workgroup-scope cooperative-matrix GEMM with tensor addressing
/// (`gemm_coopmat_tensor.spvasm`) for `precision` (F16 or Bf16) and variant `v`; or why the
/// device cannot run it (no workgroup scope, flexible dimensions or tensor addressing
/// enabled, no fitting configuration: [`wg_plan`]; `group` or `unroll` 0, `unroll` over 1
/// without `stream`).
pub fn coopmat_tensor(
    device: &Device,
    precision: Precision,
    v: TensorVariant,
) -> kiln::Result<Result<Gemm, String>> {
    let TensorVariant {
        tile,
        group,
        clamp,
        pipe,
        stream,
        align,
        unroll,
    } = v;
    if let Err(why) = coopmat_config(device, precision) {
        return Ok(Err(why));
    }
    let f = device.features().cooperative_matrix2;
    if !(f.workgroup_scope && f.flexible_dimensions && f.tensor_addressing) {
        return Ok(Err(format!(
            "{} has no VK_NV_cooperative_matrix2 cooperativeMatrixWorkgroupScope + \
             cooperativeMatrixFlexibleDimensions + cooperativeMatrixTensorAddressing enabled \
             ({f:?}; absent, or the validation layer predates it: run with KILN_VALIDATION=0)",
            device.info().name
        )));
    }
    if group == 0 || unroll == 0 || (!stream && (unroll > 1 || !tile[2].is_power_of_two())) {
        return Ok(Err(format!(
            "group {group}, unroll {unroll}, BK {}: group and unroll must be at least 1; \
             without stream, unroll 1 and BK a power of two (the no-global form alternates \
             between the first two BK slices)",
            tile[2]
        )));
    }
    let p = device.compute_properties();
    let wg = match wg_plan_for(p, precision, tile) {
        Ok(wg) => wg,
        Err(why) => return Ok(Err(why)),
    };
    let module = match precision {
        Precision::Bf16 => kiln::include_spirv!("coopmat/gemm_coopmat_tensor_bf16.comp")?,
        _ => kiln::include_spirv!("coopmat/gemm_coopmat_tensor.comp")?,
    };
    let [bm, bn, bk] = tile;
    let spec = [
        (3, SpecValue::U32(wg)),
        (4, SpecValue::U32(bm)),
        (5, SpecValue::U32(bn)),
        (6, SpecValue::U32(bk)),
        (7, SpecValue::U32(group)),
        (8, SpecValue::U32(u32::from(clamp))),
        (9, SpecValue::Bool(pipe)),
        (10, SpecValue::Bool(stream)),
        (11, SpecValue::Bool(align)),
        (12, SpecValue::U32(unroll)),
    ];
    let pipeline = crate::gemm::subgroup_pipeline(device, &module, &spec, p.subgroup_size)?;
    Ok(Ok(Gemm {
        pipeline,
        precision,
        path: format!("{} wg{wg}", v.name(precision)),
        tile: [bm, bn],
        k_step: if stream { bk * unroll } else { 2 * bk },
        fragment: Some([bm, bn, bk]),
        reuses_first_slice: !stream,
        shared_bytes: None,
    }))
}
