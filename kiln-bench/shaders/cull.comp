#version 450
// `kiln bench` GPU-driven frame: one thread per instance (a circle: xy centre, w radius)
// tests it against four planes and appends a VkDrawIndexedIndirectCommand for each visible
// one (a quad of 6 indices whose vertexOffset 4 * i names the instance to the vertex
// stage). The draw count is the atomic counter (zeroed before the dispatch).
layout(local_size_x = 64) in;

layout(push_constant) uniform Cull {
    vec4 planes[4];  // visible where dot(plane.xyz, centre) + plane.w >= -radius
    uint count;
} cull;

layout(set = 0, binding = 0) readonly buffer Instances {
    vec4 instances[];
};

struct DrawIndexedIndirect {
    uint index_count;
    uint instance_count;
    uint first_index;
    int vertex_offset;
    uint first_instance;
};

layout(set = 0, binding = 1) writeonly buffer Commands {
    DrawIndexedIndirect commands[];
};

layout(set = 0, binding = 2) buffer Count {
    uint draw_count;
};

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= cull.count) {
        return;
    }
    vec4 s = instances[i];
    for (int p = 0; p < 4; p++) {
        if (dot(cull.planes[p].xyz, s.xyz) + cull.planes[p].w < -s.w) {
            return;
        }
    }
    uint slot = atomicAdd(draw_count, 1u);
    commands[slot] = DrawIndexedIndirect(6u, 1u, 0u, int(i * 4u), 0u);
}
