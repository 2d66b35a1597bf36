//! Subgroups: a reduction built by kiln-build's default target (SPIR-V 1.6), the compute
//! properties the device reports, and per-pipeline subgroup size control (required size,
//! full subgroups) with its range checks.

use std::collections::BTreeMap;

use common::{assert_clean, code, device};
use kiln::{vk, ComputePipeline, ComputePipelineDesc, Device};

const N: usize = 1000;

/// Runs subgroup_sum.comp over `N` values; returns (sums, subgroup ids, reported size).
fn run_sum(device: &Device, pipeline: &ComputePipeline) -> (Vec<u32>, Vec<u32>, u32, Vec<u32>) {
    let values: Vec<u32> = (0..N as u32).map(|i| (i * 7) % 101 + 1).collect();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let src = device.buffer_from_slice("values", usage, &values).unwrap();
    let sums = device.storage_buffer::<u32>("sums", N).unwrap();
    let groups = device.storage_buffer::<u32>("groups", N).unwrap();
    let size = device.storage_buffer::<u32>("size", 1).unwrap();
    let mut set = pipeline.descriptor_set(0).unwrap();
    set.write_buffer(0, &src).unwrap();
    set.write_buffer(1, &sums).unwrap();
    set.write_buffer(2, &groups).unwrap();
    set.write_buffer(3, &size).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(pipeline)?;
            r.bind_set(0, &set)?;
            r.push(0, &(N as u32))?;
            Ok(r.dispatch_threads(N as u32)?)
        })
        .unwrap();
    let size: Vec<u32> = size.read().unwrap();
    (
        sums.read().unwrap(),
        groups.read().unwrap(),
        size[0],
        values,
    )
}

/// Every invocation's sum equals the sum of the values of its subgroup, computed on the
/// host from the subgroup ids the shader wrote; no subgroup is larger than `size`.
fn check_sums(sums: &[u32], groups: &[u32], values: &[u32], size: u32) -> usize {
    let mut expected: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    for i in 0..N {
        let e = expected.entry(groups[i]).or_default();
        e.0 += values[i];
        e.1 += 1;
    }
    for i in 0..N {
        let (sum, members) = expected[&groups[i]];
        assert_eq!(sums[i], sum, "invocation {i} (subgroup {})", groups[i]);
        assert!(
            members <= size,
            "subgroup {} has {members} members",
            groups[i]
        );
    }
    expected.len()
}

#[test]
fn subgroup_reduction_built_by_the_default_target_sums_each_subgroup() {
    let device = device();
    let module = kiln::include_spirv!("test/subgroup_sum.comp").unwrap();
    // kiln-build's default target is vulkan1.3: SPIR-V 1.6.
    assert_eq!(module.reflection().version, 0x0001_0600);
    assert!(module
        .reflection()
        .capabilities
        .iter()
        .any(|c| c == "GroupNonUniformArithmetic"));
    let pipeline = device.compute_pipeline(&module, "main").unwrap();
    let (sums, groups, size, values) = run_sum(&device, &pipeline);
    let props = device.compute_properties();
    assert!(
        (props.min_subgroup_size..=props.max_subgroup_size).contains(&size),
        "gl_SubgroupSize {size} outside {}..={}",
        props.min_subgroup_size,
        props.max_subgroup_size
    );
    if device.info().name.contains("llvmpipe") {
        assert_eq!(size, 8, "lavapipe's subgroup size");
        assert_eq!(props.subgroup_size, 8);
    }
    let subgroups = check_sums(&sums, &groups, &values, size);
    // 1000 invocations in 16 workgroups of 64: at least ceil(1000 / size) subgroups.
    assert!(
        subgroups >= N.div_ceil(size as usize),
        "{subgroups} subgroups"
    );
    assert_clean(&device);
}

