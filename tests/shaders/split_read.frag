#version 450
// Draw B of a split rendering scope: reads words[0] of the storage buffer draw A wrote and
// writes its four bytes into an RGBA8 UNORM pixel, exactly (as fuzz_storage_word.frag).
layout(set = 0, binding = 0) readonly buffer Words {
    uint words[];
};
layout(location = 0) out vec4 out_color;

void main() {
    out_color = unpackUnorm4x8(words[0]);
}
