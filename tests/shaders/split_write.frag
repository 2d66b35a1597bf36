#version 450
// Draw A of a split rendering scope: writes pc.value into words[0] of a storage buffer
// from the fragment stage, and opaque blue into the colour attachment.
layout(set = 0, binding = 0) writeonly buffer Words {
    uint words[];
};
layout(push_constant) uniform Value {
    uint value;
} pc;
layout(location = 0) out vec4 out_color;

void main() {
    words[0] = pc.value;
    out_color = vec4(0.0, 0.0, 1.0, 1.0);
}
