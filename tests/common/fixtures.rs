//! The reflection fixtures of `tests/fixtures/` (small shaders, each `.spv` committed
//! beside its source; `tests/fixtures/README.md` has the commands), embedded at build time
//! so no test reads the build machine's files when it runs.

use kiln::ShaderModule;

/// Every fixture module (name, SPIR-V bytes), sorted by name.
pub const SPV: &[(&str, &[u8])] = &[
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

/// The bytes of fixture `name` (e.g. `"fn_params.comp.spv"`).
pub fn bytes(name: &str) -> &'static [u8] {
    SPV.iter()
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
