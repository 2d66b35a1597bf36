#version 450
// `kiln bench` GPU-driven frame: opaque white (the image does not depend on draw order).
layout(location = 0) out vec4 out_color;

void main() {
    out_color = vec4(1.0);
}
