#version 450
// Push-descriptor images (tests/root/push_descriptors.rs): every descriptor kind a push
// set holds besides buffers. dst(x, y) = tex(x, y) + 10 * comb(x, y) + lut[y * w + x],
// all R32_SFLOAT, fetched without filtering.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform texture2D tex;
layout(set = 0, binding = 1) uniform sampler samp;
layout(set = 0, binding = 2) uniform sampler2D comb;
layout(set = 0, binding = 3) uniform samplerBuffer lut;
layout(set = 0, binding = 4, r32f) uniform writeonly image2D dst;
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(dst);
    if (p.x >= size.x || p.y >= size.y) {
        return;
    }
    float t = texelFetch(sampler2D(tex, samp), p, 0).r;
    float c = texelFetch(comb, p, 0).r;
    float l = texelFetch(lut, p.y * size.x + p.x).r;
    imageStore(dst, p, vec4(t + 10.0 * c + l));
}
