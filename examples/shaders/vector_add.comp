#version 450
// kiln: target-env=vulkan1.0
// (kept at SPIR-V 1.0 on purpose: the reflection tests cover a 1.0 module through it;
// every other shader uses kiln-build's default, vulkan1.3 / SPIR-V 1.6)
// c[i] = a[i] + b[i]. Set 0: bindings 0, 1 (read) and 2 (write).
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(c.length())) {
        c[i] = a[i] + b[i];
    }
}
