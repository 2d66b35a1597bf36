#version 450
// Reads and writes through device addresses passed in push constants (GLSL
// buffer_reference, SPIR-V PhysicalStorageBuffer64): dst[i] = src[i] * 2 + 1.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Src { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Dst { uint v[]; };
layout(push_constant) uniform P { Src src; Dst dst; uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) {
        p.dst.v[i] = p.src.v[i] * 2u + 1u;
    }
}
