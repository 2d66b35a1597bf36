#version 450
// Scene set 0 used by the vertex stage only.
layout(set = 0, binding = 0) uniform Scene { mat4 view_proj; vec4 light; } scene;
layout(location = 0) in vec3 position;
void main() { gl_Position = scene.view_proj * vec4(position, 1.0); }
