//! Exact reflection of kiln's own fixtures (`tests/fixtures/`: each source beside the `.spv`
//! compiled from it once with glslc, naga or spirv-as; the command is in the source's header
//! or in `tests/fixtures/README.md`; embedded by `common::fixtures`). No GPU needed.

use kiln::reflect::{Access, BlockLayout, DescriptorBinding, EntryPoint};
use kiln::{vk, ShaderModule, SpecValue};

fn load(name: &str) -> ShaderModule {
    common::fixtures::module(name)
}

type Row = (u32, u32, vk::DescriptorType, u32, &'static str);

fn rows(list: &[DescriptorBinding]) -> Vec<(u32, u32, vk::DescriptorType, u32, String)> {
    list.iter()
        .map(|b| {
            let name = b.name.clone().unwrap_or_default();
            (b.set, b.binding, b.descriptor_type, b.count, name)
        })
        .collect()
}

fn expect(list: &[DescriptorBinding], want: &[Row]) {
    let want: Vec<_> = want
        .iter()
        .map(|&(s, b, t, c, n)| (s, b, t, c, n.to_string()))
        .collect();
    assert_eq!(rows(list), want);
}

/// (name, offset, size, array stride, matrix stride) of a block member.
type MemberRow<'a> = (&'a str, u32, u32, Option<u32>, Option<u32>);

fn members(b: &BlockLayout) -> Vec<MemberRow<'_>> {
    b.members
        .iter()
        .map(|m| {
            let name = m.name.as_deref().unwrap_or("");
            (name, m.offset, m.size, m.array_stride, m.matrix_stride)
        })
        .collect()
}

fn only_entry(m: &ShaderModule) -> &EntryPoint {
    let eps = &m.reflection().entry_points;
    assert_eq!(eps.len(), 1);
    &eps[0]
}

use vk::DescriptorType as D;

#[test]
fn resources_passed_as_function_parameters_are_used() {
    let m = load("fn_params.comp.spv");
    let ep = only_entry(&m);
    expect(
        &ep.bindings,
        &[
            (0, 0, D::COMBINED_IMAGE_SAMPLER, 1, "src"),
            (0, 1, D::STORAGE_IMAGE, 1, "dst"),
            (1, 0, D::STORAGE_BUFFER, 1, "counter"),
        ],
    );
    expect(
        &ep.unused_bindings,
        &[(0, 2, D::COMBINED_IMAGE_SAMPLER, 1, "unused_tex")],
    );
    let dst = &ep.bindings[1];
    assert!(dst.non_readable && !dst.non_writable, "writeonly image");
    assert_eq!(dst.image.unwrap().format, kiln::reflect::ImageFormat::Rgba8);
    // The counter block is only a runtime array: OpArrayLength is its only use.
    let block = ep.bindings[2].block.as_ref().unwrap();
    assert_eq!((block.size, block.runtime_stride), (0, Some(4)));
    assert_eq!(ep.workgroup_size.unwrap().size, [8, 8, 1]);
}

