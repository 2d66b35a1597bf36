#version 450
// Fills n u32 (a 64-bit count) through a device address with v[i] = uint(i >> 12), a
// grid-stride loop with 64-bit indices and 64-bit address arithmetic: buffers beyond
// 4 GiB and beyond maxStorageBufferRange are reached whole.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 256) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Word { uint v; };
layout(push_constant) uniform P { uint64_t data; uint64_t n; } p;
void main() {
    uint64_t stride = uint64_t(gl_NumWorkGroups.x) * 256ul;
    for (uint64_t i = uint64_t(gl_GlobalInvocationID.x); i < p.n; i += stride) {
        Word(p.data + i * 4ul).v = uint(i >> 12);
    }
}
