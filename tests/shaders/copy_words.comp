#version 450
// o[i] = v[i] for every word of v. Set 0 has the layout of spec_fill.comp's set 0, which
// this shader only reads; set 1 is written.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { uint v[]; };
layout(set = 1, binding = 0) buffer Out { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(v.length())) { o[i] = v[i]; }
}
