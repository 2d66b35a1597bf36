#version 450
// Writes the four bytes of a push-constant word into an RGBA8 UNORM pixel, exactly (as
// fuzz_word.frag).
layout(push_constant) uniform Word {
    uint word;
} pc;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = unpackUnorm4x8(pc.word);
}
