#version 450
// Writes the indirect draws of tests/root/indirect_draws.rs into one buffer of u32 words:
// three VkDrawIndirectCommand (16 bytes each, words 0..11; draw i is 3 vertices from
// vertex 3i), three VkDrawIndexedIndirectCommand (20 bytes each, words 12..26; 3 indices
// from index 3i) and the draw count p.count (word 27).
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) writeonly buffer Words { uint w[]; };
layout(push_constant) uniform P { uint count; } p;
void main() {
    for (uint i = 0u; i < 3u; ++i) {
        w[4u * i] = 3u;
        w[4u * i + 1u] = 1u;
        w[4u * i + 2u] = 3u * i;
        w[4u * i + 3u] = 0u;
        uint b = 12u + 5u * i;
        w[b] = 3u;
        w[b + 1u] = 1u;
        w[b + 2u] = 3u * i;
        w[b + 3u] = 0u;
        w[b + 4u] = 0u;
    }
    w[27] = p.count;
}
