#version 450
// y[i] = a * x[i] + y[i] on vec4s (16-byte loads and stores), 2D grid: i = y * pitch + x.
// `n` counts vec4s.
layout(local_size_x = 256) in;

layout(push_constant) uniform Params {
    float a;
    uint n;
    uint pitch;
} p;

layout(set = 0, binding = 0) readonly buffer X { vec4 x[]; };
layout(set = 0, binding = 1) buffer Y { vec4 y[]; };

void main() {
    uint i = gl_GlobalInvocationID.y * p.pitch + gl_GlobalInvocationID.x;
    if (i < p.n) {
        y[i] = p.a * x[i] + y[i];
    }
}
