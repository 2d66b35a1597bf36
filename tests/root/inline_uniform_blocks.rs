//! Inline uniform blocks (Vulkan 1.3, VK_EXT_inline_uniform_block): a uniform block the
//! pipeline layout makes inline, its bytes written into the descriptor set and read by a
//! dispatch; the coded errors of the layout option, the layout and the writes.

use common::{assert_clean, code, device};
use kiln::{vk, ComputePipelineDesc, DescriptorSetLayoutDesc, PipelineLayoutDesc};

fn words(v: &[u32]) -> &[u8] {
    bytemuck::cast_slice(v)
}

fn inline_layout() -> (kiln::ShaderModule, PipelineLayoutDesc) {
    let m = kiln::include_spirv!("test/inline_block.comp").unwrap();
    let reflected = PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap();
    // std140: scale at 0, bias at 4, offsets (a uvec4) at 16: 32 bytes.
    assert_eq!(reflected.uniform_block_sizes.get(&(0, 0)), Some(&32));
    let layout = reflected.with_inline_uniform_block(0, 0).unwrap();
    let b = layout.sets[0].binding(0).unwrap();
    assert_eq!(
        (b.descriptor_type, b.count),
        (vk::DescriptorType::INLINE_UNIFORM_BLOCK, 32)
    );
    (m, layout)
}

#[test]
fn a_dispatch_reads_bytes_written_inline() {
    let device = device();
    let (m, layout) = inline_layout();
    let f = device.features();
    println!(
        "inline uniform blocks on {}: inlineUniformBlock {}, {:?}",
        device.info().name,
        f.inline_uniform_block,
        f.inline_uniform_block_limits
    );
    let made =
        device.compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").layout(Some(&layout)));
    if !f.inline_uniform_block {
        println!("inline uniform blocks: the coded-error path ran (no inlineUniformBlock)");
        let e = made.unwrap_err();
        assert_eq!(e.code(), "KILN-E107", "{e}");
        assert!(e.to_string().contains("inlineUniformBlock"), "{e}");
        return;
    }
    println!("inline uniform blocks: the real path ran");
    assert!(f.inline_uniform_block_limits.max_size >= 256);
    let p = made.unwrap();
    let n = 256usize;
    let out = device.storage_buffer::<u32>("out", n).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(1, &out).unwrap();
    // Nothing written inline yet: the set does not bind.
    let e = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            Ok(r.bind_set(0, &set)?)
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E207", "{e}");
    set.write_inline_uniform_block(0, 0, words(&[3, 7]))
        .unwrap();
    set.write_inline_uniform_block(0, 16, words(&[100, 200, 300, 400]))
        .unwrap();
    let run = |set: &kiln::DescriptorSet| {
        device.execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, set)?;
            Ok(r.dispatch_threads(n as u32)?)
        })
    };
    run(&set).unwrap();
    let offsets = [100u32, 200, 300, 400];
    let want: Vec<u32> = (0..n as u32)
        .map(|i| 3 * i + 7 + offsets[i as usize % 4])
        .collect();
    assert_eq!(out.read::<u32>().unwrap(), want);
    // A write of part of the block (the bias) after the set was used: the next dispatch
    // reads the new bytes and the old ones beside them.
    set.write_inline_uniform_block(0, 4, words(&[1000]))
        .unwrap();
    run(&set).unwrap();
    let want: Vec<u32> = (0..n as u32)
        .map(|i| 3 * i + 1000 + offsets[i as usize % 4])
        .collect();
    assert_eq!(out.read::<u32>().unwrap(), want);
    assert_clean(&device);
}

