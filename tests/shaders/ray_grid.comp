#version 460
#extension GL_EXT_ray_query : require
// Fires one ray per cell of a W x H grid down +z from (x + 0.25, y + 0.25, -1) through
// `tlas` and writes what it hit (tests/root/acceleration_structures.rs).
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
// Per ray: (hit, instance custom index, t as bits, primitive index); a miss is (0, ~0, 0, ~0).
layout(set = 0, binding = 1) buffer Hits { uvec4 hits[]; };
layout(push_constant) uniform Grid {
    uint width;
    uint height;
    uint cull_mask;
    uint base;
} grid;

void main() {
    uvec2 id = gl_GlobalInvocationID.xy;
    if (id.x >= grid.width || id.y >= grid.height) {
        return;
    }
    vec3 origin = vec3(float(id.x) + 0.25, float(id.y) + 0.25, -1.0);
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT, grid.cull_mask, origin, 0.0,
                          vec3(0.0, 0.0, 1.0), 100.0);
    while (rayQueryProceedEXT(q)) {
    }
    uvec4 result = uvec4(0u, 0xffffffffu, 0u, 0xffffffffu);
    if (rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionTriangleEXT) {
        result = uvec4(1u, uint(rayQueryGetIntersectionInstanceCustomIndexEXT(q, true)),
                       floatBitsToUint(rayQueryGetIntersectionTEXT(q, true)),
                       uint(rayQueryGetIntersectionPrimitiveIndexEXT(q, true)));
    }
    hits[grid.base + id.y * grid.width + id.x] = result;
}
