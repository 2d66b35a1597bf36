#version 450
// A 64-byte vertex-stage push constant (mat4) that overlaps flat.frag's 16-byte range.
layout(push_constant) uniform Transform { mat4 mvp; } pc;
layout(location = 0) in vec2 position;
void main() { gl_Position = pc.mvp * vec4(position, 0.0, 1.0); }
