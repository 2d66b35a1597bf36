#version 450
// A subgroup reduction, built with kiln-build's default target (vulkan1.3, SPIR-V 1.6):
// subgroupAdd needs SPIR-V 1.3, so this file is the test that the default is high enough.
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { uint values[]; } src;
// Per invocation: the sum over its subgroup, and which subgroup of which workgroup it was in.
layout(set = 0, binding = 1) writeonly buffer Sums { uint sums[]; } dst;
layout(set = 0, binding = 2) writeonly buffer Groups { uint groups[]; } grp;
layout(set = 0, binding = 3) writeonly buffer Size { uint subgroup_size; } size;
layout(push_constant) uniform Params { uint n; } params;

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint v = i < params.n ? src.values[i] : 0u;
    uint s = subgroupAdd(v);
    if (i < params.n) {
        dst.sums[i] = s;
        grp.groups[i] = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    }
    if (i == 0u) {
        size.subgroup_size = gl_SubgroupSize;
    }
}
