#version 450
// Set 1 is the shared "material": binding 0 uniform, binding 1 storage (declared 0 then 1).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { float out_a[]; };
layout(set = 1, binding = 0) uniform Material { float scale; float bias; } material;
layout(set = 1, binding = 1) readonly buffer Source { float src[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(out_a.length())) { out_a[i] = src[i] * material.scale; }
}
