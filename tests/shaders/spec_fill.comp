#version 450
// Workgroup size from specialization constant 0; writes the index everywhere.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer Out { uint v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(v.length())) { v[i] = i; }
}
