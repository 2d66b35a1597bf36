//! The GEMM example's kernels (`examples/common/gemm.rs`): the fp32 tiled fallback against
//! the CPU reference (exact: small-integer inputs), and the cooperative-matrix modules
//! (prebuilt SPIR-V, fp16 and bf16) reported absent cleanly where the device has no
//! cooperative matrices (lavapipe), or checked exactly where it has them; the
//! shared-memory kernel's tile plans (subgroups, copy split, shared-memory bytes) against
//! the device limits; the ceiling kernel's modules.

use common::{assert_clean, device};
use kiln::vk;
use kiln_examples::coopmat_peak;
use kiln_examples::gemm::{self, Precision, SmemShape, SMEM_SHAPES};
use kiln_examples::gemm_stats;

#[test]
fn tiled_fp32_gemm_matches_the_cpu_reference_exactly() {
    let device = device();
    let g = gemm::tiled(&device).unwrap();
    assert_eq!(g.path, "tiled fp32");
    for dims in [
        [1u32, 1, 1],
        [37, 53, 29],
        [128, 128, 8],
        [130, 70, 200],
        [256, 128, 64],
    ] {
        let [m, n, k] = dims.map(|x| x as usize);
        let a = gemm::inputs(m * k, 11, 1.0);
        let b = gemm::inputs(k * n, 12, 1.0);
        let c = g.run(&device, &a, &b, dims).unwrap();
        let want = gemm::reference(&a, &b, dims);
        assert_eq!(c.len(), m * n);
        for (i, (x, y)) in c.iter().zip(&want).enumerate() {
            assert_eq!(x, y, "{dims:?}: C[{}][{}]", i / n, i % n);
        }
    }
    assert_clean(&device);
}

#[test]
fn cooperative_matrix_gemm_is_reported_absent_cleanly_or_runs_exactly() {
    let device = device();
    let f16 = kiln::include_spirv!("coopmat/gemm_coopmat.comp").unwrap();
    let bf16 = kiln::include_spirv!("coopmat/gemm_coopmat_bf16.comp").unwrap();
    // The prebuilt modules (kiln-build copied them): SPIR-V 1.6 with the capabilities.
    let caps = &f16.reflection().capabilities;
    assert!(caps.iter().any(|c| c == "CooperativeMatrixKHR"), "{caps:?}");
    let caps = &bf16.reflection().capabilities;
    assert!(
        caps.iter().any(|c| c == "BFloat16CooperativeMatrixKHR"),
        "{caps:?}"
    );
    assert!(!caps.iter().any(|c| c == "Float16"), "{caps:?}");
    for (p, module) in [(Precision::F16, &f16), (Precision::Bf16, &bf16)] {
        match gemm::coopmat(&device, p).unwrap() {
            Ok(g) => {
                let dims = [g.tile[0] * 2, g.tile[1], 64];
                let [m, n, k] = dims.map(|x| x as usize);
                let a = gemm::inputs(m * k, 21, 1.0);
                let b = gemm::inputs(k * n, 22, 1.0);
                let c = g.run(&device, &a, &b, dims).unwrap();
                assert_eq!(c, gemm::reference(&a, &b, dims), "{}", g.path);
            }
            Err(why) => {
                assert!(!why.is_empty());
                // The module itself: refused before the driver sees it (KILN-E107).
                let e = device.compute_pipeline(module, "main").unwrap_err();
                assert_eq!(e.code(), "KILN-E107", "{e}");
                assert!(e.to_string().contains(&device.info().name), "{e}");
                eprintln!("gemm: {p:?} cooperative matrices absent: {why}");
            }
        }
    }
    if device.info().name.contains("llvmpipe") {
        assert!(!device.features().cooperative_matrix);
        let e = device
            .check_capability("CooperativeMatrixKHR", vk::ShaderStageFlags::COMPUTE)
            .unwrap_err();
        assert!(e.to_string().contains("VK_KHR_cooperative_matrix"), "{e}");
    }
    // Not one validation message: nothing reached the driver.
    assert_clean(&device);
}

