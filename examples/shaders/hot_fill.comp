#version 450
// The shader of examples/hot_reload.rs: edit the value while it runs.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint o[]; };
void main() { o[gl_GlobalInvocationID.x] = 7u; }