#[test]
fn naga_multi_entry_point_module_is_reflected_per_entry_point() {
    let m = load("multi_entry.wgsl.spv");
    let r = m.reflection();
    assert_eq!(r.version, 0x0001_0000);
    assert_eq!(
        kiln::reflect::generator_name(r.generator),
        "gfx-rs community Naga (id in low half)"
    );
    let names: Vec<_> = r
        .entry_points
        .iter()
        .map(|e| (e.name.as_str(), e.stage))
        .collect();
    assert_eq!(
        names,
        [
            ("vs_main", vk::ShaderStageFlags::VERTEX),
            ("fs_main", vk::ShaderStageFlags::FRAGMENT),
            ("cs_main", vk::ShaderStageFlags::COMPUTE),
        ]
    );
    // Stripped of names by naga: bindings still reflect. StorageBuffer class in SPIR-V 1.0
    // is STORAGE_BUFFER, not UNIFORM_BUFFER.
    let vs = r.entry_point("vs_main").unwrap();
    expect(
        &vs.bindings,
        &[
            (0, 0, D::UNIFORM_BUFFER, 1, ""),
            (0, 1, D::STORAGE_BUFFER, 1, ""),
        ],
    );
    assert!(vs.bindings[1].non_writable, "var<storage, read>");
    let fs = r.entry_point("fs_main").unwrap();
    expect(
        &fs.bindings,
        &[
            (0, 0, D::UNIFORM_BUFFER, 1, ""),
            (1, 0, D::SAMPLED_IMAGE, 1, ""),
            (1, 1, D::SAMPLER, 1, ""),
        ],
    );
    let cs = r.entry_point("cs_main").unwrap();
    expect(
        &cs.bindings,
        &[
            (0, 0, D::UNIFORM_BUFFER, 1, ""),
            (0, 1, D::STORAGE_BUFFER, 1, ""),
            (0, 2, D::STORAGE_BUFFER, 1, ""),
        ],
    );
    assert_eq!(cs.unused_bindings.len(), 2);
    assert_eq!(cs.workgroup_size.unwrap().size, [64, 1, 1]);
    // Globals { mat4x4<f32>, f32 }: 64 + 4 bytes; Particle array stride 32.
    assert_eq!(cs.bindings[0].block.as_ref().unwrap().size, 68);
    assert_eq!(
        cs.bindings[2].block.as_ref().unwrap().runtime_stride,
        Some(32)
    );
    // Stage interface: built-ins excluded.
    let io = |v: &[kiln::reflect::InterfaceVariable]| -> Vec<(u32, vk::Format)> {
        v.iter().map(|v| (v.location, v.format)).collect()
    };
    assert_eq!(io(&vs.inputs), [(0, vk::Format::R32G32B32_SFLOAT)]);
    assert_eq!(io(&vs.outputs), [(0, vk::Format::R32G32_SFLOAT)]);
    assert_eq!(io(&fs.outputs), [(0, vk::Format::R32G32B32A32_SFLOAT)]);
    // One pipeline from vs+fs: binding (0,0) used by both stages, the others by one.
    let desc = kiln::PipelineLayoutDesc::from_entry_points(&[("vs", vs), ("fs", fs)]).unwrap();
    let set0: Vec<_> = desc.sets[0]
        .bindings()
        .iter()
        .map(|b| (b.binding, b.stages))
        .collect();
    assert_eq!(
        set0,
        [
            (
                0,
                vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT
            ),
            (1, vk::ShaderStageFlags::VERTEX)
        ]
    );
}

#[test]
fn spec_sized_and_runtime_descriptor_arrays() {
    let m = load("spec_arrays.frag.spv");
    let r = m.reflection();
    let ep = only_entry(&m);
    expect(
        &ep.bindings,
        &[
            (0, 0, D::COMBINED_IMAGE_SAMPLER, 6, "fixed_tex"),
            (1, 0, D::COMBINED_IMAGE_SAMPLER, 6, "layers"),
            (2, 0, D::COMBINED_IMAGE_SAMPLER, 0, "textures"),
        ],
    );
    let b = &ep.bindings;
    assert_eq!((b[0].runtime_array, b[0].count_spec_id), (false, None));
    assert_eq!((b[1].runtime_array, b[1].count_spec_id), (false, Some(3)));
    assert_eq!((b[2].runtime_array, b[2].count_spec_id), (true, None));
    let spec: Vec<_> = r
        .spec_constants
        .iter()
        .map(|s| (s.id, s.name.clone().unwrap(), s.default))
        .collect();
    assert_eq!(
        spec,
        [
            (3, "LAYERS".to_string(), SpecValue::U32(6)),
            (4, "GAIN".to_string(), SpecValue::F32(1.5)),
            (5, "FLAG".to_string(), SpecValue::Bool(true)),
        ]
    );
    let desc = kiln::PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap();
    assert_eq!(desc.runtime_arrays, [(2, 0)]);
}

#[test]
fn spec_constant_expressions_float_ops_do_not_fail() {
    let m = load("spec_ops.spvasm.spv");
    let r = m.reflection();
    let ep = only_entry(&m);
    // `ubos` is sized by IAdd(N, 1) = 4 at defaults; `more` directly by K (spec id 2).
    expect(
        &ep.unused_bindings,
        &[
            (0, 0, D::UNIFORM_BUFFER, 4, "ubos"),
            (0, 1, D::UNIFORM_BUFFER, 5, "more"),
        ],
    );
    assert_eq!(ep.unused_bindings[0].count_spec_id, None);
    assert_eq!(ep.unused_bindings[1].count_spec_id, Some(2));
    let ids: Vec<_> = r.spec_constants.iter().map(|s| (s.id, s.default)).collect();
    assert_eq!(
        ids,
        [
            (0, SpecValue::U32(3)),
            (1, SpecValue::F32(2.0)),
            (2, SpecValue::U32(5))
        ]
    );
}

