#version 450
#extension GL_ARB_shader_draw_parameters : require
// The shadow pass: depth only, from the directional light (no fragment stage).
#include "frame.glsl"

layout(std430, set = 0, binding = 4) readonly buffer DrawObjects {
    uint draw_object[];
};
layout(push_constant) uniform List {
    uint base; // first command of the list drawn (the shadow list: objects)
} list;

layout(location = 0) in vec3 position;

void main() {
    Object o = objects[draw_object[list.base + gl_DrawIDARB]];
    gl_Position = frame.light_view_proj * (o.model * vec4(position, 1.0));
}
