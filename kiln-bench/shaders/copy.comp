#version 450
// The hostmem sweep's shader copy: d[i] = s[i] over n uvec4s, grid-stride. Copies to or
// from host memory done by the shader cores instead of the copy engines.
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Src { uvec4 s[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uvec4 d[]; };
layout(push_constant) uniform Params { uint n; } p;

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        d[i] = s[i];
    }
}
