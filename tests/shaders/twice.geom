#version 450
// Each triangle twice: where it is, and moved by `shift` (clip space), which set 0 holds.
layout(triangles) in;
layout(triangle_strip, max_vertices = 6) out;
layout(set = 0, binding = 0) readonly buffer Shift { vec2 shift; };
void main() {
    for (int copy = 0; copy < 2; ++copy) {
        for (int i = 0; i < 3; ++i) {
            gl_Position = gl_in[i].gl_Position + float(copy) * vec4(shift, 0.0, 0.0);
            EmitVertex();
        }
        EndPrimitive();
    }
}
