#version 450
// Triangle 0 of the three columns of tests/root/mesh_shading.rs and
// tests/root/tessellation_geometry.rs: base along the top edge of the left third, apex at
// the bottom. No vertex input: three vertices from gl_VertexIndex.
const vec2 corners[3] = vec2[](vec2(-1.0, -1.0), vec2(-1.0 / 3.0, -1.0), vec2(-2.0 / 3.0, 1.0));
void main() {
    gl_Position = vec4(corners[gl_VertexIndex % 3], 0.0, 1.0);
}
