#version 450
// Base colour and normal map from 2D array textures (a layer per glTF image, mips made on
// the GPU), a directional light with a 3x3 PCF shadow lookup through a comparison
// sampler (sampler2DShadow), Blinn-Phong highlights.
#include "frame.glsl"

struct Material {
    vec4 base_color;
    uint base_layer;
    uint normal_layer;
    float normal_scale;
    float specular;
};

layout(std430, set = 0, binding = 3) readonly buffer Materials {
    Material materials[];
};

layout(set = 1, binding = 0) uniform sampler2DArray base_color;
layout(set = 1, binding = 1) uniform sampler2DArray normals;
layout(set = 1, binding = 2) uniform sampler2DShadow shadow_map;

layout(location = 0) in vec3 v_world;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec4 v_tangent;
layout(location = 3) in vec2 v_uv;
layout(location = 4) flat in uint v_material;

layout(location = 0) out vec4 color;

float lit(vec3 world) {
    vec4 p = frame.light_view_proj * vec4(world, 1.0);
    vec3 ndc = p.xyz / p.w;
    vec2 uv = ndc.xy * 0.5 + 0.5;
    vec2 texel = 1.0 / vec2(textureSize(shadow_map, 0));
    float sum = 0.0;
    for (int y = -1; y <= 1; y++) {
        for (int x = -1; x <= 1; x++) {
            sum += texture(shadow_map, vec3(uv + vec2(x, y) * texel, ndc.z));
        }
    }
    return sum / 9.0;
}

vec3 encode_srgb(vec3 c) {
    vec3 lo = c * 12.92;
    vec3 hi = 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055;
    return mix(hi, lo, lessThanEqual(c, vec3(0.0031308)));
}

void main() {
    Material m = materials[v_material];
    vec4 base = texture(base_color, vec3(v_uv, float(m.base_layer))) * m.base_color;
    vec3 t = texture(normals, vec3(v_uv, float(m.normal_layer))).xyz * 2.0 - 1.0;
    t.xy *= m.normal_scale;
    vec3 n = normalize(v_normal);
    vec3 tg = normalize(v_tangent.xyz - n * dot(n, v_tangent.xyz));
    vec3 b = cross(n, tg) * v_tangent.w;
    n = normalize(tg * t.x + b * t.y + n * t.z);

    vec3 l = normalize(frame.light_dir.xyz);
    vec3 v = normalize(frame.eye.xyz - v_world);
    float shadow = frame.light_dir.w > 0.5 ? lit(v_world) : 1.0;
    float diffuse = max(dot(n, l), 0.0);
    vec3 h = normalize(l + v);
    float spec = pow(max(dot(n, h), 0.0), 48.0) * m.specular;
    vec3 rgb = base.rgb * (frame.light_color.w + diffuse * shadow * frame.light_color.rgb)
             + spec * shadow * frame.light_color.rgb;
    color = vec4(frame.counts.y == 1u ? encode_srgb(rgb) : rgb, 1.0);
}