#[test]
fn compute_properties_match_the_limits_and_the_features() {
    let device = device();
    let p = device.compute_properties().clone();
    let l = *device.limits();
    assert!(p.subgroup_size.is_power_of_two(), "{p:?}");
    assert!(p.min_subgroup_size <= p.subgroup_size && p.subgroup_size <= p.max_subgroup_size);
    assert!(p.subgroup_stages.contains(vk::ShaderStageFlags::COMPUTE));
    assert!(p
        .subgroup_operations
        .contains(vk::SubgroupFeatureFlags::BASIC | vk::SubgroupFeatureFlags::ARITHMETIC));
    assert_eq!(
        p.max_compute_shared_memory_size,
        l.max_compute_shared_memory_size
    );
    assert_eq!(
        p.max_compute_work_group_count,
        l.max_compute_work_group_count
    );
    assert_eq!(p.max_compute_work_group_size, l.max_compute_work_group_size);
    assert_eq!(p.max_storage_buffer_range, l.max_storage_buffer_range);
    assert!(p.max_buffer_size >= l.max_storage_buffer_range as u64);
    assert_eq!(
        p.subgroup_size_control,
        device.features().subgroup_size_control
    );
    assert_eq!(p.push_descriptor, device.features().push_descriptor);
    assert_eq!(
        p.buffer_device_address,
        device.features().buffer_device_address
    );
    // Cooperative matrices: none without the feature (lavapipe has no VK_KHR_cooperative_matrix).
    assert_eq!(
        !p.cooperative_matrix.is_empty(),
        device.features().cooperative_matrix
    );
    if device.info().name.contains("llvmpipe") {
        assert!(p.cooperative_matrix.is_empty());
        assert!(p
            .cooperative_matrix_for(vk::ComponentTypeKHR::FLOAT16, vk::ComponentTypeKHR::FLOAT32)
            .is_empty());
        assert_eq!(p.max_storage_buffer_range, 128 << 20);
    }
    eprintln!("compute properties of {}: {p:?}", device.info().name);
    assert_clean(&device);
}

#[test]
fn required_subgroup_size_is_checked_against_the_range_and_applied() {
    let device = device();
    let module = kiln::include_spirv!("test/subgroup_sum.comp").unwrap();
    let p = device.compute_properties().clone();
    let with = |size: Option<u32>, full: bool| {
        device.compute_pipeline_with(
            &ComputePipelineDesc::new(&module, "main")
                .required_subgroup_size(size)
                .full_subgroups(full),
        )
    };
    // Not a power of two, and beyond the range: KILN-E256 before any Vulkan call.
    assert_eq!(code(with(Some(3), false)), "KILN-E256");
    let err = with(Some(p.max_subgroup_size * 2), false).unwrap_err();
    assert_eq!(err.code(), "KILN-E256", "{err}");
    if p.subgroup_size_control {
        assert!(err.to_string().contains("maxSubgroupSize"), "{err}");
        let range = format!("{}..={}", p.min_subgroup_size, p.max_subgroup_size);
        assert!(err.to_string().contains(&range), "{err}");
    }
    if p.subgroup_size_control && p.compute_full_subgroups {
        // The smallest size, with full subgroups: every subgroup has exactly that many.
        let size = p.min_subgroup_size;
        let pipeline = with(Some(size), true).unwrap();
        let (sums, groups, reported, values) = run_sum(&device, &pipeline);
        assert_eq!(reported, size, "gl_SubgroupSize with a required size");
        let subgroups = check_sums(&sums, &groups, &values, size);
        // Full subgroups of `size` over 16 workgroups of 64 invocations (the last
        // workgroup's inactive invocations still belong to their subgroups).
        assert_eq!(subgroups, N.div_ceil(size as usize), "subgroups");
    } else {
        assert_eq!(code(with(Some(p.min_subgroup_size), false)), "KILN-E256");
        eprintln!(
            "subgroups: {} has no subgroup size control; checked the error",
            device.info().name
        );
    }
    assert_clean(&device);
}
