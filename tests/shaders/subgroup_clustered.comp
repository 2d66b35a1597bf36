#version 450
// Clustered subgroup reduction (SPIR-V GroupNonUniformClustered): lavapipe's
// subgroupSupportedOperations lacks CLUSTERED, so pipeline creation is KILN-E107 there.
#extension GL_KHR_shader_subgroup_clustered : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint values[]; } data;
void main() {
    uint i = gl_GlobalInvocationID.x;
    data.values[i] = subgroupClusteredAdd(data.values[i], 4u);
}
