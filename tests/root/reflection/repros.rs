//! Regression tests for the reflection holes found by comparing kiln with SPIRV-Cross on
//! external modules (issue 17, part 1), and the determinism test: the same modules
//! reflected many times, one after another and from several threads, give byte-identical
//! output and identical errors (the same check of `kiln reflect --json` is in kiln-cli's
//! tests).
//!
//! Every module is one of kiln's fixtures (`tests/fixtures/repros/`, source beside the
//! `.spv`, commands in `tests/fixtures/README.md`), embedded by `common::fixtures` so the
//! test reads no file at run time. No GPU needed.

use kiln::reflect::{BlockLayout, DescriptorBinding, EntryPoint, UnsupportedBinding};
use kiln::{vk, PipelineLayoutDesc, ShaderModule};

use vk::DescriptorType as D;
use vk::ShaderStageFlags as S;

use common::fixtures;

const SPECOP_SHUFFLE: &str = "repros/specop_vector_shuffle.spvasm.spv";
const DECORATION_GROUP: &str = "repros/decoration_group.spvasm.spv";
const ALIAS_UNUSED_OTHER_TYPE: &str = "repros/alias_unused_other_type.comp.spv";
const ALIAS_UNREFERENCED_OTHER_TYPE: &str = "repros/alias_unreferenced_other_type.comp.spv";
const ALIAS_SAME_TYPE_OTHER_COUNT: &str = "repros/alias_same_type_other_count.comp.spv";
const SAMPLER_ARRAY_IMAGE_SINGLE: &str = "repros/sampler_array_image_single.frag.spv";
const ALIAS_USED_CONFLICT: &str = "repros/alias_used_conflict.comp.spv";
const BLOCK_TRAILING_PADDING: &str = "repros/block_trailing_padding.spvasm.spv";
const TENSOR_ARM: &str = "repros/tensor_arm.spvasm.spv";
const UNKNOWN_ARRAY_LENGTHS: &str = "repros/unknown_array_lengths.spvasm.spv";

fn load(name: &str) -> ShaderModule {
    fixtures::module(name)
}

fn entry<'m>(m: &'m ShaderModule, name: &str) -> &'m EntryPoint {
    m.reflection()
        .entry_points
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no entry point {name}"))
}

