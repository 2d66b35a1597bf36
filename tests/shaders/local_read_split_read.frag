#version 450
// Draw B of a split local-read scope (tests/root/local_read.rs): reads what draw A wrote to
// colour attachment 0 through input attachment 0 (red and green doubled) and its pixel's
// word of the storage buffer draw A wrote (as blue, exact in RGBA8 for 0..63).
layout(input_attachment_index = 0, set = 0, binding = 0) uniform subpassInput previous;
layout(set = 0, binding = 1) readonly buffer Words {
    uint words[];
};
layout(location = 0) out vec4 color;
void main() {
    uint index = uint(gl_FragCoord.y) * 8u + uint(gl_FragCoord.x);
    color = vec4(subpassLoad(previous).rg * 2.0, float(words[index]) / 255.0, 1.0);
}
