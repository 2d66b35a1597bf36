#version 450
// Set 0 declared as binding 0 (uniform) then binding 1 (storage).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform Scale { float factor; } scale;
layout(set = 0, binding = 1) buffer Data { float data[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(data.length())) { data[i] *= scale.factor; }
}
