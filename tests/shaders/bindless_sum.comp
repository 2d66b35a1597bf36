#version 450
#extension GL_EXT_nonuniform_qualifier : require
// out[i] = sum over k < count of inputs[k].value * (i + 1): a runtime array of storage
// buffers (bindless), indexed in a loop.
layout(local_size_x = 16) in;
layout(push_constant) uniform Push { uint count; uint n; } pc;
layout(set = 0, binding = 0) buffer Out { uint outv[]; };
layout(set = 0, binding = 1) readonly buffer In { uint value; } inputs[];
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) { return; }
    uint s = 0u;
    for (uint k = 0u; k < pc.count; ++k) { s += inputs[nonuniformEXT(k)].value; }
    outv[i] = s * (i + 1u);
}
