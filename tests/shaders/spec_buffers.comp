#version 450
// Issue 30: the length of a descriptor array is specialization constant 0 (2 by default).
// The pipeline's reflected layout must hold as many descriptors as the specialization makes
// (VUID-VkComputePipelineCreateInfo-layout-07991). Invocation i writes i + COUNT into
// element i of the last buffer of the array.
layout(local_size_x = 8) in;
layout(constant_id = 0) const uint COUNT = 2;
layout(set = 0, binding = 0) buffer B { uint v[]; } bufs[COUNT];
void main() {
    uint i = gl_GlobalInvocationID.x;
    bufs[COUNT - 1].v[i] = i + COUNT;
}
