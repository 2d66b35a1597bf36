#version 450
// Writes index * 3 + 1 through a helper function that takes the buffer by reference,
// so static use must follow the call graph. Binding 5 is declared and never used.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Out { uint v[]; } outbuf;
layout(set = 0, binding = 5) uniform Unused { vec4 u; } unused_;
void store(uint i, uint value) { outbuf.v[i] = value; }
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(outbuf.v.length())) { store(i, i * 3u + 1u); }
}
