#version 450
// Issue 30: limits only the specialization reveals. The workgroup's x size is
// specialization constant 0, the shared array's length constant 1 (1024 floats by default),
// and a private array's length is computed from constant 1 (FLOATS / 256), so FLOATS below
// 256 makes it 0. Each invocation writes the shared element of its neighbour.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint FLOATS = 1024;
const uint PRIVATE = FLOATS / 256;
shared float tile[FLOATS];
layout(set = 0, binding = 0) buffer Out { float o[]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    float scratch[PRIVATE];
    scratch[0] = float(i);
    tile[i % FLOATS] = scratch[0];
    barrier();
    o[gl_GlobalInvocationID.x] = tile[(i + 1) % gl_WorkGroupSize.x];
}
