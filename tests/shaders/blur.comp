#version 450
// A horizontal 3-tap blur between two r32f storage images (sums, so every value is exact):
// dst(x, y) = src(x - 1, y) + src(x, y) + src(x + 1, y), texels outside the image count 0.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32f) uniform readonly image2D src;
layout(set = 0, binding = 1, r32f) uniform writeonly image2D dst;
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(src);
    if (p.x >= size.x || p.y >= size.y) {
        return;
    }
    float s = imageLoad(src, p).x;
    if (p.x > 0) { s += imageLoad(src, p - ivec2(1, 0)).x; }
    if (p.x + 1 < size.x) { s += imageLoad(src, p + ivec2(1, 0)).x; }
    imageStore(dst, p, vec4(s));
}
