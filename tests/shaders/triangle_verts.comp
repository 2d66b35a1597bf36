#version 450
// Writes a triangle's clip-space positions (vec2 each) into a storage buffer that a draw
// then reads as its vertex buffer: (-0.5, 0.5), (0.5, 0.5), (0, -0.5), each scaled by pc.s.
layout(local_size_x = 4) in;
layout(push_constant) uniform P { float s; } pc;
layout(set = 0, binding = 0) writeonly buffer V { vec2 v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    vec2 p[3] = vec2[3](vec2(-0.5, 0.5), vec2(0.5, 0.5), vec2(0.0, -0.5));
    if (i < 3) {
        v[i] = p[i] * pc.s;
    }
}
