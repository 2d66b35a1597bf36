#version 450
// fuzz_fullscreen.vert's triangle, passing on each vertex's 32-bit word from a vertex
// buffer (R32_UINT); the fragment shader gets the first (provoking) vertex's word.
layout(location = 0) in uint word;
layout(location = 0) flat out uint v_word;

void main() {
    v_word = word;
    vec2 p = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
