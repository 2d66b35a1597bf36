//! Errors: bad input through safe API calls is a coded error, never a panic, a validation
//! message or a crash: overflowing sizes, invalid layouts and push-constant ranges,
//! specialization values, copies, refused recordings, capabilities and limits the device
//! lacks, heaps that would be over-committed, a device name matching nothing. Each test
//! asserts the code and that the device stays clean (and still works where the error
//! happened mid-recording); and the validation messenger really counts a real error.

use common::add;
use common::add::{still_works, vector_add};
use common::{assert_clean, code, device, device_with_desc};
use kiln::PushConstantRange;
use kiln::{vk, ComputePipelineDesc, PipelineLayoutDesc, SpecValue};

/// Was: `attempt to add with overflow` panic in `Recorder::push_constants`.
#[test]
fn push_constants_offset_near_u32_max_is_e250_not_a_panic() {
    let device = device();
    let p = device
        .compute_pipeline(&kiln::include_spirv!("saxpy.comp").unwrap(), "main")
        .unwrap();
    let r = device.execute(|r| {
        r.bind_pipeline(&p)?;
        Ok(r.push_constants(u32::MAX - 3, &[0u8; 8])?)
    });
    assert_eq!(code(r), "KILN-E250");
    assert_clean(&device);
}

/// Was: `attempt to multiply with overflow` panic in `Device::storage_buffer`.
#[test]
fn storage_buffer_length_overflow_is_e156_not_a_panic() {
    let device = device();
    let e = device
        .storage_buffer::<u64>("huge", usize::MAX / 4)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E156");
    assert!(e.to_string().contains("huge"), "{e}");
    assert_clean(&device);
}

/// (stage flags, offset, size) of one push constant range.
type Range = (vk::ShaderStageFlags, u32, u32);

fn layout_with_ranges(ranges: &[(vk::ShaderStageFlags, u32, u32)]) -> PipelineLayoutDesc {
    PipelineLayoutDesc::default().push_constant_ranges(
        ranges
            .iter()
            .map(|&(stages, offset, size)| PushConstantRange {
                stages,
                offset,
                size,
            })
            .collect(),
    )
}

/// Was: overflow panic (offset + size) in `Device::pipeline_layout`, and validation errors
/// VUID-VkPushConstantRange-offset-00295, -size-00296, -size-00297,
/// -stageFlags-requiredbitmask and VUID-VkPipelineLayoutCreateInfo-pPushConstantRanges-00292.
#[test]
fn user_push_constant_ranges_are_checked_before_vulkan() {
    let device = device();
    let c = vk::ShaderStageFlags::COMPUTE;
    let cases: [(&[Range], &str); 7] = [
        (&[(c, u32::MAX - 3, 8)], "KILN-E053"),
        (&[(c, 0, 4096)], "KILN-E053"),
        (&[(c, 0, 8), (c, 8, 8)], "KILN-E059"),
        (&[(c, 2, 8)], "KILN-E059"),
        (&[(c, 0, 6)], "KILN-E059"),
        (&[(c, 0, 0)], "KILN-E059"),
        (&[(vk::ShaderStageFlags::empty(), 0, 8)], "KILN-E059"),
    ];
    for (ranges, want) in cases {
        let got = code(device.pipeline_layout(&layout_with_ranges(ranges)));
        assert_eq!(got, want, "{ranges:?}");
    }
    // Valid ranges still work: vertex [0,64) and fragment [0,16) overlap in bytes only.
    let ok = layout_with_ranges(&[
        (vk::ShaderStageFlags::VERTEX, 0, 64),
        (vk::ShaderStageFlags::FRAGMENT, 0, 16),
    ]);
    device.pipeline_layout(&ok).unwrap();
    assert_clean(&device);
}

fn binding(
    n: u32,
    ty: vk::DescriptorType,
    flags: vk::DescriptorBindingFlags,
) -> kiln::SetLayoutBinding {
    kiln::SetLayoutBinding::new(n, ty, 4, vk::ShaderStageFlags::COMPUTE).flags(flags)
}

