#version 450
// Same set 0 as scale_order_a, declared in the other order.
layout(local_size_x = 64) in;
layout(set = 0, binding = 1) buffer Values { float values[]; };
layout(set = 0, binding = 0) uniform Offset { float amount; } offset_;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(values.length())) { values[i] += offset_.amount; }
}
