#version 450
// y[i] += x[i] for i < n: one link of a dependent chain (each dispatch reads what the one
// before wrote). Push constant: n.
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint n; } pc;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) {
        y[i] += x[i];
    }
}