/// Was: VUID-VkDescriptorSetLayoutCreateInfo-binding-00279 (duplicate binding numbers) and
/// descriptor-indexing VUIDs (…-03008, …-03014) from `Device::set_layout`.
#[test]
fn invalid_set_layout_descriptions_are_e209() {
    let device = device();
    let f = device.features().clone();
    let none = vk::DescriptorBindingFlags::empty();
    let sb = vk::DescriptorType::STORAGE_BUFFER;
    let uab_pool = vk::DescriptorSetLayoutCreateFlags::UPDATE_AFTER_BIND_POOL;
    let dup = kiln::DescriptorSetLayoutDesc::new(
        vec![
            binding(0, sb, none),
            binding(0, vk::DescriptorType::UNIFORM_BUFFER, none),
        ],
        vk::DescriptorSetLayoutCreateFlags::empty(),
    );
    assert_eq!(code(device.set_layout(&dup)), "KILN-E209");
    // A variable-count binding that is not the highest one is invalid on every device.
    let not_last = kiln::DescriptorSetLayoutDesc::new(
        vec![
            binding(0, sb, vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT),
            binding(1, sb, none),
        ],
        vk::DescriptorSetLayoutCreateFlags::empty(),
    );
    assert_eq!(code(device.set_layout(&not_last)), "KILN-E209");
    // Update-after-bind without the pool flag is invalid on every device.
    let no_pool_flag = kiln::DescriptorSetLayoutDesc::new(
        vec![binding(
            0,
            sb,
            vk::DescriptorBindingFlags::UPDATE_AFTER_BIND,
        )],
        vk::DescriptorSetLayoutCreateFlags::empty(),
    );
    assert_eq!(code(device.set_layout(&no_pool_flag)), "KILN-E209");
    // Push-descriptor layouts need VK_KHR_push_descriptor (kiln enables it where the
    // device has it, lavapipe included) ...
    let push = kiln::DescriptorSetLayoutDesc::new(
        vec![binding(0, sb, none)],
        vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR,
    );
    let want = if device.features().push_descriptor {
        "ok"
    } else {
        "KILN-E209"
    };
    assert_eq!(code(device.set_layout(&push)), want);
    // ... and cannot hold dynamic buffers (VUID-VkDescriptorSetLayoutCreateInfo-flags-00280).
    let push_dynamic = kiln::DescriptorSetLayoutDesc::new(
        vec![binding(0, vk::DescriptorType::STORAGE_BUFFER_DYNAMIC, none)],
        vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR,
    );
    assert_eq!(code(device.set_layout(&push_dynamic)), "KILN-E209");
    let uab = kiln::DescriptorSetLayoutDesc::new(
        vec![binding(
            0,
            sb,
            vk::DescriptorBindingFlags::UPDATE_AFTER_BIND
                | vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT,
        )],
        uab_pool,
    );
    let want =
        if f.update_after_bind_storage_buffer && f.descriptor_binding_variable_descriptor_count {
            "ok"
        } else {
            "KILN-E209"
        };
    assert_eq!(code(device.set_layout(&uab)), want, "features {f:?}");
    assert_clean(&device);
}