#[test]
fn inline_uniform_block_errors_are_coded() {
    let device = device();
    let (m, layout) = inline_layout();
    // Only a (non-array) uniform block can be made inline: binding 1 is a storage buffer.
    let reflected = PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap();
    let e = reflected
        .clone()
        .with_inline_uniform_block(0, 1)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E200", "{e}");
    assert!(e.to_string().contains("[0]"), "{e}");
    assert_eq!(
        code(reflected.clone().with_inline_uniform_block(2, 0)),
        "KILN-E200"
    );
    // Without the option, the block stays a uniform buffer.
    let plain = device.compute_pipeline(&m, "main").unwrap();
    let mut plain_set = plain.descriptor_set(0).unwrap();
    let e = plain_set
        .write_inline_uniform_block(0, 0, words(&[1]))
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    if !device.features().inline_uniform_block {
        println!("inline uniform blocks: the device lacks inlineUniformBlock; layout errors only");
        let e = device.pipeline_layout(&layout).unwrap_err();
        assert_eq!(e.code(), "KILN-E107", "{e}");
        return;
    }
    let p = device
        .compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").layout(Some(&layout)))
        .unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    let out = device.storage_buffer::<u32>("out", 4).unwrap();
    // A buffer where the block is inline, bytes where a buffer goes, no such binding.
    assert_eq!(code(set.write_buffer(0, &out)), "KILN-E202");
    assert_eq!(
        code(set.write_inline_uniform_block(1, 0, words(&[1]))),
        "KILN-E202"
    );
    assert_eq!(
        code(set.write_inline_uniform_block(9, 0, words(&[1]))),
        "KILN-E200"
    );
    // Offsets and sizes are multiples of 4 (VUID-VkWriteDescriptorSet-descriptorType-02219,
    // -02220), not empty, and within the reflected 32 bytes.
    for (offset, bytes, why) in [
        (2u32, &[0u8; 4][..], "offset"),
        (0, &[0u8; 6][..], "size"),
        (0, &[][..], "empty"),
        (16, &[0u8; 20][..], "past the end"),
        (32, &[0u8; 4][..], "at the end"),
    ] {
        let e = set
            .write_inline_uniform_block(0, offset, bytes)
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E215", "{why}: {e}");
        assert!(e.to_string().contains("32 bytes"), "{why}: {e}");
    }
    // Layouts by hand: a block past maxInlineUniformBlockSize, one whose size is not a
    // multiple of 4, an array (variable count) of blocks.
    let max = device.features().inline_uniform_block_limits.max_size;
    let binding = |count: u32, flags: vk::DescriptorBindingFlags| {
        kiln::SetLayoutBinding::new(
            0,
            vk::DescriptorType::INLINE_UNIFORM_BLOCK,
            count,
            vk::ShaderStageFlags::COMPUTE,
        )
        .flags(flags)
    };
    let none = vk::DescriptorBindingFlags::empty();
    for (b, what) in [
        (binding(max + 4, none), "maxInlineUniformBlockSize"),
        (binding(6, none), "multiple of 4"),
        (
            binding(16, vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT),
            "variable",
        ),
    ] {
        let e = device
            .set_layout(&DescriptorSetLayoutDesc::new(
                vec![b],
                vk::DescriptorSetLayoutCreateFlags::empty(),
            ))
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E209", "{what}: {e}");
        assert!(e.to_string().contains(what), "{what}: {e}");
    }
    // A layout of more blocks than the pipeline layout may hold.
    let limits = device.features().inline_uniform_block_limits;
    let many: Vec<kiln::SetLayoutBinding> = (0..=limits.max_per_stage.min(64))
        .map(|i| binding(4, none).binding(i))
        .collect();
    if many.len() as u32 > limits.max_per_stage {
        let desc = PipelineLayoutDesc::default().sets(vec![DescriptorSetLayoutDesc::new(
            many,
            vk::DescriptorSetLayoutCreateFlags::empty(),
        )]);
        let e = device.pipeline_layout(&desc).unwrap_err();
        assert_eq!(e.code(), "KILN-E057", "{e}");
        assert!(e.to_string().contains("InlineUniformBlocks"), "{e}");
    }
    // The set still works.
    set.write_inline_uniform_block(0, 0, &[0u8; 32]).unwrap();
    assert_clean(&device);
}
