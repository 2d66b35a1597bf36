#version 450
// Flat colour from a fragment-stage push constant.
layout(push_constant) uniform Flat {
    vec4 color;
} flat_color;

layout(location = 0) out vec4 out_color;

void main() {
    out_color = flat_color.color;
}