/// Was: VUID-VkComputePipelineCreateInfo-layout-00703/-07988 and then SIGSEGV inside the
/// driver, from a user layout that does not contain the shader's bindings.
#[test]
fn compute_pipeline_with_a_layout_that_does_not_cover_the_shader_is_e058() {
    let device = device();
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let reflected = PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap();
    let with = |layout: &PipelineLayoutDesc| {
        device.compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").layout(Some(layout)))
    };
    assert_eq!(code(with(&PipelineLayoutDesc::default())), "KILN-E058");
    // Same bindings, but visible to the fragment stage only.
    let wrong_stage = reflected
        .clone()
        .with_visibility(0, kiln::Visibility::Exact);
    let mut sets = wrong_stage.sets.clone();
    sets[0] = kiln::DescriptorSetLayoutDesc::new(
        sets[0]
            .bindings()
            .iter()
            .cloned()
            .map(|mut b| {
                b.stages = vk::ShaderStageFlags::FRAGMENT;
                b
            })
            .collect(),
        vk::DescriptorSetLayoutCreateFlags::empty(),
    );
    let wrong_stage = wrong_stage.sets(sets);
    assert_eq!(code(with(&wrong_stage)), "KILN-E058");
    // Uniform instead of storage at binding 1.
    let mut sets = reflected.sets.clone();
    sets[0] = kiln::DescriptorSetLayoutDesc::new(
        sets[0]
            .bindings()
            .iter()
            .cloned()
            .map(|mut b| {
                if b.binding == 1 {
                    b.descriptor_type = vk::DescriptorType::UNIFORM_BUFFER;
                }
                b
            })
            .collect(),
        vk::DescriptorSetLayoutCreateFlags::empty(),
    );
    let wrong_type = reflected.clone().sets(sets);
    assert_eq!(code(with(&wrong_type)), "KILN-E058");
    // A wider layout (all stages) is a superset and works.
    let wide = reflected.with_visibility(0, kiln::Visibility::All);
    with(&wide).unwrap();
    // saxpy without a push-constant range.
    let saxpy = kiln::include_spirv!("saxpy.comp").unwrap();
    let mut no_push = PipelineLayoutDesc::from_stages(&[(&saxpy, "main")]).unwrap();
    no_push.push_constant_ranges.clear();
    let r = device
        .compute_pipeline_with(&ComputePipelineDesc::new(&saxpy, "main").layout(Some(&no_push)));
    assert_eq!(code(r), "KILN-E058");
    assert_clean(&device);
}

/// Was: VUID-VkSpecializationInfo-constantID-04911 and VUID-VkSpecializationMapEntry-constantID-00776.
#[test]
fn specialization_values_twice_or_of_the_wrong_size_are_e060() {
    let device = device();
    let m = kiln::include_spirv!("test/spec_fill.comp").unwrap();
    let make = |spec: &[(u32, SpecValue)]| {
        device.compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").spec(spec))
    };
    assert_eq!(
        code(make(&[(0, SpecValue::U32(32)), (0, SpecValue::U32(64))])),
        "KILN-E060"
    );
    assert_eq!(code(make(&[(0, SpecValue::U64(32))])), "KILN-E060");
    assert_eq!(code(make(&[(0, SpecValue::F64(32.0))])), "KILN-E060");
    let p = make(&[(0, SpecValue::U32(64))]).unwrap();
    assert_eq!(p.workgroup_size(), [64, 1, 1]);
    assert_clean(&device);
}

/// Was: VUID-vkCmdCopyBuffer-size-00115 / -pRegions-00117 from a safe `copy_buffer`.
#[test]
fn bad_copies_fail_the_submission_with_a_code_and_record_nothing() {
    let device = device();
    let a = add::storage(&device, "a", &[1u32, 2, 3, 4]);
    let b = device.storage_buffer::<u32>("b", 4).unwrap();
    let cases: [(&kiln::Buffer, u64, &kiln::Buffer, u64, u64, &str); 5] = [
        (&a, 8, &b, 0, 16, "KILN-E151"),
        (&a, 0, &b, 8, 16, "KILN-E151"),
        (&a, u64::MAX, &b, 0, 2, "KILN-E151"),
        (&a, 0, &b, 0, 0, "KILN-E155"),
        (&a, 0, &a, 4, 8, "KILN-E155"),
    ];
    for (src, so, dst, d_o, size, want) in cases {
        let r = device.execute(|r| {
            r.copy_buffer(src, so, dst, d_o, size)?;
            Ok(())
        });
        assert_eq!(code(r), want, "{so} {d_o} {size}");
    }
    // Nothing was copied; a valid copy of one buffer's disjoint halves works.
    assert_eq!(b.read::<u32>().unwrap(), vec![0; 4]);
    device
        .execute(|r| {
            r.copy_buffer(&a, 0, &a, 8, 8)?;
            r.copy_buffer(&a, 0, &b, 0, 16)?;
            Ok(())
        })
        .unwrap();
    assert_eq!(b.read::<u32>().unwrap(), vec![1, 2, 1, 2]);
    assert_clean(&device);
}

