#version 450
// kiln: prebuilt
// (built by scripts/build_coopmat_spv.sh with glslang 13.1.1 into
// gemm_coopmat_smem.comp.spv; gemm_coopmat_smem_bf16.comp.spv is this module with its
// 16-bit float type re-encoded as bfloat16 by scripts/spv_bf16.py: the shader touches its
// 16-bit elements only as cooperative-matrix components, moving them as uvec4.)
//
// C (M×N, fp32) = A (M×K, fp16) · B (K×N, fp16), row-major, KHR cooperative matrices
// staged through shared memory. A workgroup computes a BM×BN tile of C; each subgroup a
// WM×WN block of it as (WM/lM)×(WN/lN) accumulators of lM×lN. K is walked in steps of BK:
// the workgroup copies the BM×BK slice of A and the BK×BN slice of B into shared memory
// with 16-byte loads (uvec4 = 8 elements), rows padded by 16 bytes against bank
// conflicts; the copy is double-buffered (step k+1 is fetched into registers before step
// k is multiplied, then stored into the other buffer: one barrier per step). Subgroups
// coopMatLoad their fragments from shared memory (offset and stride in uvec4 units,
// which keeps both 16-byte aligned as VK_KHR_cooperative_matrix requires).
//
// Spec constants (chosen by the host, `examples/common/gemm.rs`): 0, 1, 2 the fragment
// shape lM, lN, lK (a configuration the device lists; lN and lK multiples of 8); 3 the
// workgroup size WG (subgroups × subgroup size); 4 BM, 5 BN, 6 BK; 7 WM, 8 WN; 9 STREAM
// (true: the GEMM; false, for measuring where the time goes: only the first BK slice is
// copied, and every step multiplies it again from shared memory, so C = (K/BK) · A[:, :BK] ·
// B[:BK, :] and the loop has no global-memory traffic); 10 GROUP, the workgroup order
// (1: row-major over the C tiles; G > 1: G tile rows at a time, walked column by column,
// so that the workgroups running together share B's columns and A's rows in L2); 11 AHEAD,
// how many steps ahead the global loads are issued (1: the step after, stored into shared
// memory at the end of this step; 2: two register sets, the loads for step s+2 issued at
// step s, so that each load has two steps of multiply-adds to arrive; the same single
// barrier per step and two shared buffers: step s+1's set is stored into the buffer no
// one reads during step s); 12 PART, with STREAM false, which half of the staging the
// no-global loop keeps (0: neither; 1: the global loads of every step, into registers only,
// their values folded into a word that is stored only if M is 0 (never: the compiler keeps
// the loads); 2: the shared-memory stores of every step, step 0's registers stored into
// the buffer the next step reads, the buffers alternating as in the GEMM; both compute
// the no-global product; 3: the GEMM's loop, loads and stores, but step s+1 loads K slice
// (s+1) & 1, the first two alternately, which stay in cache: C = (K/2BK)·A[:, :2BK]·
// B[:2BK, :]). The host
// checks: (BM/WM)·(BN/WN) subgroups of WG; BM·BK/8 and BK·BN/8 multiples of WG; shared
// memory 16·2·(BM·(BK/8+1) + BK·(BN/8+1)) bytes within maxComputeSharedMemorySize; M, N
// multiples of BM, BN and K of BK. Dispatch: (M/BM)·(N/BN) workgroups in x.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 3, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint lM = 16;
layout(constant_id = 1) const uint lN = 16;
layout(constant_id = 2) const uint lK = 16;
layout(constant_id = 3) const uint WG = 256;
layout(constant_id = 4) const uint BM = 128;
layout(constant_id = 5) const uint BN = 128;
layout(constant_id = 6) const uint BK = 32;
layout(constant_id = 7) const uint WM = 64;
layout(constant_id = 8) const uint WN = 32;
layout(constant_id = 9) const bool STREAM = true;
layout(constant_id = 10) const uint GROUP = 1;
layout(constant_id = 11) const uint AHEAD = 1;
layout(constant_id = 12) const uint PART = 0;
layout(set = 0, binding = 0) readonly buffer A { uvec4 a[]; };
layout(set = 0, binding = 1) readonly buffer B { uvec4 b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Dims { uint M; uint N; uint K; } dims;

// uvec4 per row of the A and B slices, and the padded shared-memory row strides.
const uint AV = BK / 8u;
const uint BV = BN / 8u;
const uint AS = AV + 1u;
const uint BS = BV + 1u;
// uvec4 copies per invocation per step.
const uint AL = BM * AV / WG;
const uint BL = BK * BV / WG;
// Accumulators per subgroup; subgroups along N.
const uint FM = WM / lM;
const uint FN = WN / lN;
const uint SN = BN / WN;

shared uvec4 as_[2u * BM * AS];
shared uvec4 bs_[2u * BK * BS];

// Global loads of step S into registers RA, RB; stores of RA, RB into shared buffer BUF.
#define GLOAD(S, RA, RB) \
    [[unroll]] for (uint i = 0u; i < AL; i++) { \
        uint e = tid + i * WG; \
        RA[i] = a[(m0 + e / AV) * kv + (S) * AV + e % AV]; \
    } \
    [[unroll]] for (uint i = 0u; i < BL; i++) { \
        uint e = tid + i * WG; \
        RB[i] = b[((S) * BK + e / BV) * nv + n0 / 8u + e % BV]; \
    }
#define SSTORE(BUF, RA, RB) \
    [[unroll]] for (uint i = 0u; i < AL; i++) { \
        uint e = tid + i * WG; \
        as_[(BUF) * BM * AS + (e / AV) * AS + e % AV] = RA[i]; \
    } \
    [[unroll]] for (uint i = 0u; i < BL; i++) { \
        uint e = tid + i * WG; \
        bs_[(BUF) * BK * BS + (e / BV) * BS + e % BV] = RB[i]; \
    }
// The multiply-adds of one step from shared buffer BUF.
#define MMA(BUF) \
    [[unroll]] for (uint kk = 0u; kk < BK; kk += lK) { \
        coopmat<float16_t, gl_ScopeSubgroup, lM, lK, gl_MatrixUseA> fa[FM]; \
        coopmat<float16_t, gl_ScopeSubgroup, lK, lN, gl_MatrixUseB> fb[FN]; \
        [[unroll]] for (uint i = 0u; i < FM; i++) { \
            coopMatLoad(fa[i], as_, (BUF) * BM * AS + (wm + i * lM) * AS + kk / 8u, AS, \
                        gl_CooperativeMatrixLayoutRowMajor); \
        } \
        [[unroll]] for (uint j = 0u; j < FN; j++) { \
            coopMatLoad(fb[j], bs_, (BUF) * BK * BS + kk * BS + (wn + j * lN) / 8u, BS, \
                        gl_CooperativeMatrixLayoutRowMajor); \
        } \
        [[unroll]] for (uint i = 0u; i < FM; i++) { \
            [[unroll]] for (uint j = 0u; j < FN; j++) { \
                acc[i * FN + j] = coopMatMulAdd(fa[i], fb[j], acc[i * FN + j]); \
            } \
        } \
    }
// AHEAD 2, step S: load step S+2 into RL (free: its step is in shared memory), multiply
// from buffer S&1, store RS (step S+1) into the other buffer, barrier.
#define STEP2(S, RLA, RLB, RSA, RSB) \
    if ((S) + 2u < steps) { GLOAD((S) + 2u, RLA, RLB) } \
    MMA((S) & 1u) \
    if ((S) + 1u < steps) { SSTORE(((S) + 1u) & 1u, RSA, RSB) } \
    barrier();

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = gl_SubgroupID;
    // Grouped workgroup order (GROUP tile rows per group; the last group may have fewer).
    uint tilesN = dims.N / BN;
    uint perGroup = GROUP * tilesN;
    uint firstM = (gl_WorkGroupID.x / perGroup) * GROUP;
    uint gm = min(dims.M / BM - firstM, GROUP);
    uint inGroup = gl_WorkGroupID.x % perGroup;
    uint m0 = (firstM + inGroup % gm) * BM;
    uint n0 = (inGroup / gm) * BN;
    uint wm = (sg / SN) * WM;
    uint wn = (sg % SN) * WN;
    uint kv = dims.K / 8u;
    uint nv = dims.N / 8u;

    uvec4 ra[AL];
    uvec4 rb[BL];
    // Step 0 into buffer 0.
    GLOAD(0u, ra, rb)
    SSTORE(0u, ra, rb)
    barrier();

    coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator> acc[FM * FN];
    [[unroll]] for (uint t = 0u; t < FM * FN; t++) {
        acc[t] = coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator>(0.0);
    }

    uint steps = dims.K / BK;
    if (AHEAD == 2u && STREAM) {
        // Step 0 is in buffer 0 (above); step 1 into the second register set.
        uvec4 ra1[AL];
        uvec4 rb1[BL];
        if (steps > 1u) { GLOAD(1u, ra1, rb1) }
        for (uint s = 0u; s < steps; s += 2u) {
            STEP2(s, ra, rb, ra1, rb1)
            if (s + 1u < steps) { STEP2(s + 1u, ra1, rb1, ra, rb) }
        }
    } else if (!STREAM && PART == 1u) {
        // The global loads of the GEMM without their shared-memory stores.
        uvec4 sink = uvec4(0u);
        uvec4 la[AL];
        uvec4 lb[BL];
        for (uint s = 0u; s < steps; s++) {
            if (s + 1u < steps) { GLOAD(s + 1u, la, lb) }
            MMA(0u)
            [[unroll]] for (uint i = 0u; i < AL; i++) { sink ^= la[i]; }
            [[unroll]] for (uint i = 0u; i < BL; i++) { sink ^= lb[i]; }
            barrier();
        }
        if (dims.M == 0u) { c[tid] = float(sink.x ^ sink.y ^ sink.z ^ sink.w); }
    } else {
        // PART 2: the shared-memory stores of the GEMM without its global loads (step 0's
        // registers into the buffer the next step reads).
        // PART 3: loads (from two cached slices) and stores.
        bool stores = !STREAM && PART == 2u;
        bool cached = !STREAM && PART == 3u;
        bool loads = STREAM || cached;
        for (uint s = 0u; s < steps; s++) {
            uint cur = loads || stores ? (s & 1u) : 0u;
            bool more = (loads || stores) && s + 1u < steps;
            if (more && loads) { GLOAD(cached ? (s + 1u) & 1u : s + 1u, ra, rb) }
            MMA(cur)
            if (more) { SSTORE(cur ^ 1u, ra, rb) }
            barrier();
        }
    }

    [[unroll]] for (uint i = 0u; i < FM; i++) {
        [[unroll]] for (uint j = 0u; j < FN; j++) {
            coopMatStore(acc[i * FN + j], c, (m0 + wm + i * lM) * dims.N + n0 + wn + j * lN,
                         dims.N, gl_CooperativeMatrixLayoutRowMajor);
        }
    }
}
