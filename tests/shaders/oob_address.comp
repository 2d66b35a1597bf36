#version 460
#extension GL_EXT_buffer_reference : require
// kiln: debug-info
// GPU-assisted validation's target (tests/root/gpu_av.rs): writes words[index] through a
// device address from a push constant (past the buffer's end when the test asks).
layout(local_size_x = 1) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint w[]; };
layout(push_constant) uniform Push { Words words; uint index; };
void main() {
    words.w[index] = 9u; // the write GPU-AV names
}
