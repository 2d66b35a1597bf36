//! The GEMM example's kernels (`examples/common/gemm.rs`): the fp32 tiled fallback against
//! the CPU reference (exact: small-integer inputs), and the cooperative-matrix modules
//! (prebuilt SPIR-V, fp16 and bf16) reported absent cleanly where the device has no
//! cooperative matrices (lavapipe), or checked exactly where it has them.

use common::{assert_clean, device};
use kiln::vk;
use kiln_examples::gemm::{self, Precision};

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
