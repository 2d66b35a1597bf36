#version 450
// kiln's shader copy (src/queue/shader_copy.rs): d[i] = s[i] for i < n 16-byte words,
// grid-stride: a readback done by the shader cores (writing host memory over the bus)
// instead of a copy engine. Compiled to copy.spv beside it:
//   glslc --target-env=vulkan1.3 -O copy.comp -o copy.spv
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
