#version 450
// Recorder::draw_list tests: a quad per draw (6 vertices) over the clip-space rectangle of
// the vertex push constants, in the colour of the bound set's uniform.
layout(push_constant) uniform Cell {
    vec4 rect;  // x, y, width, height
} cell;

layout(set = 0, binding = 0) uniform Colour {
    vec4 rgba;
} colour;

layout(location = 0) out vec4 out_rgba;

const vec2 CORNERS[6] = vec2[6](
    vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(0.0, 1.0),
    vec2(1.0, 0.0), vec2(1.0, 1.0), vec2(0.0, 1.0));

void main() {
    gl_Position = vec4(cell.rect.xy + CORNERS[gl_VertexIndex] * cell.rect.zw, 0.0, 1.0);
    out_rgba = colour.rgba;
}
