#version 450
// kiln: prebuilt
// (built by scripts/build_coopmat_spv.sh with glslang 13.1.1 into coopmat_peak.comp.spv;
// coopmat_peak_bf16.comp.spv is this module with its 16-bit float type re-encoded as
// bfloat16 by scripts/spv_bf16.py.)
//
// The cooperative-matrix ceiling: how fast coopMatMulAdd alone runs on this device and
// driver, with no memory traffic in the loop. Each subgroup loads TM A fragments (lM×lK,
// fp16) and TN B fragments (lK×lN) once, from the first TM·lM·lK / TN·lK·lN elements of A
// and B (row-major fragments one after another), then runs `iters` rounds of TM·TN
// independent coopMatMulAdd into TM·TN fp32 accumulators, sums the accumulators and stores
// the sum as one lM×lN fragment at C[slot · lM·lN], slot = workgroup · subgroups + subgroup.
// With A = B = 1 every element of the stored sum is TM·TN·iters·lK (exact in fp32 below
// 2^24). Spec constants: 0, 1, 2 the fragment shape (a configuration the device lists),
// 3 the workgroup size (a multiple of the subgroup size), 4 TM, 5 TN.
// FLOPs per dispatch: workgroups · subgroups · iters · TM · TN · 2 · lM · lN · lK.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 3, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint lM = 16;
layout(constant_id = 1) const uint lN = 16;
layout(constant_id = 2) const uint lK = 16;
layout(constant_id = 3) const uint WG = 128;
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Params { uint iters; } params;

void main() {
    coopmat<float16_t, gl_ScopeSubgroup, lM, lK, gl_MatrixUseA> ma[TM];
    coopmat<float16_t, gl_ScopeSubgroup, lK, lN, gl_MatrixUseB> mb[TN];
    coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator> acc[TM * TN];
    [[unroll]] for (uint i = 0u; i < TM; i++) {
        coopMatLoad(ma[i], a, i * lM * lK, lK, gl_CooperativeMatrixLayoutRowMajor);
    }
    [[unroll]] for (uint j = 0u; j < TN; j++) {
        coopMatLoad(mb[j], b, j * lK * lN, lN, gl_CooperativeMatrixLayoutRowMajor);
    }
    [[unroll]] for (uint t = 0u; t < TM * TN; t++) {
        acc[t] = coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator>(0.0);
    }
    for (uint it = 0u; it < params.iters; it++) {
        [[unroll]] for (uint i = 0u; i < TM; i++) {
            [[unroll]] for (uint j = 0u; j < TN; j++) {
                acc[i * TN + j] = coopMatMulAdd(ma[i], mb[j], acc[i * TN + j]);
            }
        }
    }
    [[unroll]] for (uint t = 1u; t < TM * TN; t++) {
        acc[0] = acc[0] + acc[t];
    }
    uint slot = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    coopMatStore(acc[0], c, slot * lM * lN, lN, gl_CooperativeMatrixLayoutRowMajor);
}
