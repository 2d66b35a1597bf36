//! Which access types a pipeline stage mask can perform (Vulkan spec §7.1.3 "Access
//! Types", the table of supported pipeline stages per access type).
//!
//! `Recorder::supported` drops the stages of a barrier that its queue or device lacks (a
//! transfer queue has no shader stages). What is left of the access mask must be accesses
//! those remaining stages perform (VUID-VkImageMemoryBarrier2-srcAccessMask-03900 …
//! -07454): a shader read left beside only `BOTTOM_OF_PIPE` is invalid. [`accesses_of`]
//! gives the accesses a stage mask allows, meta stages (`ALL_COMMANDS`, `ALL_GRAPHICS`,
//! `ALL_TRANSFER`, `VERTEX_INPUT`, `PRE_RASTERIZATION_SHADERS`) expanded; `TOP_OF_PIPE`,
//! `BOTTOM_OF_PIPE` and `NONE` allow none (an execution dependency only). Pure: unit-tested
//! below.

use ash::vk::{AccessFlags2 as A, PipelineStageFlags2 as S};

/// Every shader stage kiln records.
const SHADER_STAGES: S = S::from_raw(
    S::VERTEX_SHADER.as_raw()
        | S::TESSELLATION_CONTROL_SHADER.as_raw()
        | S::TESSELLATION_EVALUATION_SHADER.as_raw()
        | S::GEOMETRY_SHADER.as_raw()
        | S::TASK_SHADER_EXT.as_raw()
        | S::MESH_SHADER_EXT.as_raw()
        | S::FRAGMENT_SHADER.as_raw()
        | S::COMPUTE_SHADER.as_raw(),
);

/// Accesses every shader stage performs.
const SHADER_ACCESS: A = A::from_raw(
    A::UNIFORM_READ.as_raw()
        | A::SHADER_READ.as_raw()
        | A::SHADER_WRITE.as_raw()
        | A::SHADER_SAMPLED_READ.as_raw()
        | A::SHADER_STORAGE_READ.as_raw()
        | A::SHADER_STORAGE_WRITE.as_raw(),
);

/// Per stage (after expansion), the accesses it performs besides `MEMORY_READ`/`WRITE`.
const TABLE: &[(S, A)] = &[
    (SHADER_STAGES, SHADER_ACCESS),
    (S::FRAGMENT_SHADER, A::INPUT_ATTACHMENT_READ),
    (S::DRAW_INDIRECT, A::INDIRECT_COMMAND_READ),
    (S::INDEX_INPUT, A::INDEX_READ),
    (S::VERTEX_ATTRIBUTE_INPUT, A::VERTEX_ATTRIBUTE_READ),
    (
        S::COLOR_ATTACHMENT_OUTPUT,
        A::from_raw(A::COLOR_ATTACHMENT_READ.as_raw() | A::COLOR_ATTACHMENT_WRITE.as_raw()),
    ),
    (
        S::from_raw(S::EARLY_FRAGMENT_TESTS.as_raw() | S::LATE_FRAGMENT_TESTS.as_raw()),
        A::from_raw(
            A::DEPTH_STENCIL_ATTACHMENT_READ.as_raw() | A::DEPTH_STENCIL_ATTACHMENT_WRITE.as_raw(),
        ),
    ),
    (
        S::from_raw(S::COPY.as_raw() | S::BLIT.as_raw() | S::RESOLVE.as_raw()),
        A::from_raw(A::TRANSFER_READ.as_raw() | A::TRANSFER_WRITE.as_raw()),
    ),
    (S::CLEAR, A::TRANSFER_WRITE),
    // Ray queries read acceleration structures from any shader stage; builds read their
    // inputs as shader data and read and write structures and scratch memory.
    (SHADER_STAGES, A::ACCELERATION_STRUCTURE_READ_KHR),
    (
        S::ACCELERATION_STRUCTURE_BUILD_KHR,
        A::from_raw(
            A::SHADER_READ.as_raw()
                | A::ACCELERATION_STRUCTURE_READ_KHR.as_raw()
                | A::ACCELERATION_STRUCTURE_WRITE_KHR.as_raw(),
        ),
    ),
    (
        S::HOST,
        A::from_raw(A::HOST_READ.as_raw() | A::HOST_WRITE.as_raw()),
    ),
];

