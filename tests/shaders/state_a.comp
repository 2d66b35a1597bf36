#version 450
// Bound-state tests (tests/breaker_bound_state.rs): set 0 output, set 1 source, 8 bytes of
// push constants. dst[i] += src[i] * scale + BIAS for i < n.
layout(local_size_x = 64) in;
layout(constant_id = 0) const float BIAS = 0.0;
layout(push_constant) uniform Pc { float scale; uint n; } pc;
layout(set = 0, binding = 0) buffer Dst { float dst[]; };
layout(set = 1, binding = 0) readonly buffer Src { float src[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) { dst[i] += src[i] * pc.scale + BIAS; }
}