/// (set, binding, descriptor type, count, runtime array, name) of each binding.
type Row = (u32, u32, vk::DescriptorType, u32, bool, &'static str);

fn expect(list: &[DescriptorBinding], want: &[Row]) {
    let got: Vec<_> = list
        .iter()
        .map(|b| {
            let name = b.name.clone().unwrap_or_default();
            (
                b.set,
                b.binding,
                b.descriptor_type,
                b.count,
                b.runtime_array,
                name,
            )
        })
        .collect();
    let want: Vec<_> = want
        .iter()
        .map(|&(s, b, t, c, r, n)| (s, b, t, c, r, n.to_string()))
        .collect();
    assert_eq!(got, want);
}

/// (set, binding, descriptor type, count, stages) of each binding of the pipeline layout
/// made of `stages`.
fn layout_rows(stages: &[(&ShaderModule, &str)]) -> Vec<(u32, u32, vk::DescriptorType, u32, S)> {
    let d = PipelineLayoutDesc::from_stages(stages).unwrap();
    let mut rows = Vec::new();
    for (set, s) in d.sets.iter().enumerate() {
        for b in s.bindings() {
            rows.push((set as u32, b.binding, b.descriptor_type, b.count, b.stages));
        }
    }
    rows
}

/// (size, runtime stride, [(offset, size)]) of a block.
fn block_shape(b: &BlockLayout) -> (u32, Option<u32>, Vec<(u32, u32)>) {
    let members = b.members.iter().map(|m| (m.offset, m.size)).collect();
    (b.size, b.runtime_stride, members)
}

// ------------------------------------------------------------------ 1. OpSpecConstantOp

/// VectorShuffle (with an undefined component) and a two-index CompositeExtract in
/// OpSpecConstantOp parse, and an IAdd after them still sizes the descriptor array:
/// CompositeExtract(pair = {v2, shuffle(v2) = (b, a)}, 1, 0) = b = 2, plus a = 1, is 3.
#[test]
fn spec_constant_op_with_several_literals_reflects() {
    let m = load(SPECOP_SHUFFLE);
    let r = m.reflection();
    assert_eq!(r.entry_points.len(), 1);
    let ep = entry(&m, "main");
    assert_eq!(ep.stage, S::COMPUTE);
    assert_eq!(ep.workgroup_size.unwrap().size, [1, 1, 1]);
    let ids: Vec<u32> = r.spec_constants.iter().map(|s| s.id).collect();
    assert_eq!(ids, [0, 1]);
    expect(&ep.bindings, &[(0, 0, D::STORAGE_BUFFER, 3, false, "bufs")]);
    let block = ep.bindings[0].block.as_ref().unwrap();
    assert_eq!(block_shape(block), (4, None, vec![(0, 4)]));
    assert_eq!(
        layout_rows(&[(&m, "main")]),
        [(0, 0, D::STORAGE_BUFFER, 3, S::COMPUTE)]
    );
}

// ------------------------------------------------------------------ 2. decoration groups

/// BufferBlock, DescriptorSet 2 and Binding 3 reach the variable and its type only through
/// OpGroupDecorate; member 1's Offset 4 and both members' NonWritable only through
/// OpGroupMemberDecorate.
#[test]
fn decorations_through_decoration_groups_apply() {
    let m = load(DECORATION_GROUP);
    let ep = entry(&m, "main");
    expect(&ep.bindings, &[(2, 3, D::STORAGE_BUFFER, 1, false, "buf")]);
    let b = &ep.bindings[0];
    assert!(
        b.non_writable,
        "NonWritable on every member, through the group"
    );
    assert!(!b.non_readable);
    let block = b.block.as_ref().unwrap();
    assert_eq!(block_shape(block), (8, None, vec![(0, 4), (4, 4)]));
    assert_eq!(
        layout_rows(&[(&m, "main")]),
        [(2, 3, D::STORAGE_BUFFER, 1, S::COMPUTE)]
    );
}

// ------------------------------------------------------------------ 3. aliased bindings

/// A sampler aliasing a uniform buffer at (0, 0) but never statically used is dropped: the
/// binding is the uniform buffer, and the sampler is listed nowhere.
#[test]
fn unused_alias_of_another_type_is_dropped() {
    let m = load(ALIAS_UNUSED_OTHER_TYPE);
    let ep = entry(&m, "main");
    expect(
        &ep.bindings,
        &[
            (0, 0, D::UNIFORM_BUFFER, 1, false, "params"),
            (0, 1, D::STORAGE_BUFFER, 1, false, "result"),
        ],
    );
    // The sampler alias is listed as unused (as SPIRV-Cross lists it), not dropped.
    expect(
        &ep.unused_bindings,
        &[(0, 0, D::COMBINED_IMAGE_SAMPLER, 1, false, "never_sampled")],
    );
    let sizes: Vec<u32> = ep
        .bindings
        .iter()
        .map(|b| b.block.as_ref().unwrap().size)
        .collect();
    assert_eq!(sizes, [16, 16]);
    assert_eq!(
        layout_rows(&[(&m, "main")]),
        [
            (0, 0, D::UNIFORM_BUFFER, 1, S::COMPUTE),
            (0, 1, D::STORAGE_BUFFER, 1, S::COMPUTE),
        ]
    );
}

/// Storage buffers `many[3]` and `one` (readonly) alias (0, 0), both used: one
/// STORAGE_BUFFER binding of count 3, described by `many`, writable (not every alias is
/// NonWritable).
#[test]
fn aliases_of_one_type_with_other_counts_take_the_largest() {
    let m = load(ALIAS_SAME_TYPE_OTHER_COUNT);
    let ep = entry(&m, "main");
    expect(&ep.bindings, &[(0, 0, D::STORAGE_BUFFER, 3, false, "many")]);
    expect(&ep.unused_bindings, &[]);
    let b = &ep.bindings[0];
    assert!(!b.non_writable && !b.non_readable);
    assert_eq!(b.count_spec_id, None);
    assert_eq!(
        block_shape(b.block.as_ref().unwrap()),
        (0, Some(4), vec![(0, 0)])
    );
    assert_eq!(
        layout_rows(&[(&m, "main")]),
        [(0, 0, D::STORAGE_BUFFER, 3, S::COMPUTE)]
    );
}

/// `sampler samplers[3]` and `texture2D albedo` alias (0, 0), both used: one
/// COMBINED_IMAGE_SAMPLER binding of count 3, described by the image.
#[test]
fn sampler_array_with_one_image_is_one_combined_array() {
    let m = load(SAMPLER_ARRAY_IMAGE_SINGLE);
    let ep = entry(&m, "main");
    assert_eq!(ep.stage, S::FRAGMENT);
    expect(
        &ep.bindings,
        &[(0, 0, D::COMBINED_IMAGE_SAMPLER, 3, false, "albedo")],
    );
    expect(&ep.unused_bindings, &[]);
    let image = ep.bindings[0].image.unwrap();
    assert_eq!(
        (image.dim, image.sampled, image.arrayed),
        (kiln::reflect::Dim::Dim2D, 1, false)
    );
    assert_eq!(ep.bindings[0].block, None);
    assert_eq!(
        layout_rows(&[(&m, "main")]),
        [(0, 0, D::COMBINED_IMAGE_SAMPLER, 3, S::FRAGMENT)]
    );
}

/// A uniform buffer and a storage buffer alias (0, 0) and both are used: no descriptor
/// serves both, so the entry point keeps both and the layout is refused with KILN-E051.
#[test]
fn used_aliases_of_incompatible_types_are_refused() {
    let m = load(ALIAS_USED_CONFLICT);
    let ep = entry(&m, "main");
    expect(
        &ep.bindings,
        &[
            (0, 0, D::STORAGE_BUFFER, 1, false, "data"),
            (0, 0, D::UNIFORM_BUFFER, 1, false, "params"),
        ],
    );
    let e = PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap_err();
    assert_eq!(e.code(), "KILN-E051");
    assert_eq!(
        e.to_string(),
        "KILN-E051: set 0 binding 0 conflicts: `main in repros/alias_used_conflict.comp.spv` \
         declares STORAGE_BUFFER x1 but `main in repros/alias_used_conflict.comp.spv` declares \
         UNIFORM_BUFFER x1; declare the binding identically in both shaders"
    );
}

// ------------------------------------------------------------------ 4. block size

/// `Packed { float2 pair[2] (ArrayStride 16); float w @ 24 }`: `w`, the member placed last,
/// ends at 28, inside pair's trailing stride padding: the block is 28 bytes, not 32.
/// `Tail { float x; float2 pair[2] @ 16 }` ends with the array: 16 + 2 x 16 = 48.
#[test]
fn block_size_ends_at_the_member_placed_last() {
    let m = load(BLOCK_TRAILING_PADDING);
    let ep = entry(&m, "main");
    expect(
        &ep.bindings,
        &[
            (0, 0, D::STORAGE_BUFFER, 1, false, "packed"),
            (0, 1, D::STORAGE_BUFFER, 1, false, "tail"),
        ],
    );
    let packed = ep.bindings[0].block.as_ref().unwrap();
    assert_eq!(block_shape(packed), (28, None, vec![(0, 32), (24, 4)]));
    assert_eq!(packed.members[0].array_stride, Some(16));
    assert_eq!(packed.size_for(0), 28);
    let tail = ep.bindings[1].block.as_ref().unwrap();
    assert_eq!(block_shape(tail), (48, None, vec![(0, 4), (16, 32)]));
    assert_eq!(
        layout_rows(&[(&m, "main")]),
        [
            (0, 0, D::STORAGE_BUFFER, 1, S::COMPUTE),
            (0, 1, D::STORAGE_BUFFER, 1, S::COMPUTE),
        ]
    );
}

// ------------------------------------------------------------------ 5. OpTypeTensorARM

/// (set, binding, count, name, SPIR-V type, statically used) of each unsupported resource.
fn unsupported(list: &[UnsupportedBinding]) -> Vec<(u32, u32, u32, String, &str, bool)> {
    list.iter()
        .map(|u| {
            let name = u.name.clone().unwrap_or_default();
            (
                u.set,
                u.binding,
                u.count,
                name,
                u.spirv_type,
                u.statically_used,
            )
        })
        .collect()
}

const TENSOR_E061: &str = "KILN-E061: entry point `main` uses `input_tensor (set 0, binding 0)`, \
    a resource of type OpTypeTensorARM, which kiln does not support (VK_ARM_tensors: ash 0.38, kiln's \
    Vulkan bindings, has no VK_DESCRIPTOR_TYPE_TENSOR_ARM); build pipelines only from entry \
    points that do not use it";

/// The module with two tensors reflects; `main`, which uses them, is refused with
/// KILN-E061 naming `input_tensor` (lowest binding), and `count_only`, which does not,
/// builds a layout with its storage buffer.
#[test]
fn tensor_resources_refuse_only_the_entry_points_using_them() {
    let m = load(TENSOR_ARM);
    let main = entry(&m, "main");
    expect(
        &main.bindings,
        &[(0, 2, D::STORAGE_BUFFER, 1, false, "counter")],
    );
    expect(&main.unused_bindings, &[]);
    assert_eq!(
        unsupported(&main.unsupported_bindings),
        [
            (0, 0, 1, "input_tensor".into(), "OpTypeTensorARM", true),
            (0, 1, 1, "output_tensor".into(), "OpTypeTensorARM", true),
        ]
    );
    let other = entry(&m, "count_only");
    expect(
        &other.bindings,
        &[(0, 2, D::STORAGE_BUFFER, 1, false, "counter")],
    );
    assert_eq!(
        unsupported(&other.unsupported_bindings),
        [
            (0, 0, 1, "input_tensor".into(), "OpTypeTensorARM", false),
            (0, 1, 1, "output_tensor".into(), "OpTypeTensorARM", false),
        ]
    );

    let e = m.reflection().entry_point("main").unwrap_err();
    assert_eq!(e.code(), "KILN-E061");
    assert_eq!(e.to_string(), TENSOR_E061);
    let e = PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap_err();
    assert_eq!(e.to_string(), TENSOR_E061);

    assert_eq!(
        m.reflection().entry_point("count_only").unwrap().name,
        "count_only"
    );
    assert_eq!(
        layout_rows(&[(&m, "count_only")]),
        [(0, 2, D::STORAGE_BUFFER, 1, S::COMPUTE)]
    );
}

// ------------------------------------------------------------------ 6. determinism

/// Every module the determinism test reflects: all of kiln's fixtures and every repro.
fn all() -> Vec<(&'static str, &'static [u8])> {
    fixtures::SPV
        .iter()
        .chain(fixtures::REPROS)
        .copied()
        .collect()
}

/// Everything kiln says about one module, as text: the whole reflection (`Debug`), and per
/// entry point the `entry_point` lookup and its pipeline layout, then the layout of all
/// entry points together — or the error (message and `Debug`) at whichever step fails.
fn snapshot(bytes: &[u8]) -> String {
    let m = match ShaderModule::from_bytes(bytes) {
        Ok(m) => m.with_label("module"),
        Err(e) => return format!("error: {e}\n{e:?}\n"),
    };
    let r = m.reflection();
    let mut out = format!("{r:#?}\n");
    for ep in &r.entry_points {
        match r.entry_point(&ep.name) {
            Ok(_) => out += &format!("entry_point({}): ok\n", ep.name),
            Err(e) => out += &format!("entry_point({}): {e}\n{e:?}\n", ep.name),
        }
        match PipelineLayoutDesc::from_stages(&[(&m, &ep.name)]) {
            Ok(d) => out += &format!("layout({}): {d:#?}\n", ep.name),
            Err(e) => out += &format!("layout({}): {e}\n", ep.name),
        }
    }
    let eps: Vec<(&str, &EntryPoint)> = r.entry_points.iter().map(|e| ("all", e)).collect();
    match PipelineLayoutDesc::from_entry_points(&eps) {
        Ok(d) => out += &format!("layout(all): {d:#?}\n"),
        Err(e) => out += &format!("layout(all): {e}\n"),
    }
    out
}

/// The module whose error once named a different variable from run to run fails the same
/// way every time: KILN-E052 naming `alpha`, the first declared of two bad arrays.
#[test]
fn reflection_error_names_the_first_declared_variable() {
    let want = "KILN-E052: cannot reflect `alpha (set 0, binding 5)`: array length is not an \
                integer constant kiln can evaluate";
    for _ in 0..64 {
        let e = ShaderModule::from_bytes(fixtures::bytes(UNKNOWN_ARRAY_LENGTHS)).unwrap_err();
        assert_eq!(e.to_string(), want);
    }
}

/// Each module reflected 40 times in a row, then 40 times in each of 4 threads at once, gives
/// the same snapshot every time. Each reflection builds new hash maps with new random
/// seeds, so anything that let hash order reach output or error selection would show.
#[test]
fn reflection_is_the_same_on_every_run_and_thread() {
    let modules = all();
    let reference: Vec<String> = modules.iter().map(|(_, b)| snapshot(b)).collect();
    // The set covers successes, a layout refusal (E051), an entry point refusal (E061) and
    // a module refusal (E052).
    let all = reference.concat();
    for code in ["KILN-E051", "KILN-E052", "KILN-E061"] {
        assert!(all.contains(code), "no {code} in the snapshots");
    }
    let check = |round: usize| {
        for ((name, bytes), want) in modules.iter().zip(&reference) {
            assert_eq!(&snapshot(bytes), want, "{name}, round {round}");
        }
    };
    for round in 0..40 {
        check(round);
    }
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| (0..40).for_each(check));
        }
    });
}

/// A storage buffer `b` used and a storage image `img` no entry point references, both at
/// (0, 0) (`../shared/repros/reflection/alias_unreferenced_other_type.comp`): `b` is the
/// binding, `img` an unused binding (`kiln reflect --all-bindings` lists it, as
/// SPIRV-Cross does; it was missing from both lists).
#[test]
fn an_unreferenced_alias_of_another_type_is_an_unused_binding() {
    let m = load(ALIAS_UNREFERENCED_OTHER_TYPE);
    let ep = entry(&m, "main");
    expect(&ep.bindings, &[(0, 0, D::STORAGE_BUFFER, 1, false, "b")]);
    expect(
        &ep.unused_bindings,
        &[(0, 0, D::STORAGE_IMAGE, 1, false, "img")],
    );
}
