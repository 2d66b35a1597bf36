#version 450
// One triangle over the whole viewport, from gl_VertexIndex alone (no vertex buffer):
// (-1, -1), (3, -1), (-1, 3). Every pixel centre lies well inside it, so a draw of it
// covers every pixel whatever the rasterization rules (the API-sequence fuzzer's draws).
void main() {
    vec2 p = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
