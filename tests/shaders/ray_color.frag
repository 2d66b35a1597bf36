#version 460
#extension GL_EXT_ray_query : require
// A ray query from a fragment shader (tests/root/acceleration_structures.rs): the ray of
// pixel (x, y) starts at (x + 0.25, y + 0.25, -1) and goes down +z through `tlas`, as
// ray_grid.comp's; a hit writes (255, custom index, primitive index, 255) / 255, a miss
// (0, 0, 0, 255) / 255, exact in RGBA8.
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(location = 0) out vec4 color;

void main() {
    vec3 origin = vec3(floor(gl_FragCoord.xy) + 0.25, -1.0);
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT, 0xff, origin, 0.0, vec3(0.0, 0.0, 1.0),
                          100.0);
    while (rayQueryProceedEXT(q)) {
    }
    color = vec4(0.0, 0.0, 0.0, 1.0);
    if (rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionTriangleEXT) {
        color = vec4(1.0, float(rayQueryGetIntersectionInstanceCustomIndexEXT(q, true)) / 255.0,
                     float(rayQueryGetIntersectionPrimitiveIndexEXT(q, true)) / 255.0, 1.0);
    }
}
