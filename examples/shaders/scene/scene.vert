#version 450
// The seed scene's vertex stage: camera uniform at set 0, per-object transform and tint in
// push constants.
layout(set = 0, binding = 0) uniform Camera {
    mat4 view_proj;
    vec4 eye;
} camera;

layout(push_constant) uniform Object {
    mat4 model;
    vec4 tint;
} object;

layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec2 uv;

layout(location = 0) out vec3 v_normal;
layout(location = 1) out vec2 v_uv;
layout(location = 2) out vec3 v_view;
layout(location = 3) out vec3 v_tint;

void main() {
    vec4 world = object.model * vec4(position, 1.0);
    v_normal = mat3(object.model) * normal;
    v_uv = uv;
    v_view = camera.eye.xyz - world.xyz;
    v_tint = object.tint.rgb;
    gl_Position = camera.view_proj * world;
}
