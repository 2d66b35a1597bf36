#version 450
#extension GL_EXT_scalar_block_layout : require
// Typed bindings of a scalar-layout block: vec3 at 4, no padding anywhere.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, scalar) buffer Packed {
    float a;         // 0
    vec3 v;          // 4
    float b;         // 16
    vec3 w[2];       // 20, stride 12
    double d;        // 48 (8-aligned)
} packed;
void main() { packed.a = packed.v.x + packed.b + packed.w[1].z + float(packed.d); }