#[test]
fn narrow_inputs_round_like_the_shader_reads_them() {
    let v = [1.0f32, -4.0, 0.1, 1000.5];
    assert_eq!(Precision::F32.round(&v), v);
    assert_eq!(
        Precision::F16.encode(&[1.0, -2.0]),
        [0x00, 0x3c, 0x00, 0xc0]
    );
    assert_eq!(
        Precision::Bf16.encode(&[1.0, -2.0]),
        [0x80, 0x3f, 0x00, 0xc0]
    );
    assert_eq!(Precision::Bf16.round(&[1000.5])[0], 1000.0);
    assert_eq!(Precision::F16.round(&[1000.5])[0], 1000.5);
}

/// H200-like limits (subgroup 32, 48 KiB shared memory, 1024 invocations in 32 subgroups).
fn h200_like() -> kiln::ComputeProperties {
    kiln::ComputeProperties {
        subgroup_size: 32,
        max_compute_workgroup_subgroups: 32,
        max_compute_work_group_invocations: 1024,
        max_compute_work_group_size: [1024, 1024, 64],
        max_compute_shared_memory_size: 49152,
        ..Default::default()
    }
}

#[test]
fn shared_memory_tile_plans_follow_the_device_limits() {
    let p = h200_like();
    let f = [16, 16, 16];
    let plan = gemm::smem_plan(&p, f, 32, SMEM_SHAPES[0]).unwrap();
    // 128x128x32 in 64x32 subgroup tiles: 8 subgroups; A 128 rows x (4+1) uvec4 and B
    // 32 rows x (16+1) uvec4, twice, 16 bytes each.
    assert_eq!(plan.subgroups, 8);
    assert_eq!(plan.workgroup_size, 256);
    assert_eq!(plan.shared_bytes, 16 * 2 * (128 * 5 + 32 * 17));
    assert_eq!(plan.shared_bytes, 37888);
    let plan = gemm::smem_plan(&p, f, 32, SMEM_SHAPES[2]).unwrap();
    assert_eq!(
        (plan.subgroups, plan.shared_bytes),
        (8, 16 * 2 * (128 * 3 + 16 * 33))
    );
    // The 32x32 subgroup tiles: 16 subgroups (512 invocations) at 128x128x32, 8 at
    // 128x64x32 and 64x128x32; the copies split (512 + 512, 512 + 256, 256 + 512 uvec4).
    let occ: Vec<_> = gemm::OCCUPANCY_SHAPES
        .iter()
        .map(|&s| {
            let p = gemm::smem_plan(&p, f, 32, s).unwrap();
            (p.subgroups, p.workgroup_size, p.shared_bytes)
        })
        .collect();
    assert_eq!(
        occ,
        [
            (16, 512, 37888),
            (8, 256, 16 * 2 * (128 * 5 + 32 * 9)),
            (8, 256, 16 * 2 * (64 * 5 + 32 * 17)),
        ]
    );
    // Every listed shape fits the H200's 48 KiB.
    for s in SMEM_SHAPES {
        let plan = gemm::smem_plan(&p, f, 32, s).unwrap();
        assert!(plan.shared_bytes <= 49152, "{s:?}: {plan:?}");
    }
    // 128x256x32 double-buffered needs 54272 bytes: refused, naming both numbers.
    let big = SmemShape {
        bm: 128,
        bn: 256,
        bk: 32,
        wm: 64,
        wn: 64,
    };
    let e = gemm::smem_plan(&p, f, 32, big).unwrap_err();
    assert!(e.contains("54272") && e.contains("49152"), "{e}");
    // A fragment whose rows are not 16-byte multiples, and tiles that do not split.
    let e = gemm::smem_plan(&p, [16, 4, 16], 32, SMEM_SHAPES[0]).unwrap_err();
    assert!(e.contains("multiples of 8"), "{e}");
    let odd = SmemShape {
        bm: 128,
        bn: 128,
        bk: 32,
        wm: 48,
        wn: 32,
    };
    assert!(gemm::smem_plan(&p, f, 32, odd)
        .unwrap_err()
        .contains("split"));
    // 32 subgroups of 64x... : over the invocation limit at subgroup size 64.
    let many = SmemShape {
        bm: 256,
        bn: 256,
        bk: 16,
        wm: 32,
        wn: 32,
    };
    let e = gemm::smem_plan(&p, f, 64, many).unwrap_err();
    assert!(e.contains("4096 invocations"), "{e}");
    // The copy split: 128x128x8 would be 128 + 128 uvec4 per step over 256 invocations.
    let thin = SmemShape {
        bm: 128,
        bn: 128,
        bk: 16,
        wm: 64,
        wn: 32,
    };
    assert!(gemm::smem_plan(&p, [16, 16, 16], 32, thin).is_ok());
    let e = gemm::smem_plan(&p, [16, 16, 8], 32, SmemShape { bk: 8, ..thin }).unwrap_err();
    assert!(e.contains("128 + 128 uvec4"), "{e}");
    // This device's own limit decides the same way (lavapipe: 32 KiB, so the 37888-byte
    // shape is refused there).
    let device = device();
    let dp = device.compute_properties();
    let r = gemm::smem_plan(dp, f, 32, SMEM_SHAPES[0]);
    assert_eq!(
        r.is_ok(),
        dp.max_compute_shared_memory_size >= 37888,
        "{r:?}"
    );
}