/// `stages` with its meta stages replaced by the stages they stand for.
fn expand(stages: S) -> S {
    let mut s = stages;
    if s.contains(S::ALL_GRAPHICS) {
        s |= S::DRAW_INDIRECT
            | S::INDEX_INPUT
            | S::VERTEX_ATTRIBUTE_INPUT
            | (SHADER_STAGES & !S::COMPUTE_SHADER)
            | S::EARLY_FRAGMENT_TESTS
            | S::LATE_FRAGMENT_TESTS
            | S::COLOR_ATTACHMENT_OUTPUT;
    }
    if s.contains(S::ALL_TRANSFER) {
        s |= S::COPY | S::BLIT | S::RESOLVE | S::CLEAR;
    }
    if s.contains(S::VERTEX_INPUT) {
        s |= S::INDEX_INPUT | S::VERTEX_ATTRIBUTE_INPUT;
    }
    if s.contains(S::PRE_RASTERIZATION_SHADERS) {
        s |= S::VERTEX_SHADER
            | S::TESSELLATION_CONTROL_SHADER
            | S::TESSELLATION_EVALUATION_SHADER
            | S::GEOMETRY_SHADER
            | S::TASK_SHADER_EXT
            | S::MESH_SHADER_EXT;
    }
    s
}

/// The accesses a barrier scope of `stages` may name.
pub(crate) fn accesses_of(stages: S) -> A {
    if stages.contains(S::ALL_COMMANDS) {
        return A::from_raw(!0);
    }
    let s = expand(stages);
    let mut a = TABLE
        .iter()
        .filter(|(st, _)| s.intersects(*st))
        .fold(A::NONE, |acc, (_, ac)| acc | *ac);
    if !a.is_empty() {
        a |= A::MEMORY_READ | A::MEMORY_WRITE;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_and_bottom_of_pipe_perform_no_access() {
        assert_eq!(accesses_of(S::BOTTOM_OF_PIPE), A::NONE);
        assert_eq!(accesses_of(S::TOP_OF_PIPE | S::BOTTOM_OF_PIPE), A::NONE);
        assert_eq!(accesses_of(S::NONE), A::NONE);
    }

    #[test]
    fn shader_reads_need_a_shader_stage() {
        let reads = A::SHADER_READ | A::SHADER_SAMPLED_READ;
        // What a transfer queue keeps of a SHADER_READ_ONLY transition: the fuzzer's case.
        let kept = S::BOTTOM_OF_PIPE | S::ALL_TRANSFER;
        assert!(!accesses_of(kept).intersects(reads));
        assert!(accesses_of(kept).contains(A::TRANSFER_READ | A::TRANSFER_WRITE));
        for s in [
            S::VERTEX_SHADER,
            S::FRAGMENT_SHADER,
            S::COMPUTE_SHADER,
            S::MESH_SHADER_EXT,
            S::PRE_RASTERIZATION_SHADERS,
            S::ALL_GRAPHICS,
        ] {
            assert!(accesses_of(s).contains(reads), "{s:?}");
        }
    }

    #[test]
    fn acceleration_structure_builds_and_ray_queries_keep_their_accesses() {
        let build = accesses_of(S::ACCELERATION_STRUCTURE_BUILD_KHR);
        assert!(build.contains(
            A::SHADER_READ
                | A::ACCELERATION_STRUCTURE_READ_KHR
                | A::ACCELERATION_STRUCTURE_WRITE_KHR
        ));
        assert!(!build.intersects(A::TRANSFER_WRITE | A::SHADER_STORAGE_WRITE));
        assert!(accesses_of(S::COMPUTE_SHADER).contains(A::ACCELERATION_STRUCTURE_READ_KHR));
        assert!(!accesses_of(S::ALL_TRANSFER).intersects(A::ACCELERATION_STRUCTURE_READ_KHR));
    }

    #[test]
    fn meta_stages_expand_and_all_commands_allows_everything() {
        assert!(accesses_of(S::ALL_GRAPHICS).contains(
            A::INDIRECT_COMMAND_READ
                | A::COLOR_ATTACHMENT_WRITE
                | A::DEPTH_STENCIL_ATTACHMENT_WRITE
                | A::INPUT_ATTACHMENT_READ
        ));
        assert!(!accesses_of(S::ALL_GRAPHICS).intersects(A::TRANSFER_WRITE | A::HOST_READ));
        assert_eq!(accesses_of(S::ALL_COMMANDS), A::from_raw(!0));
        assert_eq!(
            accesses_of(S::VERTEX_INPUT),
            A::INDEX_READ | A::VERTEX_ATTRIBUTE_READ | A::MEMORY_READ | A::MEMORY_WRITE
        );
        assert_eq!(
            accesses_of(S::CLEAR),
            A::TRANSFER_WRITE | A::MEMORY_READ | A::MEMORY_WRITE
        );
        assert!(!accesses_of(S::COMPUTE_SHADER).intersects(A::COLOR_ATTACHMENT_WRITE));
    }
}
