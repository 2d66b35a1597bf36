#version 450
// state_a's sets with 16 bytes of push constants: no set is compatible with state_a's
// (push constant ranges differ). dst[i] += src[i] * scale + extra for i < n.
layout(local_size_x = 64) in;
layout(push_constant) uniform Pc { float scale; uint n; float extra; uint pad; } pc;
layout(set = 0, binding = 0) buffer Dst { float dst[]; };
layout(set = 1, binding = 0) readonly buffer Src { float src[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) { dst[i] += src[i] * pc.scale + pc.extra + float(pc.pad); }
}
