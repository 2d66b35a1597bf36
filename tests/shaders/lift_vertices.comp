#version 460
// Adds `dz` to the z of every vertex (x, y, z float triples) of `vertices`: moves a
// bottom-level acceleration structure's input before it is built again
// (tests/root/acceleration_structures.rs).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Vertices { float xyz[]; };
layout(push_constant) uniform Lift {
    uint count;
    float dz;
} lift;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < lift.count) {
        xyz[3 * i + 2] += lift.dz;
    }
}
