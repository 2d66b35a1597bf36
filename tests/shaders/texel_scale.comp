#version 450
// Texel buffers: result[i] = 2 * lut[i] + 1, read through a uniform texel buffer and
// written through a storage texel buffer (both R32_SFLOAT), for i < textureSize(lut).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform samplerBuffer lut;
layout(set = 0, binding = 1, r32f) uniform writeonly imageBuffer result;
void main() {
    int i = int(gl_GlobalInvocationID.x);
    if (i < textureSize(lut)) {
        imageStore(result, i, vec4(texelFetch(lut, i).r * 2.0 + 1.0));
    }
}
