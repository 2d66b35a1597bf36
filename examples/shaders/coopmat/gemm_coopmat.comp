#version 450
// kiln: prebuilt
// (glslc 2023.2 / glslang 11.13 does not know GL_KHR_cooperative_matrix: built by
// scripts/build_coopmat_spv.sh with glslang 13.1.1 into gemm_coopmat.comp.spv, which
// kiln-build copies; the bf16 variant gemm_coopmat_bf16.comp.spv is this module with its
// 16-bit float type re-encoded as bfloat16, SPV_KHR_bfloat16.)
//
// C (M×N, fp32) = A (M×K, fp16) · B (K×N, fp16), row-major, with KHR cooperative matrices
// of lM×lK (A), lK×lN (B) and lM×lN (accumulator), a shape picked by the host from the
// device's VkCooperativeMatrixPropertiesKHR (spec constants 0, 1, 2). A workgroup is four
// subgroups (spec constant 3 = 4 × subgroup size; the host asks for that subgroup size and
// full subgroups) and computes a (2·TM·lM)×(2·TN·lN) tile of C, each subgroup a TM×TN
// block of accumulators, loading its A and B fragments straight from the buffers. The
// host dispatches (M / (2·TM·lM)) · (N / (2·TN·lN)) workgroups and requires M, N and K to
// be multiples of the tile and of lK.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 3, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint lM = 16;
layout(constant_id = 1) const uint lN = 16;
layout(constant_id = 2) const uint lK = 16;
layout(constant_id = 3) const uint WG = 128;
const uint TM = 4;
const uint TN = 4;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Dims { uint M; uint N; uint K; } dims;

void main() {
    uint sg = gl_SubgroupID;
    uint tilesN = dims.N / (2u * TN * lN);
    uint wm = gl_WorkGroupID.x / tilesN;
    uint wn = gl_WorkGroupID.x % tilesN;
    uint m0 = wm * (2u * TM * lM) + (sg / 2u) * (TM * lM);
    uint n0 = wn * (2u * TN * lN) + (sg % 2u) * (TN * lN);
    coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator> acc[TM][TN];
    for (uint i = 0u; i < TM; i++) {
        for (uint j = 0u; j < TN; j++) {
            acc[i][j] = coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator>(0.0);
        }
    }
    for (uint k = 0u; k < dims.K; k += lK) {
        coopmat<float16_t, gl_ScopeSubgroup, lM, lK, gl_MatrixUseA> ma[TM];
        coopmat<float16_t, gl_ScopeSubgroup, lK, lN, gl_MatrixUseB> mb[TN];
        for (uint i = 0u; i < TM; i++) {
            coopMatLoad(ma[i], a, (m0 + i * lM) * dims.K + k, dims.K,
                        gl_CooperativeMatrixLayoutRowMajor);
        }
        for (uint j = 0u; j < TN; j++) {
            coopMatLoad(mb[j], b, k * dims.N + n0 + j * lN, dims.N,
                        gl_CooperativeMatrixLayoutRowMajor);
        }
        for (uint i = 0u; i < TM; i++) {
            for (uint j = 0u; j < TN; j++) {
                acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
            }
        }
    }
    for (uint i = 0u; i < TM; i++) {
        for (uint j = 0u; j < TN; j++) {
            coopMatStore(acc[i][j], c, (m0 + i * lM) * dims.N + n0 + j * lN, dims.N,
                         gl_CooperativeMatrixLayoutRowMajor);
        }
    }
}
