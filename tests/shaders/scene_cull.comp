#version 450
// The same scene set 0, used from compute.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform Scene { mat4 view_proj; vec4 light; } scene;
layout(set = 1, binding = 0) buffer Visible { uint visible[]; };
void main() { visible[gl_GlobalInvocationID.x] = uint(scene.light.w); }
