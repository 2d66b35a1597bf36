//! The reflection fixtures of `tests/fixtures/` and `tests/fixtures/repros/` (small shaders,
//! each `.spv` committed beside its source; `tests/fixtures/README.md` has the commands),
//! embedded at build time so no test reads the build machine's files when it runs.

use kiln::ShaderModule;

/// Every fixture module (name, SPIR-V bytes), sorted by name.
pub const SPV: &[(&str, &[u8])] = &[
    (
        "access.comp.spv",
        include_bytes!("../fixtures/access.comp.spv"),
    ),
    (
        "block_layouts.comp.spv",
        include_bytes!("../fixtures/block_layouts.comp.spv"),
    ),
    (
        "fn_params.comp.spv",
        include_bytes!("../fixtures/fn_params.comp.spv"),
    ),
    (
        "input_attachments.frag.spv",
        include_bytes!("../fixtures/input_attachments.frag.spv"),
    ),
    (
        "local_size_id.comp.spv",
        include_bytes!("../fixtures/local_size_id.comp.spv"),
    ),
    (
        "local_size_id.vk13.comp.spv",
        include_bytes!("../fixtures/local_size_id.vk13.comp.spv"),
    ),
    (
        "multi_entry.wgsl.spv",
        include_bytes!("../fixtures/multi_entry.wgsl.spv"),
    ),
    (
        "push_offset.frag.spv",
        include_bytes!("../fixtures/push_offset.frag.spv"),
    ),
    (
        "push_offset.vert.spv",
        include_bytes!("../fixtures/push_offset.vert.spv"),
    ),
    (
        "ray_query.comp.spv",
        include_bytes!("../fixtures/ray_query.comp.spv"),
    ),
    (
        "spec_arrays.frag.spv",
        include_bytes!("../fixtures/spec_arrays.frag.spv"),
    ),
    (
        "spec_ops.spvasm.spv",
        include_bytes!("../fixtures/spec_ops.spvasm.spv"),
    ),
    (
        "texel_buffers.comp.spv",
        include_bytes!("../fixtures/texel_buffers.comp.spv"),
    ),
];

/// kiln's reflection regressions (`fixtures/repros/`, issue 17: holes found by comparing
/// kiln's reflection with SPIRV-Cross's; issue 30: real compute shaders), named `repros/...`, in the order the determinism
/// test reflects them.
pub const REPROS: &[(&str, &[u8])] = &[
    (
        "repros/specop_vector_shuffle.spvasm.spv",
        include_bytes!("../fixtures/repros/specop_vector_shuffle.spvasm.spv"),
    ),
    (
        "repros/decoration_group.spvasm.spv",
        include_bytes!("../fixtures/repros/decoration_group.spvasm.spv"),
    ),
    (
        "repros/alias_unreferenced_other_type.comp.spv",
        include_bytes!("../fixtures/repros/alias_unreferenced_other_type.comp.spv"),
    ),
    (
        "repros/alias_unused_other_type.comp.spv",
        include_bytes!("../fixtures/repros/alias_unused_other_type.comp.spv"),
    ),
    (
        "repros/alias_same_type_other_count.comp.spv",
        include_bytes!("../fixtures/repros/alias_same_type_other_count.comp.spv"),
    ),
    (
        "repros/sampler_array_image_single.frag.spv",
        include_bytes!("../fixtures/repros/sampler_array_image_single.frag.spv"),
    ),
    (
        "repros/alias_used_conflict.comp.spv",
        include_bytes!("../fixtures/repros/alias_used_conflict.comp.spv"),
    ),
    (
        "repros/block_trailing_padding.spvasm.spv",
        include_bytes!("../fixtures/repros/block_trailing_padding.spvasm.spv"),
    ),
    (
        "repros/tensor_arm.spvasm.spv",
        include_bytes!("../fixtures/repros/tensor_arm.spvasm.spv"),
    ),
    (
        "repros/unknown_array_lengths.spvasm.spv",
        include_bytes!("../fixtures/repros/unknown_array_lengths.spvasm.spv"),
    ),
    (
        "repros/unknown_capability.comp.spv",
        include_bytes!("../fixtures/repros/unknown_capability.comp.spv"),
    ),
    (
        "repros/spec_array_zero.comp.spv",
        include_bytes!("../fixtures/repros/spec_array_zero.comp.spv"),
    ),
];

/// The bytes of fixture `name` (e.g. `"fn_params.comp.spv"`, `"repros/tensor_arm.spvasm.spv"`).
pub fn bytes(name: &str) -> &'static [u8] {
    SPV.iter()
        .chain(REPROS)
        .find(|(n, _)| *n == name)
        .map(|(_, b)| *b)
        .unwrap_or_else(|| panic!("no fixture {name} in tests/fixtures"))
}

/// Fixture `name`, checked and reflected, labelled with its name.
pub fn module(name: &str) -> ShaderModule {
    ShaderModule::from_bytes(bytes(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .with_label(name)
}
