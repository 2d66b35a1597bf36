#version 450
// Draw A of a split local-read scope (tests/root/local_read.rs): writes its pixel's index
// (y * 8 + x of an 8x8 target) into words[index] of a storage buffer, and
// (32, 64, 16, 255) / 255 into colour attachment 0.
layout(set = 0, binding = 0) writeonly buffer Words {
    uint words[];
};
layout(location = 0) out vec4 color;
void main() {
    uint index = uint(gl_FragCoord.y) * 8u + uint(gl_FragCoord.x);
    words[index] = index;
    color = vec4(32.0, 64.0, 16.0, 255.0) / 255.0;
}
