#version 450
#extension GL_ARB_shader_draw_parameters : require
// The glTF scene's main pass: the object of each indirect draw from the culling pass's
// list (gl_DrawID), world-space position, TBN and the light-space position.
#include "frame.glsl"

layout(std430, set = 0, binding = 4) readonly buffer DrawObjects {
    uint draw_object[];
};
layout(push_constant) uniform List {
    uint base;
} list;

layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec4 tangent;
layout(location = 3) in vec2 uv;

layout(location = 0) out vec3 v_world;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec4 v_tangent;
layout(location = 3) out vec2 v_uv;
layout(location = 4) flat out uint v_material;

void main() {
    Object o = objects[draw_object[list.base + gl_DrawIDARB]];
    vec4 world = o.model * vec4(position, 1.0);
    mat3 m = mat3(o.model); // uniform scale: normals transform like directions
    v_world = world.xyz;
    v_normal = m * normal;
    v_tangent = vec4(m * tangent.xyz, tangent.w);
    v_uv = uv;
    v_material = o.material;
    gl_Position = frame.view_proj * world;
}