#[test]
fn texel_buffers_and_storage_images() {
    let m = load("texel_buffers.comp.spv");
    let ep = only_entry(&m);
    expect(
        &ep.bindings,
        &[
            (0, 0, D::UNIFORM_TEXEL_BUFFER, 1, "lut"),
            (0, 2, D::STORAGE_TEXEL_BUFFER, 1, "result"),
            (0, 3, D::STORAGE_IMAGE, 1, "picture"),
        ],
    );
    expect(
        &ep.unused_bindings,
        &[(0, 1, D::UNIFORM_TEXEL_BUFFER, 1, "raw_lut")],
    );
    let (result, picture) = (&ep.bindings[1], &ep.bindings[2]);
    assert!(result.non_readable && !result.non_writable);
    assert!(picture.non_writable && !picture.non_readable);
    assert_eq!(
        picture.image.unwrap().format,
        kiln::reflect::ImageFormat::Rgba32f
    );
    assert_eq!(
        result.image.unwrap().format,
        kiln::reflect::ImageFormat::R32f
    );
}

#[test]
fn input_attachments_carry_their_index() {
    let m = load("input_attachments.frag.spv");
    let ep = only_entry(&m);
    expect(
        &ep.bindings,
        &[
            (0, 0, D::INPUT_ATTACHMENT, 1, "albedo"),
            (0, 1, D::INPUT_ATTACHMENT, 1, "normal"),
            (0, 2, D::INPUT_ATTACHMENT, 1, "depth"),
        ],
    );
    let idx: Vec<_> = ep
        .bindings
        .iter()
        .map(|b| b.input_attachment_index)
        .collect();
    assert_eq!(idx, [Some(0), Some(2), Some(1)]);
    assert!(ep.bindings[2].image.unwrap().multisampled);
}

#[test]
fn acceleration_structures() {
    let m = load("ray_query.comp.spv");
    assert_eq!(m.reflection().version, 0x0001_0500);
    assert!(m
        .reflection()
        .capabilities
        .contains(&"RayQueryKHR".to_string()));
    assert_eq!(m.reflection().extensions, ["SPV_KHR_ray_query"]);
    let ep = only_entry(&m);
    expect(
        &ep.bindings,
        &[
            (0, 0, D::ACCELERATION_STRUCTURE_KHR, 1, "tlas"),
            (0, 1, D::STORAGE_BUFFER, 1, "hits"),
            (1, 0, D::ACCELERATION_STRUCTURE_KHR, 3, "tlas_array"),
        ],
    );
}

#[test]
fn std140_std430_and_scalar_block_offsets() {
    let m = load("block_layouts.comp.spv");
    let ep = only_entry(&m);
    let block = |i: usize| ep.bindings[i].block.as_ref().unwrap();
    assert_eq!(
        members(block(0)),
        [
            ("a", 0, 4, None, None),
            ("b", 16, 12, None, None),
            ("c", 28, 4, None, None),
            ("d", 32, 8, None, None),
            ("e", 48, 32, Some(16), None),
            ("m", 80, 48, None, Some(16)),
        ],
        "std140"
    );
    assert_eq!((block(0).size, block(0).runtime_stride), (128, None));
    assert_eq!(
        members(block(1)),
        [
            ("a", 0, 4, None, None),
            ("b", 16, 12, None, None),
            ("c", 28, 4, None, None),
            ("d", 32, 8, None, None),
            ("e", 40, 8, Some(4), None),
            ("m", 48, 48, None, Some(16)),
        ],
        "std430"
    );
    assert_eq!(block(1).size, 96);
    assert_eq!(
        members(block(2)),
        [
            ("a", 0, 4, None, None),
            ("b", 4, 12, None, None),
            ("c", 16, 4, None, None),
            ("d", 20, 8, None, None),
            ("e", 28, 8, Some(4), None),
            ("m", 36, 36, None, Some(12)),
        ],
        "scalar"
    );
    assert_eq!(block(2).size, 72);
    // Fixed part + runtime-array stride.
    assert_eq!(
        members(block(3)),
        [("head", 0, 8, None, None), ("items", 16, 0, Some(16), None)]
    );
    assert_eq!((block(3).size, block(3).runtime_stride), (16, Some(16)));
    assert_eq!(block(3).size_for(10), 176);
}

