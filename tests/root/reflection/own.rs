//! Exact reflection of kiln's own shaders (the examples' and the tests' `shaders/`,
//! compiled at build time by glslc, and a WGSL module with two entry points by naga).

use kiln::vk;

#[test]
fn vector_add_reflects_three_storage_buffers() {
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let r = m.reflection();
    assert_eq!(r.version, 0x0001_0000);
    assert_eq!(r.entry_points.len(), 1);
    let ep = r.entry_point("main").unwrap();
    assert_eq!(ep.stage, vk::ShaderStageFlags::COMPUTE);
    assert_eq!(ep.workgroup_size.unwrap().size, [256, 1, 1]);
    let got: Vec<_> = ep
        .bindings
        .iter()
        .map(|b| (b.set, b.binding, b.descriptor_type, b.count, b.name.clone()))
        .collect();
    let sb = vk::DescriptorType::STORAGE_BUFFER;
    assert_eq!(
        got,
        vec![
            (0, 0, sb, 1, Some("A".to_string())),
            (0, 1, sb, 1, Some("B".to_string())),
            (0, 2, sb, 1, Some("C".to_string())),
        ]
    );
    // Runtime array of f32: fixed part 0 bytes, stride 4.
    let block = ep.bindings[0].block.as_ref().unwrap();
    assert_eq!((block.size, block.runtime_stride), (0, Some(4)));
    assert!(ep.bindings[0].non_writable);
    assert!(!ep.bindings[2].non_writable);
    assert!(ep.push_constants.is_none());
}

#[test]
fn saxpy_push_constant_range() {
    let m = kiln::include_spirv!("saxpy.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    let pc = ep.push_constants.as_ref().unwrap();
    assert_eq!((pc.offset, pc.size), (0, 8));
    let names: Vec<_> = pc
        .block
        .as_ref()
        .unwrap()
        .members
        .iter()
        .map(|m| (m.name.clone().unwrap(), m.offset, m.size))
        .collect();
    assert_eq!(names, vec![("a".into(), 0, 4), ("n".into(), 4, 4)]);
}

#[test]
fn static_use_follows_function_calls_and_skips_unused() {
    let m = kiln::include_spirv!("test/fill.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    let used: Vec<_> = ep.bindings.iter().map(|b| (b.set, b.binding)).collect();
    assert_eq!(
        used,
        vec![(0, 0)],
        "only the buffer written in store() is used"
    );
    let unused: Vec<_> = ep
        .unused_bindings
        .iter()
        .map(|b| (b.binding, b.descriptor_type))
        .collect();
    assert_eq!(unused, vec![(5, vk::DescriptorType::UNIFORM_BUFFER)]);
}

#[test]
fn missing_entry_point_lists_the_available_ones() {
    let m = kiln::include_spirv!("saxpy.comp").unwrap();
    let err = m.reflection().entry_point("nope").unwrap_err();
    assert_eq!(err.code(), "KILN-E050");
    assert!(err.to_string().contains("main (GLCompute)"), "{err}");
}

#[test]
fn naga_multi_entry_module_reflects_per_entry_point() {
    let m = kiln::include_spirv!("test/two_entries.wgsl").unwrap();
    let r = m.reflection();
    let generator = kiln::reflect::generator_name(r.generator);
    assert!(generator.contains("Naga"), "{generator}");
    let names: Vec<_> = r.entry_points.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["scale", "clear"]);
    let scale = r.entry_point("scale").unwrap();
    let clear = r.entry_point("clear").unwrap();
    assert_eq!(scale.workgroup_size.unwrap().size, [64, 1, 1]);
    assert_eq!(clear.workgroup_size.unwrap().size, [32, 2, 1]);
    let used = |e: &kiln::reflect::EntryPoint| {
        e.bindings
            .iter()
            .map(|b| (b.binding, b.descriptor_type))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        used(scale),
        vec![
            (0, vk::DescriptorType::UNIFORM_BUFFER),
            (1, vk::DescriptorType::STORAGE_BUFFER)
        ]
    );
    // naga writes SPIR-V 1.0 with the StorageBuffer storage class: still a storage buffer.
    assert_eq!(used(clear), vec![(1, vk::DescriptorType::STORAGE_BUFFER)]);
    assert_eq!(clear.unused_bindings.len(), 1);
    // naga wraps a uniform struct in a one-member block: 8 bytes at offset 0.
    let params = scale.bindings[0].block.as_ref().unwrap();
    let members: Vec<_> = params.members.iter().map(|m| (m.offset, m.size)).collect();
    assert_eq!((params.size, members), (8, vec![(0, 8)]));
}

/// A module with NonSemantic.Shader.DebugInfo.100 (`// kiln: debug-info`, glslang's
/// `-gVS` through kiln-build): the import, the source file's name and text are in it, and
/// reflection, pipeline creation and a dispatch are as without them.
#[test]
fn nonsemantic_debug_info_is_skipped_by_reflection() {
    let bytes: &[u8] = kiln::__macro_support::spirv_bytes!("test/debug_info.comp");
    let contains = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    assert!(
        contains(b"NonSemantic.Shader.DebugInfo.100"),
        "no NonSemantic debug info: install glslang-tools (KILN-B012 in the build output)"
    );
    assert!(contains(b"debug_info.comp"), "the source file's name");
    assert!(contains(b"float twice(Pair p)"), "the source text");
    let m = kiln::include_spirv!("test/debug_info.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    assert_eq!(ep.workgroup_size.unwrap().size, [8, 2, 1]);
    let got: Vec<_> = ep
        .bindings
        .iter()
        .map(|b| (b.set, b.binding, b.name.clone(), b.non_writable))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 1, Some("Src".to_string()), true),
            (0, 2, Some("Dst".to_string()), false),
        ]
    );
    let pc = ep.push_constants.as_ref().unwrap();
    assert_eq!((pc.offset, pc.size), (0, 8));
    let device = common::device();
    let p = device.compute_pipeline(&m, "main").unwrap();
    let src = device
        .buffer_from_slice(
            "src",
            vk::BufferUsageFlags::STORAGE_BUFFER,
            &[1.0f32, 2.0, 3.0],
        )
        .unwrap();
    let dst = device.storage_buffer::<f32>("dst", 3).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(1, &src).unwrap();
    set.write_buffer(2, &dst).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push(0, &[0.5f32.to_bits(), 3])?;
            Ok(r.dispatch(1, 1, 1)?)
        })
        .unwrap();
    assert_eq!(dst.read::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
    common::assert_clean(&device);
}
