#version 450
#extension GL_EXT_debug_printf : require
// Writes out[i] = i * 3 and prints one line from invocation 0 (shader printf test).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint v[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(v.length())) {
        v[i] = i * 3u;
    }
    if (i == 0u) {
        debugPrintfEXT("kiln printf test: value %u of %u", 42u, uint(v.length()));
    }
}
