#version 450
// One vertex attribute: a 2D position in clip space.
layout(location = 0) in vec2 position;

void main() {
    gl_Position = vec4(position, 0.0, 1.0);
}
