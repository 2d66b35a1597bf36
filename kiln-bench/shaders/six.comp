#version 450
// Dispatch-recording and round-trip workload: one set with 6 bindings (2 uniform buffers,
// 4 storage buffers) and 16 bytes of push constants. Only the invocation whose index equals
// `pc.n` touches memory, so `pc.n = 0xffffffff` makes a dispatch do no memory traffic.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint VARIANT = 0;

layout(push_constant) uniform Params {
    uint n;
    uint pad;
    float a;
    float b;
} pc;

layout(set = 0, binding = 0) uniform U0 { vec4 u0; };
layout(set = 0, binding = 1) uniform U1 { vec4 u1; };
layout(set = 0, binding = 2) readonly buffer S2 { float s2[]; };
layout(set = 0, binding = 3) readonly buffer S3 { float s3[]; };
layout(set = 0, binding = 4) buffer S4 { float s4[]; };
layout(set = 0, binding = 5) buffer S5 { float s5[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i == pc.n) {
        s4[0] = u0.x + u1.y + s2[0] + s3[0] + pc.a + float(VARIANT);
        s5[0] = s5[0] + pc.b;
    }
}
