#version 450
// The stream rows' kernel, as examples/shaders/stream.comp: y[i] = f^iters(x[i]) with
// f(v) = v * 1664525 + 1013904223 (a 32-bit LCG step; integer math, so the CPU reference
// matches bit for bit).
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Params { uint iters; uint n; } p;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) {
        return;
    }
    uint v = x[i];
    for (uint k = 0u; k < p.iters; ++k) {
        v = v * 1664525u + 1013904223u;
    }
    y[i] = v;
}