#[test]
fn shared_memory_and_ceiling_kernels_are_reported_absent_cleanly_or_run_exactly() {
    let device = device();
    for (name, module, f16) in [
        (
            "smem fp16",
            kiln::include_spirv!("coopmat/gemm_coopmat_smem.comp").unwrap(),
            true,
        ),
        (
            "smem bf16",
            kiln::include_spirv!("coopmat/gemm_coopmat_smem_bf16.comp").unwrap(),
            false,
        ),
        (
            "peak fp16",
            kiln::include_spirv!("coopmat/coopmat_peak.comp").unwrap(),
            true,
        ),
        (
            "peak bf16",
            kiln::include_spirv!("coopmat/coopmat_peak_bf16.comp").unwrap(),
            false,
        ),
    ] {
        let caps = &module.reflection().capabilities;
        assert!(
            caps.iter().any(|c| c == "CooperativeMatrixKHR"),
            "{name}: {caps:?}"
        );
        assert_eq!(caps.iter().any(|c| c == "Float16"), f16, "{name}: {caps:?}");
        assert_eq!(
            caps.iter().any(|c| c == "BFloat16CooperativeMatrixKHR"),
            !f16,
            "{name}: {caps:?}"
        );
        if !device.features().cooperative_matrix {
            let e = device.compute_pipeline(&module, "main").unwrap_err();
            assert_eq!(e.code(), "KILN-E107", "{name}: {e}");
        }
    }
    for p in [Precision::F16, Precision::Bf16] {
        for shape in SMEM_SHAPES.into_iter().chain(gemm::OCCUPANCY_SHAPES) {
            match gemm::coopmat_smem(&device, p, shape).unwrap() {
                Ok(g) => {
                    let dims = [g.tile[0] * 2, g.tile[1] * 2, g.k_step * 3];
                    let [m, n, k] = dims.map(|x| x as usize);
                    let a = gemm::inputs(m * k, 31, 1.0);
                    let b = gemm::inputs(k * n, 32, 1.0);
                    let c = g.run(&device, &a, &b, dims).unwrap();
                    assert_eq!(c, gemm::reference(&a, &b, dims), "{}", g.path);
                }
                Err(why) => assert!(!why.is_empty()),
            }
        }
        match coopmat_peak::peak_configs(&device, p) {
            Ok(configs) => {
                let k = coopmat_peak::peak(&device, p, &configs[0], (2, 2)).unwrap();
                let r = k.run(&device, 8, 16, 1).unwrap();
                assert_eq!(r.wrong, 0, "{}: {r:?}", k.name);
                assert_eq!(r.first.1, (4 * 16 * configs[0].k) as f32);
            }
            Err(why) => {
                assert!(!device.features().cooperative_matrix || p == Precision::Bf16);
                assert!(why.contains(&device.info().name), "{why}");
            }
        }
    }
    assert_clean(&device);
}

