#version 450
#extension GL_EXT_nonuniform_qualifier : require
// Bindless sampled images and samplers (tests/root/layouts.rs): out[i] = the texel of
// textures[which[i].x] fetched through samplers[which[i].y]; both runtime arrays, only some
// elements written (partially bound). One invocation per workgroup: the indices are
// dynamically uniform, so no *ArrayNonUniformIndexing feature is needed (with 16
// invocations per workgroup and nonuniformEXT, lavapipe 25.0.7 returned the first
// invocation's element to all four).
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) writeonly buffer Out { float outv[]; };
layout(set = 0, binding = 1) readonly buffer Which { uvec2 which[]; };
layout(set = 0, binding = 2) uniform sampler samplers[];
layout(set = 0, binding = 3) uniform texture2D textures[];
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= which.length()) {
        return;
    }
    uvec2 w = which[i];
    outv[i] = texelFetch(
        sampler2D(textures[w.x], samplers[w.y]), ivec2(0), 0).r;
}
