#version 450
// state_a's set 0 and push constants; set 1 is a uniform buffer (incompatible with
// state_a's set 1). dst[i] += add * scale for i < n.
layout(local_size_x = 64) in;
layout(push_constant) uniform Pc { float scale; uint n; } pc;
layout(set = 0, binding = 0) buffer Dst { float dst[]; };
layout(set = 1, binding = 0) uniform Add { float add; } u;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) { dst[i] += u.add * pc.scale; }
}
