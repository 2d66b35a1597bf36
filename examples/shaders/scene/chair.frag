#version 450
// Chair: fabric — the texture tinted by the object colour, soft highlight.
#extension GL_GOOGLE_include_directive : require
#include "material.glsl"

layout(location = 0) in vec3 v_normal;
layout(location = 1) in vec2 v_uv;
layout(location = 2) in vec3 v_view;
layout(location = 3) in vec3 v_tint;
layout(location = 0) out vec4 out_color;

void main() {
    vec3 tex = texture(sampler2D(albedo, albedo_sampler), v_uv * 2.0).rgb;
    vec3 base = tex * v_tint;
    vec3 c = shade(base, normalize(v_normal), normalize(v_view), material.gloss * 0.5);
    out_color = vec4(clamp(c, 0.0, 1.0), 1.0);
}