#[test]
fn kiln_device_matching_nothing_is_e102_listing_the_devices() {
    let e = kiln::Device::with_desc(
        &kiln::DeviceDesc::default()
            .validation(Some(true))
            .device(Some("no-such-gpu-xyz".into())),
    )
    .unwrap_err();
    assert_eq!(e.code(), "KILN-E102");
    let s = e.to_string();
    assert!(s.contains("no-such-gpu-xyz") && s.contains("0: "), "{s}");
    // An index past the end is no match either.
    let e = kiln::Device::with_desc(
        &kiln::DeviceDesc::default()
            .validation(Some(true))
            .device(Some("999".into())),
    )
    .unwrap_err();
    assert_eq!(e.code(), "KILN-E102");
    // And the process goes on: a normal device still works.
    let device = device();
    let _ = vector_add(&device);
    assert_clean(&device);
}

#[test]
fn recording_and_set_errors() {
    let device = device();
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let p = device.compute_pipeline(&m, "main").unwrap();
    let vert = kiln::include_spirv!("test/scene.vert").unwrap();
    assert_eq!(code(device.compute_pipeline(&vert, "main")), "KILN-E251");
    assert_eq!(code(device.compute_pipeline(&m, "nope")), "KILN-E050");
    assert_eq!(code(p.descriptor_set(1)), "KILN-E205");

    let a = add::storage(&device, "a", &[1.0f32; 3]);
    assert_eq!(code(a.read::<u64>()), "KILN-E153");
    let mut set = p.descriptor_set(0).unwrap();
    assert_eq!(code(set.write_named("no_such_name", &a)), "KILN-E201");
    assert_eq!(code(set.write_buffer(7, &a)), "KILN-E200");
    assert_eq!(code(set.write_buffer_at(0, 1, &a)), "KILN-E203");
    assert_eq!(
        code(set.write_buffer_range(0, 0, None, &a, 0, 0)),
        "KILN-E151"
    );
    assert_eq!(
        code(set.write_buffer_range(0, 0, None, &a, 8, 8)),
        "KILN-E151"
    );

    assert_eq!(
        code(device.execute(|r| Ok(r.dispatch(1, 1, 1)?))),
        "KILN-E252"
    );
    assert_eq!(
        code(device.execute(|r| Ok(r.bind_set(0, &set)?))),
        "KILN-E252"
    );
    assert_eq!(code(device.execute(|r| Ok(r.push(0, &1u32)?))), "KILN-E252");
    let r = device.execute(|r| {
        r.bind_pipeline(&p)?;
        Ok(r.bind_set(0, &set)?)
    });
    assert_eq!(code(r), "KILN-E207");
    for b in 0..3 {
        set.write_buffer(b, &a).unwrap();
    }
    let r = device.execute(|r| {
        r.bind_pipeline(&p)?;
        Ok(r.bind_set(3, &set)?)
    });
    assert_eq!(code(r), "KILN-E205");
    let r = device.execute(|r| {
        r.bind_pipeline(&p)?;
        r.bind_set(0, &set)?;
        Ok(r.dispatch(u32::MAX, 1, 1)?)
    });
    assert_eq!(code(r), "KILN-E253");
    // The device still works after every refused recording.
    device.execute(|r| add::dispatch(r, &p, &set, 3)).unwrap();
    assert_eq!(a.read::<f32>().unwrap(), vec![2.0; 3]);
    assert_clean(&device);
}

