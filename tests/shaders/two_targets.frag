#version 450
// The push-constant colour to two colour attachments (locations 0 and 1).
layout(push_constant) uniform Flat {
    vec4 color;
} flat_color;

layout(location = 0) out vec4 out0;
layout(location = 1) out vec4 out1;

void main() {
    out0 = flat_color.color;
    out1 = flat_color.color;
}
