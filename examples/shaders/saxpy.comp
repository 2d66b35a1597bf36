#version 450
// y[i] = a * x[i] + y[i] for i < n. Push constants: a (f32), n (u32).
layout(local_size_x = 256) in;

layout(push_constant) uniform Params {
    float a;
    uint n;
} params;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < params.n) {
        y[i] = params.a * x[i] + y[i];
    }
}
