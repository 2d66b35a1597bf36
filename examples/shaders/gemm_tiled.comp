#version 450
// C (M×N) = A (M×K) · B (K×N), fp32, row-major, the shared-memory tiled fallback of
// examples/gemm.rs for devices without cooperative matrices (lavapipe): a workgroup of
// 16×16 invocations computes a 128×128 tile of C, each invocation 8×8 elements strided by
// 16 (rows ty + 16 i, columns tx + 16 j), over K in steps of 8 staged in shared memory
// (2 × 8 × 128 floats = 8 KiB). Any M, N, K: loads outside the matrices read 0 and stores
// outside are skipped.
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Dims { uint M; uint N; uint K; } dims;

const uint BM = 128u;
const uint BN = 128u;
const uint BK = 8u;
shared float As[BK][BM];
shared float Bs[BK][BN];

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = ty * 16u + tx;
    uint m0 = gl_WorkGroupID.y * BM;
    uint n0 = gl_WorkGroupID.x * BN;
    uint M = dims.M, N = dims.N, K = dims.K;
    float acc[8][8];
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 8; j++) {
            acc[i][j] = 0.0;
        }
    }
    for (uint k0 = 0u; k0 < K; k0 += BK) {
        for (uint l = 0u; l < 4u; l++) {
            uint e = tid + 256u * l;
            uint am = e / BK, ak = e % BK;
            uint gm = m0 + am, gk = k0 + ak;
            As[ak][am] = (gm < M && gk < K) ? a[gm * K + gk] : 0.0;
            uint bk = e / BN, bn = e % BN;
            uint hk = k0 + bk, gn = n0 + bn;
            Bs[bk][bn] = (hk < K && gn < N) ? b[hk * N + gn] : 0.0;
        }
        barrier();
        for (uint kk = 0u; kk < BK; kk++) {
            float ra[8];
            float rb[8];
            for (int i = 0; i < 8; i++) {
                ra[i] = As[kk][ty + 16u * uint(i)];
                rb[i] = Bs[kk][tx + 16u * uint(i)];
            }
            for (int i = 0; i < 8; i++) {
                for (int j = 0; j < 8; j++) {
                    acc[i][j] = fma(ra[i], rb[j], acc[i][j]);
                }
            }
        }
        barrier();
    }
    for (int i = 0; i < 8; i++) {
        uint gm = m0 + ty + 16u * uint(i);
        if (gm >= M) {
            continue;
        }
        for (int j = 0; j < 8; j++) {
            uint gn = n0 + tx + 16u * uint(j);
            if (gn < N) {
                c[gm * N + gn] = acc[i][j];
            }
        }
    }
}