/// Was: a capability of an extension kiln does not enable (AtomicFloat32AddEXT) passed the
/// capability check, and the pipeline was created with VUID-VkShaderModuleCreateInfo-pCode-01091
/// / -04147. Now `KILN-E107` naming the capability, before the driver sees the shader.
#[test]
fn extension_capabilities_kiln_does_not_enable_are_e107() {
    let device = device();
    let m = kiln::include_spirv!("test/atomic_float.comp").unwrap();
    assert!(m
        .reflection()
        .capabilities
        .iter()
        .any(|c| c == "AtomicFloat32AddEXT"));
    let e = device.compute_pipeline(&m, "main").unwrap_err();
    assert_eq!(e.code(), "KILN-E107");
    assert!(e.to_string().contains("AtomicFloat32AddEXT"), "{e}");
    assert_clean(&device);
}

#[test]
fn a_single_allocation_beyond_the_heap_is_an_error_and_the_device_continues() {
    // Beyond the heap, the buffer is refused by the first limit it passes: maxBufferSize
    // (E159) where that is below the heap (Mesa 25's lavapipe: 4 GiB of a host-sized
    // heap), else the heap (E154; Mesa 22.3's lavapipe, the H200's 1 TiB maxBufferSize).
    // Opting in to allocations beyond maxMemoryAllocationSize so that it is not E162.
    let device = device_with_desc(kiln::DeviceDesc::default().allocations_beyond_limit(true));
    let heaps = device.heap_usage();
    let biggest = heaps.iter().map(|h| h.size).max().unwrap();
    let size = biggest + (1 << 20);
    let err = device
        .buffer(
            &kiln::BufferDesc::default()
                .label("huge")
                .size(size)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(kiln::MemoryLocation::GpuOnly),
        )
        .unwrap_err();
    let max_buffer = device.compute_properties().max_buffer_size;
    let want = if size > max_buffer {
        "KILN-E159"
    } else {
        "KILN-E154"
    };
    assert_eq!(err.code(), want, "{err}");
    still_works(&device);
    assert_clean(&device);
}

/// A buffer beyond `maxMemoryAllocationSize` (but within `maxBufferSize`) is `KILN-E162`
/// before any Vulkan call, naming the limit and the opt-in; the host buffer path too.
#[test]
fn a_buffer_beyond_max_memory_allocation_size_is_e162() {
    let device = device();
    let p = device.compute_properties();
    let size = p.max_memory_allocation_size + 1;
    assert!(
        size <= p.max_buffer_size,
        "{}: maxMemoryAllocationSize {} is not below maxBufferSize {}",
        device.info().name,
        p.max_memory_allocation_size,
        p.max_buffer_size
    );
    let err = device
        .buffer(
            &kiln::BufferDesc::default()
                .label("one too many")
                .size(size)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(kiln::MemoryLocation::GpuOnly),
        )
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E162", "{err}");
    let text = err.to_string();
    assert!(
        text.contains("`one too many`")
            && text.contains(&p.max_memory_allocation_size.to_string())
            && text.contains("allocations_beyond_limit"),
        "{text}"
    );
    assert_eq!(code(device.host_buffer("host too", size)), "KILN-E162");
    still_works(&device);
    assert_clean(&device);
}

#[test]
fn allocate_until_the_heap_is_full_then_free_and_continue() {
    let device = device();
    let chunk = 256u64 << 20;
    let mut held = Vec::new();
    let err = loop {
        match device.buffer(
            &kiln::BufferDesc::default()
                .label("filler")
                .size(chunk)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(kiln::MemoryLocation::GpuOnly),
        ) {
            Ok(b) => held.push(b),
            Err(e) => break e,
        }
        assert!(held.len() < 4096, "the heap never filled up");
    };
    assert!(
        matches!(err.code(), "KILN-E154" | "KILN-E150" | "KILN-E106"),
        "{err}"
    );
    assert!(!held.is_empty());
    held.clear();
    let used = device.heap_usage()[0].used;
    assert!(
        used < chunk,
        "memory was not returned: {used} bytes still counted"
    );
    still_works(&device);
    assert_clean(&device);
}