#[test]
fn the_first_slice_reference_is_k_over_the_step_times_that_slice() {
    let device = device();
    let mut g = gemm::tiled(&device).unwrap();
    g.reuses_first_slice = true;
    g.k_step = 4;
    let dims = [3u32, 5, 12];
    let a = gemm::inputs(3 * 12, 41, 1.0);
    let b = gemm::inputs(12 * 5, 42, 1.0);
    let want = g.expected(&a, &b, dims);
    assert_eq!(want.len(), 15);
    for i in 0..3 {
        for j in 0..5 {
            let one: f32 = (0..4).map(|l| a[i * 12 + l] * b[l * 5 + j]).sum();
            assert_eq!(want[i * 5 + j], 3.0 * one, "C[{i}][{j}]");
            assert_eq!(g.expected_at(&a, &b, dims, i, j), 3.0 * one);
        }
    }
    // The streaming kernels' reference is the plain product.
    g.reuses_first_slice = false;
    assert_eq!(g.expected(&a, &b, dims), gemm::reference(&a, &b, dims));
}

#[test]
fn workgroup_scope_kernels_need_cooperative_matrix2_or_run_exactly() {
    let device = device();
    let wg = kiln::include_spirv!("coopmat/gemm_coopmat_wg.comp").unwrap();
    let wg_bf16 = kiln::include_spirv!("coopmat/gemm_coopmat_wg_bf16.comp").unwrap();
    let smem = kiln::include_spirv!("coopmat/gemm_coopmat_smem.comp").unwrap();
    let tiled = kiln::include_spirv!("gemm_tiled.comp").unwrap();
    // Reflection lists the scopes of the module's cooperative-matrix types.
    assert_eq!(
        wg.reflection().cooperative_matrix_scopes,
        [vk::ScopeKHR::WORKGROUP]
    );
    assert_eq!(
        wg_bf16.reflection().cooperative_matrix_scopes,
        [vk::ScopeKHR::WORKGROUP]
    );
    assert_eq!(
        smem.reflection().cooperative_matrix_scopes,
        [vk::ScopeKHR::SUBGROUP]
    );
    assert!(tiled.reflection().cooperative_matrix_scopes.is_empty());
    let f = device.features().cooperative_matrix2;
    let p = device.compute_properties();
    if !f.workgroup_scope {
        // Refused before the driver sees it: no cooperative matrices at all (E107, lavapipe)
        // or no workgroup scope (E112).
        let e = device.compute_pipeline(&wg, "main").unwrap_err();
        let want = if device.features().cooperative_matrix {
            "KILN-E112"
        } else {
            "KILN-E107"
        };
        assert_eq!(e.code(), want, "{e}");
        assert!(e.to_string().contains(&device.info().name), "{e}");
        assert!(p.cooperative_matrix2.flexible_dimensions.is_empty());
    }
    for prec in [Precision::F16, Precision::Bf16] {
        for tile in gemm::WG_TILES {
            // The second tile with strides from K & !7, N & !7 (spec constant 7).
            let align = tile == gemm::WG_TILES[1];
            match gemm::coopmat_wg_with(&device, prec, tile, align).unwrap() {
                Ok(g) => {
                    let dims = [g.tile[0] * 2, g.tile[1], g.k_step * 3];
                    let [m, n, k] = dims.map(|x| x as usize);
                    let a = gemm::inputs(m * k, 51, 1.0);
                    let b = gemm::inputs(k * n, 52, 1.0);
                    let c = g.run(&device, &a, &b, dims).unwrap();
                    assert_eq!(c, gemm::reference(&a, &b, dims), "{}", g.path);
                    assert_eq!(g.path.ends_with(" align"), align, "{}", g.path);
                }
                Err(why) => assert!(!why.is_empty()),
            }
        }
    }
    // The capabilities of VK_NV_cooperative_matrix2 name their features.
    assert_eq!(
        kiln::capability_requirement("CooperativeMatrixTensorAddressingNV").as_deref(),
        Some("cooperativeMatrixTensorAddressing (VK_NV_cooperative_matrix2)")
    );
    if !f.tensor_addressing {
        let e = device
            .check_capability("TensorAddressingNV", vk::ShaderStageFlags::COMPUTE)
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E107", "{e}");
        assert!(
            e.to_string().contains("cooperativeMatrixTensorAddressing"),
            "{e}"
        );
    }
    assert_clean(&device);
}

