#version 450
// Writes the four bytes of words[pc.index] of a storage buffer into an RGBA8 UNORM pixel,
// exactly (as fuzz_word.frag): a fragment-stage read of a buffer other commands write.
layout(set = 0, binding = 0) readonly buffer Words {
    uint words[];
};
layout(push_constant) uniform Index {
    uint index;
} pc;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = unpackUnorm4x8(words[pc.index]);
}
