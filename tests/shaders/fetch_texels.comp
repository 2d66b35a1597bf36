#version 450
// Every texel of mip 0 of an 8×8 texture, fetched (no filtering) and packed as RGBA8
// (tests/root/compressed.rs: what the device decoded from compressed blocks).
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D tex;
layout(set = 0, binding = 1) writeonly buffer Texels { uint texels[]; };
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    texels[p.y * 8 + p.x] = packUnorm4x8(texelFetch(tex, p, 0));
}
