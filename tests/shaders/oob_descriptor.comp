#version 450
// kiln: debug-info
// GPU-assisted validation's target (tests/root/gpu_av.rs): writes data[index] through a
// storage-buffer descriptor, index from a push constant (past the end when the test asks).
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint index; };
void main() {
    data[index] = 7u; // the write GPU-AV names
}
