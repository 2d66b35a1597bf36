#version 450
// Dynamic rendering local read (tests/root/local_read.rs), the first draw: writes
// (32, 64, 16, 255) / 255, exact in RGBA8.
layout(location = 0) out vec4 color;
void main() {
    color = vec4(32.0, 64.0, 16.0, 255.0) / 255.0;
}
