#version 450
// `kiln bench` draw rows: the colour the vertex stage computed.
layout(location = 0) in vec4 color;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = color;
}