#[test]
fn capability_the_device_lacks_is_refused_before_pipeline_creation() {
    let device = device();
    let m = kiln::include_spirv!("test/image_load_formatted.comp").unwrap();
    assert!(m
        .reflection()
        .capabilities
        .iter()
        .any(|c| c == "StorageImageReadWithoutFormat"));
    match device.compute_pipeline(&m, "main") {
        Ok(_) => assert!(
            device.features().shader_storage_image_read_without_format,
            "pipeline created although the feature is missing"
        ),
        Err(e) => {
            assert_eq!(e.code(), "KILN-E107", "{e}");
            let msg = e.to_string();
            assert!(msg.contains("shaderStorageImageReadWithoutFormat"), "{msg}");
            assert!(msg.contains(&device.info().name), "{msg}");
        }
    }
    still_works(&device);
    assert_clean(&device);
}

#[test]
fn limits_are_errors_not_validation_messages() {
    let device = device();
    let l = *device.limits();
    // Push constants beyond maxPushConstantsSize.
    let big = kiln::include_spirv!("test/big_push.comp").unwrap();
    if l.max_push_constants_size < 256 {
        let e = device.compute_pipeline(&big, "main").unwrap_err();
        assert_eq!(e.code(), "KILN-E053", "{e}");
    }
    // Descriptor counts beyond maxPerStageDescriptorStorageBuffers.
    let many = kiln::include_spirv!("test/many_buffers.comp").unwrap();
    if l.max_per_stage_descriptor_storage_buffers < 40 {
        let e = device.compute_pipeline(&many, "main").unwrap_err();
        assert_eq!(e.code(), "KILN-E057", "{e}");
        assert!(
            e.to_string()
                .contains("maxPerStageDescriptorStorageBuffers"),
            "{e}"
        );
    }
    // Workgroup size (from a specialization constant) beyond the limits.
    let spec = kiln::include_spirv!("test/spec_fill.comp").unwrap();
    let too_big = l.max_compute_work_group_invocations + 1;
    let e = device
        .compute_pipeline_with(
            &ComputePipelineDesc::new(&spec, "main").spec(&[(0, SpecValue::U32(too_big))]),
        )
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E054", "{e}");
    // The same module with a legal size works, and the size is honoured.
    let p = device
        .compute_pipeline_with(
            &ComputePipelineDesc::new(&spec, "main").spec(&[(0, SpecValue::U32(48))]),
        )
        .unwrap();
    assert_eq!(p.workgroup_size(), [48, 1, 1]);
    let out = device.storage_buffer::<u32>("v", 100).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    // Dispatch group count beyond maxComputeWorkGroupCount.
    let e = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch(l.max_compute_work_group_count[0].saturating_add(1), 1, 1)?)
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E253", "{e}");
    device.execute(|r| add::dispatch(r, &p, &set, 100)).unwrap();
    assert_eq!(out.read::<u32>().unwrap(), (0..100).collect::<Vec<u32>>());
    assert_clean(&device);
}

#[test]
fn zero_sized_buffer_is_an_error_not_a_validation_message() {
    let device = device();
    let err = device.storage_buffer::<f32>("empty", 0).unwrap_err();
    assert_eq!(err.code(), "KILN-E152");
    assert_clean(&device);
}

#[test]
fn messenger_counts_a_real_validation_error() {
    let device = device();
    assert_clean(&device);
    // SAFETY (test): a deliberately invalid call through the unchecked path: a buffer of
    // size 0 violates VUID-VkBufferCreateInfo-size-00912. lavapipe tolerates it.
    unsafe {
        let raw = device.raw();
        let info = vk::BufferCreateInfo::default()
            .size(0)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        if let Ok(b) = raw.create_buffer(&info, None) {
            raw.destroy_buffer(b, None);
        }
    }
    let r = device.validation_report();
    assert!(
        r.errors >= 1,
        "the messenger did not count the error: {r:?}"
    );
    assert!(
        r.messages
            .iter()
            .any(|m| m.contains("VUID-VkBufferCreateInfo-size-00912")),
        "{:?}",
        r.messages
    );
}
