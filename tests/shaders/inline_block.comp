#version 450
// Inline uniform blocks (tests/root/inline_uniform_blocks.rs): `params` is declared as an
// ordinary uniform block; the test's pipeline layout makes it an inline uniform block whose
// bytes live in the descriptor set. out[i] = scale * i + bias + offsets[i % 4].
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform Params {
    uint scale;
    uint bias;
    uvec4 offsets;
} params;
layout(set = 0, binding = 1) writeonly buffer Out { uint outv[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= outv.length()) {
        return;
    }
    outv[i] = params.scale * i + params.bias + params.offsets[i % 4u];
}
