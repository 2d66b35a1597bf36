#version 450
// Frustum culling on the GPU: one invocation per object tests its bounding sphere against
// the camera's frustum and the light's box and appends a VkDrawIndexedIndirectCommand to
// each list it is visible in (camera list at commands[0..n), shadow list at
// commands[n..2n)); draw_object[] says which object each command draws (the vertex
// shaders read it by gl_DrawID); counts[0], counts[1] are the lists' draw counts.
// With frame.counts.z == 0 (no drawIndirectCount) the lists are not compacted: command i
// draws object i, with instanceCount 0 when culled.
#include "frame.glsl"

layout(local_size_x = 64) in;

struct DrawCommand {
    uint index_count;
    uint instance_count;
    uint first_index;
    int vertex_offset;
    uint first_instance;
};

layout(std430, set = 0, binding = 2) writeonly buffer Commands {
    DrawCommand commands[];
};
layout(std430, set = 0, binding = 3) buffer Counts {
    uint counts[];
};
layout(std430, set = 0, binding = 4) writeonly buffer DrawObjects {
    uint draw_object[];
};

bool inside(vec4 s, vec4 p) {
    return dot(p.xyz, s.xyz) + p.w >= -s.w;
}

void emit(uint list, uint i, bool visible) {
    uint n = frame.counts.x;
    uint slot = i;
    if (visible) {
        uint at = atomicAdd(counts[list], 1u);
        if (frame.counts.z == 1u) {
            slot = at;
        }
    } else if (frame.counts.z == 1u) {
        return;
    }
    Object o = objects[i];
    commands[list * n + slot] = DrawCommand(o.index_count, visible ? 1u : 0u, o.first_index,
                                            o.vertex_offset, 0u);
    draw_object[list * n + slot] = i;
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= frame.counts.x) {
        return;
    }
    vec4 s = objects[i].sphere;
    bool camera = true;
    bool light = true;
    for (int p = 0; p < 6; p++) {
        camera = camera && inside(s, frame.planes[p]);
        light = light && inside(s, frame.light_planes[p]);
    }
    emit(0u, i, camera);
    emit(1u, i, light);
}