#[test]
fn workgroup_scope_tiles_follow_the_flexible_dimension_configurations() {
    let f16 = vk::ComponentTypeKHR::FLOAT16;
    let f32t = vk::ComponentTypeKHR::FLOAT32;
    let config = |scope, gran: [u32; 3], wg| kiln::FlexibleDimensionsConfig {
        m_granularity: gran[0],
        n_granularity: gran[1],
        k_granularity: gran[2],
        a_type: f16,
        b_type: f16,
        c_type: f32t,
        result_type: f32t,
        saturating_accumulation: false,
        scope,
        workgroup_invocations: wg,
    };
    let p = kiln::CooperativeMatrix2Properties {
        workgroup_scope_max_workgroup_size: 256,
        flexible_dimensions_max_dimension: 256,
        workgroup_scope_reserved_shared_memory: 1024,
        flexible_dimensions: vec![
            config(vk::ScopeKHR::SUBGROUP, [16, 16, 16], 0),
            config(vk::ScopeKHR::WORKGROUP, [64, 64, 16], 128),
            config(vk::ScopeKHR::WORKGROUP, [32, 32, 32], 256),
            config(vk::ScopeKHR::WORKGROUP, [16, 16, 16], 512),
        ],
    };
    // The largest workgroup among the workgroup-scope configurations whose granularity
    // divides the tile (within the limits).
    assert_eq!(gemm::wg_plan(&p, f16, [128, 128, 32]), Ok(256));
    assert_eq!(gemm::wg_plan(&p, f16, [128, 128, 16]), Ok(128));
    assert_eq!(gemm::wg_plan(&p, f16, [96, 96, 32]), Ok(256));
    // 512 invocations is over the workgroup-scope limit; 512 is over the max dimension.
    let e = gemm::wg_plan(&p, f16, [16, 16, 16]).unwrap_err();
    assert!(
        e.contains("16x16x16") && e.contains("max workgroup 256"),
        "{e}"
    );
    assert!(gemm::wg_plan(&p, f16, [512, 128, 32]).is_err());
    // Other input types have no configuration here.
    let e = gemm::wg_plan(&p, kiln::COMPONENT_TYPE_BFLOAT16_KHR, [128, 128, 32]).unwrap_err();
    assert!(e.contains("listed: []"), "{e}");
}

