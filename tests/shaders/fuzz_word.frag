#version 450
// Writes the four bytes of the vertex stage's word into an RGBA8 UNORM pixel, exactly:
// unpackUnorm4x8 gives byte/255, which the attachment stores back as that byte.
layout(location = 0) flat in uint v_word;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = unpackUnorm4x8(v_word);
}
