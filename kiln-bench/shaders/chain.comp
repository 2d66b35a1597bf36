#version 450
// One link of a dependent chain (issue 15 rows): y[i] += x[i] for i < n, so each dispatch
// reads what the one before wrote. The workgroup size is specialization constant 0 (the
// dispatch-sizing experiment of the barrier-flavour notes).
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint n; } pc;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) {
        y[i] += x[i];
    }
}