#[test]
fn tensor_addressing_kernels_reflect_and_need_cooperative_matrix2_or_run_exactly() {
    let device = device();
    for (m, bf16) in [
        (
            kiln::include_spirv!("coopmat/gemm_coopmat_tensor.comp").unwrap(),
            false,
        ),
        (
            kiln::include_spirv!("coopmat/gemm_coopmat_tensor_bf16.comp").unwrap(),
            true,
        ),
    ] {
        // Reflection reads the SPIR-V assembly's module (tensor-layout types and
        // instructions included): its capabilities, extensions, spec constants, the
        // workgroup size from spec constant 3, three storage buffers and the 12-byte push
        // constants, one workgroup-scope matrix scope.
        let r = m.reflection();
        for cap in [
            "CooperativeMatrixKHR",
            "CooperativeMatrixTensorAddressingNV",
            "TensorAddressingNV",
            "VulkanMemoryModel",
        ] {
            assert!(
                r.capabilities.iter().any(|c| c == cap),
                "{cap}: {:?}",
                r.capabilities
            );
        }
        assert_eq!(
            r.capabilities
                .iter()
                .any(|c| c == "BFloat16CooperativeMatrixKHR"),
            bf16,
            "{:?}",
            r.capabilities
        );
        for ext in ["SPV_NV_cooperative_matrix2", "SPV_NV_tensor_addressing"] {
            assert!(r.extensions.iter().any(|e| e == ext), "{:?}", r.extensions);
        }
        let ids: Vec<(u32, Option<&str>)> = r
            .spec_constants
            .iter()
            .map(|s| (s.id, s.name.as_deref()))
            .collect();
        assert_eq!(
            ids,
            [
                (3, Some("WG")),
                (4, Some("BM")),
                (5, Some("BN")),
                (6, Some("BK")),
                (7, Some("GROUP")),
                (8, Some("CLAMP")),
                (9, Some("PIPE")),
                (10, Some("STREAM")),
                (11, Some("ALIGN")),
                (12, Some("UNROLL"))
            ]
        );
        assert_eq!(r.cooperative_matrix_scopes, [vk::ScopeKHR::WORKGROUP]);
        let ep = r.entry_point("main").unwrap();
        let ws = ep.workgroup_size.unwrap();
        assert_eq!((ws.size, ws.spec_ids), ([256, 1, 1], [Some(3), None, None]));
        let b: Vec<(u32, vk::DescriptorType, bool, bool)> = ep
            .bindings
            .iter()
            .map(|b| (b.binding, b.descriptor_type, b.non_writable, b.non_readable))
            .collect();
        let sb = vk::DescriptorType::STORAGE_BUFFER;
        assert_eq!(
            b,
            [
                (0, sb, true, false),
                (1, sb, true, false),
                (2, sb, false, true)
            ]
        );
        assert_eq!(ep.push_constants.as_ref().map(|p| p.size), Some(12));
        if !device.features().cooperative_matrix2.tensor_addressing {
            // Refused before the driver sees it (lavapipe: no cooperative matrices, E107).
            let e = device.compute_pipeline(&m, "main").unwrap_err();
            assert_eq!(e.code(), "KILN-E107", "{e}");
            assert!(e.to_string().contains(&device.info().name), "{e}");
        }
    }
    // The tiles in row-major and grouped order (3 tile rows: the grouped order's last group
    // is partial), both clamp modes, the loads before and after the multiply-add, the
    // no-global form (alternating the first two slices: against (K/2BK)·A[:, :2BK]·B[:2BK, :]):
    // exact, or absent with a reason.
    let mut ran = 0;
    for prec in [Precision::F16, Precision::Bf16] {
        for (i, tile) in gemm::TENSOR_TILES.into_iter().enumerate() {
            // The first tile (llama.cpp's large one) in every form; the second (its medium
            // one) grouped, bf16. The other tiles are exploratory (the driver may refuse to
            // compile them): `gemm` checks each before timing it.
            // (group, clamp, pipe, stream, align, unroll)
            let orders: &[(u32, bool, bool, bool, bool, u32)] = match (i, prec) {
                (0, _) => &[
                    (1, false, false, true, false, 1),
                    (2, false, true, true, false, 1),
                    (2, true, false, true, false, 1),
                    (1, false, false, false, false, 1),
                    (1, false, true, false, true, 1),
                    (8, true, false, false, true, 1),
                    (2, false, false, true, true, 2),
                    (2, false, true, true, true, 3),
                ],
                (1, Precision::Bf16) => &[(2, false, false, true, true, 1)],
                _ => &[],
            };
            for &(group, clamp, pipe, stream, align, unroll) in orders {
                let v = gemm::TensorVariant {
                    tile,
                    group,
                    clamp,
                    pipe,
                    stream,
                    align,
                    unroll,
                };
                match gemm::coopmat_tensor(&device, prec, v).unwrap() {
                    Ok(g) => {
                        assert!(g.path.starts_with(&v.name(prec)), "{}", g.path);
                        let dims = [g.tile[0] * 3, g.tile[1] * 2, g.k_step * 3];
                        let [m, n, k] = dims.map(|x| x as usize);
                        let a = gemm::inputs(m * k, 61, 1.0);
                        let b = gemm::inputs(k * n, 62, 1.0);
                        let c = g.run(&device, &a, &b, dims).unwrap();
                        assert_eq!(g.reuses_first_slice, !stream);
                        assert_eq!(
                            g.k_step,
                            if stream {
                                tile[2] * unroll
                            } else {
                                2 * tile[2]
                            }
                        );
                        assert_eq!(c, g.expected(&a, &b, dims), "{}", g.path);
                        ran += 1;
                    }
                    Err(why) => {
                        assert!(
                            !device.features().cooperative_matrix2.tensor_addressing
                                || why.contains("configuration"),
                            "{why}"
                        );
                        assert!(!why.is_empty());
                    }
                }
            }
        }
    }
    assert_eq!(
        ran > 0,
        device.features().cooperative_matrix2.tensor_addressing
    );
    for bad in [
        gemm::TensorVariant {
            group: 0,
            ..gemm::TensorVariant::plain([128, 128, 32])
        },
        gemm::TensorVariant {
            unroll: 0,
            ..gemm::TensorVariant::plain([128, 128, 32])
        },
        gemm::TensorVariant {
            unroll: 2,
            stream: false,
            ..gemm::TensorVariant::plain([128, 128, 32])
        },
        gemm::TensorVariant {
            stream: false,
            ..gemm::TensorVariant::plain([128, 128, 48])
        },
    ] {
        let e = gemm::coopmat_tensor(&device, Precision::F16, bad).unwrap();
        assert!(e.is_err(), "{bad:?}");
    }
    assert_clean(&device);
}

