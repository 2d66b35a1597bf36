#version 450
// The patch's triangle moved by `shift` (clip space), which set 0 holds.
layout(triangles, equal_spacing, ccw) in;
layout(set = 0, binding = 0) readonly buffer Shift { vec2 shift; };
void main() {
    vec4 p = gl_TessCoord.x * gl_in[0].gl_Position + gl_TessCoord.y * gl_in[1].gl_Position
        + gl_TessCoord.z * gl_in[2].gl_Position;
    gl_Position = p + vec4(shift, 0.0, 0.0);
}