#[test]
fn push_constants_at_a_non_zero_offset_and_their_ranges() {
    let vs = load("push_offset.vert.spv");
    let fs = load("push_offset.frag.spv");
    let v = only_entry(&vs).push_constants.as_ref().unwrap();
    let f = only_entry(&fs).push_constants.as_ref().unwrap();
    assert_eq!((v.offset, v.size), (0, 16));
    // Members at 16 (vec4) and 32 (float): offset 16, size 32 + 4 - 16 = 20, not rounded.
    assert_eq!((f.offset, f.size), (16, 20));
    let desc = kiln::PipelineLayoutDesc::from_stages(&[(&vs, "main"), (&fs, "main")]).unwrap();
    let ranges: Vec<_> = desc
        .push_constant_ranges
        .iter()
        .map(|r| (r.stages, r.offset, r.size))
        .collect();
    assert_eq!(
        ranges,
        [
            (vk::ShaderStageFlags::VERTEX, 0, 16),
            (vk::ShaderStageFlags::FRAGMENT, 16, 20)
        ]
    );
    let set0: Vec<_> = desc.sets[0]
        .bindings()
        .iter()
        .map(|b| (b.binding, b.descriptor_type, b.stages))
        .collect();
    assert_eq!(
        set0,
        [(
            0,
            D::UNIFORM_BUFFER,
            vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT
        )]
    );
    let outs: Vec<_> = only_entry(&fs)
        .outputs
        .iter()
        .map(|o| (o.location, o.format))
        .collect();
    assert_eq!(
        outs,
        [
            (0, vk::Format::R32G32B32A32_SFLOAT),
            (1, vk::Format::R32G32_SINT)
        ]
    );
    let ins: Vec<_> = only_entry(&vs)
        .inputs
        .iter()
        .map(|o| (o.location, o.format))
        .collect();
    assert_eq!(
        ins,
        [
            (0, vk::Format::R32G32B32_SFLOAT),
            (1, vk::Format::R32G32_UINT)
        ]
    );
}

#[test]
fn local_size_id_and_workgroup_size_builtin() {
    // SPIR-V 1.0: the WorkgroupSize built-in (a spec-constant composite).
    let old = load("local_size_id.comp.spv");
    // SPIR-V 1.6: OpExecutionModeId LocalSizeId.
    let new = load("local_size_id.vk13.comp.spv");
    assert_eq!(new.reflection().version, 0x0001_0600);
    for m in [&old, &new] {
        let w = only_entry(m).workgroup_size.unwrap();
        assert_eq!(w.size, [1, 4, 1]);
        assert_eq!(w.spec_ids, [Some(7), None, Some(9)]);
        assert_eq!(w.resolve(&[(7, 32), (9, 2)]), [32, 4, 2]);
        let ids: Vec<_> = m.reflection().spec_constants.iter().map(|s| s.id).collect();
        assert_eq!(ids, [7, 9], "one entry per SpecId");
    }
    assert_eq!(only_entry(&new).execution_modes, ["LocalSizeId"]);
}

/// The access of each binding (issue 15): uniform and sampled bindings are read, samplers
/// access nothing, storage bindings follow NonWritable / NonReadable on the variable
/// (images) or on every member of the block (glslang's `readonly`/`writeonly` blocks); a
/// block with only one readonly member is read and written.
#[test]
fn access_from_decorations() {
    let m = load("access.comp.spv");
    let ep = only_entry(&m);
    let got: Vec<(u32, vk::DescriptorType, bool, bool, Access)> = ep
        .bindings
        .iter()
        .map(|b| {
            (
                b.binding,
                b.descriptor_type,
                b.non_writable,
                b.non_readable,
                b.access(),
            )
        })
        .collect();
    use vk::DescriptorType as D;
    assert_eq!(
        got,
        vec![
            (0, D::UNIFORM_BUFFER, false, false, Access::READ),
            (1, D::STORAGE_BUFFER, true, false, Access::READ),
            (2, D::STORAGE_BUFFER, false, true, Access::WRITE),
            (3, D::STORAGE_BUFFER, false, false, Access::READ_WRITE),
            (4, D::STORAGE_BUFFER, true, false, Access::READ),
            (5, D::STORAGE_BUFFER, false, false, Access::READ_WRITE),
            (6, D::STORAGE_BUFFER, false, true, Access::WRITE),
            (7, D::STORAGE_IMAGE, false, true, Access::WRITE),
            (8, D::STORAGE_IMAGE, true, false, Access::READ),
            (9, D::STORAGE_IMAGE, false, false, Access::READ_WRITE),
            (10, D::COMBINED_IMAGE_SAMPLER, false, false, Access::READ),
            (11, D::SAMPLER, false, false, Access::NONE),
            (12, D::SAMPLED_IMAGE, false, false, Access::READ),
        ]
    );
}
