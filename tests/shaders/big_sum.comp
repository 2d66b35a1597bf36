#version 450
// Sums n u32 (a 64-bit count) read through a device address with 64-bit indices: each
// invocation adds its grid-stride elements in 64 bits and writes its partial sum; the
// host adds the partials.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 256) in;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Word { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer Partials { uint64_t s[]; };
layout(push_constant) uniform P { uint64_t data; Partials partials; uint64_t n; } p;
void main() {
    uint64_t stride = uint64_t(gl_NumWorkGroups.x) * 256ul;
    uint64_t sum = 0ul;
    for (uint64_t i = uint64_t(gl_GlobalInvocationID.x); i < p.n; i += stride) {
        sum += uint64_t(Word(p.data + i * 4ul).v);
    }
    p.partials.s[gl_GlobalInvocationID.x] = sum;
}