#[test]
fn grouped_and_two_ahead_shared_memory_kernels_are_named_refuse_bad_values_or_run_exactly() {
    let device = device();
    let s = SMEM_SHAPES[2];
    assert_eq!(
        gemm::smem_name(Precision::Bf16, s, true, 8, 1),
        "coopmat-smem bf16 128x256x16 w64x64 g8"
    );
    assert_eq!(
        gemm::smem_name(Precision::Bf16, s, true, 8, 2),
        "coopmat-smem bf16 128x256x16 w64x64 g8 a2"
    );
    assert_eq!(
        gemm::smem_name(Precision::F16, s, false, 1, 1),
        "coopmat-smem-noglobal fp16 128x256x16 w64x64"
    );
    let v = gemm::TensorVariant {
        tile: [128, 256, 64],
        group: 8,
        clamp: true,
        pipe: true,
        stream: true,
        align: true,
        unroll: 8,
    };
    assert_eq!(
        gemm::TensorVariant { stream: false, ..v }.name(Precision::F16),
        "coopmat-tensor-noglobal fp16 128x256x64 g8 clamp pipe align u8"
    );
    assert_eq!(
        v.name(Precision::Bf16),
        "coopmat-tensor bf16 128x256x64 g8 clamp pipe align u8"
    );
    assert_eq!(
        gemm::TensorVariant::plain([128, 128, 32]).name(Precision::F16),
        "coopmat-tensor fp16 128x128x32 g1"
    );
    // The no-global kernel with one half of its staging: named, and exact against the
    // first-slice product.
    assert_eq!(
        gemm::smem_part_name(Precision::Bf16, s, gemm::SmemPart::GlobalLoads),
        "coopmat-smem-noglobal+loads bf16 128x256x16 w64x64"
    );
    assert_eq!(
        gemm::smem_part_name(Precision::Bf16, s, gemm::SmemPart::SharedStores),
        "coopmat-smem-noglobal+stores bf16 128x256x16 w64x64"
    );
    assert_eq!(
        gemm::smem_part_name(Precision::F16, s, gemm::SmemPart::CachedLoads),
        "coopmat-smem-noglobal+cached fp16 128x256x16 w64x64"
    );
    for part in [
        gemm::SmemPart::None,
        gemm::SmemPart::GlobalLoads,
        gemm::SmemPart::SharedStores,
        gemm::SmemPart::CachedLoads,
    ] {
        match gemm::coopmat_smem_part(&device, Precision::Bf16, s, part).unwrap() {
            Ok(g) => {
                assert!(g.reuses_first_slice);
                assert_eq!(g.path, gemm::smem_part_name(Precision::Bf16, s, part));
                let two = part == gemm::SmemPart::CachedLoads;
                assert_eq!(g.k_step, if two { 2 * s.bk } else { s.bk });
                let dims = [g.tile[0] * 2, g.tile[1], g.k_step * 5];
                let [m, n, k] = dims.map(|x| x as usize);
                let a = gemm::inputs(m * k, 73, 1.0);
                let b = gemm::inputs(k * n, 74, 1.0);
                let c = g.run(&device, &a, &b, dims).unwrap();
                assert_eq!(c, g.expected(&a, &b, dims), "{}", g.path);
            }
            // No cooperative matrices, or no bf16 ones (also where the validation layer
            // predates VK_KHR_shader_bfloat16: W004, e.g. layer 1.4.309 on the H200).
            Err(why) => assert!(
                !device.features().cooperative_matrix || !device.features().shader_bfloat16,
                "{why}"
            ),
        }
    }
    for (group, ahead) in [(0, 1), (1, 3), (1, 1), (8, 1), (1, 2), (8, 2)] {
        let r = gemm::coopmat_smem_grouped(&device, Precision::F16, s, true, group, ahead);
        match r.unwrap() {
            Ok(g) => {
                assert!(group > 0 && ahead <= 2);
                assert_eq!(
                    g.path,
                    gemm::smem_name(Precision::F16, s, true, group, ahead)
                );
                // Three tile rows of 128: the last group of 8 rows is partial; 5 steps: the
                // two-register-set loop ends on an odd step.
                let dims = [g.tile[0] * 3, g.tile[1] * 2, g.k_step * 5];
                let [m, n, k] = dims.map(|x| x as usize);
                let a = gemm::inputs(m * k, 71, 1.0);
                let b = gemm::inputs(k * n, 72, 1.0);
                let c = g.run(&device, &a, &b, dims).unwrap();
                assert_eq!(c, gemm::reference(&a, &b, dims), "{}", g.path);
            }
            Err(why) => assert!(
                group == 0 && why.contains("group")
                    || ahead == 3 && why.contains("ahead 3")
                    || !device.features().cooperative_matrix,
                "{why}"
            ),
        }
    }
    assert_clean(&device);
}

