#version 450
// Desk: varnished wood — grain stripes from the texture coordinates, full gloss.
#extension GL_GOOGLE_include_directive : require
#include "material.glsl"

layout(location = 0) in vec3 v_normal;
layout(location = 1) in vec2 v_uv;
layout(location = 2) in vec3 v_view;
layout(location = 3) in vec3 v_tint;
layout(location = 0) out vec4 out_color;

void main() {
    float grain = 0.5 + 0.5 * sin(v_uv.x * 40.0 + 6.0 * sin(v_uv.y * 7.0));
    vec3 tex = texture(sampler2D(albedo, albedo_sampler), v_uv).rgb;
    vec3 base = v_tint * mix(0.7, 1.0, grain) * (0.6 + 0.4 * tex);
    vec3 c = shade(base, normalize(v_normal), normalize(v_view), material.gloss);
    out_color = vec4(clamp(c, 0.0, 1.0), 1.0);
}
