#version 450
// Pipeline-creation workload: enough arithmetic that the driver's compiler has real work.
// Each (SEED, SCALE) specialization is a distinct pipeline for the driver and its cache.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint SEED = 1;
layout(constant_id = 1) const float SCALE = 1.0;

layout(set = 0, binding = 0) buffer B { vec4 v[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    vec4 acc = v[i];
    for (uint k = 0u; k < 24u; k++) {
        acc = sin(acc * SCALE + vec4(float(k ^ SEED))) * cos(acc.yzwx) + fract(acc * 1.618);
        if ((k & SEED) == 0u) {
            acc = acc.wzyx * exp2(-abs(acc));
        }
    }
    v[i] = acc;
}
