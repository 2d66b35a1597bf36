#version 450
// Recorder::draw_list tests: the colour the vertex stage passed on.
layout(location = 0) in vec4 rgba;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = rgba;
}