/// `gemm --stats`'s workgroups per H200 SM from an executable's statistics (CUDA occupancy
/// calculator arithmetic): registers per thread rounded to the warp's 256-register unit,
/// shared memory plus the 1 KiB reserved per workgroup, threads, the 32-workgroup cap.
#[test]
fn gemm_stats_occupancy_on_the_h200() {
    use gemm_stats::{occupancy, H200};
    use kiln::{PipelineExecutable, PipelineExecutableStatistic, StatisticValue};
    let exec = |stats: &[(&str, StatisticValue)]| PipelineExecutable {
        name: "compute".into(),
        description: String::new(),
        stages: vk::ShaderStageFlags::COMPUTE,
        subgroup_size: 32,
        statistics: stats
            .iter()
            .map(|(n, v)| PipelineExecutableStatistic {
                name: n.to_string(),
                description: String::new(),
                value: *v,
            })
            .collect(),
    };
    let u = StatisticValue::U64;
    // 128 registers x 256 threads: 4096 per warp, 16 warps per SM, 8 per workgroup: 2.
    // 48 KiB + 1 KiB shared memory: 4 in 228 KiB. Threads: 2048 / 256 = 8.
    let e = exec(&[
        ("Spill Count", u(0)),
        ("Register Count", u(128)),
        ("Shared Memory Size", u(48 * 1024)),
    ]);
    // The driver's shared-memory statistic wins over the declared bytes.
    let o = occupancy(&e, 256, Some(1), &H200);
    assert_eq!(o.workgroups, 2, "{:?}", o.limits);
    assert!(
        o.limits[0].starts_with("registers=2 (\"Register Count\" 128"),
        "{:?}",
        o.limits
    );
    assert!(o.limits[1].starts_with("smem=4 "), "{:?}", o.limits);
    assert_eq!(o.limits[2], "threads=8 (256/workgroup)");
    // 255 registers round up to 256: one workgroup of 256 threads; 100 KiB of shared
    // memory alone would allow 2.
    let e = exec(&[
        ("Register Count", u(255)),
        ("Shared Memory Size", u(100 << 10)),
    ]);
    assert_eq!(occupancy(&e, 256, None, &H200).workgroups, 1);
    // 33 registers round up to 40 (1280 per warp): 51 warps, 12 workgroups of 4 warps; 128
    // threads allow 16; so 12.
    let e = exec(&[("Register Count", u(33))]);
    let o = occupancy(&e, 128, None, &H200);
    assert_eq!(o.workgroups, 12, "{:?}", o.limits);
    assert!(
        o.limits[1].contains("no shared-memory statistic"),
        "{:?}",
        o.limits
    );
    // No shared-memory statistic: the declared bytes (the smem kernel's 37 888 at
    // 128x128x32: 6 in 228 KiB with the reserved KiB each).
    let o = occupancy(&e, 128, Some(37_888), &H200);
    assert_eq!(o.limits[1], "smem=6 (declared 37888 B)");
    assert_eq!(o.workgroups, 6);
    // No statistics the calculator knows: threads and the cap only.
    let e = exec(&[("Instruction count", StatisticValue::I64(12))]);
    assert_eq!(occupancy(&e, 32, None, &H200).workgroups, 32);
}
