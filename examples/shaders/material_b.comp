#version 450
// Same set 1 as material_a, declared in the other order and used differently.
layout(local_size_x = 32) in;
layout(set = 1, binding = 1) readonly buffer Input { float values[]; };
layout(set = 1, binding = 0) uniform Params { float mul; float add; } params;
layout(set = 0, binding = 0) buffer Result { float result[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(result.length())) { result[i] = values[i] + params.add; }
}
