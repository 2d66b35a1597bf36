// The material set (set 1) shared by every scene fragment shader: texture, sampler and
// a uniform with the gloss. Both fragment shaders use all three, so their set-1 layouts
// are equal by content and one descriptor set serves both pipelines.
layout(set = 1, binding = 0) uniform texture2D albedo;
layout(set = 1, binding = 1) uniform sampler albedo_sampler;
layout(set = 1, binding = 2) uniform Material {
    float gloss;
} material;

const vec3 LIGHT_DIR = vec3(0.4, 0.8, 0.45);

vec3 shade(vec3 base, vec3 n, vec3 v, float gloss) {
    vec3 l = normalize(LIGHT_DIR);
    float diffuse = max(dot(n, l), 0.0);
    vec3 h = normalize(l + v);
    float spec = pow(max(dot(n, h), 0.0), 8.0 + 120.0 * gloss) * gloss;
    return base * (0.25 + 0.75 * diffuse) + vec3(spec);
}
