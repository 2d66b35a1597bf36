#version 450
// 256 bytes of push constants: more than the 128 Vulkan guarantees.
layout(local_size_x = 1) in;
layout(push_constant) uniform Push { vec4 v[16]; } pc;
layout(set = 0, binding = 0) buffer Out { vec4 o; };
void main() { o = pc.v[15]; }
