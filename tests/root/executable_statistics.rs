//! Pipeline executable statistics (VK_KHR_pipeline_executable_properties, Vulkan spec
//! "Pipeline Executable Properties"). On a device with `pipelineExecutableInfo` (NVIDIA:
//! the H200 suite run): real statistics of compute and graphics pipelines created to
//! capture them (a larger shader reports a larger value of some statistic) and the
//! not-captured error `KILN-E268` from a real pipeline. On a device without it (lavapipe
//! of Mesa 22.3 and 25.0 have the entry points but do not list the extension):
//! `capture_statistics` and `executable_statistics` are `KILN-E267`. Both errors of the
//! one check every path goes through are also tested directly, on every device.

use common::draw::{target, RGBA8};
use common::{assert_clean, code, device};
use kiln::{
    vk, ComputePipelineDesc, Device, GraphicsPipelineDesc, PipelineExecutable, ShaderModule,
    VertexBufferLayout,
};

fn captured(device: &Device, module: &ShaderModule) -> kiln::Result<kiln::ComputePipeline> {
    Ok(device.compute_pipeline_with(
        &ComputePipelineDesc::new(module, "main").capture_statistics(true),
    )?)
}

fn print(what: &str, execs: &[PipelineExecutable]) {
    for e in execs {
        let stats: Vec<String> = e
            .statistics
            .iter()
            .map(|s| format!("{}={}", s.name, s.value))
            .collect();
        println!(
            "{what}: `{}` ({}) {:?} subgroup {}: {}",
            e.name,
            e.description,
            e.stages,
            e.subgroup_size,
            stats.join(", ")
        );
    }
}

/// Every executable is named, covers some of `stages` and reports named statistics.
fn assert_real(what: &str, execs: &[PipelineExecutable], stages: vk::ShaderStageFlags) {
    assert!(!execs.is_empty(), "{what}: no executables");
    let mut covered = vk::ShaderStageFlags::empty();
    for e in execs {
        assert!(!e.name.is_empty(), "{what}: an executable without a name");
        assert!(
            stages.contains(e.stages) && !e.stages.is_empty(),
            "{what}: executable `{}` has stages {:?}, not within {stages:?}",
            e.name,
            e.stages
        );
        covered |= e.stages;
        assert!(
            !e.statistics.is_empty(),
            "{what}: executable `{}` reports no statistics",
            e.name
        );
        for s in &e.statistics {
            assert!(
                !s.name.is_empty(),
                "{what}: `{}` has an unnamed statistic",
                e.name
            );
        }
    }
    assert_eq!(covered, stages, "{what}: the executables' stages");
}

#[test]
fn compute_statistics_or_the_missing_feature_error() {
    let device = device();
    let small = kiln::include_spirv!("test/add_one.comp").unwrap();
    let big = kiln::include_spirv!("gemm_tiled.comp").unwrap();
    let plain = device.compute_pipeline(&small, "main").unwrap();
    if !device.features().pipeline_executable_info {
        // The device lacks the feature: capturing and querying are both E267, naming the
        // device and what to do.
        let e = captured(&device, &small).unwrap_err();
        assert_eq!(e.code(), "KILN-E267", "{e}");
        let msg = e.to_string();
        assert!(msg.contains(&device.info().name), "{msg}");
        assert!(msg.contains("leave capture_statistics false"), "{msg}");
        assert_eq!(code(plain.executable_statistics()), "KILN-E267");
        assert_clean(&device);
        return;
    }
    let e = plain.executable_statistics().unwrap_err();
    assert_eq!(e.code(), "KILN-E268", "{e}");
    assert!(e.to_string().contains("capture_statistics: true"), "{e}");
    let s = captured(&device, &small)
        .unwrap()
        .executable_statistics()
        .unwrap();
    let b = captured(&device, &big)
        .unwrap()
        .executable_statistics()
        .unwrap();
    print("add_one", &s);
    print("gemm_tiled", &b);
    assert_real("add_one", &s, vk::ShaderStageFlags::COMPUTE);
    assert_real("gemm_tiled", &b, vk::ShaderStageFlags::COMPUTE);
    // The 128x128x8 tiled GEMM (shared memory, an 8x8 accumulator block per invocation)
    // must come out larger than `y[i] += x[i]` in some statistic the driver reports for
    // both (instructions, registers, shared memory, …).
    let larger: Vec<&str> = s[0]
        .statistics
        .iter()
        .filter(|st| {
            let (Some(small), Some(big)) = (st.value.as_u64(), b[0].statistic(&st.name)) else {
                return false;
            };
            big.as_u64().is_some_and(|big| big > small)
        })
        .map(|st| st.name.as_str())
        .collect();
    assert!(
        !larger.is_empty(),
        "no statistic of gemm_tiled is larger than add_one's: {:?} vs {:?}",
        s[0].statistics,
        b[0].statistics
    );
    assert_clean(&device);
}

#[test]
fn graphics_statistics_or_the_missing_feature_error() {
    let device = device();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/flat.frag").unwrap();
    let img = target(&device, 4, 4);
    assert_eq!(img.format(), RGBA8);
    let desc = GraphicsPipelineDesc::new(&vs, &fs)
        .vertex_buffer(VertexBufferLayout::packed(&[(
            0,
            vk::Format::R32G32_SFLOAT,
        )]))
        .targets(&[&img], None)
        .capture_statistics(true);
    let r = device.graphics_pipeline(&desc);
    if !device.features().pipeline_executable_info {
        assert_eq!(code(r), "KILN-E267");
        assert_clean(&device);
        return;
    }
    let execs = r.unwrap().executable_statistics().unwrap();
    print("flat", &execs);
    assert_real(
        "flat",
        &execs,
        vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
    );
    let plain = device
        .graphics_pipeline(&desc.capture_statistics(false))
        .unwrap();
    assert_eq!(code(plain.executable_statistics()), "KILN-E268");
    assert_clean(&device);
}

/// The check behind both errors, on every device: the feature first, then the capture.
#[test]
fn statistics_check_errors() {
    let check = kiln::hooks::check_executable_statistics;
    let e = check("gemm:main", "the GPU", false, true).unwrap_err();
    assert_eq!(e.code(), "KILN-E267");
    let msg = e.to_string();
    assert!(
        msg.contains("`gemm:main`") && msg.contains("`the GPU`"),
        "{msg}"
    );
    assert!(msg.contains("pipelineExecutableInfo"), "{msg}");
    assert_eq!(code(check("p", "d", false, false)), "KILN-E267");
    let e = check("gemm:main", "the GPU", true, false).unwrap_err();
    assert_eq!(e.code(), "KILN-E268");
    let msg = e.to_string();
    assert!(msg.contains("`gemm:main`"), "{msg}");
    assert!(
        msg.contains("; create it with capture_statistics: true"),
        "{msg}"
    );
    assert_eq!(code(check("p", "d", true, true)), "ok");
}
