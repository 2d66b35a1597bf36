#version 450
// `kiln bench` draw rows: one triangle per draw, placed and coloured by 32 bytes of
// vertex-stage push constants, tinted by the bound set's uniform (no vertex buffers).
layout(push_constant) uniform Draw {
    vec4 rect;  // x, y, width, height in clip space
    vec4 color;
} draw;

layout(set = 0, binding = 0) uniform Tint {
    vec4 tint;
} tint;

layout(location = 0) out vec4 color;

void main() {
    // Vertices 0, 1, 2 at the rectangle's corners (0, 0), (1, 0), (0, 1).
    vec2 corner = vec2(float(gl_VertexIndex & 1), float(gl_VertexIndex >> 1));
    gl_Position = vec4(draw.rect.xy + corner * draw.rect.zw, 0.0, 1.0);
    color = draw.color * tint.tint;
}
