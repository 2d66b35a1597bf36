#version 450
// Writes a VkDispatchIndirectCommand at `offset` (in u32) for n invocations of 64:
// (ceil(n / 64), 1, 1), so the next dispatch_indirect reads counts a dispatch wrote.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) writeonly buffer Args { uint words[]; } args;
layout(push_constant) uniform P { uint n; uint offset; } p;
void main() {
    args.words[p.offset] = (p.n + 63u) / 64u;
    args.words[p.offset + 1u] = 1u;
    args.words[p.offset + 2u] = 1u;
}
