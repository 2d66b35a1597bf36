#version 450
// out[i] = in[i] * params.by for i < params.n.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(push_constant) uniform Params {
    float by;
    uint n;
} params;
layout(set = 0, binding = 0) readonly buffer In { float src[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float dst[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < params.n) {
        dst[i] = scaled(src[i], params.by);
    }
}
