#version 450
// A bound set and a push set in one dispatch (tests/root/push_descriptors.rs): set 0 samples
// `src` (SHADER_READ_ONLY_OPTIMAL), push set 1 stores to `dst` (GENERAL);
// dst(x, y) = src(x, y) + 1, R32_SFLOAT, fetched without filtering.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D src;
layout(set = 1, binding = 0, r32f) uniform writeonly image2D dst;
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(dst);
    if (p.x >= size.x || p.y >= size.y) {
        return;
    }
    imageStore(dst, p, vec4(texelFetch(src, p, 0).r + 1.0));
}
