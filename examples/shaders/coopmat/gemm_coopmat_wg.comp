#version 450
// kiln: prebuilt
// (built by scripts/build_coopmat_spv.sh with glslang 13.1.1 into gemm_coopmat_wg.comp.spv;
// gemm_coopmat_wg_bf16.comp.spv is this module with its 16-bit float type re-encoded as
// bfloat16 by scripts/spv_bf16.py.)
//
// C (M×N, fp32) = A (M×K, fp16) · B (K×N, fp16), row-major, with workgroup-scope
// cooperative matrices (VK_NV_cooperative_matrix2's cooperativeMatrixWorkgroupScope and
// cooperativeMatrixFlexibleDimensions, with the KHR instructions: no tensor addressing).
// Each workgroup computes one BM×BN tile of C as ONE workgroup-scope accumulator, walking
// K in BK steps with one BM×BK A matrix and one BK×BN B matrix loaded from the buffers;
// the driver spreads the matrices over the workgroup and stages them as it sees fit.
// Spec constants (host, `examples/common/gemm.rs`): 3 the workgroup size (a flexible-
// dimension configuration's workgroupInvocations), 4 BM, 5 BN, 6 BK (multiples of its
// granularities), 7 ALIGN (true: the strides and offsets use K & ~7 and N & ~7, which tells
// the compiler every row starts 16-byte aligned; false: K and N). Dispatch: (M/BM)·(N/BN)
// workgroups in x; M, N, K multiples of BM, BN, BK.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x_id = 3, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 3) const uint WG = 256;
layout(constant_id = 4) const uint BM = 128;
layout(constant_id = 5) const uint BN = 128;
layout(constant_id = 6) const uint BK = 32;
layout(constant_id = 7) const bool ALIGN = false;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Dims { uint M; uint N; uint K; } dims;

void main() {
    uint K = ALIGN ? dims.K & ~7u : dims.K;
    uint N = ALIGN ? dims.N & ~7u : dims.N;
    uint tilesN = N / BN;
    uint m0 = (gl_WorkGroupID.x / tilesN) * BM;
    uint n0 = (gl_WorkGroupID.x % tilesN) * BN;
    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0u; k < K; k += BK) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> fa;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> fb;
        coopMatLoad(fa, a, m0 * K + k, K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(fb, b, k * N + n0, N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(fa, fb, acc);
    }
    coopMatStore(acc, c, m0 * N + n0, N, gl_CooperativeMatrixLayoutRowMajor);
}
